#include "analyzer/execution_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace tileprof::analyzer {
namespace {

using report::CycleKind;
using report::ExecutionReport;
using report::kNumCycleKinds;

bool HasAverages(const ExecutionReport& e) {
  return std::any_of(e.tile_average_cycles.begin(), e.tile_average_cycles.end(),
                     [](const auto& v) { return v.has_value(); });
}

// Differences and quotients of printed figures carry binary noise
// (45.70000000000073); a millionth of a cycle is far below anything printed.
double Clean(double v) { return std::round(v * 1e6) / 1e6; }

Cell Maybe(const std::optional<double>& v) { return v ? Cell{Clean(*v)} : Cell{}; }

std::optional<double> Microseconds(const ExecutionReport& e) {
  if (e.clock_hz <= 0) return std::nullopt;
  return static_cast<double>(e.total_cycles) / e.clock_hz * 1e6;
}

void AddVertexTypeComparison(const ExecutionReport& a, const ExecutionReport& b, size_t count,
                             Output* out) {
  // Vertex types of either report, by the size of the change.
  struct Row {
    std::string name;
    std::optional<uint64_t> a, b;
    uint64_t ia = 0, ib = 0;
  };
  std::map<std::string, Row> by_name;
  for (const auto& t : a.cycles_by_vertex_type) {
    Row& r = by_name[t.name];
    r.name = t.name;
    r.a = r.a.value_or(0) + t.cycles;
    r.ia += t.instances;
  }
  for (const auto& t : b.cycles_by_vertex_type) {
    Row& r = by_name[t.name];
    r.name = t.name;
    r.b = r.b.value_or(0) + t.cycles;
    r.ib += t.instances;
  }
  std::vector<Row> rows;
  for (auto& [name, row] : by_name) rows.push_back(std::move(row));
  auto magnitude = [](const Row& r) {
    uint64_t x = r.a.value_or(0), y = r.b.value_or(0);
    return x > y ? x - y : y - x;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& l, const Row& r) {
    return magnitude(l) != magnitude(r) ? magnitude(l) > magnitude(r) : l.name < r.name;
  });
  Table types{"vertex_types",
              "Cycles by vertex type (summed over tiles), by change",
              {"vertex_type", "instances_a", "instances_b", "a", "b", "delta"},
              {}};
  size_t shown = std::min(count, rows.size());
  for (size_t i = 0; i < shown; ++i) {
    const Row& r = rows[i];
    types.Add({r.name, r.a ? Cell{r.ia} : Cell{}, r.b ? Cell{r.ib} : Cell{},
               r.a ? Cell{*r.a} : Cell{}, r.b ? Cell{*r.b} : Cell{},
               CountDelta(r.a.value_or(0), r.b.value_or(0))});
  }
  if (shown < rows.size()) {
    uint64_t x = 0, y = 0;
    for (size_t i = shown; i < rows.size(); ++i) {
      x += rows[i].a.value_or(0);
      y += rows[i].b.value_or(0);
    }
    types.Add(
        {fmt::format("[{} others]", rows.size() - shown), Cell{}, Cell{}, x, y, CountDelta(x, y)});
  }
  out->tables.push_back(std::move(types));
}

}  // namespace

std::vector<CycleShare> CycleSplit(const ExecutionReport& e) {
  std::vector<CycleShare> rows;
  if (HasAverages(e)) {
    for (size_t k = 0; k < kNumCycleKinds; ++k)
      if (e.tile_average_cycles[k])
        rows.push_back({std::string(report::TileAverageLabel(static_cast<CycleKind>(k))),
                        e.tile_average_cycles[k], false, false, ""});
    return rows;
  }
  auto total_row = [&](std::string_view label, const report::CycleTotal& total) {
    std::optional<double> cycles;
    if (total.cycles) cycles = static_cast<double>(*total.cycles);
    rows.push_back({std::string(label), cycles, true, total.estimated, total.needs_option});
  };
  for (size_t k = 0; k < kNumCycleKinds; ++k)
    if (e.tile_total_cycles[k].printed)
      total_row(report::TileTotalLabel(static_cast<CycleKind>(k)), e.tile_total_cycles[k]);
  if (e.shared_structure_copy_cycles.printed)
    total_row(report::kSharedStructureCopyLabel, e.shared_structure_copy_cycles);
  return rows;
}

std::string CycleSplitMeasure(const ExecutionReport& e) {
  return HasAverages(e) || !CycleSplit(e).size() ? "tile average" : "sum over tiles";
}

Expected<Output> TopVertexTypesView(const LoadedReport& loaded, size_t count) {
  if (!loaded.execution)
    return MakeError(
        "{}: the report has no Execution section (cycles come from an execution profile: "
        "'tileprof run', or Poplar's profile summary of a run)",
        loaded.path);
  const auto& types = loaded.execution->cycles_by_vertex_type;
  if (types.empty())
    return MakeError("{}: the Execution section has no 'Cycles by vertex type' list", loaded.path);
  std::vector<const report::VertexTypeCycles*> rows;
  uint64_t all = 0;
  for (const auto& t : types) {
    rows.push_back(&t);
    all += t.cycles;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto* x, const auto* y) {
    return x->cycles != y->cycles ? x->cycles > y->cycles : x->name < y->name;
  });
  auto percent = [&](uint64_t cycles) {
    return all == 0 ? Cell{} : Cell{static_cast<double>(cycles) / static_cast<double>(all) * 100};
  };
  Table table{"vertex_types",
              "Vertex types by cycles (summed over tiles and instances)",
              {"rank", "vertex_type", "instances", "cycles", "cycles_per_instance", "percent"},
              {}};
  size_t shown = std::min(count, rows.size());
  for (size_t i = 0; i < shown; ++i) {
    const auto& t = *rows[i];
    // Not `t.instances ? Cell{...} : Cell{}`: g++ 12 then warns that the
    // string alternative of the moved temporary may be uninitialized.
    Cell per;
    if (t.instances) per = static_cast<double>(t.cycles) / static_cast<double>(t.instances);
    table.Add({uint64_t{i + 1}, t.name, t.instances, t.cycles, per, percent(t.cycles)});
  }
  if (shown < rows.size()) {
    uint64_t instances = 0, cycles = 0;
    for (size_t i = shown; i < rows.size(); ++i) {
      instances += rows[i]->instances;
      cycles += rows[i]->cycles;
    }
    table.Add({Cell{}, fmt::format("[{} others]", rows.size() - shown), instances, cycles, Cell{},
               percent(cycles)});
  }
  Output out;
  out.tables.push_back(std::move(table));
  out.notes.push_back(
      fmt::format("Total cycles of the run: {} (one tile's time: compute, "
                  "exchange, sync and host I/O).",
                  CellText(Cell{loaded.execution->total_cycles})));
  return out;
}

void AddExecutionComparison(const ExecutionReport& a, const ExecutionReport& b, size_t count,
                            Output* out) {
  Table execution{"execution", "Execution (cycles)", {"measure", "a", "b", "delta"}, {}};
  execution.Add({std::string("Total cycles"), a.total_cycles, b.total_cycles,
                 CountDelta(a.total_cycles, b.total_cycles)});
  std::optional<double> ua = Microseconds(a), ub = Microseconds(b);
  execution.Add({std::string("Microseconds (approx)"), Maybe(ua), Maybe(ub),
                 ua && ub ? Cell{Clean(*ub - *ua)} : Cell{}});
  // Rows by label, in the order of A's split then B's.
  std::vector<CycleShare> sa = CycleSplit(a), sb = CycleSplit(b);
  std::vector<std::string> labels;
  for (const auto* split : {&sa, &sb})
    for (const CycleShare& row : *split)
      if (std::find(labels.begin(), labels.end(), row.label) == labels.end())
        labels.push_back(row.label);
  auto find = [](const std::vector<CycleShare>& split, const std::string& label) {
    auto it = std::find_if(split.begin(), split.end(),
                           [&](const CycleShare& r) { return r.label == label; });
    return it == split.end() ? std::optional<CycleShare>() : std::optional<CycleShare>(*it);
  };
  for (const std::string& label : labels) {
    std::optional<CycleShare> x = find(sa, label), y = find(sb, label);
    // Plain doubles and flags: GCC 12 warns of optionals read from optionals.
    bool ka = x && x->cycles, kb = y && y->cycles;
    double va = ka ? *x->cycles : 0, vb = kb ? *y->cycles : 0;
    std::string measure = label;
    if ((x && x->estimated) || (y && y->estimated)) measure += " (estimated)";
    for (const auto& side : {x, y})
      if (side && !side->cycles && !side->needs_option.empty())
        measure += " (not measured: needs " + side->needs_option + ")";
    // Sums over tiles are whole cycles; averages have decimals.
    auto cell = [](bool known, double v, bool sum) {
      if (!known) return Cell{};
      return sum ? Cell{static_cast<uint64_t>(v)} : Cell{v};
    };
    bool sum = (x && x->sum) || (y && y->sum);
    Cell delta = !(ka && kb) ? Cell{}
                 : sum       ? CountDelta(static_cast<uint64_t>(va), static_cast<uint64_t>(vb))
                             : Cell{Clean(vb - va)};
    execution.Add({measure, cell(ka, Clean(va), sum), cell(kb, Clean(vb), sum), delta});
  }
  out->tables.push_back(std::move(execution));

  if (a.cycles_by_vertex_type.empty() || b.cycles_by_vertex_type.empty()) {
    if (!a.cycles_by_vertex_type.empty() || !b.cycles_by_vertex_type.empty())
      out->notes.push_back(
          "Only one report lists cycles by vertex type: vertex types are not compared.");
  } else {
    AddVertexTypeComparison(a, b, count, out);
  }
  if (CycleSplitMeasure(a) != CycleSplitMeasure(b))
    out->notes.push_back(
        "One report gives tile averages and the other sums over tiles (the SDK 1.x layout): "
        "their split rows have different labels and are not compared with each other.");
}

}  // namespace tileprof::analyzer
