// Text and JSON renderings of a LogScanSummary: one data source, two outputs.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/log_scan.h"
#include "common/format.h"

namespace tileprof::analyzer {
namespace {

std::string Seconds(double s) { return WithThousands(s, 1) + " s"; }

std::string Kind(const ModuleBuild& b) {
  if (b.loaded_from_cache) return "load";
  return b.precompiled ? "pre-compile" : "compile";
}

std::string Verdict(const LogScanSummary& s) {
  std::string out;
  std::vector<const ModuleSummary*> rehashed;
  for (const ModuleSummary& m : s.modules)
    if (m.hashes.size() > 1) rehashed.push_back(&m);
  if (s.builds.empty()) {
    return "Verdict: no compilations or executable loads found. Run with "
           "TF_POPLAR_VLOG_LEVEL=1 (or TF_CPP_VMODULE='poplar_compiler=1,poplar_executable=1')\n"
           "  so that the log has 'Begin XLA compilation' lines.\n";
  }
  if (s.builds_after_warmup == 0 && rehashed.empty()) {
    return fmt::format("Verdict: no recompilation: {} module(s), each built once.\n",
                       s.modules.size());
  }
  for (const ModuleSummary* m : rehashed) {
    out += fmt::format(
        "Verdict: module '{}' was compiled under {} different hashes ({}): "
        "its HLO changed between compilations.\n",
        m->module, m->hashes.size(), fmt::join(m->hashes, ", "));
  }
  if (s.builds_after_warmup > 0) {
    const ModuleBuild& first = s.builds[s.warmup_events];
    std::string cost;
    if (s.builds_after_warmup_unknown_time == s.builds_after_warmup)
      cost = "an unknown time (the log has no timestamps for them)";
    else if (s.builds_after_warmup_unknown_time > 0)
      cost = fmt::format("at least {} ({} of unknown duration)", Seconds(s.seconds_after_warmup),
                         s.builds_after_warmup_unknown_time);
    else
      cost = Seconds(s.seconds_after_warmup);
    out += fmt::format("{}{} build(s) after warm-up cost {}; the first: {} of '{}' at {}:{}.\n",
                       rehashed.empty() ? "Verdict: " : "  ", s.builds_after_warmup, cost,
                       Kind(first), first.module, first.file, first.line);
  }
  out +=
      "  Where to look: dump the HLO of two runs (XLA_FLAGS=--xla_dump_to=DIR) and run\n"
      "  'tileprof dumpdiff RUN1 RUN2'; typical causes are a changed batch size, weights\n"
      "  frozen as constants, and tf.concat in a loop (see 'tileprof help logscan').\n";
  return out;
}

}  // namespace

std::string FormatLogScanText(const LogScanSummary& s) {
  std::string out = Verdict(s);
  out += fmt::format("\nLogs: {}\n", fmt::join(s.files, ", "));
  int compilations = 0;
  for (const ModuleSummary& m : s.modules) compilations += m.compilations;
  out += fmt::format(
      "Compilations: {}  Loads from cache: {}  Cache misses: {}  Pre-compiled: {}  "
      "Graph constructions: {}\n",
      compilations, s.cache_hits, s.cache_misses, s.precompiled, s.graph_constructions);
  out += fmt::format("Warm-up: {} build(s); {}\n", s.warmup_events, s.warmup_rule);
  if (s.unmatched_ends > 0)
    out += fmt::format("Note: {} 'End XLA compilation' line(s) had no matching Begin line\n",
                       s.unmatched_ends);
  for (const std::string& note : s.phase_notes) out += "Note: " + note + "\n";

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
      out += fmt::format("  {}:{}  {} of '{}'{}  {}{}\n", b.file, b.line, Kind(b), b.module,
                         b.hash.empty() ? "" : " (Hash: " + b.hash + ")",
                         b.seconds ? Seconds(*b.seconds) : "time unknown",
                         b.cache_miss ? "  [cache miss: " + b.cache_file + "]" : "");
    }
  }
  return out;
}

std::string FormatLogScanJson(const LogScanSummary& s) {
  using nlohmann::ordered_json;
  ordered_json builds = ordered_json::array();
  for (const ModuleBuild& b : s.builds) {
    builds.push_back({{"module", b.module},
                      {"kind", Kind(b)},
                      {"hash", b.hash},
                      {"cache_miss", b.cache_miss},
                      {"cache_file", b.cache_file},
                      {"file", b.file},
                      {"line", b.line},
                      {"seconds", b.seconds ? ordered_json(*b.seconds) : ordered_json()},
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
  ordered_json doc = {{"format_version", {{"major", 1}, {"minor", 0}}},
                      {"files", s.files},
                      {"cache_hits", s.cache_hits},
                      {"cache_misses", s.cache_misses},
                      {"precompiled", s.precompiled},
                      {"graph_constructions", s.graph_constructions},
                      {"unmatched_ends", s.unmatched_ends},
                      {"warmup", {{"builds", s.warmup_events}, {"rule", s.warmup_rule}}},
                      {"after_warmup",
                       {{"builds", s.builds_after_warmup},
                        {"seconds", s.seconds_after_warmup},
                        {"builds_of_unknown_duration", s.builds_after_warmup_unknown_time}}},
                      {"phase_notes", s.phase_notes},
                      {"modules", modules},
                      {"builds", builds}};
  return doc.dump(2) + "\n";
}

}  // namespace tileprof::analyzer
