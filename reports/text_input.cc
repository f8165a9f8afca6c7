#include "reports/text_input.h"

#include <cstring>

#include <fmt/format.h>

namespace tileprof::report {
namespace {

constexpr uint64_t kHighBits = 0x8080808080808080ull;
constexpr uint64_t kLowBits = 0x0101010101010101ull;

// True when one of the eight bytes of `word` is zero (the classic
// "has a zero byte" test: only a zero byte borrows into its own high bit).
bool HasZeroByte(uint64_t word) { return ((word - kLowBits) & ~word & kHighBits) != 0; }

// Length of the UTF-8 sequence at `p` (at most `left` bytes available), or 0
// when it is not one. Ranges from RFC 3629 section 4.
size_t SequenceLength(const unsigned char* p, size_t left) {
  unsigned char c = p[0];
  auto continuation = [&](size_t i, unsigned char lo = 0x80, unsigned char hi = 0xbf) {
    return i < left && p[i] >= lo && p[i] <= hi;
  };
  if (c >= 0xc2 && c <= 0xdf) return continuation(1) ? 2 : 0;
  if (c == 0xe0) return continuation(1, 0xa0) && continuation(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef)
    return continuation(1) && continuation(2) ? 3 : 0;
  if (c == 0xed) return continuation(1, 0x80, 0x9f) && continuation(2) ? 3 : 0;
  if (c == 0xf0) return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return continuation(1) && continuation(2) && continuation(3) ? 4 : 0;
  if (c == 0xf4) return continuation(1, 0x80, 0x8f) && continuation(2) && continuation(3) ? 4 : 0;
  return 0;
}

void AppendEscaped(std::string& out, unsigned char c) {
  switch (c) {
    case '\\':
      out += "\\\\";
      return;
    case '"':
      out += "\\\"";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\n':
      out += "\\n";
      return;
    default:
      break;
  }
  if (c >= 0x20 && c < 0x7f) {
    out += static_cast<char>(c);
  } else {
    out += fmt::format("\\x{:02x}", c);
  }
}

}  // namespace

std::optional<NonText> FindNonText(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    // Eight ASCII bytes without a NUL at a time: the common case by far.
    if (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & kHighBits) == 0 && !HasZeroByte(word)) {
        i += 8;
        continue;
      }
    }
    unsigned char c = p[i];
    if (c == 0) return NonText{i, "a NUL byte"};
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t length = SequenceLength(p + i, n - i);
    if (length == 0) return NonText{i, fmt::format("byte 0x{:02x} is not UTF-8", c)};
    i += length;
  }
  return std::nullopt;
}

std::string EscapeBytes(std::string_view bytes, size_t max_bytes) {
  std::string out;
  size_t shown = std::min(bytes.size(), max_bytes);
  for (size_t i = 0; i < shown; ++i) AppendEscaped(out, static_cast<unsigned char>(bytes[i]));
  if (shown < bytes.size()) out += "...";
  return out;
}

std::string EscapeControls(std::string_view text, size_t* column) {
  std::string out;
  out.reserve(text.size());
  size_t moved = column ? *column : 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (column && i == *column) moved = out.size();
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      AppendEscaped(out, c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (column) *column = *column >= text.size() ? out.size() : moved;
  return out;
}

Status CheckText(std::string_view bytes, std::string_view file, std::string_view what) {
  std::optional<NonText> problem = FindNonText(bytes);
  if (!problem) return {};
  return MakeError("{}: not a text {}: {} at byte offset {} (\"{}\")", file, what, problem->reason,
                   problem->offset, EscapeBytes(bytes.substr(problem->offset)));
}

}  // namespace tileprof::report
