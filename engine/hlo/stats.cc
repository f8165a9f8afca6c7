// Module statistics; see stats.h.
#include "engine/hlo/stats.h"

#include <algorithm>
#include <map>

#include "engine/hlo/attributes.h"
#include "engine/hlo/literal.h"

namespace tileprof::hlo {
namespace {

bool MultiplyInto(int64_t* product, int64_t factor) {
  return factor >= 0 && !__builtin_mul_overflow(*product, factor, product);
}

}  // namespace

std::optional<int64_t> EstimateFlops(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kDot && instruction.opcode() != Opcode::kConvolution)
    return std::nullopt;
  if (instruction.operand_count() < 2 || !instruction.shape().IsArray()) return std::nullopt;
  std::optional<int64_t> outputs = instruction.shape().ElementCount();
  if (!outputs) return std::nullopt;
  int64_t flops = 2;
  if (!MultiplyInto(&flops, *outputs)) return std::nullopt;
  if (instruction.opcode() == Opcode::kDot) {
    Expected<DotDimensions> dims = GetDotDimensions(instruction);
    const Shape& lhs = instruction.operand(0)->shape();
    if (!dims) return std::nullopt;
    for (int64_t dim : dims->lhs_contracting) {
      if (dim < 0 || dim >= lhs.rank() || !MultiplyInto(&flops, lhs.dimensions[dim]))
        return std::nullopt;
    }
    return flops;
  }
  const Attribute* labels = instruction.FindAttribute("dim_labels");
  if (labels == nullptr) return std::nullopt;
  Expected<ConvolutionDimensions> dims = ParseDimLabels(labels->value());
  const Shape& kernel = instruction.operand(1)->shape();
  if (!dims || dims->kernel_input_feature >= kernel.rank()) return std::nullopt;
  for (int64_t dim : dims->kernel_spatial)
    if (dim >= kernel.rank() || !MultiplyInto(&flops, kernel.dimensions[dim])) return std::nullopt;
  if (!MultiplyInto(&flops, kernel.dimensions[dims->kernel_input_feature])) return std::nullopt;
  return flops;
}

namespace {

// Elementwise opcodes that do floating-point arithmetic: one FLOP per
// element when their operands are floating point (compare included, as
// XLA's HloCostAnalysis counts it; transcendentals count one each too).
bool IsArithmetic(Opcode opcode) {
  // Packed by hand: clang-format would put one opcode per line.
  // clang-format off
  using enum Opcode;
  static constexpr Opcode kArithmetic[] = {
      kAbs, kAcos, kAcosh, kAdd, kAsin, kAsinh, kAtan, kAtan2, kAtanh, kCbrt, kCeil, kCompare,
      kCos, kCosh, kDivide, kErf, kExp, kExpm1, kFloor, kLog, kLog1p, kLogistic, kMaximum,
      kMinimum, kMultiply, kNegate, kPower, kRemainder, kRoundNearestAfz, kRoundNearestEven,
      kRsqrt, kSign, kSin, kSinh, kSqrt, kSubtract, kTan, kTanh};
  // clang-format on
  return std::ranges::find(kArithmetic, opcode) != std::end(kArithmetic);
}

// Opcodes that only move or reinterpret data: no FLOPs.
bool MovesData(Opcode opcode) {
  // Packed by hand: clang-format would put one opcode per line.
  // clang-format off
  using enum Opcode;
  static constexpr Opcode kMovers[] = {
      kBitcast, kBitcastConvert, kBroadcast, kConcatenate, kConstant, kConvert, kCopy,
      kDynamicSlice, kDynamicUpdateSlice, kGather, kGetTupleElement, kIota, kPad, kParameter,
      kReshape, kReverse, kSelect, kSlice, kTranspose, kTuple, kAfterAll, kOptimizationBarrier};
  // clang-format on
  return std::ranges::find(kMovers, opcode) != std::end(kMovers);
}

bool FloatOperand(const Instruction& instruction) {
  const Shape& shape =
      instruction.operand_count() > 0 ? instruction.operand(0)->shape() : instruction.shape();
  return IsFloatingPointType(shape.element_type);
}

// The FLOPs of one application of a computation (a reducer, a fused body).
std::optional<int64_t> ComputationFlops(const Computation& computation, int depth);

std::optional<int64_t> Flops(const Instruction& instruction, int depth) {
  const Opcode opcode = instruction.opcode();
  if (opcode == Opcode::kDot || opcode == Opcode::kConvolution) return EstimateFlops(instruction);
  if (MovesData(opcode)) return 0;
  auto elements = [](const Shape& shape) -> std::optional<int64_t> {
    return shape.IsArray() ? shape.ElementCount() : std::nullopt;
  };
  const std::optional<int64_t> outputs = elements(instruction.shape());
  if (IsArithmetic(opcode) || opcode == Opcode::kClamp) {
    if (!outputs) return std::nullopt;
    if (!FloatOperand(instruction)) return 0;
    int64_t flops = *outputs;
    if (opcode == Opcode::kClamp && !MultiplyInto(&flops, 2)) return std::nullopt;
    return flops;
  }
  const auto called = instruction.called_computations();
  if (called.empty() || depth > 8) return std::nullopt;
  std::optional<int64_t> per_call = ComputationFlops(*called.front(), depth + 1);
  if (!per_call) return std::nullopt;
  int64_t flops = *per_call;
  switch (opcode) {
    case Opcode::kFusion:
      return flops;
    case Opcode::kMap:
      if (!outputs || !MultiplyInto(&flops, *outputs)) return std::nullopt;
      return flops;
    case Opcode::kReduce: {
      // Each input element but the first of each output is combined once
      // (a variadic reduce's result is a tuple of equal-sized arrays).
      if (instruction.operand_count() == 0) return std::nullopt;
      const Shape& shape = instruction.shape();
      const std::optional<int64_t> inputs = elements(instruction.operand(0)->shape());
      const std::optional<int64_t> results =
          shape.IsTuple()
              ? (shape.tuple_shapes.empty() ? std::nullopt : elements(shape.tuple_shapes.front()))
              : outputs;
      if (!inputs || !results) return std::nullopt;
      if (!MultiplyInto(&flops, std::max<int64_t>(*inputs - *results, 0))) return std::nullopt;
      return flops;
    }
    case Opcode::kReduceWindow: {
      const Attribute* window = instruction.FindAttribute("window");
      if (window == nullptr || !outputs) return std::nullopt;
      Expected<std::vector<WindowDimension>> dims = ParseWindow(window->value());
      if (!dims) return std::nullopt;
      int64_t size = 1;
      for (const WindowDimension& d : *dims)
        if (!MultiplyInto(&size, d.size)) return std::nullopt;
      if (!MultiplyInto(&flops, *outputs) || !MultiplyInto(&flops, std::max<int64_t>(size - 1, 0)))
        return std::nullopt;
      return flops;
    }
    default:
      return std::nullopt;  // loops, calls, sorts, custom calls: not estimated
  }
}

std::optional<int64_t> ComputationFlops(const Computation& computation, int depth) {
  int64_t total = 0;
  for (const Instruction* instruction : computation.instructions()) {
    std::optional<int64_t> flops = Flops(*instruction, depth);
    if (!flops || __builtin_add_overflow(total, *flops, &total)) return std::nullopt;
  }
  return total;
}

}  // namespace

std::optional<int64_t> EstimateOperationFlops(const Instruction& instruction) {
  return Flops(instruction, 0);
}

ModuleStats ComputeStats(const Module& module) {
  ModuleStats stats;
  stats.name = std::string(module.name());
  stats.computations = static_cast<int64_t>(module.computations().size());
  std::map<std::string_view, int64_t> histogram;
  for (const Computation* computation : module.computations()) {
    for (const Instruction* instruction : computation->instructions()) {
      ++stats.instructions;
      ++histogram[OpcodeName(instruction->opcode())];
      if (instruction->opcode() == Opcode::kConstant) {
        Expected<Literal> literal = ParseLiteral(instruction->literal(), instruction->shape());
        if (literal && literal->kind == Literal::Kind::kElided) ++stats.elided_constants;
      }
      if (instruction->opcode() != Opcode::kDot && instruction->opcode() != Opcode::kConvolution)
        continue;
      bool dot = instruction->opcode() == Opcode::kDot;
      ++(dot ? stats.dots : stats.convolutions);
      std::optional<int64_t> flops = EstimateFlops(*instruction);
      int64_t& total = dot ? stats.dot_flops : stats.convolution_flops;
      if (!flops || __builtin_add_overflow(total, *flops, &total)) ++stats.unestimated;
    }
  }
  for (const auto& [opcode, count] : histogram)
    stats.opcodes.emplace_back(std::string(opcode), count);
  std::stable_sort(stats.opcodes.begin(), stats.opcodes.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  const Computation& entry = *module.entry();
  stats.entry = std::string(entry.name());
  for (const Instruction* parameter : entry.parameters())
    stats.parameters.push_back({parameter->parameter_number(), std::string(parameter->name()),
                                ShapeToString(parameter->shape())});
  stats.result = ShapeToString(entry.root()->shape());
  stats.peak_live = ComputePeakLive(module);
  return stats;
}

}  // namespace tileprof::hlo
