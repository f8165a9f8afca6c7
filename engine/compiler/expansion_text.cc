// The text of an expansion. See expansion_text.h.
#include "engine/compiler/expansion_text.h"

#include <fmt/format.h>

namespace tileprof::engine::compiler {

std::string ExpansionText::Ref(std::string_view what) const {
  if (name_.empty()) return fmt::format("%{}", what);
  if (what.empty()) return fmt::format("%{}", name_);
  return fmt::format("%{}.{}", name_, what);
}

std::string ExpansionText::Add(std::string_view what, std::string_view shape, std::string_view op) {
  return Add(what, fmt::format("{} {}", shape, op));
}

std::string ExpansionText::Add(std::string_view what, std::string_view shape_op) {
  std::string ref = Ref(what);
  body_ += fmt::format("  {} = {}\n", ref, shape_op);
  return ref;
}

std::string ExpansionText::Parameter(std::string_view what, std::string_view shape) {
  signature_ += fmt::format("{}{}: {}", signature_.empty() ? "" : ", ",
                            what.empty() ? std::string_view("x") : what, shape);
  return Add(what, shape, fmt::format("parameter({})", num_parameters_++));
}

std::string ExpansionText::ScalarComputation(std::string_view what, std::string_view op,
                                             std::string_view type) {
  const std::string ref = Ref(what);
  computations_ += fmt::format(
      "{0} (a: {1}[], b: {1}[]) -> {1}[] {{\n  {0}.a = {1}[] parameter(0)\n"
      "  {0}.b = {1}[] parameter(1)\n  ROOT {0}.out = {1}[] {2}({0}.a, {0}.b)\n}}\n\n",
      ref, type, op);
  return ref;
}

std::string ExpansionText::Finish(std::string_view shape, std::string_view op) const {
  const std::string module = name_.empty() ? "expansion" : name_ + ".expansion";
  return fmt::format("HloModule {}\n\n{}ENTRY {} ({}) -> {} {{\n{}  ROOT {} = {} {}\n}}\n", module,
                     computations_, Ref("expanded"), signature_, shape, body_, Ref("result"), shape,
                     op);
}

std::string ShapeText(hlo::Shape shape, hlo::PrimitiveType type) {
  shape.element_type = type;
  shape.has_layout = false;
  // (One flag a dimension: the printer reads one for each.)
  shape.dynamic_dimensions.assign(shape.dimensions.size(), false);
  return hlo::ShapeToString(shape);
}

hlo::PrimitiveType ComputingType(hlo::PrimitiveType type) {
  return type == hlo::PrimitiveType::kF16 || type == hlo::PrimitiveType::kBF16
             ? hlo::PrimitiveType::kF32
             : type;
}

}  // namespace tileprof::engine::compiler
