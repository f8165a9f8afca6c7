// The instruction info of COMPILE_END (../shared/spec/tensor-map.md section
// 3): the ML role of every convolution and matmul, keyed
// "<op_name>/<instruction name>".
//
// The original classifies in a compiler pass that is not publicly specified;
// tileprof infers the role from the entry computation's data flow:
//  * weights are entry parameters that a root output updates in place: a root
//    (or root-tuple) element `subtract(w, u)` / `add(w, u)` with w reaching a
//    parameter of the same shape through data-movement ops; no such output
//    means an inference module, where every dot/convolution is INFERENCE_FWD;
//  * in a training module a dot/convolution that reads a weight (through
//    data-movement ops: reshape, bitcast, transpose, convert, copy, reverse,
//    broadcast) is TRAINING_FWD, or TRAINING_BWD when another one reading the
//    same weight is upstream of it (the input gradient re-reads the forward
//    weight); one that reads no weight but feeds an update u is TRAINING_WU;
//    any other is TRAINING_FWD.
// Instructions inside called computations (fusions, calls, loop bodies) take
// the data flow of the entry instruction that calls them.
#pragma once

#include "engine/hlo/module.h"
#include "reports/tensor_map.h"

namespace tileprof::engine {

// Entries in module order (computations, then instructions); NONE is never
// produced.
report::InstructionInfo ClassifyMlTypes(const hlo::Module& module);

}  // namespace tileprof::engine
