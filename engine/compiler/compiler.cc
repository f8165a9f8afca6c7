// CompileModule: lowering, then the memory model, then the report.
#include "engine/compiler/compiler.h"

#include <fmt/format.h>

#include <future>

#include "engine/compiler/lower.h"
#include "engine/compiler/memory_model.h"
#include "engine/compiler/report_programs.h"

namespace tileprof::engine::compiler {

Expected<CompileResult> CompileModule(const hlo::Module& module, const Target& target,
                                      const CompileOptions& options,
                                      const CompileMonitor& monitor) {
  CompileLog silent;
  CompileLog& log = monitor.log != nullptr ? *monitor.log : silent;
  // No monitor, no callback: the layout then skips its reports.
  auto progress = [&monitor](CompileStage stage) -> ProgressCallback {
    if (!monitor.progress) return {};
    return
        [&monitor, stage](uint64_t done, uint64_t total) { monitor.progress(stage, done, total); };
  };
  CompileResult result;
  result.graph = std::make_unique<Graph>(target);
  Graph& graph = *result.graph;
  Lowering lowering(graph, options, result.lowering);
  {
    PhaseScope phase(log, "graphConstruction");
    log.Verbose("poplar_compiler.cc", "Begin Poplar graph construction.");
    if (options.record_tensor_map) lowering.RecordTensorMapInto(&result.tensor_map);
    if (ProgressCallback tick = progress(CompileStage::kGraphConstruction)) {
      lowering.OnVisit([tick, visits = InstructionVisits(module), done = uint64_t{0}]() mutable {
        tick(++done, visits);
      });
    }
    if (auto status = lowering.LowerEntry(module, result.program); !status) {
      return status.error().Within(fmt::format("module '{}'", module.name()));
    }
    lowering.FinishTensorMap();
    for (const std::string& plan : result.lowering.plans) log.Verbose("conv_plan.cc", plan);
    graph.FlushTileMappings();  // the statistics and the layout read it in parallel
    log.Verbose("poplar_compiler.cc", "End Poplar graph construction.");
  }
  PhaseScope phase(log, "compileGraph");
  log.Verbose("poplar_compiler.cc", fmt::format("Begin compiling Poplar engine {}", module.name()));
  // The statistics walk every vertex once more; the graph is complete and
  // only read from here on, so they are gathered while the memory is laid out.
  std::future<GraphStats> stats =
      std::async(std::launch::async, [&graph] { return graph.Stats(); });
  Expected<MemoryLayout> laid_out =
      LayOutMemory(graph, result.program, lowering.valueless_constants(),
                   MemoryOptions{.instrument_vertices = options.instrument_vertices,
                                 .progress = progress(CompileStage::kGraphCompilation)});
  result.graph_stats = stats.get();
  if (!laid_out) return laid_out.error();
  log.Verbose("poplar_compiler.cc", "End compiling Poplar engine.");
  MemoryLayout layout = std::move(*laid_out);
  result.valueless_constants = lowering.valueless_constants();
  result.elided_constants = lowering.elided_constants();
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
  report.always_live_variables = std::move(layout.always_live_variables);
  report.not_always_live_variables = std::move(layout.not_always_live_variables);
  AddProgramTree(graph, result.program, layout.liveness, report);
  AddOperations(graph, lowering.operations(), lowering.compute_set_operations(), layout.liveness,
                report);
  for (const report::TileMemory& tile : report.tiles) {
    if (tile.ExcludingGaps() > target.BytesPerTile()) ++result.tiles_out_of_memory;
  }
  return result;
}

}  // namespace tileprof::engine::compiler
