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
  // Bounds that keep memory proportional to what is reported, whatever the
  // log: a real one has far fewer builds, phases, devices and versions; an
  // adversarial one (a GB of "Compiling module x:" lines) gets the first
  // ones and a note saying how many more there were.
  static constexpr size_t kMaxBuilds = 100'000;
  static constexpr size_t kMaxPhases = 1'000'000;  // over all builds
  static constexpr size_t kMaxPhaseDepth = 256;
  static constexpr size_t kMaxDevices = 10'000;
  static constexpr size_t kMaxVersions = 100;

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
  void EndCompile(const LogEvent& e);
  void FrameworkCompileStart(const LogEvent& e);
  void FrameworkCompileEnd(const LogEvent& e);
  void CompiledOrLoaded(const LogEvent& e);
  void PhaseStarted(const LogEvent& e);
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
  ModuleBuild scratch_;  // where builds past kMaxBuilds go
  size_t phases_kept_ = 0;
  uint64_t builds_not_kept_ = 0, phases_not_kept_ = 0, devices_not_kept_ = 0;
  uint64_t phase_constructions_ = 0, tf_constructions_ = 0;
  // name -> (ends, total ms), for the phases the recompilation note names.
  std::map<std::string, std::pair<int, double>> phase_stats_;
};

}  // namespace tileprof::analyzer
