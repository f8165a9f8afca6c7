// Internal to engine/compiler: a planned convolution's cells made into conv
// partial vertices (lower_conv.cc reads the convolution and plans it;
// conv_cells.cc emits each cell: the input and kernel boxes it reads, cut
// out of each operand in its own layout, and the vertex's parameters).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/codelets/codelets.h"
#include "engine/compiler/dot_plan.h"
#include "engine/graph/graph.h"
#include "engine/hlo/attributes.h"
#include "engine/hlo/module.h"

namespace tileprof::engine::compiler {

// Per logical dimension of an operand (batch/input feature, feature/output
// feature, spatial...).
using LogicalSizes = std::array<uint64_t, 2 + kConvMaxSpatialDims>;
using LogicalRanges = std::array<std::pair<uint64_t, uint64_t>, 2 + kConvMaxSpatialDims>;

struct ConvPlan {
  // Per logical dimension (batch/input feature, feature/output feature,
  // spatial...) of each operand: size and row-major stride.
  LogicalSizes in_size{}, in_stride{}, w_size{}, w_stride{}, out_size{}, out_stride{};
  // Logical order of each operand's dimensions: batch (input feature for the
  // kernel), feature (output feature), spatial...
  std::vector<int64_t> in_dims, w_dims, out_dims;
  std::vector<hlo::WindowDimension> window;
  uint64_t ci = 1, co_per_group = 1, batch_groups = 1, feature_groups = 1;
};

// The conv partial vertices of a planned convolution's cells (EmitCell):
// one per cell, computing its block of the output from the boxes of input
// and kernel it reads.
struct ConvCells {
  Graph& graph;
  const hlo::Instruction& instruction;
  const Codelet& codelet;
  const ConvPlan& plan;
  const Tensor& input;
  const Tensor& kernel;
  const Tensor& out;  // the result's shape and type
  // The type of what the cells write: the result's, or f32 partial sums
  // for an f16/bf16 result split over input channels (PartialsType).
  ElementType target_type;
  const TensorIndex& input_index;
  const TensorIndex& kernel_index;
  bool input_placeable, weights_placeable;
  size_t in_field, weights_field, out_field;
  std::span<const std::string> param_names;
  std::vector<uint64_t> lo, extent;

  // The ranges of the output's logical dimensions (batch, feature,
  // spatial...) a cell covers. A cell of several groups has every channel
  // of them (conv_search.cc), so its features are one range.
  LogicalRanges OutputRanges(const Cell& cell) const;
  // The cell's output block as a box of the output tensor (OutputBox).
  void OutputBox(const Cell& cell, std::vector<uint64_t>& box_lo,
                 std::vector<uint64_t>& box_size) const;
  // The cell's vertex (EmitCell).
  Status Emit(ComputeSetId cs, const Cell& cell, std::span<const TensorRegion> target);
};

}  // namespace tileprof::engine::compiler
