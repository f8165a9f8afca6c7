// reduce-window and select-and-scatter.
//
// reduce-window with a long window along one dimension (a cumulative sum)
// is a sliding reduction by doubling (lower_sliding.cc). Otherwise
// tileprof::ReduceWindow vertices (engine/codelets/window.h) run on the
// result's tiles, one per run of the result, each connected to the box of
// the operand its outputs' windows read: a tile receives that box (the
// halo included) and nothing else, where a patches tensor would hold
// window-size copies of the operand. Padding and base-dilation holes count
// as the init value, which is what XLA reduces for them. Runs whose box
// spans rows of an outer dimension are cut at them (SplitWideRun) so that
// a box stays near the run's own share of the operand.
// Variadic reduce-windows, window reversal and reducers that are not one
// binary op stay opaque.
//
// select-and-scatter runs tileprof::SelectAndScatter vertices (engine/
// codelets/window.h) on the output's tiles, each connected to the boxes of
// the operand and source its outputs' windows can touch (runs cut at outer
// rows the same way). The select
// computation must be one comparison GE/GT/LE/LT of its parameters, the
// scatter an add; dilated windows stay opaque (XLA has none here).
#include <algorithm>
#include <climits>
#include <optional>

#include <fmt/format.h>

#include "engine/codelets/window.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/runs.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

bool IsArray(const Value& value) { return !value.is_tuple && value.tensor.valid(); }

bool IsParameter(const hlo::Instruction* instruction, int64_t number) {
  return instruction->opcode() == hlo::Opcode::kParameter &&
         instruction->parameter_number() == number;
}

// The comparison of select(a = parameter 0, b = parameter 1), if it is one.
std::optional<SelectDirection> SelectOf(const hlo::Computation& computation) {
  const hlo::Instruction* root = computation.root();
  if (root == nullptr || root->opcode() != hlo::Opcode::kCompare || root->operand_count() != 2) {
    return std::nullopt;
  }
  const hlo::Attribute* direction = root->FindAttribute("direction");
  if (direction == nullptr) return std::nullopt;
  bool swapped;
  if (IsParameter(root->operand(0), 0) && IsParameter(root->operand(1), 1))
    swapped = false;
  else if (IsParameter(root->operand(0), 1) && IsParameter(root->operand(1), 0))
    swapped = true;
  else
    return std::nullopt;
  const std::string_view d = direction->value();
  // b OP a is a (mirror OP) b.
  if (d == "GE") return swapped ? SelectDirection::kLe : SelectDirection::kGe;
  if (d == "GT") return swapped ? SelectDirection::kLt : SelectDirection::kGt;
  if (d == "LE") return swapped ? SelectDirection::kGe : SelectDirection::kLe;
  if (d == "LT") return swapped ? SelectDirection::kGt : SelectDirection::kLt;
  return std::nullopt;
}

bool IsAddOfParameters(const hlo::Computation& computation) {
  const hlo::Instruction* root = computation.root();
  return root != nullptr && root->opcode() == hlo::Opcode::kAdd && root->operand_count() == 2 &&
         root->operand(0)->opcode() == hlo::Opcode::kParameter &&
         root->operand(1)->opcode() == hlo::Opcode::kParameter &&
         root->operand(0) != root->operand(1);
}

// The sub-tensor with coordinates [lo, lo + size) per dimension.
Expected<Tensor> Box(const Tensor& tensor, std::span<const uint64_t> lo,
                     std::span<const uint64_t> size) {
  Tensor view = tensor;
  for (size_t d = 0; d < lo.size(); ++d) {
    if (lo[d] == 0 && size[d] == tensor.shape()[d]) continue;
    TILEPROF_ASSIGN_OR_RETURN(view, view.Slice(lo[d], lo[d] + size[d], d));
  }
  return view;
}

Expected<uint32_t> Param(int64_t v, std::string_view what) {
  if (v < 0 || v > UINT32_MAX) return MakeError("{} {} does not fit a vertex parameter", what, v);
  return static_cast<uint32_t>(v);
}

// The box of the operand that the windows of output box `box` read: per
// dimension the operand elements at dilated positions o * stride - padLo +
// k * winDil (o in the box, k in the window) that are not padding or
// base-dilation holes; one element where all are.
void WindowReadBox(const std::vector<std::pair<uint64_t, uint64_t>>& box,
                   const std::vector<hlo::WindowDimension>& window,
                   const std::vector<uint64_t>& in_dims, std::vector<uint64_t>& lo,
                   std::vector<uint64_t>& size) {
  for (size_t d = 0; d < in_dims.size(); ++d) {
    const hlo::WindowDimension& w = window[d];
    const auto extent = static_cast<int64_t>(in_dims[d]);
    const int64_t last = (extent - 1) * w.base_dilation;
    const int64_t p_lo = static_cast<int64_t>(box[d].first) * w.stride - w.padding_low;
    const int64_t p_hi = static_cast<int64_t>(box[d].second) * w.stride - w.padding_low +
                         (w.size - 1) * w.window_dilation;
    const int64_t i_lo = (std::max<int64_t>(p_lo, 0) + w.base_dilation - 1) / w.base_dilation;
    const int64_t i_hi = p_hi < 0 ? -1 : std::min(p_hi, last) / w.base_dilation;
    if (i_lo > i_hi) {
      lo[d] = static_cast<uint64_t>(std::min(i_lo, extent - 1));
      size[d] = 1;
    } else {
      lo[d] = static_cast<uint64_t>(i_lo);
      size[d] = static_cast<uint64_t>(i_hi - i_lo + 1);
    }
  }
}

// ReduceWindow's parameters (engine/codelets/window.h). The window's own
// figures were checked to fit by LowerReduceWindow; the extents and the box
// are checked here.
Status SetReduceWindowParams(Graph& graph, VertexRef vertex, uint64_t first, ReduceOp op,
                             const std::vector<hlo::WindowDimension>& window,
                             const std::vector<uint64_t>& out_dims,
                             const std::vector<uint64_t>& in_dims, const std::vector<uint64_t>& lo,
                             const std::vector<uint64_t>& size) {
  std::vector<uint32_t> values = {static_cast<uint32_t>(first), static_cast<uint32_t>(first >> 32),
                                  static_cast<uint32_t>(op)};
  auto push = [&values](uint64_t v, std::string_view what) -> Status {
    TILEPROF_ASSIGN_OR_RETURN(uint32_t p, Param(static_cast<int64_t>(v), what));
    values.push_back(p);
    return {};
  };
  for (uint64_t extent : out_dims) TILEPROF_RETURN_IF_ERROR(push(extent, "result dimension"));
  for (size_t d = 0; d < in_dims.size(); ++d) {
    const hlo::WindowDimension& w = window[d];
    TILEPROF_RETURN_IF_ERROR(push(in_dims[d], "operand dimension"));
    values.insert(values.end(), {static_cast<uint32_t>(w.size), static_cast<uint32_t>(w.stride),
                                 static_cast<uint32_t>(static_cast<int32_t>(w.padding_low)),
                                 static_cast<uint32_t>(w.base_dilation),
                                 static_cast<uint32_t>(w.window_dilation)});
    TILEPROF_RETURN_IF_ERROR(push(lo[d], "box origin"));
    TILEPROF_RETURN_IF_ERROR(push(size[d], "box size"));
  }
  return graph.SetInitialValues(vertex, values);
}

}  // namespace

Expected<Value> Lowering::LowerReduceWindow(const hlo::Instruction& instruction,
                                            std::span<const Value> operands,
                                            program::Sequence& program) {
  const hlo::Attribute* attribute = instruction.FindAttribute("window");
  // Computed at the operands' type, rounded to a float result's after.
  const hlo::Shape shape = ComputedShape(instruction);
  if (operands.size() != 2 || !IsArray(operands[0]) || !IsArray(operands[1]) ||
      attribute == nullptr || instruction.called_computations().size() != 1 ||
      !IsSimpleReducer(*instruction.called_computations()[0]) || !shape.IsArray() ||
      !IsNative(shape) || operands[1].tensor.NumElements() != 1 ||
      operands[1].tensor.element_type() != operands[0].tensor.element_type()) {
    return LowerOpaque(instruction, operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<hlo::WindowDimension> window,
                            hlo::ParseWindow(attribute->value()));
  const Tensor& in = operands[0].tensor;
  const size_t rank = in.Rank();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> out_dims, StorageShape(shape));
  if (window.size() != rank || out_dims.size() != rank) {
    return MakeError("window has {} dimensions, the operand {} and the result {}", window.size(),
                     rank, out_dims.size());
  }
  TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> sliding,
                            LowerSlidingWindow(instruction, operands, window, out_dims, program));
  if (sliding) return RoundToResult(instruction, std::move(sliding->tensor), program);
  const std::optional<ReduceOp> op = ReduceOpOf(*instruction.called_computations()[0]);
  const Tensor& init = operands[1].tensor;
  if (!op || !Supports(*op, in.element_type())) return LowerOpaque(instruction, operands, program);
  for (size_t j = 0; j < rank; ++j) {
    const hlo::WindowDimension& w = window[j];
    if (w.window_reversal) return LowerOpaque(instruction, operands, program);
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return MakeError("window dimension {} has a size, stride or dilation below 1", j);
    }
    if (w.size > UINT32_MAX || w.stride > UINT32_MAX || w.base_dilation > UINT32_MAX ||
        w.window_dilation > UINT32_MAX || w.padding_low < INT32_MIN || w.padding_low > INT32_MAX) {
      return MakeError("window dimension {} ({}) does not fit vertex parameters", j,
                       attribute->value());
    }
  }
  uint64_t out_elements = 1;
  for (uint64_t extent : out_dims) out_elements = SaturatingMul(out_elements, extent);
  if (in.NumElements() == 0 && out_elements > 0) {
    // Every window is padding: init combined with itself, which a reducer
    // with init as its identity leaves as init; else opaque.
    if (!IsReduceIdentity(*instruction.operand(1), *op)) {
      return LowerOpaque(instruction, operands, program);
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor filled, Fill(init, shape, instruction.name(), program));
    return RoundToResult(instruction, std::move(filled), program);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), true));
  if (out.NumElements() == 0) return RoundToResult(instruction, std::move(out), program);
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            codelets_.ReduceWindow(in.element_type(), static_cast<uint32_t>(rank)));
  // Per output element, the share of the operand its window does not share
  // with the next one (a run whose box holds far more is split at rows).
  uint64_t needed_per_output = 1;
  for (const hlo::WindowDimension& w : window) {
    needed_per_output =
        SaturatingMul(needed_per_output, static_cast<uint64_t>(std::min(w.size, w.stride)));
  }
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  const Tensor flat_out = out.Flatten();
  const TensorIndex operand_index(in);
  const std::vector<uint64_t>& in_dims = in.shape();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<Run> runs, RunsOf(graph_, flat_out));
  std::vector<uint64_t> lo(rank), size(rank);
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto [first, count, tile] = runs[r];
    const auto box = FlatRunBox(out_dims, first, count);
    WindowReadBox(box, window, in_dims, lo, size);
    uint64_t volume = 1;
    for (uint64_t v : size) volume = SaturatingMul(volume, v);
    if (SplitWideRun(out_dims, box, volume, SaturatingMul(count, needed_per_output), runs[r],
                     runs)) {
      continue;
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor operand_box, operand_index.Box(lo, size));
    TILEPROF_ASSIGN_OR_RETURN(Tensor out_part, flat_out.Slice(first, first + count));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["operand"], std::move(operand_box)));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["init"], init.Flatten()));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], out_part));
    TILEPROF_RETURN_IF_ERROR(
        SetReduceWindowParams(graph_, vertex, first, *op, window, out_dims, in_dims, lo, size));
  }
  return RoundToResult(instruction, std::move(out), program);
}

namespace {

// Whether select-and-scatter's window is one the codelet runs (no
// dilation or reversal: else false, for an opaque lowering), or the error
// when it does not match the operand and source.
Expected<bool> CheckScatterWindow(const std::vector<hlo::WindowDimension>& window,
                                  const Tensor& operand, const Tensor& source) {
  const size_t rank = operand.Rank();
  for (size_t d = 0; d < rank; ++d) {
    const hlo::WindowDimension& w = window[d];
    if (w.base_dilation != 1 || w.window_dilation != 1 || w.window_reversal) {
      return false;
    }
    if (w.size < 1 || w.stride < 1) {
      return MakeError("window dimension {} has a size or stride below 1", d);
    }
    const int64_t padded =
        static_cast<int64_t>(operand.shape()[d]) + w.padding_low + w.padding_high;
    const int64_t windows = padded < w.size ? 0 : (padded - w.size) / w.stride + 1;
    if (windows != static_cast<int64_t>(source.shape()[d])) {
      return MakeError("source dimension {} has {} elements, the window gives {}", d,
                       source.shape()[d], windows);
    }
    if (w.padding_low < INT32_MIN || w.padding_low > INT32_MAX) {
      return MakeError("padding {} does not fit a vertex parameter", w.padding_low);
    }
  }
  return true;
}

// The boxes of the operand and the source that the output box `box` (a run
// of the flat output) depends on: the windows overlapping it and their
// operand elements, each at least one element.
void ReadBoxes(const std::vector<std::pair<uint64_t, uint64_t>>& box,
               const std::vector<hlo::WindowDimension>& window, const std::vector<uint64_t>& dims,
               const std::vector<uint64_t>& source_dims, std::vector<uint64_t>& op_lo,
               std::vector<uint64_t>& op_size, std::vector<uint64_t>& src_lo,
               std::vector<uint64_t>& src_size) {
  const size_t rank = dims.size();
  for (size_t d = 0; d < rank; ++d) {
    const hlo::WindowDimension& w = window[d];
    const auto extent = static_cast<int64_t>(dims[d]);
    const auto windows = static_cast<int64_t>(source_dims[d]);
    // Windows s with s * stride - padLow <= q <= that + size - 1 for q in the box.
    const int64_t lo = static_cast<int64_t>(box[d].first) + w.padding_low - w.size + 1,
                  hi = static_cast<int64_t>(box[d].second) + w.padding_low;
    int64_t s_lo = lo <= 0 ? 0 : (lo + w.stride - 1) / w.stride;
    int64_t s_hi = hi < 0 ? -1 : std::min(windows - 1, hi / w.stride);
    if (s_lo > s_hi) s_lo = s_hi = std::min<int64_t>(s_lo, windows - 1);  // none: any one
    int64_t o_lo = std::max<int64_t>(0, s_lo * w.stride - w.padding_low);
    int64_t o_hi = std::min(extent - 1, s_hi * w.stride - w.padding_low + w.size - 1);
    if (o_lo > o_hi) o_lo = o_hi = std::min(o_lo, extent - 1);  // all padding: any one
    src_lo[d] = static_cast<uint64_t>(s_lo);
    src_size[d] = static_cast<uint64_t>(s_hi - s_lo + 1);
    op_lo[d] = static_cast<uint64_t>(o_lo);
    op_size[d] = static_cast<uint64_t>(o_hi - o_lo + 1);
  }
}

// A select-and-scatter vertex's parameters: its first output element, the
// select direction, and per dimension the extents, the window and the
// boxes it reads (padLo signed, as 32-bit two's complement).
Status SetScatterParams(Graph& graph, VertexRef vertex, uint64_t first, SelectDirection direction,
                        const std::vector<hlo::WindowDimension>& window,
                        const std::vector<uint64_t>& dims, const std::vector<uint64_t>& source_dims,
                        const std::vector<uint64_t>& op_lo, const std::vector<uint64_t>& op_size,
                        const std::vector<uint64_t>& src_lo,
                        const std::vector<uint64_t>& src_size) {
  const size_t rank = dims.size();
  auto set = [&](std::string name, int64_t value) -> Status {
    TILEPROF_ASSIGN_OR_RETURN(uint32_t v, Param(value, name));
    return graph.SetInitialValue(vertex[name], v);
  };
  TILEPROF_RETURN_IF_ERROR(set("first", static_cast<int64_t>(first)));
  TILEPROF_RETURN_IF_ERROR(set("select", static_cast<int64_t>(direction)));
  for (size_t d = 0; d < rank; ++d) {
    const hlo::WindowDimension& w = window[d];
    TILEPROF_RETURN_IF_ERROR(set(fmt::format("outSize{}", d), static_cast<int64_t>(dims[d])));
    const int64_t values[] = {static_cast<int64_t>(source_dims[d]),
                              w.size,
                              w.stride,
                              0,
                              static_cast<int64_t>(op_lo[d]),
                              static_cast<int64_t>(op_size[d]),
                              static_cast<int64_t>(src_lo[d]),
                              static_cast<int64_t>(src_size[d])};
    const char* names[] = {"srcExtent", "window", "stride", "padLo",
                           "opLo",      "opSize", "srcLo",  "srcSize"};
    for (size_t k = 0; k < std::size(values); ++k) {
      if (k == 3) {
        // Signed: 32-bit two's complement.
        TILEPROF_RETURN_IF_ERROR(
            graph.SetInitialValue(vertex[fmt::format("padLo{}", d)],
                                  static_cast<uint32_t>(static_cast<int32_t>(w.padding_low))));
        continue;
      }
      TILEPROF_RETURN_IF_ERROR(set(fmt::format("{}{}", names[k], d), values[k]));
    }
  }
  return {};
}

}  // namespace

Expected<Value> Lowering::LowerSelectAndScatter(const hlo::Instruction& instruction,
                                                std::span<const Value> operands,
                                                program::Sequence& program) {
  const hlo::Attribute* attribute = instruction.FindAttribute("window");
  // Computed at the operands' type, rounded to a float result's after.
  const hlo::Shape shape = ComputedShape(instruction);
  const hlo::Attribute* select_attribute = instruction.FindAttribute("select");
  const hlo::Attribute* scatter_attribute = instruction.FindAttribute("scatter");
  const auto calls = instruction.called_computations();
  if (operands.size() != 3 || !IsArray(operands[0]) || !IsArray(operands[1]) ||
      !IsArray(operands[2]) || attribute == nullptr || select_attribute == nullptr ||
      scatter_attribute == nullptr || select_attribute->count() != 1 ||
      scatter_attribute->count() != 1 || select_attribute->first() >= calls.size() ||
      scatter_attribute->first() >= calls.size()) {
    return LowerOpaque(instruction, operands, program);
  }
  const std::optional<SelectDirection> direction = SelectOf(*calls[select_attribute->first()]);
  const Tensor& operand = operands[0].tensor;
  const Tensor& source = operands[1].tensor;
  const Tensor& init = operands[2].tensor;
  const ElementType type = operand.element_type();
  if (!direction || !IsAddOfParameters(*calls[scatter_attribute->first()]) ||
      source.element_type() != type || init.element_type() != type || init.NumElements() != 1 ||
      type == ElementType::kPred || !shape.IsArray() || !IsNative(shape)) {
    return LowerOpaque(instruction, operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<hlo::WindowDimension> window,
                            hlo::ParseWindow(attribute->value()));
  const size_t rank = operand.Rank();
  if (window.size() != rank || source.Rank() != rank) {
    return MakeError("window has {} dimensions, the operand {} and the source {}", window.size(),
                     rank, source.Rank());
  }
  TILEPROF_ASSIGN_OR_RETURN(const bool supported, CheckScatterWindow(window, operand, source));
  if (!supported) return LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), true));
  if (out.NumElements() == 0) return RoundToResult(instruction, std::move(out), program);
  if (operand.NumElements() == 0 || source.NumElements() == 0) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor filled, Fill(init, shape, instruction.name(), program));
    return RoundToResult(instruction, std::move(filled), program);
  }
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            codelets_.SelectAndScatter(type, static_cast<uint32_t>(rank)));
  const std::vector<uint64_t> dims = operand.shape();
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  const Tensor flat_out = out.Flatten();
  // A run crossing rows of an outer dimension (the last rows of one image
  // and the first of the next) reads boxes of the whole of those
  // dimensions: it is cut at them, as reduce-window's runs are (a batch-2
  // max pool's gradient received 4 MB onto one tile).
  TILEPROF_ASSIGN_OR_RETURN(std::vector<Run> runs, RunsOf(graph_, flat_out));
  std::vector<uint64_t> op_lo(rank), op_size(rank), src_lo(rank), src_size(rank);
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto [first, count, tile] = runs[r];
    const auto box = FlatRunBox(dims, first, count);
    ReadBoxes(box, window, dims, source.shape(), op_lo, op_size, src_lo, src_size);
    uint64_t volume = 1;
    for (uint64_t v : op_size) volume = SaturatingMul(volume, v);
    if (SplitWideRun(dims, box, volume, count, runs[r], runs)) continue;
    TILEPROF_ASSIGN_OR_RETURN(Tensor op_box, Box(operand, op_lo, op_size));
    TILEPROF_ASSIGN_OR_RETURN(Tensor src_box, Box(source, src_lo, src_size));
    TILEPROF_ASSIGN_OR_RETURN(Tensor out_part, flat_out.Slice(first, first + count));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["operand"], op_box));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["source"], src_box));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["init"], init.Flatten()));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], out_part));
    TILEPROF_RETURN_IF_ERROR(SetScatterParams(graph_, vertex, first, *direction, window, dims,
                                              source.shape(), op_lo, op_size, src_lo, src_size));
  }
  return RoundToResult(instruction, std::move(out), program);
}

}  // namespace tileprof::engine::compiler
