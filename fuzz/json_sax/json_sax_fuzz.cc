// Differential fuzzing of the report reader's JSON parser (reports/json_sax.h)
// against nlohmann's: both must accept the same inputs with the same events,
// whole and fed in 3-byte chunks.
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/json_sax.h"

namespace {

using json = nlohmann::json;

struct Recorder {
  std::vector<std::string> events;
  bool failed = false;
  bool Add(std::string e) {
    events.push_back(std::move(e));
    return true;
  }
  bool null() { return Add("n"); }
  bool boolean(bool v) { return Add(v ? "t" : "f"); }
  bool number_integer(int64_t v) { return Add("i" + std::to_string(v)); }
  bool number_unsigned(uint64_t v) { return Add("u" + std::to_string(v)); }
  bool number_float(double v, const std::string&) {
    return Add("d" + std::to_string(std::bit_cast<uint64_t>(v)));
  }
  bool string(std::string& v) { return Add("s" + v); }
  bool binary(json::binary_t&) { return Add("b"); }
  bool start_object(std::size_t) { return Add("{"); }
  bool key(std::string& k) { return Add("k" + k); }
  bool end_object() { return Add("}"); }
  bool start_array(std::size_t) { return Add("["); }
  bool end_array() { return Add("]"); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    failed = true;
    return false;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Recorder reference;
  bool expected =
      json::sax_parse(text.begin(), text.end(), &reference, json::input_format_t::json, true) &&
      !reference.failed;
  Recorder whole;
  tileprof::report::json_sax::Parser parser(text);
  bool ok = parser.Parse(whole);
  if (ok != expected || (ok && whole.events != reference.events)) std::abort();
  size_t at = 0;
  Recorder chunked;
  tileprof::report::json_sax::Parser pieces([&](std::string_view& out, std::string&) {
    out = text.substr(at, 3);
    at += out.size();
    return true;
  });
  bool ok_chunked = pieces.Parse(chunked);
  if (ok_chunked != expected || (ok && chunked.events != reference.events)) std::abort();
  return 0;
}
