// The Execution section as data: the cycle split of a run (which `plot
// --kind execution` draws), the vertex types by cycles (`top --by cycles`)
// and two runs side by side (`compare`, beside the memory tables). Works on
// every layout the text reader reads (SDK 1.x sums over tiles, SDK 2.0+ tile
// averages, with or without "Programs executed") and on JSON, CBOR and
// SQLite reports of `tileprof run`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/open_report.h"
#include "analyzer/output.h"
#include "common/expected.h"

namespace tileprof::analyzer {

// One kind of cycles, as the report gives it: a tile average (SDK 2.0+) or a
// sum over tiles (SDK 1.x); unset when the report says it was not measured.
struct CycleShare {
  std::string label;  // "Tile average sync cycles", "Total sync cycles"
  std::optional<double> cycles;
  bool sum = false;          // a sum over tiles (whole cycles), not an average
  bool estimated = false;    // "Estimated (must enable debug.instrumentCompute)"
  std::string needs_option;  // the debug.* option that would measure it
};

// The rows in report order: the averages when there are any, else the SDK
// 1.x sums (with the shared structure copy row that layout has).
std::vector<CycleShare> CycleSplit(const report::ExecutionReport& execution);
// "tile average" or "sum over tiles": what CycleSplit's figures are.
std::string CycleSplitMeasure(const report::ExecutionReport& execution);

// Tables: vertex_types (rank, vertex_type, instances, cycles,
// cycles_per_instance, percent of all listed cycles), the `count` largest by
// cycles and an "[N others]" row. Errors name the report when it has no
// Execution section or no "Cycles by vertex type" list.
Expected<Output> TopVertexTypesView(const LoadedReport& report, size_t count);

// Appends the execution tables of `compare` (B - A): execution (total cycles,
// microseconds, each split row) and, when both reports list cycles by vertex
// type, vertex_types (every type in either list, by |delta| descending, ties
// by name; the `count` largest changes and an "[N others]" row).
void AddExecutionComparison(const report::ExecutionReport& a, const report::ExecutionReport& b,
                            size_t count, Output* out);

}  // namespace tileprof::analyzer
