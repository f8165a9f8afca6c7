// Text and JSON renderings of a DumpDiffResult: the verdict first (which
// module, why it recompiles, where to look), then the details.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/dump_diff.h"

namespace tileprof::analyzer {
namespace {

std::string Title(const PairResult& p) {
  size_t space = p.key.find(' ');
  std::string function = p.key.substr(0, space);
  std::string stage = space == std::string::npos ? "" : p.key.substr(space + 1);
  return stage.empty() ? function : fmt::format("{} ({})", function, stage);
}

std::string Where(const Change& c) {
  std::string source = !c.source.empty() ? c.source : c.dependent_source;
  std::string op_name =
      !c.source.empty() || c.dependent_source.empty() ? c.op_name : c.dependent_op_name;
  if (source.empty() && op_name.empty()) return "";
  if (source.empty()) return op_name;
  return op_name.empty() ? source : fmt::format("{} ({})", source, op_name);
}

std::string Headline(const Change& c) {
  std::string line;
  switch (c.kind) {
    case ChangeKind::kSignature:
      line = "module header: " + c.what;
      break;
    case ChangeKind::kComputation:
      line = fmt::format("computation '{}': {}", c.computation, c.what);
      break;
    case ChangeKind::kParameter:
    case ChangeKind::kResult:
    case ChangeKind::kAdded:
    case ChangeKind::kRemoved:
      line = c.what;
      break;
    case ChangeKind::kConstant:
      line = fmt::format("constant '{}': {}", c.instruction, c.what);
      break;
    default:
      line =
          fmt::format("{} of {} '{}': {}", ChangeKindName(c.kind), c.opcode, c.instruction, c.what);
  }
  if (!c.detail.empty()) line += fmt::format(" ({})", c.detail);
  return line;
}

std::string Dependents(const Change& c, size_t show) {
  if (c.dependents.empty()) return "";
  std::vector<std::string> names(c.dependents.begin(),
                                 c.dependents.begin() + std::min(show, c.dependents.size()));
  return fmt::format("+{} dependent instruction(s) changed as a consequence: {}{}",
                     c.dependents.size(), fmt::join(names, ", "),
                     c.dependents.size() > show ? ", ..." : "");
}

}  // namespace

std::string FormatDumpDiffText(const DumpDiffResult& r) {
  std::string out;
  int paired = r.changed() + r.identical();
  if (r.equal()) {
    out += fmt::format("Verdict: no recompilation: {} module(s) compared, all equal.\n", paired);
  } else {
    out += fmt::format("Verdict: {} of {} paired module(s) would recompile", r.changed(), paired);
    if (r.only_a() + r.only_b() > 0)
      out += fmt::format("; {} only in A, {} only in B", r.only_a(), r.only_b());
    if (r.errors() > 0) out += fmt::format("; {} could not be read", r.errors());
    out += ".\n";
    for (const PairResult& p : r.pairs) {
      if (!p.diff || p.diff->equal()) continue;
      const ModuleDiff& d = *p.diff;
      if (d.causes.empty()) {
        out += fmt::format("  {}: {}\n", Title(p), DescribeLevel(d.equal_level));
        continue;
      }
      out += fmt::format("  {}: {} root cause(s); first: {}\n", Title(p), d.causes.size(),
                         Headline(d.causes.front()));
      if (std::string where = Where(d.causes.front()); !where.empty())
        out += fmt::format("    look at: {}\n", where);
    }
  }
  out += fmt::format("\nA: {}\nB: {}\n", r.input_a, r.input_b);
  out += fmt::format("Modules: {} changed, {} equal, {} only in A, {} only in B\n", r.changed(),
                     r.identical(), r.only_a(), r.only_b());
  for (const PairResult& p : r.pairs) {
    if (p.path_b.empty()) out += fmt::format("  only in A: {} ({})\n", Title(p), p.path_a);
    if (p.path_a.empty()) out += fmt::format("  only in B: {} ({})\n", Title(p), p.path_b);
    if (!p.error.empty()) out += fmt::format("  could not read {}: {}\n", Title(p), p.error);
    if (p.diff && p.diff->equal())
      out += fmt::format("  equal: {}: {}\n", Title(p), DescribeLevel(p.diff->equal_level));
  }
  if (!r.skipped_a.empty() || !r.skipped_b.empty())
    out += fmt::format("  skipped {} non-HLO file(s) in A and {} in B\n", r.skipped_a.size(),
                       r.skipped_b.size());

  for (const PairResult& p : r.pairs) {
    if (!p.diff || p.diff->equal()) continue;
    const ModuleDiff& d = *p.diff;
    out += fmt::format("\n== {}\n   A: {} (module {})\n   B: {} (module {})\n", Title(p), p.path_a,
                       p.module_a, p.path_b, p.module_b);
    out += fmt::format("   Normalisation: {}\n", DescribeLevel(d.equal_level));
    for (size_t i = 0; i < d.causes.size(); ++i) {
      const Change& c = d.causes[i];
      out += fmt::format("   {}. {}\n", i + 1, Headline(c));
      if (!c.computation.empty() && c.kind != ChangeKind::kComputation)
        out += fmt::format("      in computation '{}'\n", c.computation);
      if (std::string where = Where(c); !where.empty())
        out += fmt::format("      where: {}\n", where);
      if (std::string deps = Dependents(c, 8); !deps.empty())
        out += fmt::format("      {}\n", deps);
    }
    for (const std::string& note : d.notes) out += fmt::format("   Note: {}\n", note);
  }
  return out;
}

std::string FormatDumpDiffJson(const DumpDiffResult& r) {
  using nlohmann::ordered_json;
  ordered_json pairs = ordered_json::array();
  for (const PairResult& p : r.pairs) {
    ordered_json pair = {{"key", p.key},
                         {"a", p.path_a},
                         {"b", p.path_b},
                         {"module_a", p.module_a},
                         {"module_b", p.module_b}};
    if (!p.error.empty()) pair["error"] = p.error;
    if (p.diff) {
      const ModuleDiff& d = *p.diff;
      ordered_json causes = ordered_json::array();
      for (const Change& c : d.causes) {
        causes.push_back({{"kind", ChangeKindName(c.kind)},
                          {"computation", c.computation},
                          {"instruction", c.instruction},
                          {"opcode", c.opcode},
                          {"what", c.what},
                          {"detail", c.detail},
                          {"op_name", c.op_name},
                          {"source", c.source},
                          {"dependents", c.dependents},
                          {"dependent_source", c.dependent_source}});
      }
      pair["equal"] = d.equal();
      pair["equal_level"] = d.equal_level ? ordered_json(*d.equal_level) : ordered_json();
      pair["equal_level_meaning"] = DescribeLevel(d.equal_level);
      pair["causes"] = causes;
      pair["dependent_changes"] = d.dependent_changes;
      pair["notes"] = d.notes;
    }
    pairs.push_back(pair);
  }
  ordered_json doc = {{"format_version", {{"major", 1}, {"minor", 0}}},
                      {"a", r.input_a},
                      {"b", r.input_b},
                      {"equal", r.equal()},
                      {"changed", r.changed()},
                      {"identical", r.identical()},
                      {"only_in_a", r.only_a()},
                      {"only_in_b", r.only_b()},
                      {"errors", r.errors()},
                      {"pairs", pairs},
                      {"skipped_a", r.skipped_a},
                      {"skipped_b", r.skipped_b}};
  return doc.dump(2) + "\n";
}

}  // namespace tileprof::analyzer
