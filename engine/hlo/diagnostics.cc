// Located error messages; see diagnostics.h.
#include "engine/hlo/diagnostics.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/hlo/module.h"

namespace tileprof::hlo {

std::string FormatDiagnostic(std::string_view source_name, std::string_view text, uint32_t offset,
                             std::string_view message) {
  offset = static_cast<uint32_t>(std::min<size_t>(offset, text.size()));
  SourceLocation location = LocateOffset(text, offset);
  size_t line_begin = text.rfind('\n', offset == 0 ? std::string_view::npos : offset - 1);
  line_begin = (line_begin == std::string_view::npos || offset == 0) ? 0 : line_begin + 1;
  if (offset > 0 && text[offset - 1] == '\n') line_begin = offset;
  size_t line_end = text.find('\n', offset);
  if (line_end == std::string_view::npos) line_end = text.size();
  // Show at most 160 bytes of the line, keeping the offset in view.
  constexpr size_t kWindow = 160;
  size_t show_begin = line_begin;
  if (offset - line_begin > kWindow - 40) show_begin = offset - (kWindow - 40);
  size_t show_end = std::min(line_end, show_begin + kWindow);
  std::string_view shown = text.substr(show_begin, show_end - show_begin);
  std::string caret;
  for (size_t i = show_begin; i < offset; ++i) caret.push_back(text[i] == '\t' ? '\t' : ' ');
  caret.push_back('^');
  std::string line;
  line.reserve(shown.size());
  for (char c : shown) line.push_back(c == '\r' ? ' ' : c);
  return fmt::format("{}:{}:{}: error: {}\n{}{}\n{}", source_name, location.line, location.column,
                     message, show_begin > line_begin ? "..." : "", line,
                     (show_begin > line_begin ? "   " : "") + caret);
}

}  // namespace tileprof::hlo
