// Internal to engine/compiler: what the dot and convolution lowerings
// (lower_dot.cc, lower_conv.cc) share: the output cut into chunks of the
// linear mapping, one tile each, and the split of the contraction over
// leftover tiles into partial sums that a reduction (popops::Reduce,
// ReduceAdd) on the chunk's tile adds up: poplin's "partials + reduction"
// structure.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {

// Below this many multiply-accumulates per vertex, splitting K costs more in
// exchange, partials memory and the reduction than it saves: a 1,024-MAC
// vertex runs in a few hundred cycles, about the cost of one exchange and
// one reduction step.
inline constexpr uint64_t kMinMacsPerVertex = 4096;

uint64_t Product(std::span<const uint64_t> dims);
// Row-major strides of `dims`.
std::vector<uint64_t> Strides(std::span<const uint64_t> dims);

// A run of output elements [position, position + count) computed as one
// unit, on the tile of chunk `slot`.
struct Unit {
  uint64_t position = 0;
  uint64_t count = 0;
  uint64_t slot = 0;
};

// Emits one partial vertex: unit `unit`, contraction slice `g` of `p_k`,
// writing `target` on `tile`.
using EmitPartial = std::function<Status(ComputeSetId cs, size_t unit, uint64_t g,
                                         const Tensor& target, uint32_t tile)>;

// Maps the output of the units (`slots` chunks), creates the partials when
// p_k > 1, calls `emit` for each unit and slice, and adds the reduction.
Status EmitUnits(Lowering& lowering, const hlo::Instruction& instruction, const Tensor& out,
                 std::span<const Unit> units, uint64_t slots, uint64_t p_k,
                 program::Sequence& program, const EmitPartial& emit);

// How many ways to split a contraction of `k` for chunks of `chunk` outputs
// over `slots` tiles.
uint64_t SplitWays(uint32_t tiles, uint64_t slots, uint64_t chunk, uint64_t macs_per_output,
                   uint64_t k);

// lower_conv.cc: a convolution with the general conv partial `codelet`.
Expected<Value> LowerConvolution(Lowering& lowering, const hlo::Instruction& instruction,
                                 std::span<const Value> operands, const Codelet& codelet,
                                 program::Sequence& program);

}  // namespace tileprof::engine::compiler
