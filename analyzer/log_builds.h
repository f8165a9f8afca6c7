// The aggregation of `tileprof logscan`: events in, compilations out. Keeps
// the builds and counters, never the lines, so its memory grows with the
// number of compilations, not with the size of the log. The rules are
// written down in docs/logscan.md ("How compilations are counted").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/log_lines.h"
#include "analyzer/log_scan.h"

namespace tileprof::analyzer {

class LogScanner::Builds {
 public:
  explicit Builds(const LogScanOptions& options) : options_(options) {}

  void BeginFile(std::string_view file);
  void Add(const LogEvent& e);
  // True while a compilation seen only through poplar_compiler.cc lines is
  // open: then the scanner shows every line (OtherLine), since the first
  // line from outside TensorFlow's compiler ends it.
  bool WantsEveryLine() const { return inferred_; }
  void OtherLine(const LogLine& line);
  void EndFile(uint64_t lines);
  LogScanSummary Finish();

 private:
  static constexpr size_t kNone = SIZE_MAX;

  ModuleBuild& Open(const LogEvent& e, std::string_view framework, std::string_view module,
                    std::string_view evidence, BuildKind kind);
  void Close();
  ModuleBuild* Current() { return open_ == kNone ? nullptr : &s_.builds[open_]; }
  bool CurrentIs(std::initializer_list<std::string_view> frameworks) const;
  void AddEvidence(ModuleBuild& b, std::string_view evidence);
  void FromTimestamps(ModuleBuild& b, const LogEvent& end);
  void PhaseEnded(const LogEvent& e, bool perf);
  void Progress(const LogEvent& e);
  void TorchProgress(const LogEvent& e);
  void CacheHit(const LogEvent& e);
  void CacheSaved(const LogEvent& e);
  void Device(const LogEvent& e);
  void WarmupAndModules();
  void Notes();

  LogScanOptions options_;
  LogScanSummary s_;
  std::string file_;
  size_t open_ = kNone;
  bool inferred_ = false;        // the open build is seen through compiler lines only
  bool open_has_begin_ = false;  // ... and was opened by a Begin XLA compilation line
  bool open_has_construction_ = false;
  std::optional<double> open_began_;  // timestamp of its first line
  bool saw_xla_build_ = false;        // a TensorFlow or JAX build in this file
  size_t last_torch_ = kNone;         // the last PopTorch build awaiting "Compiled/Loaded"
  std::vector<std::string> phase_stack_;
  uint64_t phase_constructions_ = 0, tf_constructions_ = 0;
  std::map<std::string, std::pair<int, double>> phase_stats_;  // name -> (ends, total ms)
};

}  // namespace tileprof::analyzer
