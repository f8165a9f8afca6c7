#include "analyzer/log_scan.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>

namespace tileprof::analyzer {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads `count` digits at `pos` of `s`, or nullopt.
std::optional<int> Digits(std::string_view s, size_t pos, size_t count) {
  if (pos + count > s.size()) return std::nullopt;
  int value = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (!IsDigit(s[i])) return std::nullopt;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

// "HH:MM:SS[.ffffff]" at `pos` → seconds since midnight.
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

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The timestamp of a TensorFlow ("2022-03-30 12:34:56.789: I ...") or glog
// ("I0330 12:34:56.789012 ...") line prefix, in seconds. glog has no year, so
// its times are only comparable within one year — enough for one log.
std::optional<double> Timestamp(std::string_view line) {
  auto y = Digits(line, 0, 4), mo = Digits(line, 5, 2), d = Digits(line, 8, 2);
  if (y && mo && d && line[4] == '-' && line[7] == '-' && line.size() > 10 &&
      (line[10] == ' ' || line[10] == 'T')) {
    if (auto clock = ClockAt(line, 11)) {
      return static_cast<double>(
                 DaysFromCivil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d))) *
                 86400.0 +
             *clock;
    }
  }
  if (!line.empty() && std::string_view("IWEF").find(line[0]) != std::string_view::npos) {
    auto gm = Digits(line, 1, 2), gd = Digits(line, 3, 2);
    if (gm && gd && line.size() > 5 && line[5] == ' ') {
      if (auto clock = ClockAt(line, 6)) {
        return static_cast<double>(
                   DaysFromCivil(2000, static_cast<unsigned>(*gm), static_cast<unsigned>(*gd))) *
                   86400.0 +
               *clock;
      }
    }
  }
  return std::nullopt;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The text after `marker` in `line`, or nullopt when the marker is absent.
std::optional<std::string_view> After(std::string_view line, std::string_view marker) {
  size_t at = line.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  return line.substr(at + marker.size());
}

// "<module>  (Hash: 0xABC) for ordinal  0" → module and hash. The tech note
// quotes the line loosely as "(Hash 0x…)", so the colon is optional.
void SplitModuleAndHash(std::string_view rest, LogEvent& event) {
  size_t paren = rest.find("(Hash");
  event.module = std::string(Trim(rest.substr(0, paren)));
  if (paren == std::string_view::npos) return;
  size_t hex = rest.find("0x", paren);
  if (hex == std::string_view::npos) return;
  size_t end = hex + 2;
  while (end < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[end]))) ++end;
  event.hash = std::string(rest.substr(hex, end - hex));
}

bool IsCacheFile(std::string_view path) {
  for (std::string_view ext : {".poplar_exec", ".xla_engine", ".popef"}) {
    if (path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext) return true;
  }
  return false;
}

// Recognises one physical line (already split on '\r' and '\n').
std::optional<LogEvent> Recognise(std::string_view line) {
  LogEvent event{};
  if (auto rest = After(line, "Begin XLA compilation: ")) {
    event.kind = LogEventKind::kBeginCompile;
    SplitModuleAndHash(*rest, event);
  } else if (auto rest = After(line, "End XLA compilation: ")) {
    event.kind = LogEventKind::kEndCompile;
    SplitModuleAndHash(*rest, event);
  } else if (auto rest = After(line, "Couldn't find ")) {
    size_t tail = rest->rfind(" in executable cache");
    if (tail == std::string_view::npos) return std::nullopt;
    event.kind = LogEventKind::kCacheMiss;
    event.path = std::string(Trim(rest->substr(0, tail)));
  } else if (auto rest = After(line, "A pre-compiled Poplar program has been saved to ")) {
    event.kind = LogEventKind::kPrecompileSaved;
    event.path = std::string(Trim(*rest));
  } else if (auto rest = After(line, "Starting phase: ")) {
    event.kind = LogEventKind::kPhaseStart;
    event.phase = std::string(Trim(*rest));
  } else if (auto rest = After(line, "Ending phase: ")) {
    event.kind = LogEventKind::kPhaseEnd;
    size_t paren = rest->find(" (duration ");
    event.phase = std::string(Trim(rest->substr(0, paren)));
    if (paren != std::string_view::npos) {
      std::string number(rest->substr(paren + 11, rest->find(' ', paren + 11) - (paren + 11)));
      char* end = nullptr;
      double ms = std::strtod(number.c_str(), &end);
      if (end != number.c_str()) event.duration_ms = ms;
    }
  } else if (auto rest = After(line, "Compiling module ")) {
    std::string_view name = Trim(*rest);
    if (name.empty() || name.back() != ':') return std::nullopt;
    event.kind = LogEventKind::kProgressStart;
    event.module = std::string(Trim(name.substr(0, name.size() - 1)));
  } else if (line.find("Begin Poplar graph construction") != std::string_view::npos) {
    event.kind = LogEventKind::kGraphConstructionBegin;
  } else if (line.find("/device:IPU:") != std::string_view::npos &&
             line.find(" attached to ") != std::string_view::npos) {
    event.kind = LogEventKind::kDeviceAttached;
  } else if (auto rest = After(line, "Loaded ")) {
    size_t from = rest->rfind(" from ");
    if (from == std::string_view::npos) return std::nullopt;
    std::string_view path = Trim(rest->substr(from + 6));
    if (!IsCacheFile(path)) return std::nullopt;  // "Loaded 5 items from disk" is not ours
    event.kind = LogEventKind::kCacheHit;
    event.module = std::string(Trim(rest->substr(0, from)));
    event.path = std::string(path);
  } else {
    return std::nullopt;
  }
  event.timestamp = Timestamp(line);
  return event;
}

}  // namespace

std::vector<LogEvent> ParseLog(std::string_view text, std::string_view file) {
  std::vector<LogEvent> events;
  uint64_t line_number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    ++line_number;
    // A progress bar redraws in place: several '\r'-separated frames, each
    // starting with the erase-line sequence.
    size_t piece_start = 0;
    while (piece_start <= line.size()) {
      size_t piece_end = line.find('\r', piece_start);
      if (piece_end == std::string_view::npos) piece_end = line.size();
      std::string_view piece = line.substr(piece_start, piece_end - piece_start);
      if (piece.substr(0, 4) == "\33[2K") piece.remove_prefix(4);
      if (auto event = Recognise(piece)) {
        event->file = std::string(file);
        event->line = line_number;
        events.push_back(std::move(*event));
      }
      piece_start = piece_end + 1;
    }
    start = end + 1;
  }
  return events;
}

LogScanSummary ScanLogs(const std::vector<std::vector<LogEvent>>& logs,
                        const LogScanOptions& options) {
  LogScanSummary s;
  std::map<std::string, size_t> open;                    // module → index of its unfinished build
  std::map<std::string, std::pair<int, double>> phases;  // name → (ends, total ms)
  std::vector<std::optional<double>> began;              // start time of each build
  constexpr size_t kNone = SIZE_MAX;
  size_t last_open = kNone;  // the build a miss or save line refers to

  auto new_build = [&](const LogEvent& e) {
    ModuleBuild build;
    build.module = e.module;
    build.hash = e.hash;
    build.file = e.file;
    build.line = e.line;
    s.builds.push_back(build);
    began.push_back(e.timestamp);
    return s.builds.size() - 1;
  };
  auto finish = [&](size_t index, const LogEvent& e) {
    if (began[index] && e.timestamp && *e.timestamp >= *began[index])
      s.builds[index].seconds = *e.timestamp - *began[index];
  };

  for (const auto& events : logs) {
    if (!events.empty()) s.files.push_back(events.front().file);
    open.clear();  // a build never spans two logs
    last_open = kNone;
    // Poplar's phase line and TensorFlow's "Begin Poplar graph construction."
    // both mark a construction; a log at both levels has both for each one.
    uint64_t phase_constructions = 0, tf_constructions = 0;
    for (const LogEvent& e : events) {
      switch (e.kind) {
        case LogEventKind::kBeginCompile:
          open[e.module] = new_build(e);
          last_open = open[e.module];
          break;
        case LogEventKind::kEndCompile: {
          auto it = open.find(e.module);
          if (it == open.end()) {
            ++s.unmatched_ends;
            break;
          }
          finish(it->second, e);
          open.erase(it);
          break;
        }
        case LogEventKind::kCacheHit: {
          ++s.cache_hits;
          auto it = open.find(e.module);
          size_t index = it != open.end() ? it->second : new_build(e);
          s.builds[index].loaded_from_cache = true;
          s.builds[index].cache_file = e.path;
          finish(index, e);
          if (it != open.end()) open.erase(it);
          break;
        }
        case LogEventKind::kCacheMiss:
          ++s.cache_misses;
          if (last_open != kNone) {
            s.builds[last_open].cache_miss = true;
            s.builds[last_open].cache_file = e.path;
          }
          break;
        case LogEventKind::kPrecompileSaved:
          ++s.precompiled;
          if (last_open != kNone) {
            s.builds[last_open].precompiled = true;
            s.builds[last_open].cache_file = e.path;
          }
          break;
        case LogEventKind::kPhaseStart:
          if (e.phase == "graphConstruction") ++phase_constructions;
          break;
        case LogEventKind::kGraphConstructionBegin:
          ++tf_constructions;
          break;
        case LogEventKind::kPhaseEnd:
          if (e.duration_ms) {
            auto& [count, ms] = phases[e.phase];
            ++count;
            ms += *e.duration_ms;
          }
          break;
        case LogEventKind::kProgressStart:
        case LogEventKind::kDeviceAttached:
          break;
      }
    }
    s.graph_constructions += static_cast<int>(std::max(phase_constructions, tf_constructions));
  }

  // Warm-up: until the first build of a module that was already built, unless told.
  if (options.warmup_events) {
    s.warmup_events =
        std::min(s.builds.size(), static_cast<size_t>(std::max(0, *options.warmup_events)));
    s.warmup_rule = "the first " + std::to_string(s.warmup_events) + " builds (--warmup)";
  } else {
    s.warmup_events = s.builds.size();
    std::map<std::string, int> seen;
    for (size_t i = 0; i < s.builds.size(); ++i) {
      if (seen[s.builds[i].module]++ > 0) {
        s.warmup_events = i;
        break;
      }
    }
    s.warmup_rule = s.warmup_events == s.builds.size()
                        ? "no module was built twice, so every build counts as warm-up"
                        : "ends before the first repeated build of a module, at " +
                              s.builds[s.warmup_events].file + ":" +
                              std::to_string(s.builds[s.warmup_events].line);
  }

  std::map<std::string, size_t> module_index;
  for (size_t i = 0; i < s.builds.size(); ++i) {
    ModuleBuild& b = s.builds[i];
    b.after_warmup = i >= s.warmup_events;
    auto [it, inserted] = module_index.try_emplace(b.module, s.modules.size());
    if (inserted) s.modules.push_back({b.module, 0, 0, {}, 0});
    ModuleSummary& m = s.modules[it->second];
    (b.loaded_from_cache ? m.loads : m.compilations) += 1;
    if (!b.hash.empty() && std::find(m.hashes.begin(), m.hashes.end(), b.hash) == m.hashes.end())
      m.hashes.push_back(b.hash);
    if (b.seconds) m.seconds += *b.seconds;
    if (b.after_warmup) {
      ++s.builds_after_warmup;
      if (b.seconds)
        s.seconds_after_warmup += *b.seconds;
      else
        ++s.builds_after_warmup_unknown_time;
    }
  }
  for (const auto& [name, stats] : phases) {
    if (stats.first > 1)
      s.phase_notes.push_back("phase '" + name + "' ended " + std::to_string(stats.first) +
                              " times, " + std::to_string(static_cast<int64_t>(stats.second)) +
                              " ms in all");
  }
  return s;
}

}  // namespace tileprof::analyzer
