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
