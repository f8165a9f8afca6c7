// `tileprof logscan`: what compiled, how often and for how long, from the
// logs users of Graphcore's software actually have — TensorFlow 1/2 and JAX
// (progress bar, VLOG lines of every SDK), PopTorch and PopART, Poplar engine
// logs of SDK 1-3 — and tileprof's own, which print the same lines. The
// counting rules are in docs/logscan.md; the line formats in log_lines.h
// (prefixes) and log_recognise.cc (messages).
//
// Layers: LogScanner reads a log once, line by line, skipping lines that
// cannot hold an event (log_lines.h MayHoldEvent) so that a 1 GB log reads
// at the speed of the disk cache; each event goes straight to the
// aggregation (log_builds.cc), which keeps compilations, not lines.
#pragma once

#include <concepts>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tileprof::analyzer {

enum class LogEventKind {
  kBeginCompile,           // TF: Begin XLA compilation: <module>  (Hash: 0x..) for ordinal  <n>
  kEndCompile,             // TF: End XLA compilation: <module> (Hash: 0x..)
  kCompilerLine,           // TF: any other line from poplar_compiler.cc
  kXlaClusterCompiled,     // TF: Compiled cluster using XLA!  (logged once per process)
  kProgressStart,          // TF/JAX: Compiling module <module>:
  kProgressFrame,          // TF/JAX: [####   ] 42% <stage> [Elapsed: 00:01:02.3]; VLOG twin
  kTorchProgress,          // PopTorch: Graph compilation:  84%|...| 84/100 [1:09:59<20:26]
  kFrameworkCompileStart,  // optimum "Compiling Model...", PopART "Starting compilation"
  kFrameworkCompileEnd,    // PopART "Graph compiled"
  kCompiledOrLoaded,       // PopTorch applications: Compiled/Loaded model in <s> secs
  kCacheHit,    // Loaded <module> from <file>; PopART: Loading serialized ... from <file>
  kCacheMiss,   // Couldn't find <file> in executable cache
  kCacheSaved,  // A pre-compiled Poplar program has been saved to <file>; PopART save
  kPhaseStart,  // Poplar: Starting phase: <phase>
  kPhaseEnd,    // Poplar: Ending phase: <phase> (duration N ms; diff RSS: X MB; ...)
  kPerf,        // Poplar SDK 3.3: a PO:PERF line with "real N ms" and "N MiB"
  kGraphConstructionBegin,  // TF: Begin Poplar graph construction.
  kDeviceAttached,  // TF: ... /device:IPU:0 attached to <IPU: 0 | IPUs: 5,7 | 1 IPU with ...>
  kPoplarVersion,   // TF: Poplar version: 3.0.0 (fa83d31c56) Poplar package: ...
};

// One recognised frame. The string views point into the scanned text (or
// the scanner's scratch buffer) and live only as long as it.
struct LogEvent {
  LogEventKind kind;
  uint64_t line = 0;                // 1-based physical line
  std::optional<double> timestamp;  // seconds; comparable within one log
  std::string_view framework;       // "tensorflow", "jax", "poptorch", "popart", "poplar"
  std::string_view module;          // module or graph name as printed ("" unknown)
  std::string_view hash;            // "0x..." as printed
  std::string_view path;            // cache file
  std::string_view phase;           // phase or stage name
  std::string_view device;          // "/device:IPU:0"
  std::string_view ipus;            // what follows "attached to "
  std::optional<double> percent;    // progress shown
  std::optional<double> seconds;    // elapsed, duration, "in N secs"
  std::optional<double> rss_diff_mb;
  std::optional<double> rss_total_mb;
  size_t indent = 0;
};

// Recognises one clean frame. Unrecognised frames give nothing: logs
// interleave anything. Never fails. Visible for testing.
struct LogLine;
std::optional<LogEvent> RecogniseLine(const LogLine& line);

// Every event of `text`, in order, with the cleaned frames (ANSI codes
// removed) that some of them point into; the others point into `text`. For
// tests and fuzzing; the command streams instead (LogScanner).
struct ParsedLog {
  std::vector<LogEvent> events;
  std::deque<std::string> frames;  // a deque: moving it keeps the views valid

  ParsedLog() = default;
  ParsedLog(ParsedLog&&) = default;
  ParsedLog& operator=(ParsedLog&&) = default;
  ParsedLog(const ParsedLog&) = delete;
  ParsedLog& operator=(const ParsedLog&) = delete;
};
ParsedLog ParseLog(std::string_view text);
// The events view `text`: a temporary string would die before them.
template <typename T>
requires std::same_as<T, std::string> ParsedLog ParseLog(T&& text)
= delete;

enum class BuildKind { kCompile, kLoad, kPrecompile, kCompileOrLoad };
std::string_view BuildKindName(BuildKind kind);  // "compile", "load", "pre-compile", ...

struct PhaseTime {
  std::string name;
  int depth = 0;  // open phases around it
  std::optional<double> ms;
  std::optional<double> rss_diff_mb;
  std::optional<double> rss_total_mb;
};

// One compilation or executable load.
struct ModuleBuild {
  std::string module;     // as printed; "" when the log does not name it
  std::string framework;  // "tensorflow", "jax", "poptorch", "popart", "poplar"
  BuildKind kind = BuildKind::kCompile;
  std::string evidence;    // the lines it was seen through
  std::string hash;        // from the Begin line ("" unknown)
  std::string cache_file;  // the hit, miss or saved file
  bool cache_miss = false;
  bool complete = false;           // the log shows its end
  std::optional<double> progress;  // last percentage shown by a progress bar
  std::string file;
  uint64_t line = 0;                       // where it began
  std::optional<double> seconds;           // duration, when the log shows it
  std::string seconds_from;                // "timestamps", "progress bar", "phase durations", ...
  std::optional<double> reported_seconds;  // "Compiled/Loaded model in N secs"
  std::vector<PhaseTime> phases;           // Poplar phases that ended within it, in order
  bool after_warmup = false;
};

struct ModuleSummary {
  std::string module;
  int compilations = 0;
  int loads = 0;
  std::vector<std::string> hashes;  // distinct, in order of appearance
  double seconds = 0;               // known time spent compiling or loading
};

struct DeviceAttach {
  std::string device;                // "/device:IPU:0"
  std::string ipus;                  // "1 IPU with Poplar device ID: 0", "IPUs: 5,7,4,6"
  std::optional<uint64_t> num_ipus;  // when the line says
  std::string file;
  uint64_t line = 0;
};

struct LogScanOptions {
  // Number of compile/load events that make up warm-up. Unset: warm-up ends
  // just before the first event that builds a named module a second time.
  std::optional<int> warmup_events;
};

struct LogScanSummary {
  std::vector<std::string> files;
  uint64_t lines = 0;                  // physical lines read
  std::vector<ModuleBuild> builds;     // in log order
  std::vector<ModuleSummary> modules;  // named modules, by first appearance
  std::vector<DeviceAttach> devices;
  std::vector<std::string> poplar_versions;
  std::vector<std::string> frameworks;  // of the builds, by first appearance
  int compilations = 0;                 // builds of kind compile or pre-compile
  int cache_hits = 0;
  int cache_misses = 0;
  int precompiled = 0;
  int executable_loads = 0;  // "Loading executable" phases: executables put on the device
  double executable_load_ms = 0;
  int graph_constructions = 0;
  int unmatched_ends = 0;                // End lines with no Begin (log started mid-compile)
  size_t warmup_events = 0;              // builds[0 .. warmup_events) are warm-up
  std::string warmup_rule;               // how the boundary was chosen, for the report
  std::vector<std::string> phase_notes;  // e.g. repeated "Loading executable" phases
  std::vector<std::string> notes;        // incomplete builds, function groups
  double seconds_after_warmup = 0;       // known time lost after warm-up
  int builds_after_warmup = 0;
  int builds_after_warmup_unknown_time = 0;
};

// Reads logs one after another and summarises them.
class LogScanner {
 public:
  explicit LogScanner(const LogScanOptions& options = {});
  ~LogScanner();
  LogScanner(const LogScanner&) = delete;
  LogScanner& operator=(const LogScanner&) = delete;

  // Scans one whole log. `text` need only live during the call.
  void Scan(std::string_view text, std::string_view file);
  LogScanSummary Finish();

  class Builds;  // the aggregation (log_builds.h), shared with ScanLogs

 private:
  std::unique_ptr<Builds> builds_;
};

// The same over already parsed logs (events of one log per element).
LogScanSummary ScanLogs(const std::vector<std::vector<LogEvent>>& logs,
                        const std::vector<std::string>& files, const LogScanOptions& options);

// Report for people: a verdict first, then per-build and per-module rows.
std::string FormatLogScanText(const LogScanSummary& summary);
// The same data for programs (docs/logscan.md "JSON").
std::string FormatLogScanJson(const LogScanSummary& summary);

}  // namespace tileprof::analyzer
