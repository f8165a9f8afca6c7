// Internal to engine/compiler: what the dot and convolution lowerings
// (lower_dot.cc, lower_conv.cc) share once a partition is chosen
// (conv_plan.h): the cells, one tile each; the output mapped by the plan
// (each output block on the tile that computes it, or, when the
// contraction is split, spread over the tiles of its partial sums); the
// partial sums; and the reduction that adds them up (popops::Reduce,
// ReduceAdd): poplin's "partials + reduction" structure.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/conv_plan.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {

uint64_t Product(std::span<const uint64_t> dims);
// Row-major strides of `dims`.
std::vector<uint64_t> Strides(std::span<const uint64_t> dims);

// Appends the runs of elements [begin, begin + count) of the elements that
// `runs` list in order.
void SliceRuns(std::span<const TensorRegion> runs, uint64_t begin, uint64_t count,
               std::vector<TensorRegion>& out);

// A dimension of an operand as the planner sees it: its plan dimension,
// size and row-major stride in the operand.
struct OperandDim {
  PlanDim dim;
  uint64_t size = 1, stride = 1;
};

// ContractionShape::input_tile_block: per dimension of an operand already
// mapped, the run of elements along it its tiles hold (TileRunsAlong,
// runs.h). Zeros for an operand of several regions (a view).
std::array<uint64_t, kPlanDims> OperandTileBlocks(const Graph& graph, const Tensor& operand,
                                                  std::span<const OperandDim> dims);

// One cell of a planned contraction: its range of each dimension and its
// tile.
struct Cell {
  std::array<Range, kPlanDims> range;
  uint32_t tile = 0;
  // The cell is the first of those that read the same weights (batch and
  // field ranges first) or the same input (output channels first): the
  // one whose tile holds the slice when the operand is placed by the plan.
  bool weights_home = false;
  bool input_home = false;

  const Range& operator[](PlanDim d) const { return range[static_cast<size_t>(d)]; }
};

// The output block of a cell (its ranges of the dimensions that are not
// reduced) as a box of the output tensor: `lo` and `size` per tensor
// dimension.
using OutputBox =
    std::function<void(const Cell& cell, std::vector<uint64_t>& lo, std::vector<uint64_t>& size)>;

// Emits the vertices of one cell writing `target`: the cell's output box,
// or its partial sums (a contiguous run of a partials variable on the
// cell's tile), in both cases the box's elements in row-major order.
using EmitCell =
    std::function<Status(ComputeSetId cs, const Cell& cell, std::span<const TensorRegion> target)>;

// Maps the output `out` (a whole new variable) by the plan, creates the
// partial sums when the contraction is split, calls `emit` for every cell
// and adds the reduction.
Status EmitPlanned(Lowering& lowering, const hlo::Instruction& instruction, const Tensor& out,
                   const ContractionShape& shape, const Partition& partition,
                   program::Sequence& program, const OutputBox& box, const EmitCell& emit);

// The type of the partial sums of a contraction split over tiles
// (partition.ReduceWays() > 1): f32 for an f16 or bf16 result, which XLA
// accumulates in f32 and rounds once (engine/codelets/dot_kernels.h), so
// that no partial sum is rounded to 16 bits before they are added; the
// result's own type otherwise. The cells then write these partials (a
// codelet accumulating in this type) and the reduction rounds to the result.
ElementType PartialsType(ElementType result, const Partition& partition);
// The partials' type of any split plan (PartialsType when the contraction is
// split): what the planner costs them in (ContractionShape::acc_bytes).
ElementType SplitPartialsType(ElementType result);

// The channel grain of operands of `type` (ContractionShape::channel_grain):
// 32 bytes of channels, the width of the accumulating unit's input (8 f32,
// 16 f16 channels).
inline uint64_t ChannelGrain(ElementType type) { return std::max<uint64_t>(1, 32 / SizeOf(type)); }

// The plan of `shape` on the lowering's target (memoised per shape), for
// operands of `in_type` accumulated in `acc_type`.
// Each new plan is noted (LoweringStats::plans) with the name of
// `instruction`.
Partition PlanContraction(Lowering& lowering, const hlo::Instruction& instruction,
                          const ContractionShape& shape, ElementType in_type, ElementType acc_type);

// lower_conv.cc: a convolution with the general conv partial `codelet`.
Expected<Value> LowerConvolution(Lowering& lowering, const hlo::Instruction& instruction,
                                 std::span<const Value> operands, const Codelet& codelet,
                                 program::Sequence& program);

}  // namespace tileprof::engine::compiler
