// The scanning loop of `tileprof logscan` and the summary it ends with.
#include "analyzer/log_scan.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "analyzer/log_builds.h"
#include "analyzer/log_lines.h"

namespace tileprof::analyzer {
namespace {

// Calls `line(text, number, may_hold_event)` for each physical line of
// `text` ('\n' ends one; a '\r' before it stays, as a frame separator).
template <typename Fn>
uint64_t ForEachLine(std::string_view text, Fn&& line) {
  size_t pos = 0;
  uint64_t number = 0;
  while (pos < text.size()) {
    LineSpan span = NextLine(text, pos);
    line(text.substr(pos, span.end - pos), ++number, span.may_hold_event);
    pos = span.end + 1;
  }
  return number;
}

// "jit_ipu_intor1e.3" -> "jit_ipu_intor1e": XLA's unique-id suffix.
std::string_view WithoutIdSuffix(std::string_view name) {
  size_t dot = name.find_last_of('.');
  if (dot == std::string_view::npos || dot + 1 == name.size()) return name;
  std::string_view digits = name.substr(dot + 1);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return name;
  return name.substr(0, dot);
}

}  // namespace

ParsedLog ParseLog(std::string_view text) {
  ParsedLog parsed;
  std::string scratch;
  ForEachLine(text, [&](std::string_view line, uint64_t number, bool may_hold_event) {
    if (!may_hold_event) return;
    ForEachFrame(line, scratch, [&](std::string_view frame) {
      // Events may point into the cleaned copy of a frame: keep it.
      if (frame.data() == scratch.data()) frame = parsed.frames.emplace_back(frame);
      if (auto e = RecogniseLine(ParseLogLine(frame, number))) parsed.events.push_back(*e);
    });
  });
  return parsed;
}

LogScanner::LogScanner(const LogScanOptions& options)
    : builds_(std::make_unique<Builds>(options)) {}
LogScanner::~LogScanner() = default;

void LogScanner::Scan(std::string_view text, std::string_view file) {
  builds_->BeginFile(file);
  std::string scratch;
  uint64_t lines =
      ForEachLine(text, [&](std::string_view line, uint64_t number, bool may_hold_event) {
        if (!may_hold_event && !builds_->WantsEveryLine()) return;
        ForEachFrame(line, scratch, [&](std::string_view frame) {
          LogLine parsed = ParseLogLine(frame, number);
          if (std::optional<LogEvent> e = RecogniseLine(parsed)) {
            builds_->Add(*e);
          } else {
            builds_->OtherLine(parsed);
          }
        });
      });
  builds_->EndFile(lines);
}

LogScanSummary LogScanner::Finish() { return builds_->Finish(); }

LogScanSummary ScanLogs(const std::vector<std::vector<LogEvent>>& logs,
                        const std::vector<std::string>& files, const LogScanOptions& options) {
  LogScanner::Builds builds(options);
  for (size_t i = 0; i < logs.size(); ++i) {
    builds.BeginFile(i < files.size() ? files[i] : std::string());
    uint64_t last = 0;
    for (const LogEvent& e : logs[i]) {
      builds.Add(e);
      last = std::max(last, e.line);
    }
    builds.EndFile(last);
  }
  return builds.Finish();
}

LogScanSummary LogScanner::Builds::Finish() {
  WarmupAndModules();
  Notes();
  return std::move(s_);
}

void LogScanner::Builds::WarmupAndModules() {
  // Warm-up: until the first build of a named module that was already built.
  if (options_.warmup_events) {
    s_.warmup_events =
        std::min(s_.builds.size(), static_cast<size_t>(std::max(0, *options_.warmup_events)));
    s_.warmup_rule = fmt::format("the first {} builds (--warmup)", s_.warmup_events);
  } else {
    s_.warmup_events = s_.builds.size();
    std::map<std::string, int> seen;
    for (size_t i = 0; i < s_.builds.size(); ++i) {
      const ModuleBuild& b = s_.builds[i];
      if (!b.module.empty() && seen[b.module]++ > 0) {
        s_.warmup_events = i;
        break;
      }
    }
    s_.warmup_rule =
        s_.warmup_events == s_.builds.size()
            ? "no named module was built twice, so every build counts as warm-up"
            : fmt::format("ends before the first repeated build of a module, at {}:{}",
                          s_.builds[s_.warmup_events].file, s_.builds[s_.warmup_events].line);
  }
  std::map<std::string, size_t> module_index;
  for (size_t i = 0; i < s_.builds.size(); ++i) {
    ModuleBuild& b = s_.builds[i];
    b.after_warmup = i >= s_.warmup_events;
    if (b.kind == BuildKind::kCompile || b.kind == BuildKind::kPrecompile) ++s_.compilations;
    if (b.after_warmup) {
      ++s_.builds_after_warmup;
      if (b.seconds) {
        s_.seconds_after_warmup += *b.seconds;
      } else {
        ++s_.builds_after_warmup_unknown_time;
      }
    }
    if (b.module.empty()) continue;
    auto [it, inserted] = module_index.try_emplace(b.module, s_.modules.size());
    if (inserted) s_.modules.push_back({b.module, 0, 0, {}, 0});
    ModuleSummary& m = s_.modules[it->second];
    (b.kind == BuildKind::kLoad ? m.loads : m.compilations) += 1;
    if (!b.hash.empty() && std::find(m.hashes.begin(), m.hashes.end(), b.hash) == m.hashes.end())
      m.hashes.push_back(b.hash);
    if (b.seconds) m.seconds += *b.seconds;
  }
}

void LogScanner::Builds::Notes() {
  for (auto [count, what, limit] : {std::tuple{builds_not_kept_, "builds", kMaxBuilds},
                                    std::tuple{phases_not_kept_, "phases", kMaxPhases},
                                    std::tuple{devices_not_kept_, "device attaches", kMaxDevices}})
    if (count > 0)
      s_.notes.push_back(fmt::format("{} more {} than the first {} kept; the summary covers those",
                                     count, what, limit));
  for (const ModuleBuild& b : s_.builds) {
    if (b.complete) continue;
    std::string what = b.module.empty() ? b.framework + " build" : "'" + b.module + "'";
    s_.notes.push_back(fmt::format(
        "{} at {}:{} does not finish in the log{}", what, b.file, b.line,
        b.progress ? fmt::format(" (last shown at {:g}%)", *b.progress) : std::string()));
  }
  // JAX names each compilation "<function>.<n>": one function compiled
  // several times shows as several modules.
  std::map<std::string, std::vector<std::string>> functions;
  std::vector<std::string> order;
  for (const ModuleBuild& b : s_.builds) {
    std::string_view base = WithoutIdSuffix(b.module);
    if (base.size() == b.module.size()) continue;
    auto [it, inserted] = functions.try_emplace(std::string(base));
    if (inserted) order.emplace_back(base);
    it->second.push_back(b.module);
  }
  for (const std::string& base : order) {
    const auto& names = functions[base];
    if (names.size() < 2) continue;
    s_.notes.push_back(fmt::format(
        "{} compilations of '{}' ({} ... {}): one function compiled for different arguments "
        "or shapes, or traced again",
        names.size(), base, names.front(), names.back()));
  }
  for (const auto& [name, stats] : phase_stats_) {
    if (stats.first > 1 &&
        (name == "Loading executable" || name == "graphConstruction" || name == "compileGraph"))
      s_.phase_notes.push_back(fmt::format("phase '{}' ended {} times, {} ms in all", name,
                                           stats.first, static_cast<int64_t>(stats.second)));
  }
}

}  // namespace tileprof::analyzer
