// rng: tileprof::RngUniform / RngNormal vertices (engine/codelets/random.h)
// on the result's tiles, drawing from each tile's PRNG state as seeded by
// the entry's SetSeed vertices. Without those (set_seed_on_every_tile off)
// the op stays opaque: there is no seeded state to draw from.
#include <fmt/format.h>

#include "engine/codelets/random.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {

Expected<Value> Lowering::LowerRng(const hlo::Instruction& instruction,
                                   std::span<const Value> operands, program::Sequence& program) {
  const hlo::Attribute* distribution = instruction.FindAttribute("distribution");
  if (distribution == nullptr || operands.size() != 2 || operands[0].is_tuple ||
      operands[1].is_tuple || !operands[0].tensor.valid() || !operands[1].tensor.valid() ||
      !instruction.shape().IsArray() || !IsNative(instruction.shape()) ||
      !options().set_seed_on_every_tile) {
    return LowerOpaque(instruction, operands, program);
  }
  bool normal;
  if (distribution->value() == "rng_uniform")
    normal = false;
  else if (distribution->value() == "rng_normal")
    normal = true;
  else
    return MakeError("unknown distribution={}", distribution->value());
  const Tensor& a = operands[0].tensor;
  const Tensor& b = operands[1].tensor;
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(instruction.shape(), instruction.name(), true));
  if (a.NumElements() != 1 || b.NumElements() != 1 || a.element_type() != out.element_type() ||
      b.element_type() != out.element_type()) {
    return MakeError("rng parameters {} and {} are not scalars of the result's type {}",
                     a.ShapeString(), b.ShapeString(), out.ShapeString());
  }
  if (out.NumElements() == 0) return Value::Array(out);
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, codelets().Rng(out.element_type(), normal));
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  const FieldInput inputs[] = {{"a", a, Access::kWhole}, {"b", b, Access::kWhole}};
  TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, *codelet, "out", out, inputs, instruction.name()));
  return Value::Array(out);
}

}  // namespace tileprof::engine::compiler
