#include "reports/json_codec.h"

#include <cmath>
#include <exception>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/file.h"
#include "common/mapped_file.h"
#include "reports/schema.h"

namespace tileprof::report {
namespace {

// Writes JSON text directly: no DOM, so writing costs the output buffer only.
class JsonEmitter final : public schema::Emitter {
 public:
  explicit JsonEmitter(std::string& out) : out_(out) {}

  void BeginObject() override { Open('{'); }
  void EndObject() override { Close('}'); }
  void BeginArray(size_t) override { Open('['); }
  void EndArray() override { Close(']'); }
  void Key(std::string_view key) override {
    Separate();
    Quoted(key);
    out_ += ':';
    after_key_ = true;
  }
  void Uint(uint64_t value) override {
    Separate();
    fmt::format_to(std::back_inserter(out_), "{}", value);
  }
  void Double(double value) override {
    Separate();
    if (std::isnan(value)) return Quoted("NaN");
    if (std::isinf(value)) return Quoted(value > 0 ? "Infinity" : "-Infinity");
    size_t start = out_.size();
    // fmt's "{}" is the shortest text that reads back as the same double.
    fmt::format_to(std::back_inserter(out_), "{}", value);
    // "3" or "-0" would read back as integers (and -0 as 0).
    if (out_.find_first_of(".e", start) == std::string::npos) out_ += ".0";
  }
  void String(std::string_view utf8) override {
    Separate();
    Quoted(utf8);
  }
  void Bool(bool value) override {
    Separate();
    out_ += value ? "true" : "false";
  }

 private:
  void Open(char bracket) {
    Separate();
    out_ += bracket;
    first_.push_back(true);
  }
  void Close(char bracket) {
    out_ += bracket;
    first_.pop_back();
  }
  void Separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
  void Quoted(std::string_view text) {
    out_ += '"';
    size_t plain = 0;  // start of the run not yet copied
    for (size_t i = 0; i < text.size(); ++i) {
      auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      out_.append(text.substr(plain, i - plain));
      plain = i + 1;
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        case '\b': out_ += "\\b"; break;
        case '\f': out_ += "\\f"; break;
        default: fmt::format_to(std::back_inserter(out_), "\\u{:04x}", c);
      }
    }
    out_.append(text.substr(plain));
    out_ += '"';
  }

  std::string& out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace

std::string WriteJsonReport(const ReportDocument& document) {
  std::string out;
  JsonEmitter emitter(out);
  schema::Encode(document, emitter);
  out += '\n';
  return out;
}

Status WriteJsonReportFile(const std::string& path, const ReportDocument& document) {
  return WriteFileAtomic(path, WriteJsonReport(document));
}

Expected<ReportDocument> ReadJsonReport(std::string_view text, std::string_view filename) {
  schema::DocumentBuilder builder;
  try {
    nlohmann::json::sax_parse(text.begin(), text.end(), &builder,
                              nlohmann::json::input_format_t::json, /*strict=*/true);
  } catch (const std::exception& e) {
    // sax_parse reports syntax errors through the builder; anything thrown
    // (allocation failure, a library invariant) still must not escape.
    builder.Fail(Error(e.what()));
  }
  Expected<ReportDocument> document = builder.Finish();
  if (!document) {
    if (builder.syntax_error())
      return MakeError("{}:{}", filename, document.error().message());
    return document.error().Within(filename);
  }
  return document;
}

Expected<ReportDocument> ReadJsonReportFile(const std::string& path) {
  Expected<MappedFile> file = MappedFile::Open(path);
  if (!file) return file.error().Within(path);
  std::span<const uint8_t> bytes = file->bytes();
  return ReadJsonReport(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path);
}

}  // namespace tileprof::report
