#include "reports/json_sax.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace tileprof::report::json_sax {

bool Parser::Refill() {
  if (eof_ || !reader_) {
    eof_ = true;
    return false;
  }
  consumed_ += static_cast<uint64_t>(end_ - chunk_begin_);
  std::string_view chunk;
  if (!reader_(chunk, read_error_)) {
    eof_ = true;
    if (read_error_.empty()) read_error_ = "read error";
    return false;
  }
  if (chunk.empty()) {
    eof_ = true;
    chunk_begin_ = p_ = end_;
    return false;
  }
  chunk_begin_ = p_ = chunk.data();
  end_ = chunk.data() + chunk.size();
  return true;
}

bool Parser::Fail(std::string_view context, std::string_view reason) {
  if (!read_error_.empty()) return false;  // a read error is not the input's fault
  has_error_ = true;
  error_.line = line_;
  error_.column = Offset() - line_start_ + 1;
  error_.message = fmt::format("syntax error while parsing {} - {}", context, reason);
  return false;
}

void Parser::SkipWhitespace() {
  for (;;) {
    while (p_ != end_) {
      char c = *p_;
      if (c == '\n') {
        ++line_;
        ++p_;
        line_start_ = Offset();
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++p_;
      } else {
        return;
      }
    }
    if (!Refill()) return;
  }
}

bool Parser::Literal(std::string_view word) {
  for (char expected : word) {
    if (Peek() != static_cast<unsigned char>(expected)) return Fail("value", "invalid literal");
    Advance();
  }
  return true;
}

bool Parser::Bom() {
  for (int expected : {0xef, 0xbb, 0xbf}) {
    if (Peek() != expected) return Fail("value", "invalid BOM; must be 0xEF 0xBB 0xBF if given");
    Advance();
  }
  return true;
}

namespace {

void AppendUtf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xc0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xe0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  }
}

int HexValue(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool Parser::String(std::string_view context) {
  buffer_.clear();
  for (;;) {
    // The plain run: printable ASCII other than '"' and '\'.
    const char* run = p_;
    while (p_ != end_) {
      auto c = static_cast<unsigned char>(*p_);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++p_;
    }
    buffer_.append(run, static_cast<size_t>(p_ - run));
    int c = Peek();
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')
      continue;  // the run goes on in the next chunk
    if (c == '"') {
      Advance();
      return true;
    }
    if (c == -1) return Fail(context, "invalid string: missing closing quote");
    if (c < 0x20)
      return Fail(context,
                  fmt::format("invalid string: control character U+{:04X} must be escaped", c));
    if (c == '\\') {
      if (!Escape(context)) return false;
      continue;
    }
    if (!Utf8Sequence(context, c)) return false;
  }
}

// After a backslash: one escape, appended to buffer_ (a u escape as UTF-8,
// surrogate pairs joined).
bool Parser::Escape(std::string_view context) {
  Advance();
  int e = Peek();
  switch (e) {
    case '"':
      buffer_ += '"';
      break;
    case '\\':
      buffer_ += '\\';
      break;
    case '/':
      buffer_ += '/';
      break;
    case 'b':
      buffer_ += '\b';
      break;
    case 'f':
      buffer_ += '\f';
      break;
    case 'n':
      buffer_ += '\n';
      break;
    case 'r':
      buffer_ += '\r';
      break;
    case 't':
      buffer_ += '\t';
      break;
    case 'u': {
      auto hex4 = [&](uint32_t& out) {
        out = 0;
        for (int i = 0; i < 4; ++i) {
          int h = HexValue(Peek());
          if (h < 0) return Fail(context, "invalid string: '\\u' must be followed by 4 hex digits");
          out = out * 16 + static_cast<uint32_t>(h);
          Advance();
        }
        return true;
      };
      Advance();
      uint32_t code = 0;
      if (!hex4(code)) return false;
      if (code >= 0xdc00 && code <= 0xdfff)
        return Fail(context, "invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF");
      if (code >= 0xd800 && code <= 0xdbff) {
        if (Peek() != '\\')
          return Fail(
              context,
              "invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
        Advance();
        if (Peek() != 'u')
          return Fail(
              context,
              "invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
        Advance();
        uint32_t low = 0;
        if (!hex4(low)) return false;
        if (low < 0xdc00 || low > 0xdfff)
          return Fail(
              context,
              "invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
      }
      AppendUtf8(buffer_, code);
      return true;  // hex4 consumed the digits
    }
    default:
      return Fail(context, "invalid string: forbidden character after backslash");
  }
  Advance();
  return true;
}

bool Parser::Utf8Sequence(std::string_view context, int lead) {
  // A UTF-8 sequence (RFC 3629 well-formed ranges, as nlohmann checks).
  int count = 0;
  int low = 0x80, high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    count = 1;
  } else if (lead == 0xe0) {
    count = 2, low = 0xa0;
  } else if ((lead >= 0xe1 && lead <= 0xec) || lead == 0xee || lead == 0xef) {
    count = 2;
  } else if (lead == 0xed) {
    count = 2, high = 0x9f;
  } else if (lead == 0xf0) {
    count = 3, low = 0x90;
  } else if (lead >= 0xf1 && lead <= 0xf3) {
    count = 3;
  } else if (lead == 0xf4) {
    count = 3, high = 0x8f;
  } else {
    return Fail(context, "invalid string: ill-formed UTF-8 byte");
  }
  buffer_ += static_cast<char>(lead);
  Advance();
  for (int i = 0; i < count; ++i) {
    int next = Peek();
    if (next < low || next > high) return Fail(context, "invalid string: ill-formed UTF-8 byte");
    buffer_ += static_cast<char>(next);
    Advance();
    low = 0x80, high = 0xbf;
  }
  return true;
}

// Long on purpose: RFC 8259's number grammar (sign, integer, fraction,
// exponent) in order, in one pass over the characters on the parser's hot
// path; each piece alone would need the peek/advance state passed around.
bool Parser::Number() {
  // The number's text is needed for doubles; it is copied only when it
  // crosses a chunk boundary (or to convert a double).
  buffer_.clear();
  const char* start = p_;
  auto peek = [&]() -> int {
    if (p_ == end_) {
      buffer_.append(start, static_cast<size_t>(p_ - start));
      int c = Peek();
      start = p_;
      return c;
    }
    return static_cast<unsigned char>(*p_);
  };
  auto digit = [](int c) { return c >= '0' && c <= '9'; };
  bool negative = false;
  bool is_float = false;
  uint64_t magnitude = 0;
  bool overflow = false;
  if (peek() == '-') {
    negative = true;
    Advance();
  }
  int c = peek();
  if (!digit(c)) return Fail("value", "invalid number; expected digit after '-'");
  if (c == '0') {
    Advance();
  } else {
    while (digit(c = peek())) {
      const uint64_t d = static_cast<uint64_t>(c - '0');
      if (magnitude > (UINT64_MAX - d) / 10)
        overflow = true;
      else
        magnitude = magnitude * 10 + d;
      Advance();
    }
  }
  if (peek() == '.') {
    is_float = true;
    Advance();
    if (!digit(peek())) return Fail("value", "invalid number; expected digit after '.'");
    while (digit(peek())) Advance();
  }
  c = peek();
  if (c == 'e' || c == 'E') {
    is_float = true;
    Advance();
    c = peek();
    if (c == '+' || c == '-') {
      Advance();
      c = peek();
    }
    if (!digit(c)) return Fail("value", "invalid number; expected digit after exponent sign");
    while (digit(peek())) Advance();
  }
  if (!is_float && !overflow) {
    if (!negative) {
      kind_ = NumberKind::kUnsigned;
      unsigned_ = magnitude;
      return true;
    }
    if (magnitude <= static_cast<uint64_t>(INT64_MAX) + 1) {
      kind_ = NumberKind::kInteger;
      integer_ = magnitude == static_cast<uint64_t>(INT64_MAX) + 1
                     ? INT64_MIN
                     : -static_cast<int64_t>(magnitude);
      return true;
    }
  }
  // A double (or an integer too large for 64 bits, which nlohmann reads as one).
  buffer_.append(start, static_cast<size_t>(p_ - start));
  kind_ = NumberKind::kFloat;
  auto [end, ec] = std::from_chars(buffer_.data(), buffer_.data() + buffer_.size(), float_);
  if (ec == std::errc::result_out_of_range) {
    // Underflow reads as strtod does (0 or a denormal); overflow is an error.
    float_ = std::strtod(buffer_.c_str(), nullptr);
  } else if (ec != std::errc() || end != buffer_.data() + buffer_.size()) {
    return Fail("value", "invalid number");
  }
  if (!std::isfinite(float_)) {
    has_error_ = true;
    error_.line = line_;
    error_.column = Offset() - line_start_ + 1;
    error_.message = fmt::format("number overflow parsing '{}'", buffer_);
    return false;
  }
  return true;
}

}  // namespace tileprof::report::json_sax
