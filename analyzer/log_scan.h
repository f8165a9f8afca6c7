// Log scanning for recompilation: reads TensorFlow/Poplar-style logs (and
// tileprof's own, which print the same lines) and finds compilations, cache
// hits and misses, executable loads and graph constructions, then says which
// of them happened after warm-up and what they cost.
//
// Line formats: ../shared/spec/executable-cache.md sections 5 and 8. Lines may
// carry a glog prefix ("I1121 16:32:36.123456 4242 poplar_compiler.cc:1234] ")
// or TensorFlow's ("2022-03-30 12:34:56.789012: I tensorflow/...:1234] "); the
// timestamp, when present, gives durations. Progress-bar redraws are split on
// '\r' and stripped of "\33[2K".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tileprof::analyzer {

enum class LogEventKind {
  kBeginCompile,            // Begin XLA compilation: <module>  (Hash: 0x..) for ordinal  <n>
  kEndCompile,              // End XLA compilation: <module> (Hash: 0x..)
  kCacheHit,                // Loaded <module> from <file>
  kCacheMiss,               // Couldn't find <file> in executable cache
  kPrecompileSaved,         // A pre-compiled Poplar program has been saved to <file>
  kPhaseStart,              // Starting phase: <phase>
  kPhaseEnd,                // Ending phase: <phase> (duration N ms; diff RSS: X MB)
  kProgressStart,           // Compiling module <module>:
  kGraphConstructionBegin,  // Begin Poplar graph construction.
  kDeviceAttached,          // ... device /device:IPU:0 attached to ...
};

struct LogEvent {
  LogEventKind kind;
  std::string file;                 // the log it came from
  uint64_t line = 0;                // 1-based
  std::optional<double> timestamp;  // seconds; comparable within one log
  std::string module;
  std::string hash;  // "0x..." as printed
  std::string path;  // cache file, for hit/miss/saved
  std::string phase;
  std::optional<double> duration_ms;  // from "Ending phase" lines
};

// Parses every recognised line of `text`. Unrecognised lines are skipped:
// logs interleave anything. Never fails.
std::vector<LogEvent> ParseLog(std::string_view text, std::string_view file);

// One compilation or executable load of a module.
struct ModuleBuild {
  std::string module;
  std::string hash;  // hash from the Begin line ("" when unknown)
  bool loaded_from_cache = false;
  bool precompiled = false;  // saved in pre-compile mode
  std::string cache_file;    // the hit, miss or saved file
  bool cache_miss = false;   // a miss was logged for it
  std::string file;
  uint64_t line = 0;              // where it began
  std::optional<double> seconds;  // duration, when timestamps or phase lines tell
  bool after_warmup = false;
};

struct ModuleSummary {
  std::string module;
  int compilations = 0;
  int loads = 0;
  std::vector<std::string> hashes;  // distinct, in order of appearance
  double seconds = 0;               // known time spent compiling or loading
};

struct LogScanOptions {
  // Number of compile/load events that make up warm-up. Unset: warm-up ends
  // just before the first event that builds a module a second time.
  std::optional<int> warmup_events;
};

struct LogScanSummary {
  std::vector<std::string> files;
  std::vector<ModuleBuild> builds;     // in log order
  std::vector<ModuleSummary> modules;  // by first appearance
  int cache_hits = 0;
  int cache_misses = 0;
  int precompiled = 0;
  int graph_constructions = 0;
  int unmatched_ends = 0;                // End lines with no Begin (log started mid-compile)
  size_t warmup_events = 0;              // builds[0 .. warmup_events) are warm-up
  std::string warmup_rule;               // how the boundary was chosen, for the report
  std::vector<std::string> phase_notes;  // e.g. repeated "Loading executable" phases
  double seconds_after_warmup = 0;       // known time lost after warm-up
  int builds_after_warmup = 0;
  int builds_after_warmup_unknown_time = 0;
};

LogScanSummary ScanLogs(const std::vector<std::vector<LogEvent>>& logs,
                        const LogScanOptions& options);

// Report for people: a verdict first, then per-module rows and the flagged builds.
std::string FormatLogScanText(const LogScanSummary& summary);
// The same data for programs.
std::string FormatLogScanJson(const LogScanSummary& summary);

}  // namespace tileprof::analyzer
