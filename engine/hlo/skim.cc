#include "engine/hlo/skim.h"

#include <cstring>

namespace tileprof::hlo {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

}  // namespace

std::optional<std::vector<ComputationSpan>> SkimComputations(std::string_view text) {
  if (text.size() >= UINT32_MAX) return std::nullopt;
  std::vector<ComputationSpan> spans;
  bool in_body = false, seen_module = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const char* nl =
        static_cast<const char*>(std::memchr(text.data() + pos, '\n', text.size() - pos));
    size_t line_end = nl ? static_cast<size_t>(nl - text.data()) : text.size();
    std::string_view line = text.substr(pos, line_end - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    const size_t line_start = pos;
    pos = line_end + 1;
    if (in_body) {
      if (line.empty() || line.front() == ' ' || line.front() == '\t') continue;
      if (line.front() != '}') return std::nullopt;  // column 0 inside a body
      spans.back().end = static_cast<uint32_t>(line_start + 1);
      in_body = false;
      continue;
    }
    if (line.empty() || line.starts_with("//") || line.front() == ' ' || line.front() == '\t')
      continue;
    if (line.starts_with("HloModule")) {
      if (seen_module) return std::nullopt;  // several modules in one text
      seen_module = true;
      continue;
    }
    if (line.back() != '{') continue;  // header material: stack frame tables, ...
    std::string_view name = line;
    if (name.starts_with("ENTRY ")) name.remove_prefix(6);
    if (name.starts_with("%")) name.remove_prefix(1);
    size_t n = 0;
    while (n < name.size() && IsNameChar(name[n])) ++n;
    if (n == 0) return std::nullopt;
    ComputationSpan span;
    span.name = name.substr(0, n);
    span.header = static_cast<uint32_t>(line_start);
    span.body = static_cast<uint32_t>(line_start + line.size() - 1);
    spans.push_back(span);
    in_body = true;
  }
  if (in_body || spans.empty()) return std::nullopt;
  return spans;
}

}  // namespace tileprof::hlo
