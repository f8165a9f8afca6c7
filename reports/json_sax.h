// A streaming JSON (RFC 8259) SAX parser for the report reader: the events
// of nlohmann::json::sax_parse (null, boolean, number_integer,
// number_unsigned, number_float, string, start_object, key, end_object,
// start_array, end_array; each returns false to stop), from input that
// arrives in chunks, so a report file is never held in memory whole.
//
// Why not nlohmann's own parser: it is the reader's bottleneck (a token
// buffer per number, strtoull, a virtual-free but byte-at-a-time adapter)
// and it wants the whole input as one range or a std::istream. This one
// scans numbers and plain string runs in place, and accepts and rejects
// exactly what nlohmann does (tests/reports/json_sax_test.cc and
// fuzz/json_sax compare the two): strict grammar, one top-level value and
// nothing after it but whitespace, UTF-8 validated in strings, \u escapes
// with surrogate pairs, integers as unsigned or signed 64-bit when they fit
// and as doubles otherwise.
//
// Errors: "syntax error while parsing <what> - <reason>" at the 1-based line
// and byte column of the offending character, as nlohmann reports them.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tileprof::report::json_sax {

struct SyntaxError {
  uint64_t line = 1;
  uint64_t column = 1;
  std::string message;
};

// Supplies the next chunk of input: sets `chunk` (empty at the end) and
// returns false on a read error (with `error` set).
using ChunkReader = std::function<bool(std::string_view& chunk, std::string& error)>;

class Parser {
 public:
  // The whole input at once.
  explicit Parser(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}
  explicit Parser(ChunkReader reader) : reader_(std::move(reader)) {}

  // Runs the SAX events; false when the input is malformed (syntax_error()),
  // unreadable (read_error()), or the handler stopped.
  template <typename Sax>
  bool Parse(Sax& sax);

  const SyntaxError& syntax_error() const { return error_; }
  bool has_syntax_error() const { return has_error_; }
  const std::string& read_error() const { return read_error_; }

 private:
  // The current byte, or -1 at the end of the input.
  int Peek() {
    if (p_ == end_ && !Refill()) return -1;
    return static_cast<unsigned char>(*p_);
  }
  void Advance() { ++p_; }
  bool Refill();
  uint64_t Offset() const { return consumed_ + static_cast<uint64_t>(p_ - chunk_begin_); }
  bool Fail(std::string_view context, std::string_view reason);
  void SkipWhitespace();
  bool Literal(std::string_view word);
  bool Bom();
  // Scans a string after its opening quote into buffer_.
  template <typename Sax>
  bool Scalar(int c, Sax& sax);
  bool String(std::string_view context);
  bool Escape(std::string_view context);
  bool Utf8Sequence(std::string_view context, int lead);
  // Scans a number; sets kind_ and the value.
  bool Number();

  ChunkReader reader_;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  const char* chunk_begin_ = nullptr;
  uint64_t consumed_ = 0;  // bytes in chunks before the current one
  uint64_t line_ = 1;
  uint64_t line_start_ = 0;  // offset of the current line's first byte
  bool eof_ = false;
  bool has_error_ = false;
  SyntaxError error_;
  std::string read_error_;
  std::string buffer_;  // the current string or number text
  enum class NumberKind { kUnsigned, kInteger, kFloat } kind_ = NumberKind::kUnsigned;
  uint64_t unsigned_ = 0;
  int64_t integer_ = 0;
  double float_ = 0;
};

// A string, literal or number value starting with `c`, passed to sax.
template <typename Sax>
bool Parser::Scalar(int c, Sax& sax) {
  switch (c) {
    case '"':
      Advance();
      return String("value") && sax.string(buffer_);
    case 't':
      return Literal("true") && sax.boolean(true);
    case 'f':
      return Literal("false") && sax.boolean(false);
    case 'n':
      return Literal("null") && sax.null();
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': {
      if (!Number()) return false;
      return kind_ == NumberKind::kUnsigned  ? sax.number_unsigned(unsigned_)
             : kind_ == NumberKind::kInteger ? sax.number_integer(integer_)
                                             : sax.number_float(float_, buffer_);
    }
    case -1:
      return Fail("value", "unexpected end of input; expected '[', '{', or a literal");
    default:
      return Fail("value", "invalid literal");
  }
}

template <typename Sax>
bool Parser::Parse(Sax& sax) {
  if (chunk_begin_ == nullptr) chunk_begin_ = p_;
  if (Peek() == 0xef && !Bom()) return false;  // nlohmann skips a UTF-8 byte-order mark
  // Open containers: true for an object.
  std::vector<bool> stack;
  // After '{' or ',' in an object a key comes next; after '[' a value or ']'.
  enum class Expect { kValue, kValueOrEnd, kKeyOrEnd, kKey } expect = Expect::kValue;
  for (;;) {
    SkipWhitespace();
    int c = Peek();
    if (expect == Expect::kKeyOrEnd || expect == Expect::kKey) {
      if (c == '}' && expect == Expect::kKeyOrEnd) {
        Advance();
        stack.pop_back();
        if (!sax.end_object()) return false;
      } else if (c == '"') {
        Advance();
        if (!String("object key")) return false;
        SkipWhitespace();
        if (Peek() != ':') return Fail("object separator", "expected ':'");
        Advance();
        if (!sax.key(buffer_)) return false;
        expect = Expect::kValue;
        continue;
      } else {
        return Fail("object key", c == -1 ? "unexpected end of input; expected string literal"
                                          : "expected string literal");
      }
    } else {
      if (c == ']' && expect == Expect::kValueOrEnd) {
        Advance();
        stack.pop_back();
        if (!sax.end_array()) return false;
      } else {
        switch (c) {
          case '{':
            Advance();
            stack.push_back(true);
            if (!sax.start_object(static_cast<std::size_t>(-1))) return false;
            expect = Expect::kKeyOrEnd;
            continue;
          case '[':
            Advance();
            stack.push_back(false);
            if (!sax.start_array(static_cast<std::size_t>(-1))) return false;
            expect = Expect::kValueOrEnd;
            continue;
          default:
            if (!Scalar(c, sax)) return false;
        }
      }
    }
    // A value (or a container) is complete.
    SkipWhitespace();
    c = Peek();
    if (stack.empty()) {
      if (c != -1) return Fail("value", "expected end of input");
      return true;
    }
    if (c == ',') {
      Advance();
      expect = stack.back() ? Expect::kKey : Expect::kValue;
    } else if (stack.back() ? c == '}' : c == ']') {
      expect = stack.back() ? Expect::kKeyOrEnd : Expect::kValueOrEnd;
    } else {
      std::string_view reason = stack.back() ? "expected '}'" : "expected ']'";
      return Fail(
          stack.back() ? "object" : "array",
          c == -1 ? "unexpected end of input; " + std::string(reason) : std::string(reason));
    }
  }
}

}  // namespace tileprof::report::json_sax
