#include "analyzer/log_lines.h"

#include <array>
#include <cstring>

namespace tileprof::analyzer {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// The phrases NextLine looks for. Each is the fixed part of a line the
// recogniser (log_recognise.cc) knows; keep the two lists in step. '_' stands
// for "poplar_compiler.cc:", matched backwards.
//
// Why a table of byte pairs: the scan looks at every byte of a log that may
// be gigabytes long, so the test per byte must be one load and one branch.
// `pair[b0 | b1 << 8]` is 1 where the two bytes start a phrase and 2 at a
// newline; a pair starts a phrase far less often than its first byte alone
// would ('P' of every "PO:ENGINE" line, 'E' of "ENGINE").
struct Phrases {
  std::array<uint8_t, 65536> pair{};
  std::array<uint8_t, 256> group{};  // first byte -> index into lists + 1
  std::array<std::array<std::string_view, 5>, 13> lists{};
  uint8_t count = 0;

  void Add(char first, std::initializer_list<std::string_view> phrases) {
    auto& list = lists[count];
    size_t i = 0;
    for (std::string_view phrase : phrases) {
      list[i++] = phrase;
      pair[static_cast<uint8_t>(phrase[0]) | static_cast<uint8_t>(phrase[1]) << 8] = 1;
    }
    group[static_cast<unsigned char>(first)] = ++count;
  }
};

const Phrases& EventPhrases() {
  static const Phrases phrases = [] {
    Phrases p;
    p.Add('X', {"XLA compilation: "});
    p.Add('C', {"Compiling ", "Compiled", "Couldn't find "});
    p.Add('E', {"Elapsed: ", "Ending phase: "});
    p.Add('S', {"Starting phase: ", "Starting compilation", "Saving serialized "});
    p.Add('G', {"Graph compil"});
    p.Add('P', {"PO:PERF", "Poplar version: ", "Poplar compilation "});
    p.Add('L', {"Loaded ", "Loading serialized "});
    p.Add('A', {"A pre-compiled Poplar program "});
    p.Add('R', {"Returning CachedExecutable"});
    p.Add('B', {"Begin Poplar graph construction"});
    p.Add('/', {"/device:IPU:"});
    p.Add('_', {"_compiler.cc:"});
    for (size_t second = 0; second < 256; ++second) p.pair['\n' | second << 8] = 2;
    return p;
  }();
  return phrases;
}

// Whether a phrase starts at `at` of `text` (the whole log: no phrase holds
// a newline, so a match never runs past the line).
bool MatchesAt(const Phrases& phrases, std::string_view text, size_t at) {
  uint8_t group = phrases.group[static_cast<unsigned char>(text[at])];
  if (group == 0) return false;
  std::string_view rest = text.substr(at);
  for (std::string_view phrase : phrases.lists[group - 1]) {
    if (phrase.empty()) break;
    if (!rest.starts_with(phrase)) continue;
    // "_compiler.cc:" only as the end of "poplar_compiler.cc:".
    if (phrase[0] == '_' && (at < 6 || text.substr(at - 6, 6) != "poplar")) continue;
    return true;
  }
  return false;
}

std::optional<int> Digits(std::string_view s, size_t pos, size_t count) {
  if (pos + count > s.size()) return std::nullopt;
  int value = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (!IsDigit(s[i])) return std::nullopt;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// "YYYY-MM-DD" then ' ' or 'T' and a clock at `pos`: seconds and the length
// of the date and clock.
std::optional<std::pair<double, size_t>> DateTimeAt(std::string_view s, size_t pos) {
  auto y = Digits(s, pos, 4), mo = Digits(s, pos + 5, 2), d = Digits(s, pos + 8, 2);
  if (!y || !mo || !d || s[pos + 4] != '-' || s[pos + 7] != '-' || pos + 10 >= s.size() ||
      (s[pos + 10] != ' ' && s[pos + 10] != 'T'))
    return std::nullopt;
  std::optional<double> clock = ClockAt(s, pos + 11);
  if (!clock) return std::nullopt;
  size_t end = pos + 19;
  if (end < s.size() && s[end] == '.')
    for (++end; end < s.size() && IsDigit(s[end]);) ++end;
  double days =
      static_cast<double>(DaysFromCivil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d)));
  return std::pair{days * 86400.0 + *clock, end - pos};
}

// Length of the clock "HH:MM:SS[.fff]" at `pos`, 0 when there is none.
size_t ClockLength(std::string_view s, size_t pos) {
  if (!ClockAt(s, pos)) return 0;
  size_t end = pos + 8;
  if (end < s.size() && s[end] == '.')
    for (++end; end < s.size() && IsDigit(s[end]);) ++end;
  return end - pos;
}

// The next space-separated token at `pos` (skipping blanks first).
std::string_view TokenAt(std::string_view s, size_t& pos) {
  while (pos < s.size() && IsSpace(s[pos])) ++pos;
  size_t start = pos;
  while (pos < s.size() && !IsSpace(s[pos])) ++pos;
  return s.substr(start, pos - start);
}

char LevelLetter(std::string_view word) {
  if (word.empty()) return 0;
  char c = word[0];
  if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return std::string_view("IWEDTFC").find(c) != std::string_view::npos ? c : 0;
}

// Sets the message of `out` to `rest` with its leading blanks counted.
void SetMessage(LogLine& out, std::string_view rest) {
  size_t spaces = 0;
  while (spaces < rest.size() && IsSpace(rest[spaces])) ++spaces;
  out.indent = spaces;
  rest.remove_prefix(spaces);
  while (!rest.empty() && IsSpace(rest.back())) rest.remove_suffix(1);
  out.message = rest;
}

// "<L> <path>:<line>] " near the start of `s`: TensorFlow, glog, absl and
// the docs' "...: I tensorflow/...cc:660]". Returns the message start.
std::optional<size_t> SourceLocation(std::string_view s, LogLine& out) {
  std::string_view head = s.substr(0, 400);
  size_t close = head.find("] ");
  if (close == std::string_view::npos) close = head.ends_with("]") ? head.size() - 1 : close;
  if (close == std::string_view::npos || close == 0) return std::nullopt;
  size_t digits = close;
  while (digits > 0 && IsDigit(s[digits - 1])) --digits;
  if (digits == close || digits == 0 || s[digits - 1] != ':') return std::nullopt;
  size_t path_end = digits - 1;
  size_t path_start = path_end;
  while (path_start > 0 && !IsSpace(s[path_start - 1])) --path_start;
  std::string_view path = s.substr(path_start, path_end - path_start);
  if (path.find('.') == std::string_view::npos) return std::nullopt;
  out.source = path;
  // The level letter is the token before the path ("I"), or the first
  // letter of glog's "I0330" prefix.
  size_t before = path_start;
  while (before > 0 && IsSpace(s[before - 1])) --before;
  size_t word = before;
  while (word > 0 && !IsSpace(s[word - 1])) --word;
  std::string_view token = s.substr(word, before - word);
  if (token.size() == 1) out.level = LevelLetter(token);
  return close + 1;
}

}  // namespace

LineSpan NextLine(std::string_view text, size_t start) {
  const Phrases& phrases = EventPhrases();
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  size_t n = text.size();
  size_t i = start;
  for (; i + 1 < n; ++i) {
    uint8_t kind = phrases.pair[p[i] | p[i + 1] << 8];
    if (kind == 0) continue;
    if (kind == 2) return {i, false};
    if (MatchesAt(phrases, text, i)) {
      const void* newline = std::memchr(p + i, '\n', n - i);
      return {newline ? static_cast<size_t>(static_cast<const uint8_t*>(newline) - p) : n, true};
    }
  }
  // The last byte has no pair: a newline or the end.
  if (i < n && p[i] == '\n') return {i, false};
  return {n, false};
}

bool MayHoldEvent(std::string_view line) {
  LineSpan span = NextLine(line, 0);
  return span.may_hold_event;
}

std::string_view StripAnsi(std::string_view text, std::string& scratch) {
  if (text.find_first_of("\x1b\b") == std::string_view::npos) return text;
  scratch.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\b') continue;
    if (c != '\x1b') {
      scratch += c;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '[') {
      // CSI: parameters and intermediates up to a final byte in @..~.
      size_t j = i + 2;
      while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) ++j;
      i = j;
    } else {
      ++i;  // a two-byte escape
    }
  }
  return scratch;
}

std::optional<double> ClockAt(std::string_view s, size_t pos) {
  auto h = Digits(s, pos, 2), m = Digits(s, pos + 3, 2), sec = Digits(s, pos + 6, 2);
  if (!h || !m || !sec || s[pos + 2] != ':' || s[pos + 5] != ':') return std::nullopt;
  double value = *h * 3600.0 + *m * 60.0 + *sec;
  size_t i = pos + 8;
  if (i < s.size() && s[i] == '.') {
    double scale = 0.1;
    for (++i; i < s.size() && IsDigit(s[i]); ++i, scale /= 10) value += (s[i] - '0') * scale;
  }
  return value;
}

namespace {

// Each of these recognises one log layout at s[pos] and fills `out`.

// 2022-05-18T12:39:14.459868Z popart:devicex 90915.91186 D: msg
// 2022-09-06 23:59:34.180032: I tensorflow/...cc:43] msg
bool PopartLine(std::string_view s, size_t pos, LogLine& out) {
  if (auto date = DateTimeAt(s, pos)) {
    out.timestamp = date->first;
    size_t after = pos + date->second;
    if (after < s.size() && s[after] == 'Z') {
      size_t cursor = after + 1;
      std::string_view logger = TokenAt(s, cursor);
      std::string_view ids = TokenAt(s, cursor);
      std::string_view level = TokenAt(s, cursor);
      if (!logger.empty() && ids.find('.') != std::string_view::npos && level.size() == 2 &&
          level[1] == ':') {
        out.logger = logger;
        out.level = LevelLetter(level);
        if (cursor < s.size()) ++cursor;  // the one space after "I:"
        SetMessage(out, s.substr(std::min(cursor, s.size())));
        return true;
      }
    }
  }
  return false;
}

// [2020-07-29 08:59:03.333] [popart:session] [info] msg, [18:06:02.520] [poptorch:cpp] [warning]
bool BracketedLine(std::string_view s, size_t pos, LogLine& out) {
  if (pos < s.size() && s[pos] == '[') {
    size_t close = s.find(']', pos);
    if (close != std::string_view::npos && close < pos + 40) {
      std::string_view stamp = s.substr(pos + 1, close - pos - 1);
      std::optional<double> time;
      if (auto date = DateTimeAt(stamp, 0)) {
        time = date->first;
      } else if (ClockLength(stamp, 0) == stamp.size()) {
        time = ClockAt(stamp, 0);
      }
      size_t cursor = close + 1;
      while (cursor < s.size() && IsSpace(s[cursor])) ++cursor;
      if (time && cursor < s.size() && s[cursor] == '[') {
        size_t logger_end = s.find(']', cursor);
        if (logger_end != std::string_view::npos) {
          out.timestamp = time;
          out.logger = s.substr(cursor + 1, logger_end - cursor - 1);
          cursor = logger_end + 1;
          while (cursor < s.size() && IsSpace(s[cursor])) ++cursor;
          if (cursor < s.size() && s[cursor] == '[') {
            size_t level_end = s.find(']', cursor);
            if (level_end != std::string_view::npos) {
              out.level = LevelLetter(s.substr(cursor + 1, level_end - cursor - 1));
              cursor = level_end + 1;
              if (cursor < s.size()) ++cursor;
            }
          }
          SetMessage(out, s.substr(std::min(cursor, s.size())));
          return true;
        }
      }
    }
  }
  return false;
}

// 09:38:52.878 15288 PO:ENGINE   [I]     msg   (Poplar SDK 1-2, POPRUN)
bool PoplarLine(std::string_view s, size_t pos, LogLine& out) {
  if (size_t clock = ClockLength(s, pos); clock > 0) {
    size_t cursor = pos + clock;
    std::string_view pid = TokenAt(s, cursor);
    std::string_view logger = TokenAt(s, cursor);
    std::string_view level = TokenAt(s, cursor);
    bool numeric = !pid.empty() && pid.find_first_not_of("0123456789.") == std::string_view::npos;
    if (numeric && !logger.empty() && level.size() == 3 && level[0] == '[' && level[2] == ']') {
      out.timestamp = ClockAt(s, pos);
      out.logger = logger;
      out.level = LevelLetter(level.substr(1, 1));
      if (cursor < s.size()) ++cursor;
      SetMessage(out, s.substr(std::min(cursor, s.size())));
      return true;
    }
  }
  return false;
}

// TensorFlow, glog, absl: "... <L> <path>:<line>] msg".
bool SourceLocationLine(std::string_view s, size_t pos, LogLine& out) {
  if (std::optional<size_t> start = SourceLocation(s.substr(pos), out)) {
    if (auto date = DateTimeAt(s, pos)) {
      out.timestamp = date->first;
    } else if (pos < s.size() && LevelLetter(s.substr(pos, 1)) != 0) {
      // glog "I0330 12:34:56.789012": no year, so comparable within a year.
      auto month = Digits(s, pos + 1, 2), day = Digits(s, pos + 3, 2);
      if (month && day && pos + 5 < s.size() && s[pos + 5] == ' ') {
        if (std::optional<double> clock = ClockAt(s, pos + 6)) {
          out.level = LevelLetter(s.substr(pos, 1));
          out.timestamp = static_cast<double>(DaysFromCivil(2000, static_cast<unsigned>(*month),
                                                            static_cast<unsigned>(*day))) *
                              86400.0 +
                          *clock;
        }
      }
    }
    SetMessage(out, s.substr(pos + *start));
    return true;
  }
  return false;
}

}  // namespace

LogLine ParseLogLine(std::string_view frame, uint64_t number) {
  LogLine out;
  out.number = number;
  std::string_view s = frame;
  // mpirun --tag-output: "[1,0]<stderr>:" in front, possibly repeated.
  while (s.starts_with("[")) {
    size_t tag = s.find(">:");
    if (tag == std::string_view::npos || tag > 24 || s.find("]<") >= tag) break;
    s.remove_prefix(tag + 2);
  }
  size_t pos = 0;
  while (pos < s.size() && IsSpace(s[pos])) ++pos;
  if (PopartLine(s, pos, out) || BracketedLine(s, pos, out) || PoplarLine(s, pos, out) ||
      SourceLocationLine(s, pos, out))
    return out;
  SetMessage(out, s.substr(pos));
  return out;
}

}  // namespace tileprof::analyzer
