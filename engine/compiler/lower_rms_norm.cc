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
  const bool half =
      x.element_type == hlo::PrimitiveType::kF16 || x.element_type == hlo::PrimitiveType::kBF16;
  hlo::Shape full = x, reduced = x, scalar = eps, row = weight;
  reduced.dimensions.erase(reduced.dimensions.begin() + static_cast<ptrdiff_t>(d));
  reduced.dynamic_dimensions.clear();
  reduced.has_layout = full.has_layout = row.has_layout = scalar.has_layout = false;
  full.dynamic_dimensions.clear();
  for (hlo::Shape* s : {&full, &reduced, &scalar, &row})
    if (half) s->element_type = hlo::PrimitiveType::kF32;
  const std::string f = hlo::ShapeToString(full), r = hlo::ShapeToString(reduced);
  const std::string_view type = hlo::PrimitiveTypeName(full.element_type);
  std::string kept;  // the dimensions of x the reduced result stands for
  for (size_t k = 0; k < x.dimensions.size(); ++k) {
    if (k == d) continue;
    kept += fmt::format("{}{}", kept.empty() ? "" : ",", k);
  }
  std::string body;
  const auto line = [&](std::string_view what, std::string_view shape, std::string_view op) {
    body += fmt::format("  %{}.{} = {} {}\n", name, what, shape, op);
  };
  const auto ref = [&](std::string_view what) { return fmt::format("%{}.{}", name, what); };
  // The parameters, converted to f32 for halves.
  const std::array<std::pair<std::string_view, const hlo::Shape*>, 3> params = {
      {{"x", &x}, {"w", &weight}, {"eps", &eps}}};
  const std::array<const hlo::Shape*, 3> computed = {&full, &row, &scalar};
  for (size_t i = 0; i < params.size(); ++i) {
    const auto [what, shape] = params[i];
    const std::string in = fmt::format("{}_in", what);
    line(half ? std::string_view(in) : what, hlo::ShapeToString(*shape),
         fmt::format("parameter({})", i));
    if (half) line(what, hlo::ShapeToString(*computed[i]), fmt::format("convert({})", ref(in)));
  }
  line("square", f, fmt::format("multiply({}, {})", ref("x"), ref("x")));
  line("zero", fmt::format("{}[]", type), "constant(0)");
  line("sum", r,
       fmt::format("reduce({}, {}), dimensions={{{}}}, to_apply=%{}.add", ref("square"),
                   ref("zero"), d, name));
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
  const std::string out = hlo::ShapeToString(x);
  return fmt::format(
      "HloModule {0}.expansion\n\n%{0}.add (a: {1}[], b: {1}[]) -> {1}[] {{\n"
      "  %{0}.a = {1}[] parameter(0)\n  %{0}.b = {1}[] parameter(1)\n"
      "  ROOT %{0}.s = {1}[] add(%{0}.a, %{0}.b)\n}}\n\n"
      "ENTRY %{0}.expanded (x: {2}, w: {3}, eps: {4}) -> {2} {{\n{5}"
      "  ROOT %{0}.result = {2} {6}\n}}\n",
      name, type, out, hlo::ShapeToString(weight), hlo::ShapeToString(eps), body, last);
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
