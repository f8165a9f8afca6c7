// torch-neuronx's RMS norm custom call, AwsNeuronRmsNorm(x, weight, eps),
// with the normalised dimension d in its backend_config ("0", "2": the
// fourth argument of torch_neuronx.xla_impl.ops.RmsNorm.apply, which
// neuronx-distributed's CustomRMSNorm gives as the hidden dimension):
//   y = x * rsqrt(mean(x^2 over d) + eps) * weight (broadcast along d)
// the root-mean-square norm of LLaMA-style models. Written out as HLO
// (LowerExpansion), in f32 for halves, rounded once at the end, as the
// activation calls are (lower_custom_call.cc).
#include <array>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "engine/compiler/expansion_text.h"
#include "engine/compiler/lower.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

// The normalised dimension: the backend_config's decimal digits, when they
// name a dimension of x.
std::optional<size_t> NormDimension(const hlo::CustomCall& call, size_t rank) {
  if (!call.backend_config) return std::nullopt;
  const std::string& text = call.backend_config->bytes;
  size_t d = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (error != std::errc() || end != text.data() + text.size() || d >= rank) return std::nullopt;
  return d;
}

std::string RmsNormText(std::string_view name, const hlo::Shape& x, const hlo::Shape& weight,
                        const hlo::Shape& eps, size_t d) {
  const hlo::PrimitiveType computing = ComputingType(x.element_type);
  const bool half = computing != x.element_type;
  hlo::Shape reduced = x;
  reduced.dimensions.erase(reduced.dimensions.begin() + static_cast<ptrdiff_t>(d));
  const std::string f = ShapeText(x, computing), r = ShapeText(reduced, computing);
  const std::string_view type = hlo::PrimitiveTypeName(computing);
  std::string kept;  // the dimensions of x the reduced result stands for
  for (size_t k = 0; k < x.dimensions.size(); ++k) {
    if (k == d) continue;
    kept += fmt::format("{}{}", kept.empty() ? "" : ",", k);
  }
  ExpansionText text(name);
  const std::string add = text.ScalarComputation("add", "add", type);
  const auto line = [&](std::string_view what, std::string_view shape, std::string_view op) {
    text.Add(what, shape, op);
  };
  const auto ref = [&](std::string_view what) { return text.Ref(what); };
  // The parameters, converted to f32 for halves.
  const std::array<std::pair<std::string_view, const hlo::Shape*>, 3> params = {
      {{"x", &x}, {"w", &weight}, {"eps", &eps}}};
  for (const auto& [what, shape] : params) {
    const std::string in = fmt::format("{}_in", what);
    text.Parameter(half ? std::string_view(in) : what, ShapeText(*shape));
    if (half) line(what, ShapeText(*shape, computing), fmt::format("convert({})", ref(in)));
  }
  line("square", f, fmt::format("multiply({}, {})", ref("x"), ref("x")));
  line("zero", fmt::format("{}[]", type), "constant(0)");
  line("sum", r,
       fmt::format("reduce({}, {}), dimensions={{{}}}, to_apply={}", ref("square"), ref("zero"), d,
                   add));
  line("n_s", fmt::format("{}[]", type), fmt::format("constant({})", x.dimensions[d]));
  line("n", r, fmt::format("broadcast({}), dimensions={{}}", ref("n_s")));
  line("mean", r, fmt::format("divide({}, {})", ref("sum"), ref("n")));
  line("eps_b", r, fmt::format("broadcast({}), dimensions={{}}", ref("eps")));
  line("shifted", r, fmt::format("add({}, {})", ref("mean"), ref("eps_b")));
  line("scale", r, fmt::format("rsqrt({})", ref("shifted")));
  line("scale_b", f, fmt::format("broadcast({}), dimensions={{{}}}", ref("scale"), kept));
  line("w_b", f, fmt::format("broadcast({}), dimensions={{{}}}", ref("w"), d));
  line("normed", f, fmt::format("multiply({}, {})", ref("x"), ref("scale_b")));
  std::string last = fmt::format("multiply({}, {})", ref("normed"), ref("w_b"));
  if (half) {
    line("y", f, last);
    last = fmt::format("convert({})", ref("y"));
  }
  return text.Finish(ShapeText(x), last);
}

}  // namespace

Expected<std::optional<Value>> Lowering::LowerRmsNorm(const hlo::Instruction& instruction,
                                                      const hlo::CustomCall& call,
                                                      std::span<const Value> operands,
                                                      program::Sequence& program) {
  const auto none = [] { return std::optional<Value>(); };
  if (call.target != "AwsNeuronRmsNorm" || operands.size() != 3 ||
      instruction.operand_count() != 3 || !instruction.shape().IsArray())
    return none();
  const hlo::Shape& x = instruction.operand(0)->shape();
  const hlo::Shape& weight = instruction.operand(1)->shape();
  const hlo::Shape& eps = instruction.operand(2)->shape();
  const std::optional<size_t> d = NormDimension(call, x.dimensions.size());
  const auto is_float = [&](const hlo::Shape& s) {
    return s.IsArray() && hlo::IsFloatingPointType(s.element_type) &&
           hlo::BitWidth(s.element_type) >= 16 && s.element_type == x.element_type;
  };
  if (!d || !is_float(x) || !is_float(weight) || !is_float(eps) ||
      instruction.shape().element_type != x.element_type ||
      instruction.shape().dimensions != x.dimensions || weight.dimensions.size() != 1 ||
      weight.dimensions[0] != x.dimensions[*d] || !eps.dimensions.empty())
    return none();
  TILEPROF_ASSIGN_OR_RETURN(
      Value value, LowerExpansion(instruction, RmsNormText(instruction.name(), x, weight, eps, *d),
                                  operands, program));
  return std::optional<Value>(std::move(value));
}

}  // namespace tileprof::engine::compiler
