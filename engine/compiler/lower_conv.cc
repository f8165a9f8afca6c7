// Convolution, planned (conv_plan.h) and lowered to the general conv partial
// (codelets.h, ConvParam), which reads input and kernel in their own layouts
// through strides, so no operand is rearranged: each cell of the plan is one
// vertex on its tile computing a block of the output (its batch, field and
// output-channel ranges) over its input channels and kernel positions, and
// reading the boxes of input and kernel elements that block reads (halo
// rows, the window, its channel slice), widened to whole inner dimensions
// when that adds at most 1/kWidenFraction or costs less than the regions it
// saves (CutBox, conv_cells.cc: one region per plane rather than one per
// row). Shapes XLA
// would reject are errors naming the instruction; what the codelet cannot
// take (more than 3 spatial dimensions, sums of no products) is left opaque.
#include <algorithm>
#include <array>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/compiler/conv_cells.h"
#include "engine/compiler/dot_plan.h"
#include "engine/compiler/memory_model.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

// A count such as feature_group_count=2 (1 when the attribute is absent).
Expected<uint64_t> CountAttribute(const hlo::Instruction& instruction, std::string_view name) {
  const hlo::Attribute* attr = instruction.FindAttribute(name);
  if (attr == nullptr) return uint64_t{1};
  uint64_t value = 0;
  const std::string_view text = attr->value();
  for (char c : text) {
    if (c < '0' || c > '9' || value > UINT32_MAX)
      return MakeError("{}={} is not a count", name, text);
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (text.empty() || value == 0) return MakeError("{}={} is not a count", name, text);
  return value;
}

// The sizes and row-major strides of the dimensions `which` of `t`, in that
// (logical) order; an error unless `which` names each dimension of `t` once.
Status Locate(std::string_view labels, const Tensor& t, std::span<const int64_t> which,
              LogicalSizes& sizes, LogicalSizes& strides) {
  const std::vector<uint64_t> all = Strides(t.shape());
  std::vector<bool> seen(t.Rank(), false);
  sizes.fill(1);
  strides.fill(1);
  for (size_t i = 0; i < which.size(); ++i) {
    const int64_t d = which[i];
    if (d < 0 || static_cast<size_t>(d) >= t.Rank() || seen[static_cast<size_t>(d)]) {
      return MakeError("dim_labels {} do not name each dimension of {} once", labels,
                       t.ShapeString());
    }
    seen[static_cast<size_t>(d)] = true;
    sizes[i] = t.shape()[static_cast<size_t>(d)];
    strides[i] = all[static_cast<size_t>(d)];
  }
  return {};
}

// The convolution's window, group counts and each operand's logical
// dimensions as `dims` (its dim_labels, `labels`) name them; `out` has the
// result's shape.
Expected<ConvPlan> ReadConvPlan(const hlo::Instruction& instruction,
                                const hlo::ConvolutionDimensions& dims, std::string_view labels,
                                const Tensor& input, const Tensor& kernel, const Tensor& out) {
  const size_t nsp = dims.input_spatial.size();
  ConvPlan plan;
  if (const hlo::Attribute* window = instruction.FindAttribute("window")) {
    TILEPROF_ASSIGN_OR_RETURN(plan.window, hlo::ParseWindow(window->value()));
  }
  if (plan.window.size() != nsp) {
    return MakeError("window has {} dimensions, dim_labels {} spatial ones", plan.window.size(),
                     nsp);
  }
  TILEPROF_ASSIGN_OR_RETURN(plan.feature_groups,
                            CountAttribute(instruction, "feature_group_count"));
  TILEPROF_ASSIGN_OR_RETURN(plan.batch_groups, CountAttribute(instruction, "batch_group_count"));

  plan.in_dims = {dims.input_batch, dims.input_feature};
  plan.w_dims = {dims.kernel_input_feature, dims.kernel_output_feature};
  plan.out_dims = {dims.output_batch, dims.output_feature};
  for (size_t s = 0; s < nsp; ++s) {
    plan.in_dims.push_back(dims.input_spatial[s]);
    plan.w_dims.push_back(dims.kernel_spatial[s]);
    plan.out_dims.push_back(dims.output_spatial[s]);
  }
  TILEPROF_RETURN_IF_ERROR(Locate(labels, input, plan.in_dims, plan.in_size, plan.in_stride));
  TILEPROF_RETURN_IF_ERROR(Locate(labels, kernel, plan.w_dims, plan.w_size, plan.w_stride));
  TILEPROF_RETURN_IF_ERROR(Locate(labels, out, plan.out_dims, plan.out_size, plan.out_stride));
  return plan;
}

// The shapes XLA requires of the operands and the result (`out`); sets the
// plan's input channels and output channels per group.
Status CheckConvShapes(ConvPlan& plan, const Tensor& input, const Tensor& kernel,
                       const Tensor& out) {
  const size_t nsp = plan.window.size();
  const uint64_t batch = plan.in_size[0], features = plan.in_size[1];
  plan.ci = plan.w_size[0];
  const uint64_t co = plan.w_size[1];
  const uint64_t groups = plan.feature_groups * plan.batch_groups;
  if (plan.feature_groups > 1 && plan.batch_groups > 1) {
    return MakeError("feature_group_count and batch_group_count are both above 1");
  }
  if (features != plan.ci * plan.feature_groups || co % groups != 0 ||
      batch % plan.batch_groups != 0) {
    return MakeError(
        "input {} (features {}, batch {}) and kernel {} (input features {}, output "
        "features {}) do not fit feature_group_count={} batch_group_count={}",
        input.ShapeString(), features, batch, kernel.ShapeString(), plan.ci, co,
        plan.feature_groups, plan.batch_groups);
  }
  plan.co_per_group = co / groups;
  std::vector<uint64_t> expected = {batch / plan.batch_groups, co};
  for (size_t s = 0; s < nsp; ++s) {
    const hlo::WindowDimension& w = plan.window[s];
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 ||
        static_cast<uint64_t>(w.size) != plan.w_size[2 + s] || w.padding_low < INT32_MIN ||
        w.padding_low > INT32_MAX || w.padding_high < INT32_MIN || w.padding_high > INT32_MAX) {
      return MakeError(
          "window dimension {} (size {}, stride {}, padding {}_{}, dilations {}/{}) does "
          "not fit kernel {}",
          s, w.size, w.stride, w.padding_low, w.padding_high, w.base_dilation, w.window_dilation,
          kernel.ShapeString());
    }
    const int64_t in = static_cast<int64_t>(plan.in_size[2 + s]);
    const int64_t padded =
        in == 0 ? 0 : (in - 1) * w.base_dilation + 1 + w.padding_low + w.padding_high;
    const int64_t span = (w.size - 1) * w.window_dilation + 1;
    expected.push_back(padded >= span ? static_cast<uint64_t>((padded - span) / w.stride + 1) : 0);
  }
  std::vector<uint64_t> got(plan.out_size.begin(),
                            plan.out_size.begin() + static_cast<int64_t>(nsp + 2));
  if (got != expected) {
    return MakeError("result {} should have batch, feature and spatial sizes [{}]",
                     out.ShapeString(), fmt::join(expected, ","));
  }
  return {};
}

// The contraction as the planner sees it (conv_plan.h): groups are the
// feature or batch groups; each operand's dimensions in storage order.
ContractionShape ConvContraction(Lowering& lowering, const ConvPlan& plan, const Tensor& input,
                                 const Tensor& kernel, const Tensor& out, const Codelet& codelet) {
  const size_t nsp = plan.window.size();
  const uint64_t groups = plan.feature_groups * plan.batch_groups;
  ContractionShape shape;
  shape.groups = groups;
  shape.batch = plan.out_size[0];
  shape.in_chans = plan.ci;
  shape.out_chans = plan.co_per_group;
  for (size_t s = 0; s < nsp; ++s) {
    const hlo::WindowDimension& w = plan.window[s];
    shape.fields.push_back({plan.out_size[2 + s], plan.in_size[2 + s], plan.w_size[2 + s],
                            static_cast<uint64_t>(w.stride),
                            static_cast<uint64_t>(w.window_dilation),
                            static_cast<uint64_t>(w.base_dilation)});
  }
  shape.in_bytes = SizeOf(input.element_type());
  shape.channel_grain = ChannelGrain(input.element_type());
  shape.acc_bytes = SizeOf(SplitPartialsType(out.element_type()));
  shape.out_bytes = SizeOf(out.element_type());
  shape.types = fmt::format("{}>{}", HloName(input.element_type()), HloName(out.element_type()));
  auto order = [&](std::span<const int64_t> which, auto&& roles) {
    std::vector<PlanDim> result_order;
    std::vector<size_t> logical(which.size());
    for (size_t i = 0; i < which.size(); ++i) logical[static_cast<size_t>(which[i])] = i;
    for (size_t i : logical) roles(i, result_order);
    return result_order;
  };
  const bool grouped = groups > 1;
  shape.input_order = order(plan.in_dims, [&](size_t i, std::vector<PlanDim>& o) {
    if (i == 0) {
      if (plan.batch_groups > 1) o.push_back(PlanDim::kGroup);
      o.push_back(PlanDim::kBatch);
    } else if (i == 1) {
      if (plan.feature_groups > 1) o.push_back(PlanDim::kGroup);
      o.push_back(PlanDim::kInChan);
    } else {
      o.push_back(FieldDim(i - 2));
    }
  });
  shape.weights_order = order(plan.w_dims, [&](size_t i, std::vector<PlanDim>& o) {
    if (i == 0) {
      o.push_back(PlanDim::kInChan);
    } else if (i == 1) {
      if (grouped) o.push_back(PlanDim::kGroup);
      o.push_back(PlanDim::kOutChan);
    } else {
      o.push_back(KernelDim(i - 2));
    }
  });
  shape.output_order = order(plan.out_dims, [&](size_t i, std::vector<PlanDim>& o) {
    if (i == 0) {
      o.push_back(PlanDim::kBatch);
    } else if (i == 1) {
      if (grouped) o.push_back(PlanDim::kGroup);
      o.push_back(PlanDim::kOutChan);
    } else {
      o.push_back(FieldDim(i - 2));
    }
  });
  shape.cell_state_bytes = codelet.state_bytes() + kReduceVertexStateBytes;
  shape.input_placeable = lowering.IsUnread(input);
  shape.weights_placeable = lowering.IsUnread(kernel);
  if (!shape.input_placeable && groups == 1) {
    std::vector<OperandDim> dims;
    for (size_t role = 0; role < 2 + nsp; ++role) {
      const PlanDim dim = role == 0   ? PlanDim::kBatch
                          : role == 1 ? PlanDim::kInChan
                                      : FieldDim(role - 2);
      dims.push_back({dim, plan.in_size[role], plan.in_stride[role]});
    }
    shape.input_tile_block = OperandTileBlocks(lowering.graph(), input, dims);
  }
  return shape;
}

}  // namespace

Expected<Value> LowerConvolution(Lowering& lowering, const hlo::Instruction& instruction,
                                 std::span<const Value> operands, const Codelet& codelet,
                                 program::Sequence& program) {
  const Tensor& input = operands[0].tensor;
  const Tensor& kernel = operands[1].tensor;
  const hlo::Attribute* labels = instruction.FindAttribute("dim_labels");
  if (labels == nullptr) return MakeError("convolution without dim_labels");
  TILEPROF_ASSIGN_OR_RETURN(hlo::ConvolutionDimensions dims, hlo::ParseDimLabels(labels->value()));
  const size_t nsp = dims.input_spatial.size();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> result_dims, StorageShape(instruction.shape()));
  // Only the shape for now: the variable is made once the op is known to lower.
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(instruction.shape().element_type));
  const Tensor out = Tensor::OfVariable(0, storage.type, result_dims);
  if (input.Rank() != nsp + 2 || kernel.Rank() != nsp + 2 || out.Rank() != nsp + 2 ||
      dims.kernel_spatial.size() != nsp || dims.output_spatial.size() != nsp) {
    return MakeError("dim_labels {} do not fit input {}, kernel {} and result {}", labels->value(),
                     input.ShapeString(), kernel.ShapeString(), out.ShapeString());
  }
  TILEPROF_ASSIGN_OR_RETURN(ConvPlan plan,
                            ReadConvPlan(instruction, dims, labels->value(), input, kernel, out));
  TILEPROF_RETURN_IF_ERROR(CheckConvShapes(plan, input, kernel, out));
  const uint64_t out_n = out.NumElements();
  if (out_n > 0 && (plan.ci == 0 || input.NumElements() == 0)) {
    // Sums of no products: zeros, which the conv partial cannot give.
    return lowering.LowerOpaque(instruction, operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor result,
                            lowering.NewTensor(instruction.shape(), instruction.name(), false));
  if (out_n == 0) return Value::Array(result);

  const ContractionShape shape = ConvContraction(lowering, plan, input, kernel, out, codelet);
  const Partition partition =
      PlanContraction(lowering, instruction, shape, input.element_type(), out.element_type());
  // Split input channels keep f16/bf16 sums in f32 partials (dot_plan.h).
  const ElementType partials_type = PartialsType(out.element_type(), partition);
  const Codelet* cell_codelet = &codelet;
  if (partials_type != out.element_type()) {
    TILEPROF_ASSIGN_OR_RETURN(cell_codelet,
                              GetConvPartialCodelet(input.element_type(), partials_type));
  }

  const std::vector<std::string> param_names(ConvPartialParamNames().begin(),
                                             ConvPartialParamNames().end());
  Graph& graph = lowering.graph();
  const TensorIndex input_index(input), kernel_index(kernel);
  const std::optional<size_t> in_field = cell_codelet->FindField("in"),
                              weights_field = cell_codelet->FindField("weights"),
                              out_field = cell_codelet->FindField("out");
  if (!in_field || !weights_field || !out_field) {
    return MakeError("codelet {} lacks a convolution field (in, weights, out)",
                     cell_codelet->name());
  }
  ConvCells cells{.graph = graph,
                  .instruction = instruction,
                  .codelet = *cell_codelet,
                  .plan = plan,
                  .input = input,
                  .kernel = kernel,
                  .out = out,
                  .target_type = partials_type,
                  .input_index = input_index,
                  .kernel_index = kernel_index,
                  .input_placeable = shape.input_placeable,
                  .weights_placeable = shape.weights_placeable,
                  .in_field = *in_field,
                  .weights_field = *weights_field,
                  .out_field = *out_field,
                  .param_names = param_names,
                  .lo = {},
                  .extent = {}};
  auto box = [&](const Cell& cell, std::vector<uint64_t>& lo, std::vector<uint64_t>& size) {
    cells.OutputBox(cell, lo, size);
  };
  auto emit = [&](ComputeSetId cs, const Cell& cell, std::span<const TensorRegion> target) {
    return cells.Emit(cs, cell, target);
  };
  TILEPROF_RETURN_IF_ERROR(
      EmitPlanned(lowering, instruction, result, shape, partition, program, box, emit));
  return Value::Array(result);
}

}  // namespace tileprof::engine::compiler
