// CompileModule: lowering, then the memory model, then the report.
#include "engine/compiler/compiler.h"

#include <fmt/format.h>

#include <future>

#include "engine/compiler/lower.h"
#include "engine/compiler/memory_model.h"

namespace tileprof::engine::compiler {

Expected<CompileResult> CompileModule(const hlo::Module& module, const Target& target,
                                      const CompileOptions& options) {
  CompileResult result;
  result.graph = std::make_unique<Graph>(target);
  Graph& graph = *result.graph;
  Lowering lowering(graph, options, result.lowering);
  if (options.record_tensor_map) lowering.RecordTensorMapInto(&result.tensor_map);
  if (auto status = lowering.LowerEntry(module, result.program); !status) {
    return status.error().Within(fmt::format("module '{}'", module.name()));
  }
  lowering.FinishTensorMap();
  // The statistics walk every vertex once more; the graph is complete and
  // only read from here on, so they are gathered while the memory is laid out.
  std::future<GraphStats> stats = std::async(std::launch::async, [&graph] { return graph.Stats(); });
  Expected<MemoryLayout> laid_out =
      LayOutMemory(graph, result.program, lowering.valueless_constants(),
                   MemoryOptions{.instrument_vertices = options.instrument_vertices});
  result.graph_stats = stats.get();
  if (!laid_out) return laid_out.error();
  MemoryLayout layout = std::move(*laid_out);
  result.valueless_constants = lowering.valueless_constants();
  result.lowering.exchanges = layout.exchanges;
  result.lowering.program_steps = layout.program_steps;

  report::CompilationReport& report = result.report;
  report.target = report::MakeTarget(std::string(target.ArchString()), target.NumIpus(),
                                     target.TilesPerIpu(), target.BytesPerTile(), target.ClockHz());
  report.graph = report::GraphInfo{
      .num_vertices = result.graph_stats.num_vertices,
      .num_edges = result.graph_stats.num_edges,
      // Poplar's count includes constants: both are graph variables.
      .num_variables = result.graph_stats.num_variables + result.graph_stats.num_constants,
      .num_compute_sets = result.graph_stats.num_compute_sets,
  };
  report.vertex_types = std::move(layout.vertex_types);
  report.tiles = std::move(layout.tiles);
  report.variables = std::move(layout.variables);
  for (const report::TileMemory& tile : report.tiles) {
    if (tile.ExcludingGaps() > target.BytesPerTile()) ++result.tiles_out_of_memory;
  }
  return result;
}

}  // namespace tileprof::engine::compiler
