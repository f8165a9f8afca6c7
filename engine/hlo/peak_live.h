// The module's peak-live bound (../shared/DESIGN.md, "Planning"): the
// largest total of tensor bytes live at once when the entry computation
// runs in its printed order. It is the yardstick a compiled report is held
// against: the model's own memory, before any compiler adds its overheads.
//
// The rules, precisely (docs/memory-model.md repeats them):
//  * A value is live from the instruction that defines it to the last
//    instruction that uses it (directly or through a view of it).
//  * Views add no bytes and keep what they view alive: tuple,
//    get-tuple-element, bitcast, reshape, optimization-barrier,
//    add-dependency, domain, after-all.
//  * Entry parameters are live throughout; the entry's results (the root,
//    through views) are never freed once defined.
//  * An instruction that calls computations (call, fusion, while,
//    conditional, map, async ops) adds, at its own step, the largest
//    internal peak of what it calls; a called computation's parameters are
//    its caller's operands and are not counted again. Reducers and
//    comparators of reduce, sort, scatter, ... are scalar and ignored.
//  * Sizes are XLA's: ByteSize() of the shape (tuples summed, dynamic
//    dimensions at their bounds). Sums saturate at INT64_MAX.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/hlo/module.h"

namespace tileprof::hlo {

struct PeakLive {
  int64_t bytes = 0;            // the bound
  int64_t parameter_bytes = 0;  // entry parameters (live throughout)
  // The entry instruction at whose step the peak occurs (the first such
  // step), or empty for a module whose peak is its parameters alone.
  std::string at;
  // The total live at each entry step (parameters and what the step calls
  // included), by the entry instruction's index; and per computation the
  // largest such total of a step that calls it (directly or through other
  // computations), -1 for one no entry step calls.
  uint32_t entry_index = UINT32_MAX;
  std::vector<int64_t> entry_step_live;
  std::vector<int64_t> called_from_live;

  // The total live at `instruction`'s step: its own entry step's, or for an
  // instruction of a called computation the largest of its callers' steps
  // (its own computation's peak is part of that). The bound when unknown.
  int64_t LiveAt(const Instruction& instruction) const;
};

// The bound of `module`'s entry computation.
PeakLive ComputePeakLive(const Module& module);

}  // namespace tileprof::hlo
