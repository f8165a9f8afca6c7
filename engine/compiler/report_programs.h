// The compute sets and the program tree of a compiled graph, as the
// compilation report carries them (libpva's computeSets and programs; the
// Python API's tileprof.pva reads them back).
#pragma once

#include <span>

#include "engine/compiler/lower.h"
#include "engine/compiler/step_liveness.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"
#include "reports/report.h"

namespace tileprof::engine::compiler {

// Fills report.compute_sets (each set's vertices counted per type, the types
// indexing report.vertex_types, which must be complete) and report.programs
// (each distinct program node once, in depth-first order from `root` at 0;
// an Execute is named after its compute set and a transfer as the simulator
// names its step, so execution steps find their program by name), and
// report.liveness (and liveness_fullest_tiles) from the schedule's steps, each
// naming its program there.
void AddProgramTree(const Graph& graph, const program::Program& root,
                    std::span<const StepLiveness> steps, report::CompilationReport& report);

// Fills report.operations and report.compute_set_operations from the
// lowering's (lower.h), with each operation's vertices and vertex state (of
// its compute sets) and exchange bytes (its steps' receive buffers).
void AddOperations(const Graph& graph, std::span<const Lowering::OperationOrigin> operations,
                   std::span<const uint32_t> compute_set_operations,
                   std::span<const StepLiveness> steps, report::CompilationReport& report);

}  // namespace tileprof::engine::compiler
