// The TPU compiler's 64-bit helpers, which its dumps after optimisation
// print where a program moves 64-bit values (a TPU has no 64-bit
// registers; TensorFlow's int64 step counters pass through them):
//   X64SplitLow(x)         the low 32 bits of a 64-bit x, as u32
//   X64SplitHigh(x)        its high 32 bits, as u32
//   X64Combine(low, high)  the 64-bit value of those two words
// x and the combined value are s64, u64 or f64 (its bits). Written out as
// the converts, shifts and bitcasts they are (LowerExpansion).
#include <string>

#include <fmt/format.h>

#include "engine/compiler/expansion_text.h"
#include "engine/compiler/lower.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

bool Is64(const hlo::Shape& shape) {
  return shape.IsArray() && (shape.element_type == hlo::PrimitiveType::kS64 ||
                             shape.element_type == hlo::PrimitiveType::kU64 ||
                             shape.element_type == hlo::PrimitiveType::kF64);
}

bool IsU32Like(const hlo::Shape& shape, const hlo::Shape& like) {
  return shape.IsArray() && shape.element_type == hlo::PrimitiveType::kU32 &&
         shape.dimensions == like.dimensions;
}

}  // namespace

Expected<std::optional<Value>> Lowering::LowerX64(const hlo::Instruction& instruction,
                                                  const hlo::CustomCall& call,
                                                  std::span<const Value> operands,
                                                  program::Sequence& program) {
  const auto none = [] { return std::optional<Value>(); };
  const bool split = call.target == "X64SplitLow" || call.target == "X64SplitHigh";
  if ((!split && call.target != "X64Combine") || operands.size() != instruction.operand_count() ||
      operands.size() != (split ? 1u : 2u))
    return none();
  const hlo::Shape& result = instruction.shape();
  ExpansionText text(instruction.name());
  const auto ref = [&](std::string_view what) { return text.Ref(what); };
  const auto line = [&](std::string_view what, const std::string& shape, std::string_view op) {
    text.Add(what, shape, op);
  };
  std::string root;
  if (split) {
    const hlo::Shape& x = instruction.operand(0)->shape();
    if (!Is64(x) || !IsU32Like(result, x)) return none();
    const std::string u64 = ShapeText(x, hlo::PrimitiveType::kU64);
    text.Parameter("x", ShapeText(x));
    line("bits", u64,
         x.element_type == hlo::PrimitiveType::kU64 ? fmt::format("copy({})", ref("x"))
                                                    : fmt::format("bitcast-convert({})", ref("x")));
    std::string word = ref("bits");
    if (call.target == "X64SplitHigh") {
      line("k", "u64[]", "constant(32)");
      line("shift", u64, fmt::format("broadcast({}), dimensions={{}}", ref("k")));
      line("high", u64, fmt::format("shift-right-logical({}, {})", ref("bits"), ref("shift")));
      word = ref("high");
    }
    root = fmt::format("convert({})", word);
  } else {
    const hlo::Shape& low = instruction.operand(0)->shape();
    if (!Is64(result) || !IsU32Like(low, result) ||
        !IsU32Like(instruction.operand(1)->shape(), result))
      return none();
    const std::string u32 = ShapeText(result, hlo::PrimitiveType::kU32);
    const std::string u64 = ShapeText(result, hlo::PrimitiveType::kU64);
    text.Parameter("low", u32);
    text.Parameter("high", u32);
    line("low64", u64, fmt::format("convert({})", ref("low")));
    line("high64", u64, fmt::format("convert({})", ref("high")));
    line("k", "u64[]", "constant(32)");
    line("shift", u64, fmt::format("broadcast({}), dimensions={{}}", ref("k")));
    line("upper", u64, fmt::format("shift-left({}, {})", ref("high64"), ref("shift")));
    root = fmt::format("or({}, {})", ref("upper"), ref("low64"));
    if (result.element_type != hlo::PrimitiveType::kU64) {
      line("bits", u64, root);
      root = fmt::format("bitcast-convert({})", ref("bits"));
    }
  }
  TILEPROF_ASSIGN_OR_RETURN(
      Value value,
      LowerExpansion(instruction, text.Finish(ShapeText(result), root), operands, program));
  return std::optional<Value>(std::move(value));
}

}  // namespace tileprof::engine::compiler
