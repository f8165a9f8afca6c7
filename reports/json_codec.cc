#include "reports/json_codec.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/file.h"
#include "reports/json_sax.h"
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
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '\b':
          out_ += "\\b";
          break;
        case '\f':
          out_ += "\\f";
          break;
        default:
          fmt::format_to(std::back_inserter(out_), "\\u{:04x}", c);
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

namespace {

Expected<ReportDocument> ReadWith(json_sax::Parser& parser, std::string_view filename) {
  schema::DocumentBuilder builder;
  try {
    parser.Parse(builder);
  } catch (const std::exception& e) {
    // Allocation failure or a library invariant: still no exception escapes.
    builder.Fail(Error(e.what()));
  }
  if (!parser.read_error().empty()) return MakeError("{}: {}", filename, parser.read_error());
  if (parser.has_syntax_error()) {
    const json_sax::SyntaxError& error = parser.syntax_error();
    return MakeError("{}:{}:{}: {}", filename, error.line, error.column, error.message);
  }
  Expected<ReportDocument> document = builder.Finish();
  if (!document) return document.error().Within(filename);
  return document;
}

}  // namespace

Expected<ReportDocument> ReadJsonReport(std::string_view text, std::string_view filename) {
  json_sax::Parser parser(text);
  return ReadWith(parser, filename);
}

Expected<ReportDocument> ReadJsonReportFile(const std::string& path) {
  // Read in chunks rather than mapped: the file's pages then never count
  // toward the reader's resident memory, which stays the structs plus one
  // chunk however large the report (bench/reports/compare.sh).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Expected<std::string> probe = ReadFile(path);  // the usual "'<path>': No such file" text
    if (!probe) return probe.error();
    return MakeError("'{}': {}", path, std::strerror(errno));
  }
  std::vector<char> chunk(size_t{1} << 20);
  json_sax::Parser parser([&](std::string_view& out, std::string& error) {
    for (;;) {
      ssize_t n = ::read(fd, chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error = fmt::format("read failed: {}", std::strerror(errno));
        return false;
      }
      out = std::string_view(chunk.data(), static_cast<size_t>(n));
      return true;
    }
  });
  Expected<ReportDocument> document = ReadWith(parser, path);
  ::close(fd);
  return document;
}

}  // namespace tileprof::report
