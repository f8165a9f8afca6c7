// reverse: a view of its operand where the reversed dimensions lie outside
// a block of trailing ones it keeps (ReverseView), else a rearrangement
// (lower_index.cc's LowerMapped).
#include <algorithm>

#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

// A reverse whose reversed dimensions all lie outside a block of trailing
// ones it keeps is a view: the blocks, in reversed order (Poplar's
// Tensor::reverse). A backward convolution's kernel is reverse(W) over the
// spatial dimensions of HWIO weights, whose [I][O] blocks stay whole; as a
// view the convolution reads W where the forward pass laid it out, not a
// copy mapped linearly in 128-byte pieces that every cell then gathers
// (ResNet-50 training: 13.7 M of 88 M exchange regions). Nullopt when
// the blocks are too many or too short to stay a view.
Expected<std::optional<Tensor>> ReverseView(const Graph& graph, const Tensor& in,
                                            std::span<const int64_t> dims, uint64_t min_run_bytes) {
  const std::vector<uint64_t>& shape = in.shape();
  const size_t rank = shape.size();
  std::vector<bool> reversed(rank, false);
  size_t outer = 0;  // dimensions [0, outer) hold every reversed one
  for (int64_t d : dims) {
    const auto i = static_cast<size_t>(d);
    if (shape[i] <= 1) continue;  // reversing one element moves nothing
    reversed[i] = true;
    outer = std::max(outer, i + 1);
  }
  // Only a whole operand stays a view: one already cut into more runs (a
  // transpose kept as a view, as PyTorch/XLA's backward kernels are) is
  // rearranged, or every cell reading the view would connect to its pieces
  // (mobilenet_v2's layout took 2.5 times as long).
  if (in.regions().size() > 1) return std::optional<Tensor>();
  // Nor one laid out in pieces finer than a linear mapping's (a depthwise
  // kernel placed by its forward plan in 8-channel slices): its readers
  // would gather more, smaller pieces than from a linear copy (mobilenet_v2:
  // 21 M more in its layout, for 3% less exchange code).
  if (!in.regions().empty()) {
    const TensorRegion& whole = in.regions()[0];
    uint64_t runs = 0;
    for (const TileRun& run : graph.TileMapping(whole.variable))
      runs += run.end > whole.begin && run.begin < whole.end ? 1 : 0;
    if (runs > 1 && whole.size() * SizeOf(in.element_type()) / runs < min_run_bytes)
      return std::optional<Tensor>();
  }
  if (outer == 0) return std::optional<Tensor>(in);
  uint64_t run = 1;
  for (size_t i = outer; i < rank; ++i) run *= shape[i];
  const uint64_t n = in.NumElements();
  if (run == 0 || n == 0 || n / run > kMaxViewRegions ||
      run * SizeOf(in.element_type()) < kMinViewRunBytes)
    return std::optional<Tensor>();
  ViewBuilder builder(in.element_type());
  TILEPROF_ASSIGN_OR_RETURN(size_t source, builder.AddSource(in.Flatten()));
  std::vector<uint64_t> coord(outer, 0);
  for (uint64_t block = 0, blocks = n / run; block < blocks; ++block) {
    uint64_t start = 0;
    for (size_t i = 0; i < outer; ++i)
      start = start * shape[i] + (reversed[i] ? shape[i] - 1 - coord[i] : coord[i]);
    start *= run;
    TILEPROF_RETURN_IF_ERROR(builder.Append(source, start, start + run));
    for (size_t i = outer; i-- > 0;) {
      if (++coord[i] < shape[i]) break;
      coord[i] = 0;
    }
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor view, builder.Finish(shape));
  return std::optional<Tensor>(std::move(view));
}

}  // namespace

Expected<Value> Lowering::LowerReverse(const hlo::Instruction& instruction, const Value& operand,
                                       program::Sequence& program) {
  const hlo::Attribute* attribute = instruction.FindAttribute("dimensions");
  if (attribute == nullptr || !operand.IsArray()) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, hlo::ParseIntList(attribute->value()));
  std::vector<SourceDim> map(operand.tensor.Rank());
  for (size_t j = 0; j < map.size(); ++j) map[j].src = map[j].src2 = static_cast<uint32_t>(j);
  for (int64_t d : dims) {
    if (d < 0 || static_cast<size_t>(d) >= map.size()) {
      return MakeError("reverse dimension {} outside rank {}", d, map.size());
    }
    map[static_cast<size_t>(d)].mul = -1;
    map[static_cast<size_t>(d)].add =
        static_cast<int64_t>(operand.tensor.shape()[static_cast<size_t>(d)]) - 1;
  }
  TILEPROF_ASSIGN_OR_RETURN(std::optional<Tensor> view,
                            ReverseView(graph_, operand.tensor, dims, options_.min_bytes_per_tile));
  if (view) return Value::Array(std::move(*view));
  return LowerMapped(instruction, operand, map, nullptr, program);
}

}  // namespace tileprof::engine::compiler
