// Custom calls tileprof knows, and collectives on one device. A custom call
// is a library function named by its target: those whose result is defined
// by their documentation are lowered to what they compute; any other target
// stays opaque (its memory accounted, the simulator refuses it by name).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "engine/compiler/expansion_text.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

// Targets that annotate their operand and, on one device, return it:
// sharding and SPMD shape markers (the full and the shard shape are one on
// one device), host-offload placement (memory spaces tileprof does not
// model), bounds of dynamic shapes (the graph keeps the bound), and
// torch-neuronx's markers: AwsNeuronTransferWithStaticRing, which its
// TransferWithStaticRing autograd function puts on every parameter an
// Embedding, LayerNorm, Linear, Conv2d or BatchNorm2d reads (a transfer hint
// for the Neuron runtime; forward and backward return the tensor through
// it), and TorchNeuronStartBackward (a mark on a module's output); and the
// TPU compiler's AssumeGatherIndicesInBound (a promise about its operand,
// the indices of a gather, which it returns).
constexpr std::array<std::string_view, 11> kIdentityTargets = {"Sharding",
                                                               "SPMDFullToShardShape",
                                                               "SPMDShardToFullShape",
                                                               "MoveToHost",
                                                               "MoveToDevice",
                                                               "annotate_device_placement",
                                                               "SetBound",
                                                               "LayoutConstraint",
                                                               "AwsNeuronTransferWithStaticRing",
                                                               "TorchNeuronStartBackward",
                                                               "AssumeGatherIndicesInBound"};

// The names JAX has given its threefry2x32 kernel (jax/_src/prng.py:
// cu_threefry2x32 before 0.4.14, cuda_threefry2x32 after; the _ffi forms of
// typed-FFI builds).
constexpr std::array<std::string_view, 6> kThreefryTargets = {
    "cuda_threefry2x32",     "cu_threefry2x32",     "hip_threefry2x32",
    "cuda_threefry2x32_ffi", "cu_threefry2x32_ffi", "hip_threefry2x32_ffi"};

// torch-neuronx's activation custom calls (the Neuron compiler's list of
// recognised targets; torch_xla's GeluForward with approximate='none' and
// 'tanh' lower to the first two), each elementwise on one float array:
//   AwsNeuronGelu           x / 2 * (1 + erf(x / sqrt(2)))
//   AwsNeuronGeluApprxTanh  x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
//   AwsNeuronErf            erf(x)
//   AwsNeuronSilu           x * logistic(x)
// The backward targets are left opaque: their operand order is not
// documented.
constexpr std::array<std::string_view, 4> kActivationTargets = {
    "AwsNeuronGelu", "AwsNeuronGeluApprxTanh", "AwsNeuronErf", "AwsNeuronSilu"};

// The HLO text computing activation `target` of one array of `shape`,
// in f32 for halves (rounded once at the end), as the batch norms'
// expansions do.
std::string ActivationText(std::string_view name, std::string_view target,
                           const hlo::Shape& shape) {
  const hlo::PrimitiveType computing = ComputingType(shape.element_type);
  const bool half = computing != shape.element_type;
  const std::string full = ShapeText(shape, computing);
  const std::string_view type = hlo::PrimitiveTypeName(computing);
  ExpansionText text(name);
  const auto ref = [&](std::string_view what) { return text.Ref(what); };
  const auto add = [&](std::string_view what, std::string_view op) { text.Add(what, full, op); };
  const auto binary = [&](std::string_view a, std::string_view b) {
    return fmt::format("{}, {}", ref(a), ref(b));
  };
  const auto constant = [&](std::string_view what, std::string_view value) {
    const std::string scalar = text.Add(fmt::format("{}_s", what), fmt::format("{}[]", type),
                                        fmt::format("constant({})", value));
    add(what, fmt::format("broadcast({}), dimensions={{}}", scalar));
  };
  text.Parameter(half ? "in" : "x", ShapeText(shape));
  if (half) add("x", fmt::format("convert({})", ref("in")));
  // Every instruction but the root, which computes y from `last`.
  std::string last;
  if (target == "AwsNeuronErf") {
    last = fmt::format("erf({})", ref("x"));
  } else if (target == "AwsNeuronSilu") {
    add("sigmoid", fmt::format("logistic({})", ref("x")));
    last = fmt::format("multiply({})", binary("x", "sigmoid"));
  } else {
    constant("half", "0.5");
    constant("one", "1");
    if (target == "AwsNeuronGelu") {
      constant("rsqrt2", "0.70710678118654752440");
      add("scaled", fmt::format("multiply({})", binary("x", "rsqrt2")));
      add("curve", fmt::format("erf({})", ref("scaled")));
    } else {
      constant("k", "0.79788456080286535588");
      constant("c", "0.044715");
      add("x2", fmt::format("multiply({})", binary("x", "x")));
      add("x3", fmt::format("multiply({})", binary("x2", "x")));
      add("cx3", fmt::format("multiply({})", binary("c", "x3")));
      add("inner", fmt::format("add({})", binary("x", "cx3")));
      add("scaled", fmt::format("multiply({})", binary("k", "inner")));
      add("curve", fmt::format("tanh({})", ref("scaled")));
    }
    add("gate", fmt::format("add({})", binary("one", "curve")));
    add("halfx", fmt::format("multiply({})", binary("half", "x")));
    last = fmt::format("multiply({})", binary("halfx", "gate"));
  }
  if (half) {
    add("y", last);
    last = fmt::format("convert({})", ref("y"));
  }
  return text.Finish(ShapeText(shape), last);
}

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The operand as a result of shape `shape`, nothing moved: a tuple as it
// is (when the result is a tuple too), an array as a view of its elements
// under `shape` (the same count and type). nullopt when they differ.
std::optional<Value> PassThrough(const Value& operand, const hlo::Shape& shape) {
  if (operand.is_tuple) {
    if (shape.IsTuple()) return operand;
    return std::nullopt;
  }
  if (!operand.tensor.valid() || !shape.IsArray()) return std::nullopt;
  Expected<StorageType> storage = StorageOf(shape.element_type);
  Expected<std::vector<uint64_t>> dims = StorageShape(shape);
  if (!storage || !dims || storage->type != operand.tensor.element_type()) return std::nullopt;
  Expected<Tensor> view = operand.tensor.Reshape(*dims);
  if (!view) return std::nullopt;
  return Value::Array(*view);
}

}  // namespace

Expected<Value> Lowering::LowerCustomCall(const hlo::Instruction& instruction,
                                          std::span<const Value> operands,
                                          program::Sequence& program) {
  TILEPROF_ASSIGN_OR_RETURN(hlo::CustomCall call, hlo::GetCustomCall(instruction));
  if (OneOf(kThreefryTargets, call.target)) return LowerThreefry(instruction, operands, program);
  if (IsLinalgTarget(call.target)) return LowerLinalg(instruction, call, operands, program);
  if (OneOf(kIdentityTargets, call.target) && operands.size() == 1) {
    if (auto same = PassThrough(operands[0], instruction.shape())) return *same;
  }
  if (OneOf(kActivationTargets, call.target) && operands.size() == 1 &&
      instruction.operand_count() == 1 && instruction.shape().IsArray() &&
      hlo::IsFloatingPointType(instruction.shape().element_type) &&
      hlo::BitWidth(instruction.shape().element_type) >= 16 &&
      instruction.operand(0)->shape().element_type == instruction.shape().element_type &&
      instruction.operand(0)->shape().dimensions == instruction.shape().dimensions) {
    return LowerExpansion(instruction,
                          ActivationText(instruction.name(), call.target, instruction.shape()),
                          operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> normed,
                            LowerRmsNorm(instruction, call, operands, program));
  if (normed) return std::move(*normed);
  TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> words,
                            LowerX64(instruction, call, operands, program));
  if (words) return std::move(*words);
  return LowerOpaque(instruction, operands, program);
}

// A collective among the devices of its replica group: on one device (the
// group has one member, or no groups and a module compiled for one replica
// and one partition) all-reduce, all-gather, reduce-scatter and all-to-all
// return their operands, and collective-permute returns its operand when the
// device sends to itself and zeros otherwise (XLA's rule for a device no
// pair targets). On more devices the other members' data is not in this
// program: the op stays opaque and the simulator refuses it by name.
Expected<Value> Lowering::LowerCollective(const hlo::Instruction& instruction,
                                          std::span<const Value> operands,
                                          program::Sequence& program) {
  if (module_ == nullptr) return LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(const hlo::CollectiveSpan span,
                            hlo::CollectiveDevices(instruction, *module_));
  if (span.devices != 1) return LowerOpaque(instruction, operands, program, /*leafwise=*/true);
  if (instruction.opcode() == hlo::Opcode::kCollectivePermute) {
    // On one device, the pairs name device 0 only (CollectiveDevices).
    bool to_self = false;
    if (const hlo::Attribute* pairs = instruction.FindAttribute("source_target_pairs")) {
      TILEPROF_ASSIGN_OR_RETURN(auto list, hlo::ParseIntListList(pairs->value()));
      for (const auto& pair : list) to_self = to_self || (pair.size() == 2 && pair[1] == 0);
    }
    if (!to_self && operands.size() == 1 && !operands[0].is_tuple) {
      const int64_t zero_value = 0;
      TILEPROF_ASSIGN_OR_RETURN(
          Tensor zero,
          graph_.AddConstantFromInts(operands[0].tensor.element_type(), {}, {&zero_value, 1},
                                     fmt::format("{}.zero", instruction.name())));
      TILEPROF_RETURN_IF_ERROR(mapper_.MapToTile(zero, 0));
      TILEPROF_ASSIGN_OR_RETURN(Tensor out,
                                Fill(zero, instruction.shape(), instruction.name(), program));
      return Value::Array(out);
    }
  }
  if (operands.size() == 1) {
    if (auto same = PassThrough(operands[0], instruction.shape())) return *same;
  } else if (instruction.shape().IsTuple() &&
             instruction.shape().tuple_shapes.size() == operands.size()) {
    Value result;  // all-reduce of several arrays: a tuple of them
    result.is_tuple = true;
    result.elements.assign(operands.begin(), operands.end());
    return result;
  }
  return LowerOpaque(instruction, operands, program);
}

// get-dimension-size of a static dimension: the size, an s32 constant (TF
// dumps take a tensor's Shape this way). A dynamic dimension's size is known
// only when the program runs, and the graph keeps its bound: opaque.
Expected<Value> Lowering::LowerGetDimensionSize(const hlo::Instruction& instruction,
                                                std::span<const Value> operands,
                                                program::Sequence& program) {
  const hlo::Attribute* dimensions = instruction.FindAttribute("dimensions");
  if (instruction.operand_count() != 1 || dimensions == nullptr) {
    return LowerOpaque(instruction, operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> list, hlo::ParseIntList(dimensions->value()));
  if (list.size() != 1) return MakeError("get-dimension-size names {} dimensions", list.size());
  const std::optional<int64_t> dimension = list[0];
  const hlo::Shape& shape = instruction.operand(0)->shape();
  const auto d = static_cast<size_t>(*dimension);
  if (*dimension < 0 || d >= shape.dimensions.size()) {
    return MakeError("dimensions={} outside rank {}", *dimension, shape.dimensions.size());
  }
  const bool dynamic = d < shape.dynamic_dimensions.size() && shape.dynamic_dimensions[d];
  if (dynamic || instruction.shape().element_type != hlo::PrimitiveType::kS32) {
    return LowerOpaque(instruction, operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor size, graph_.AddConstantFromInts(ElementType::kS32, {}, {&shape.dimensions[d], 1},
                                              instruction.name()));
  TILEPROF_RETURN_IF_ERROR(mapper_.MapToTile(size, 0));
  return Value::Array(size);
}

}  // namespace tileprof::engine::compiler
