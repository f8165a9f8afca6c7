// The HLO compiler: lowers an hlo::Module onto the tiles of a Target as an
// engine Graph plus a control program, lays out every tile's memory (the
// model of docs/memory-model.md) and fills the compilation report that
// reports/text_writer.h prints.
//
//   Expected<hlo::Module> module = hlo::ParseModule(text, {.source_name = path});
//   Expected<Target> target = Target::FromPreset("ipu2");
//   Expected<compiler::CompileResult> result =
//       compiler::CompileModule(*module, *target, compiler::CompileOptions{});
//   if (!result) { /* result.error().message() names the instruction */ }
//   std::string rep = report::WriteTextReport(result->report, nullptr, {});
//   if (result->tiles_out_of_memory > 0) { /* OOM: the report is still complete */ }
//
// Out-of-memory graphs compile: tiles over capacity are laid out into the
// "Overflowed" region and counted in tiles_out_of_memory; the caller decides
// whether that is an error (debug.allowOutOfMemory).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/compile_log.h"
#include "engine/compiler/progress_bar.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"
#include "engine/hlo/module.h"
#include "engine/target/target.h"
#include "reports/report.h"
#include "reports/tensor_map.h"

namespace tileprof::engine::compiler {

struct CompileOptions {
  // Linear tile mapping: a tile gets a multiple of grain_bytes and at least
  // min_bytes_per_tile (unless the tensor is smaller). 8: one 64-bit load or
  // store, the data path width; 128: below that, the per-tile overheads of a
  // vertex (state, exchange, control) outweigh the work it saves.
  uint64_t grain_bytes = 8;
  uint64_t min_bytes_per_tile = 128;
  // Start each new tensor's linear mapping where the previous one ended, so
  // that many small tensors do not all land on tile 0 (Poplar's
  // mapTensorLinearlyWithOffset); false starts every tensor at tile 0.
  bool rotate_start_tile = true;
  // Add a poprand::SetSeedSupervisor vertex on every tile fed by a host seed
  // stream, as the TensorFlow IPU backend does for every graph (seed 004's
  // report: 1,216 of them on a Mk1).
  bool set_seed_on_every_tile = true;
  // Per-vertex instrumentation results (the seed's report was compiled with
  // profiling on: "Instrumentation Results" is 4 B per vertex there).
  bool instrument_vertices = true;
  // Fill CompileResult::tensor_map. Off by default: it keeps a per-tile
  // element count for every instruction output, which only the tensor map
  // and trace events need.
  bool record_tensor_map = false;
  // The share of a tile's memory that the temporaries of one convolution or
  // matrix product may take (Poplar's availableMemoryProportion, whose
  // default is 0.6): the planner (conv_plan.h) never picks a plan above it
  // while one below exists.
  double available_memory_proportion = 0.6;
  // Fuse chains of elementwise ops into one expression vertex per tile
  // (lower_fusion.cc), as the TensorFlow IPU backend does.
  bool fuse_elementwise = true;
};

// Counts of what the lowering did, beyond the graph's own statistics.
struct LoweringStats {
  uint64_t instructions = 0;       // HLO instructions lowered (inlined calls counted per call)
  uint64_t opaque_ops = 0;         // lowered as opaque ops
  uint64_t fused_expressions = 0;  // fused elementwise expressions (MapExpr vertices' ops)
  uint64_t fused_ops = 0;          // elementwise ops inside them
  uint64_t exchanges = 0;          // (step, receiving tile) pairs with remote reads
  uint64_t program_steps = 0;      // Execute/Copy/stream steps of the control program
  std::vector<std::string> opaque_opcodes;  // distinct, sorted
  // Constants whose values the HLO text elides ("{...}") or whose type the
  // engine cannot compute on: lowered as variables in the Constants
  // category, contents unknown.
  std::vector<std::string> constants_without_values;
  // One line per planned convolution or matrix product shape (the first
  // instruction of that shape): what poplin logs at POPLIBS_LOG_LEVEL=INFO.
  std::vector<std::string> plans;
};

struct CompileResult {
  std::unique_ptr<Graph> graph;  // owned here: programs refer to its ids
  program::Sequence program;
  GraphStats graph_stats;
  LoweringStats lowering;
  report::CompilationReport report;
  uint64_t tiles_out_of_memory = 0;
  // Where every instruction output landed (../shared/spec/tensor-map.md),
  // when CompileOptions::record_tensor_map: computations in module order,
  // instructions in computation order; an instruction lowered more than once
  // (a computation called from several places) is recorded at its first
  // lowering.
  report::TensorMap tensor_map;
  // Variables standing for constants whose values are unknown (the HLO text
  // elides them, or the engine has no arithmetic for their type): a run
  // that reads them cannot give real results, so the simulator refuses it.
  std::vector<VariableId> valueless_constants;
  // Of valueless_constants, those whose values the HLO text elides ("{...}")
  // and whose element type the engine computes on: a run may fill them with
  // zeros or seeded random values when the user asks (RunOptions::
  // elided_constants); the others are always refused.
  std::vector<VariableId> elided_constants;
};

// What a compile shows while it runs (../shared/spec/executable-cache.md
// section 8). Unset members show nothing.
struct CompileMonitor {
  // The phase lines of its two phases, graphConstruction (the lowering) and
  // compileGraph (exchanges, liveness, memory layout), and at VLOG(1) the
  // original's Begin/End lines around them.
  CompileLog* log = nullptr;
  // (stage, done, total): kGraphConstruction once per HLO instruction
  // visited, then kGraphCompilation as Poplar's compileGraph callback does;
  // done reaches total at the end of each. Called from the compiling
  // threads, so it must be thread-safe.
  std::function<void(CompileStage stage, uint64_t done, uint64_t total)> progress;
};

// Compiles the entry computation of `module` for `target`. Errors name the
// HLO instruction ("add.3 (add): ..."); an out-of-memory graph is not an
// error.
Expected<CompileResult> CompileModule(const hlo::Module& module, const Target& target,
                                      const CompileOptions& options,
                                      const CompileMonitor& monitor = {});

}  // namespace tileprof::engine::compiler
