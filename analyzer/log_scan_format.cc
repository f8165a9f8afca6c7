// Text and JSON renderings of a LogScanSummary: one data source, two outputs.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/log_scan.h"
#include "common/format.h"

namespace tileprof::analyzer {
namespace {

std::string Seconds(double s) { return WithThousands(s, 1) + " s"; }

std::string Plural(int n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string FrameworkName(std::string_view framework) {
  if (framework == "tensorflow") return "TensorFlow";
  if (framework == "jax") return "JAX";
  if (framework == "poptorch") return "PopTorch";
  if (framework == "popart") return "PopART";
  if (framework == "poplar") return "Poplar";
  return std::string(framework);
}

std::string BuildName(const ModuleBuild& b) {
  return b.module.empty() ? "(unnamed " + FrameworkName(b.framework) + " graph)" : b.module;
}

// What the log shows when it shows no compilation, for the verdict.
std::string Shows(const LogScanSummary& s) {
  std::vector<std::string> parts;
  if (!s.poplar_versions.empty())
    parts.push_back("Poplar " + fmt::format("{}", fmt::join(s.poplar_versions, ", ")));
  if (!s.devices.empty())
    parts.push_back(Plural(static_cast<int>(s.devices.size()), "device attach", "device attaches"));
  if (parts.empty()) return "";
  return fmt::format(" (it shows {})", fmt::join(parts, ", "));
}

std::string CountsLine(const LogScanSummary& s) {
  int incomplete = 0, compile_or_load = 0;
  double known = 0;
  int unknown_time = 0;
  for (const ModuleBuild& b : s.builds) {
    if (b.kind == BuildKind::kCompileOrLoad) ++compile_or_load;
    if (b.kind != BuildKind::kCompile && b.kind != BuildKind::kPrecompile) continue;
    incomplete += !b.complete;
    if (b.seconds) {
      known += *b.seconds;
    } else {
      ++unknown_time;
    }
  }
  std::vector<std::string> frameworks;
  for (const std::string& f : s.frameworks) frameworks.push_back(FrameworkName(f));
  std::string out =
      fmt::format("Verdict: {}", Plural(s.compilations, "compilation", "compilations"));
  if (!frameworks.empty()) out += fmt::format(" ({})", fmt::join(frameworks, ", "));
  if (s.compilations > 0) {
    if (unknown_time == s.compilations) {
      out += ", of unknown duration";
    } else {
      out +=
          fmt::format(", {} in all{}", Seconds(known),
                      unknown_time ? fmt::format(" ({} of unknown duration)", unknown_time) : "");
    }
    if (incomplete) out += fmt::format(", {} not finished in the log", incomplete);
  }
  if (compile_or_load)
    out += fmt::format("; {} compiled or loaded from the cache (the log does not say which)",
                       compile_or_load);
  if (s.cache_hits)
    out += "; " + Plural(s.cache_hits, "load from the executable cache",
                         "loads from the executable cache");
  if (s.precompiled) out += fmt::format("; {} saved in pre-compile mode", s.precompiled);
  if (s.executable_loads)
    out += fmt::format("; {} ({} ms)",
                       Plural(s.executable_loads, "executable load", "executable loads"),
                       static_cast<int64_t>(s.executable_load_ms));
  return out + ".\n";
}

std::string Verdict(const LogScanSummary& s) {
  if (s.builds.empty() && s.executable_loads == 0) {
    return fmt::format(
        "Verdict: no compilation, executable-cache or executable-load lines in {}{}.\n"
        "  To see compilations: TensorFlow and JAX print a progress bar on a terminal, or log\n"
        "  them with TF_POPLAR_VLOG_LEVEL=1 (or TF_CPP_VMODULE=poplar_compiler=1); PopTorch shows "
        "a\n"
        "  'Graph compilation' bar; PopART logs them with POPART_LOG_LEVEL=INFO; Poplar logs its\n"
        "  phases with POPLAR_LOG_LEVEL=INFO.\n",
        Plural(static_cast<int>(s.lines), "line", "lines"), Shows(s));
  }
  std::string out = CountsLine(s);
  if (s.builds.empty()) return out;
  std::vector<const ModuleSummary*> rehashed;
  for (const ModuleSummary& m : s.modules)
    if (m.hashes.size() > 1) rehashed.push_back(&m);
  for (const ModuleSummary* m : rehashed) {
    out += fmt::format(
        "Verdict: module '{}' was compiled under {} different hashes ({}): "
        "its HLO changed between compilations.\n",
        m->module, m->hashes.size(), fmt::join(m->hashes, ", "));
  }
  if (s.builds_after_warmup == 0 && rehashed.empty()) {
    bool unnamed = std::any_of(s.builds.begin(), s.builds.end(),
                               [](const ModuleBuild& b) { return b.module.empty(); });
    out += s.modules.empty() && unnamed
               ? "  No recompilation can be told: the log does not name what it compiled.\n"
               : fmt::format("  No recompilation: {} named module(s), each built once{}.\n",
                             s.modules.size(),
                             unnamed ? " (the unnamed builds cannot be compared)" : "");
    return out;
  }
  if (s.builds_after_warmup > 0) {
    const ModuleBuild& first = s.builds[s.warmup_events];
    std::string cost;
    if (s.builds_after_warmup_unknown_time == s.builds_after_warmup)
      cost = "an unknown time (the log does not show their durations)";
    else if (s.builds_after_warmup_unknown_time > 0)
      cost = fmt::format("at least {} ({} of unknown duration)", Seconds(s.seconds_after_warmup),
                         s.builds_after_warmup_unknown_time);
    else
      cost = Seconds(s.seconds_after_warmup);
    out += fmt::format("  {} build(s) after warm-up cost {}; the first: {} of '{}' at {}:{}.\n",
                       s.builds_after_warmup, cost, BuildKindName(first.kind), BuildName(first),
                       first.file, first.line);
  }
  out +=
      "  Where to look: dump the HLO of two runs (XLA_FLAGS=--xla_dump_to=DIR) and run\n"
      "  'tileprof dumpdiff RUN1 RUN2'; typical causes are a changed batch size, weights\n"
      "  frozen as constants, and tf.concat in a loop (see 'tileprof help logscan').\n";
  return out;
}

std::string PhasesText(const ModuleBuild& b) {
  // The outermost phases the log shows; the JSON has them all, with depths.
  int top = b.phases.front().depth;
  for (const PhaseTime& p : b.phases) top = std::min(top, p.depth);
  std::vector<std::string> parts;
  for (const PhaseTime& p : b.phases) {
    if (p.depth != top) continue;
    parts.push_back(p.ms ? fmt::format("{} {} ms", p.name, WithThousands(*p.ms, 0)) : p.name);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string FormatLogScanText(const LogScanSummary& s) {
  std::string out = Verdict(s);
  out += fmt::format("\nLogs: {} ({})\n", fmt::join(s.files, ", "),
                     Plural(static_cast<int>(s.lines), "line", "lines"));
  if (!s.poplar_versions.empty())
    out += fmt::format("Poplar version: {}\n", fmt::join(s.poplar_versions, ", "));
  out += fmt::format(
      "Compilations: {}  Loads from cache: {}  Cache misses: {}  Pre-compiled: {}  "
      "Executable loads: {}  Graph constructions: {}\n",
      s.compilations, s.cache_hits, s.cache_misses, s.precompiled, s.executable_loads,
      s.graph_constructions);
  for (const DeviceAttach& d : s.devices)
    out += fmt::format("Device: {} attached to {} ({}:{})\n", d.device, d.ipus, d.file, d.line);
  out += fmt::format("Warm-up: {} build(s); {}\n", s.warmup_events, s.warmup_rule);
  if (s.unmatched_ends > 0)
    out += fmt::format("Note: {} 'End XLA compilation' line(s) had no matching Begin line\n",
                       s.unmatched_ends);
  for (const std::string& note : s.notes) out += "Note: " + note + "\n";
  for (const std::string& note : s.phase_notes) out += "Note: " + note + "\n";

  if (!s.builds.empty()) {
    out += "\nBuilds:\n";
    for (size_t i = 0; i < s.builds.size(); ++i) {
      const ModuleBuild& b = s.builds[i];
      std::string time =
          b.seconds ? Seconds(*b.seconds) + " (" + b.seconds_from + ")" : "time unknown";
      out += fmt::format("  {}. {}:{}  {} {} of '{}'  {}{}{}\n", i + 1, b.file, b.line,
                         FrameworkName(b.framework), BuildKindName(b.kind), BuildName(b), time,
                         b.complete ? "" : "  [not finished in the log]",
                         b.after_warmup ? "  [after warm-up]" : "");
      if (!b.hash.empty() || !b.cache_file.empty())
        out += fmt::format(
            "       {}{}{}\n", b.hash.empty() ? "" : "Hash: " + b.hash + "  ",
            b.cache_miss ? "cache miss: " : (b.cache_file.empty() ? "" : "cache file: "),
            b.cache_file);
      if (b.reported_seconds)
        out += fmt::format("       Compiled/Loaded model in {}\n", Seconds(*b.reported_seconds));
      if (!b.phases.empty()) out += "       phases: " + PhasesText(b) + "\n";
      out += "       seen through: " + b.evidence + "\n";
    }
  }
  if (!s.modules.empty()) {
    size_t width = std::string_view("Module").size();
    for (const ModuleSummary& m : s.modules) width = std::max(width, m.module.size());
    out += fmt::format("\n{:<{}}  {:>12}  {:>5}  {:>6}  {:>10}\n", "Module", width, "Compilations",
                       "Loads", "Hashes", "Time");
    for (const ModuleSummary& m : s.modules) {
      out += fmt::format("{:<{}}  {:>12}  {:>5}  {:>6}  {:>10}\n", m.module, width, m.compilations,
                         m.loads, m.hashes.size(), Seconds(m.seconds));
    }
  }
  if (s.builds_after_warmup > 0) {
    out += "\nAfter warm-up:\n";
    for (const ModuleBuild& b : s.builds) {
      if (!b.after_warmup) continue;
      out += fmt::format("  {}:{}  {} of '{}'{}  {}{}\n", b.file, b.line, BuildKindName(b.kind),
                         BuildName(b), b.hash.empty() ? "" : " (Hash: " + b.hash + ")",
                         b.seconds ? Seconds(*b.seconds) : "time unknown",
                         b.cache_miss ? "  [cache miss: " + b.cache_file + "]" : "");
    }
  }
  return out;
}

std::string FormatLogScanJson(const LogScanSummary& s) {
  using nlohmann::ordered_json;
  auto optional = [](const std::optional<double>& v) {
    return v ? ordered_json(*v) : ordered_json();
  };
  ordered_json builds = ordered_json::array();
  for (const ModuleBuild& b : s.builds) {
    ordered_json phases = ordered_json::array();
    for (const PhaseTime& p : b.phases) {
      phases.push_back({{"name", p.name},
                        {"depth", p.depth},
                        {"ms", optional(p.ms)},
                        {"rss_diff_mb", optional(p.rss_diff_mb)},
                        {"rss_total_mb", optional(p.rss_total_mb)}});
    }
    builds.push_back({{"module", b.module},
                      {"framework", b.framework},
                      {"kind", BuildKindName(b.kind)},
                      {"evidence", b.evidence},
                      {"complete", b.complete},
                      {"progress", optional(b.progress)},
                      {"hash", b.hash},
                      {"cache_miss", b.cache_miss},
                      {"cache_file", b.cache_file},
                      {"file", b.file},
                      {"line", b.line},
                      {"seconds", optional(b.seconds)},
                      {"seconds_from", b.seconds_from},
                      {"reported_seconds", optional(b.reported_seconds)},
                      {"phases", phases},
                      {"after_warmup", b.after_warmup}});
  }
  ordered_json modules = ordered_json::array();
  for (const ModuleSummary& m : s.modules) {
    modules.push_back({{"module", m.module},
                       {"compilations", m.compilations},
                       {"loads", m.loads},
                       {"hashes", m.hashes},
                       {"seconds", m.seconds},
                       {"recompiled", m.hashes.size() > 1}});
  }
  ordered_json devices = ordered_json::array();
  for (const DeviceAttach& d : s.devices) {
    devices.push_back({{"device", d.device},
                       {"attached_to", d.ipus},
                       {"ipus", d.num_ipus ? ordered_json(*d.num_ipus) : ordered_json()},
                       {"file", d.file},
                       {"line", d.line}});
  }
  ordered_json doc = {{"format_version", {{"major", 2}, {"minor", 0}}},
                      {"files", s.files},
                      {"lines", s.lines},
                      {"poplar_versions", s.poplar_versions},
                      {"frameworks", s.frameworks},
                      {"compilations", s.compilations},
                      {"cache_hits", s.cache_hits},
                      {"cache_misses", s.cache_misses},
                      {"precompiled", s.precompiled},
                      {"executable_loads", s.executable_loads},
                      {"executable_load_ms", s.executable_load_ms},
                      {"graph_constructions", s.graph_constructions},
                      {"unmatched_ends", s.unmatched_ends},
                      {"devices", devices},
                      {"warmup", {{"builds", s.warmup_events}, {"rule", s.warmup_rule}}},
                      {"after_warmup",
                       {{"builds", s.builds_after_warmup},
                        {"seconds", s.seconds_after_warmup},
                        {"builds_of_unknown_duration", s.builds_after_warmup_unknown_time}}},
                      {"notes", s.notes},
                      {"phase_notes", s.phase_notes},
                      {"modules", modules},
                      {"builds", builds}};
  // Module names come from the log: invalid UTF-8 must not abort the dump.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace tileprof::analyzer
