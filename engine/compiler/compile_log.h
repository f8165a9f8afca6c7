// The compiler's console output: log lines in TensorFlow's format and the
// Poplar-style phase lines, so a tileprof log reads like the logs users
// already grep and `tileprof logscan` counts it the same way
// (../shared/spec/executable-cache.md sections 5 and 8).
//
//   CompileLog log(stderr, LogLevel::kInfo);
//   log.Info("poplar_compiler.cc", "Begin XLA compilation: m  (Hash: 0x1f) for ordinal  0");
//   {
//     PhaseScope phase(log, "graphConstruction");
//     ...   // "Starting phase: graphConstruction" ...
//   }       // "Ending phase: graphConstruction (duration 12 ms; diff RSS: 0.5 MB)"
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace tileprof::engine {

// INFO is what POPLAR_LOG_LEVEL=INFO / TF_CPP_MIN_LOG_LEVEL=0 show; kVerbose
// adds what TF prints at VLOG(1) (Begin/End XLA compilation, cache lookups).
// Default: kWarning, which prints nothing but warnings and errors.
enum class LogLevel : uint8_t { kError, kWarning, kInfo, kVerbose };

// "error", "warning", "info", "verbose" (also TF's 0-3 digits, 0 = verbose).
bool ParseLogLevel(std::string_view text, LogLevel* level);

class CompileLog {
 public:
  // `out` may be null: nothing is printed (tests, library users).
  explicit CompileLog(std::FILE* out = nullptr, LogLevel level = LogLevel::kWarning)
      : out_(out), level_(level) {}

  bool Enabled(LogLevel level) const { return out_ != nullptr && level <= level_; }
  LogLevel level() const { return level_; }

  // One line "2026-11-21 19:48:26.123456: I tileprof/<where>] <message>".
  void Write(LogLevel level, std::string_view where, std::string_view message);
  void Info(std::string_view where, std::string_view message) {
    Write(LogLevel::kInfo, where, message);
  }
  void Verbose(std::string_view where, std::string_view message) {
    Write(LogLevel::kVerbose, where, message);
  }
  void Warning(std::string_view where, std::string_view message) {
    Write(LogLevel::kWarning, where, message);
  }

 private:
  std::FILE* out_;
  LogLevel level_;
  std::mutex mutex_;  // the progress bar's thread and the compiler both log
};

// Resident set size of this process in bytes, from /proc/self/statm; 0 when
// unavailable (the phase line then reports a zero difference).
uint64_t ResidentBytes();

// Logs "Starting phase: <name>" now and "Ending phase: <name> (duration N ms;
// diff RSS: X MB)" when destroyed, at INFO, as Poplar does.
class PhaseScope {
 public:
  PhaseScope(CompileLog& log, std::string name);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

  // Milliseconds since the phase started.
  int64_t ElapsedMs() const;

 private:
  CompileLog& log_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
  uint64_t start_rss_;
};

// "(duration 607 ms; diff RSS: 0.586426 MB)": the RSS difference in MB
// (2^20 bytes) with up to six significant digits, as in the tech note's line.
std::string PhaseEndText(std::string_view name, int64_t duration_ms, int64_t rss_diff_bytes);

}  // namespace tileprof::engine
