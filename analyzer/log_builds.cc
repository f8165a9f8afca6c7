#include "analyzer/log_builds.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace tileprof::analyzer {
namespace {

// TensorFlow's bar shortens long module names with "..." in the middle
// ("a_inference_train_function_18311__XlaMustCompile_true_config_proto___n_007_n_0
// ...02_001_000__executor_type____.19234", B02), so a name matches another
// when they are equal or the shortened one's ends match the other's.
bool NamesMatch(std::string_view a, std::string_view b) {
  if (a == b) return true;
  for (auto [shortened, full] : {std::pair{a, b}, std::pair{b, a}}) {
    size_t dots = shortened.find("...");
    if (dots == std::string_view::npos) continue;
    std::string_view head = shortened.substr(0, dots), tail = shortened.substr(dots + 3);
    if (full.size() >= head.size() + tail.size() && full.starts_with(head) && full.ends_with(tail))
      return true;
  }
  return false;
}

// "1 IPU with Poplar device ID: 0" -> 1; "IPU: 0" -> 1; "IPUs: 5,7,4,6" -> 4.
// "IPUs: 24" names one multi-IPU device whose size the line does not give.
std::optional<uint64_t> IpusOf(std::string_view text) {
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0])))
    return std::strtoull(std::string(text).c_str(), nullptr, 10);
  if (text.starts_with("IPU:")) return 1;
  if (text.starts_with("IPUs:") && text.find(',') != std::string_view::npos)
    return static_cast<uint64_t>(std::count(text.begin(), text.end(), ',')) + 1;
  return std::nullopt;
}

}  // namespace

std::string_view BuildKindName(BuildKind kind) {
  switch (kind) {
    case BuildKind::kCompile:
      return "compile";
    case BuildKind::kLoad:
      return "load";
    case BuildKind::kPrecompile:
      return "pre-compile";
    case BuildKind::kCompileOrLoad:
      return "compile or load";
  }
  return "compile";
}

void LogScanner::Builds::BeginFile(std::string_view file) {
  file_ = std::string(file);
  s_.files.push_back(file_);
  open_ = kNone;
  inferred_ = false;
  saw_xla_build_ = false;
  last_torch_ = kNone;
  phase_stack_.clear();
  phase_constructions_ = tf_constructions_ = 0;
}

ModuleBuild& LogScanner::Builds::Open(const LogEvent& e, std::string_view framework,
                                      std::string_view module, std::string_view evidence,
                                      BuildKind kind) {
  Close();
  if (s_.builds.size() >= kMaxBuilds) {
    ++builds_not_kept_;
    scratch_ = ModuleBuild{};
    return scratch_;
  }
  ModuleBuild b;
  b.module = std::string(module);
  b.framework = std::string(framework);
  b.kind = kind;
  b.evidence = std::string(evidence);
  b.file = file_;
  b.line = e.line;
  s_.builds.push_back(std::move(b));
  open_ = s_.builds.size() - 1;
  open_has_begin_ = e.kind == LogEventKind::kBeginCompile;
  open_has_construction_ = false;
  open_began_ = e.timestamp;
  if (framework == "tensorflow" || framework == "jax") saw_xla_build_ = true;
  if (framework == "poptorch") last_torch_ = open_;
  if (std::find(s_.frameworks.begin(), s_.frameworks.end(), framework) == s_.frameworks.end())
    s_.frameworks.emplace_back(framework);
  return s_.builds.back();
}

void LogScanner::Builds::Close() {
  open_ = kNone;
  inferred_ = false;
  open_has_begin_ = false;
}

bool LogScanner::Builds::CurrentIs(std::initializer_list<std::string_view> frameworks) const {
  if (open_ == kNone) return false;
  const std::string& framework = s_.builds[open_].framework;
  return std::find(frameworks.begin(), frameworks.end(), framework) != frameworks.end();
}

void LogScanner::Builds::AddEvidence(ModuleBuild& b, std::string_view evidence) {
  if (b.evidence.find(evidence) == std::string::npos) b.evidence += ", " + std::string(evidence);
}

void LogScanner::Builds::FromTimestamps(ModuleBuild& b, const LogEvent& end) {
  if (open_began_ && end.timestamp && *end.timestamp >= *open_began_) {
    b.seconds = *end.timestamp - *open_began_;
    b.seconds_from = "timestamps";
  }
}

// Long on purpose: one case per kind of log event, most a call; the whole
// event vocabulary of a build in one switch the compiler checks for gaps.
void LogScanner::Builds::Add(const LogEvent& e) {
  switch (e.kind) {
    case LogEventKind::kBeginCompile:
      Open(e, e.framework, e.module, "Begin/End XLA compilation", BuildKind::kCompile).hash =
          std::string(e.hash);
      break;
    case LogEventKind::kEndCompile:
      EndCompile(e);
      break;
    case LogEventKind::kProgressStart:
      if (CurrentIs({"tensorflow", "jax"}) && open_has_begin_ &&
          NamesMatch(e.module, Current()->module)) {
        AddEvidence(*Current(), "progress bar");
      } else {
        Open(e, e.framework, e.module, "progress bar", BuildKind::kCompile);
      }
      break;
    case LogEventKind::kProgressFrame:
      Progress(e);
      break;
    case LogEventKind::kTorchProgress:
      TorchProgress(e);
      break;
    case LogEventKind::kFrameworkCompileStart:
      FrameworkCompileStart(e);
      break;
    case LogEventKind::kFrameworkCompileEnd:
      FrameworkCompileEnd(e);
      break;
    case LogEventKind::kCompiledOrLoaded:
      CompiledOrLoaded(e);
      break;
    case LogEventKind::kCacheHit:
      CacheHit(e);
      break;
    case LogEventKind::kCacheMiss:
      ++s_.cache_misses;
      if (ModuleBuild* b = Current()) {
        b->cache_miss = true;
        b->cache_file = std::string(e.path);
      }
      break;
    case LogEventKind::kCacheSaved:
      CacheSaved(e);
      break;
    case LogEventKind::kPhaseStart:
      PhaseStarted(e);
      break;
    case LogEventKind::kPhaseEnd:
      PhaseEnded(e, false);
      break;
    case LogEventKind::kPerf:
      PhaseEnded(e, true);
      break;
    case LogEventKind::kCompilerLine:
      if (!CurrentIs({"tensorflow", "jax"})) {
        Open(e, "tensorflow", "", "poplar_compiler.cc log lines", BuildKind::kCompile);
        inferred_ = true;
      }
      break;
    case LogEventKind::kXlaClusterCompiled:
      // Logged once per process after its first XLA compilation: evidence of
      // one compilation only when the log shows no other.
      if (!saw_xla_build_ && !CurrentIs({"tensorflow", "jax"})) {
        Open(e, "tensorflow", "", "Compiled cluster using XLA! (logged once per process)",
             BuildKind::kCompile)
            .complete = true;
        Close();
      }
      break;
    case LogEventKind::kGraphConstructionBegin:
      ++tf_constructions_;
      break;
    case LogEventKind::kDeviceAttached:
      Device(e);
      break;
    case LogEventKind::kPoplarVersion:
      if (s_.poplar_versions.size() < kMaxVersions &&
          std::find(s_.poplar_versions.begin(), s_.poplar_versions.end(), e.module) ==
              s_.poplar_versions.end())
        s_.poplar_versions.emplace_back(e.module);
      break;
  }
}

void LogScanner::Builds::EndCompile(const LogEvent& e) {
  ModuleBuild* b = Current();
  if (!b || !open_has_begin_ || !NamesMatch(e.module, b->module)) {
    ++s_.unmatched_ends;
    return;
  }
  b->complete = true;
  FromTimestamps(*b, e);
  Close();
}

void LogScanner::Builds::FrameworkCompileStart(const LogEvent& e) {
  if (e.framework == "popart" && CurrentIs({"poptorch", "popart"}) && !Current()->complete) {
    AddEvidence(*Current(), "Starting compilation");
    open_began_ = e.timestamp;
  } else {
    Open(e, e.framework, "",
         e.framework == "popart" ? "Starting compilation" : "Compiling Model...",
         BuildKind::kCompile);
  }
}

void LogScanner::Builds::FrameworkCompileEnd(const LogEvent& e) {
  if (!CurrentIs({"poptorch", "popart"})) return;
  ModuleBuild& b = *Current();
  b.complete = true;
  AddEvidence(b, "Graph compiled");
  if (!b.seconds) FromTimestamps(b, e);
  if (b.framework == "popart") Close();
}

void LogScanner::Builds::CompiledOrLoaded(const LogEvent& e) {
  if (last_torch_ != kNone && !s_.builds[last_torch_].reported_seconds) {
    ModuleBuild& b = s_.builds[last_torch_];
    b.reported_seconds = e.seconds;
    // "Compiling Model..." and no bar: PopTorch shows none when it loads
    // the executable from its cache, so either may have happened.
    if (!b.progress) b.kind = BuildKind::kCompileOrLoad;
    b.complete = true;
    if (!b.seconds) {
      b.seconds = e.seconds;
      b.seconds_from = "Compiled/Loaded line";
    }
    if (open_ == last_torch_) Close();
    return;
  }
  ModuleBuild& b = Open(e, "poptorch", "", "Compiled/Loaded model line", BuildKind::kCompileOrLoad);
  b.seconds = b.reported_seconds = e.seconds;
  b.seconds_from = "Compiled/Loaded line";
  b.complete = true;
  Close();
}

void LogScanner::Builds::PhaseStarted(const LogEvent& e) {
  if (e.phase == "graphConstruction") {
    ++phase_constructions_;
    if (CurrentIs({"poplar"}) || (Current() && open_has_construction_)) Close();
    if (!Current()) Open(e, "poplar", "", "Poplar phase lines", BuildKind::kCompile);
    open_has_construction_ = true;
  } else if (!Current() && e.phase != "Loading executable") {
    Open(e, "poplar", "", "Poplar phase lines", BuildKind::kCompile);
  }
  if (phase_stack_.size() == kMaxPhaseDepth) phase_stack_.erase(phase_stack_.begin());
  phase_stack_.emplace_back(e.phase);
}

void LogScanner::Builds::Progress(const LogEvent& e) {
  ModuleBuild* b = CurrentIs({"tensorflow", "jax"}) ? Current() : nullptr;
  // A bar going backwards, or one whose "Compiling module" line is not in
  // the log, is another compilation.
  if (b && b->progress && e.percent && *e.percent < *b->progress) b = nullptr;
  if (!b) {
    b = &Open(e, "tensorflow", "",
              e.seconds ? "progress bar (its first line is not in the log)"
                        : "Poplar compilation N% complete lines",
              BuildKind::kCompile);
  }
  if (e.percent) b->progress = e.percent;
  if (e.seconds) {
    b->seconds = e.seconds;
    b->seconds_from = "progress bar";
  }
  if ((e.percent && *e.percent >= 100) || e.phase == "Compilation Finished") {
    b->complete = true;
    if (!open_has_begin_) Close();
  }
}

void LogScanner::Builds::TorchProgress(const LogEvent& e) {
  ModuleBuild* b = CurrentIs({"poptorch"}) ? Current() : nullptr;
  if (b && (b->complete || (b->progress && *e.percent < *b->progress))) b = nullptr;
  if (!b) b = &Open(e, "poptorch", "", "Graph compilation bar", BuildKind::kCompile);
  AddEvidence(*b, "Graph compilation bar");
  b->progress = e.percent;
  if (e.seconds) {
    b->seconds = e.seconds;
    b->seconds_from = "progress bar";
  }
  if (*e.percent >= 100) {
    b->complete = true;
    Close();
  }
}

void LogScanner::Builds::CacheHit(const LogEvent& e) {
  ++s_.cache_hits;
  ModuleBuild* b = Current();
  bool same = e.framework == "popart"
                  ? CurrentIs({"popart", "poptorch"}) && !b->complete
                  : CurrentIs({"tensorflow", "jax"}) && NamesMatch(e.module, b->module);
  if (!same) {
    b = &Open(e, e.framework, e.module,
              e.framework == "popart" ? "Loading serialized PopART executable" : "Loaded ... from",
              BuildKind::kLoad);
  }
  b->kind = BuildKind::kLoad;
  b->cache_file = std::string(e.path);
  b->complete = true;
  if (e.framework != "popart") FromTimestamps(*b, e);
  Close();
}

void LogScanner::Builds::CacheSaved(const LogEvent& e) {
  bool popart = e.framework == "popart";
  ModuleBuild* b = Current();
  if (!b && !s_.builds.empty() && s_.builds.back().file == file_ &&
      s_.builds.back().framework == std::string(popart ? "popart" : "tensorflow") &&
      s_.builds.back().cache_file.empty())
    b = &s_.builds.back();
  if (popart) {
    if (b) b->cache_file = std::string(e.path);
    return;
  }
  ++s_.precompiled;
  if (!b) {
    b = &Open(e, "tensorflow", "", "pre-compiled program saved", BuildKind::kPrecompile);
    b->complete = true;
    Close();
  }
  b->kind = BuildKind::kPrecompile;
  b->cache_file = std::string(e.path);
}

void LogScanner::Builds::PhaseEnded(const LogEvent& e, bool perf) {
  std::string name(e.phase);
  int depth = static_cast<int>(phase_stack_.size());
  if (!perf) {
    auto it = std::find(phase_stack_.rbegin(), phase_stack_.rend(), name);
    if (it != phase_stack_.rend()) {
      depth = static_cast<int>(phase_stack_.rend() - it) - 1;
      phase_stack_.resize(static_cast<size_t>(depth));
    }
  }
  std::optional<double> ms;
  if (e.seconds) ms = *e.seconds * 1000;
  if (ms &&
      (name == "Loading executable" || name == "graphConstruction" || name == "compileGraph")) {
    auto& [count, total] = phase_stats_[name];
    ++count;
    total += *ms;
  }
  if (name == "Loading executable") {
    ++s_.executable_loads;
    if (ms) s_.executable_load_ms += *ms;
    if (!Current()) return;
  }
  ModuleBuild& b = Current() ? *Current()
                             : Open(e, "poplar", "", perf ? "PO:PERF lines" : "Poplar phase lines",
                                    BuildKind::kCompile);
  PhaseTime* phase = nullptr;
  if (perf) {  // completes a recent "Ending phase" line without figures, if any
    size_t looked = 0;
    for (auto it = b.phases.rbegin(); it != b.phases.rend() && !phase && looked++ < 64; ++it)
      if (it->name == name && !it->ms) phase = &*it;
  }
  if (!phase && phases_kept_ >= kMaxPhases) {
    ++phases_not_kept_;
    return;
  }
  if (!phase) {
    b.phases.push_back({name, depth, {}, {}, {}});
    phase = &b.phases.back();
    ++phases_kept_;
  }
  if (ms) phase->ms = ms;
  if (e.rss_diff_mb) phase->rss_diff_mb = e.rss_diff_mb;
  if (e.rss_total_mb) phase->rss_total_mb = e.rss_total_mb;
  if (name == "compileGraph" && b.framework == "poplar" && phase->depth == 0) {
    double sum = 0;
    bool known = true;
    for (const PhaseTime& p : b.phases) {
      if (p.depth != 0) continue;
      known = known && p.ms.has_value();
      sum += p.ms.value_or(0);
    }
    b.complete = true;
    if (known) {
      b.seconds = sum / 1000;
      b.seconds_from = "phase durations";
    }
    Close();
  }
}

void LogScanner::Builds::Device(const LogEvent& e) {
  if (s_.devices.size() >= kMaxDevices) {
    ++devices_not_kept_;
    return;
  }
  DeviceAttach d;
  d.device = std::string(e.device);
  d.ipus = std::string(e.ipus);
  d.num_ipus = IpusOf(e.ipus);
  d.file = file_;
  d.line = e.line;
  s_.devices.push_back(std::move(d));
}

void LogScanner::Builds::OtherLine(const LogLine& line) {
  if (!inferred_ || line.message.empty()) return;
  if (line.source.find("compiler") != std::string_view::npos) return;
  // The log has moved on to other work: the compilation is over.
  if (ModuleBuild* b = Current()) b->complete = true;
  Close();
}

void LogScanner::Builds::EndFile(uint64_t lines) {
  Close();
  s_.lines += lines;
  // Poplar's phase line and TensorFlow's "Begin Poplar graph construction."
  // both mark a construction; a log at both levels has both for each one.
  s_.graph_constructions += static_cast<int>(std::max(phase_constructions_, tf_constructions_));
}

}  // namespace tileprof::analyzer
