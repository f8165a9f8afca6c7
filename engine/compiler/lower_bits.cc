// Ops on the bits of elements: bitcast-convert between any two numeric
// types, and JAX's threefry2x32 custom call (engine/codelets/bits.h).
#include <fmt/format.h>

#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {

// XLA's bitcast-convert: the same bytes read as another type. Between types
// of one size the shape is kept; to a type r times narrower the result gains
// a last dimension of r, from one r times wider the operand has it. The
// result lives where its bytes' source lives, so no byte crosses tiles: a
// narrower result is mapped as the operand's runs scaled by r, a wider one
// linearly (whole operand elements per result element either way).
Expected<Value> Lowering::LowerBitcastConvert(const hlo::Instruction& instruction,
                                              const Value& operand, program::Sequence& program) {
  if (operand.is_tuple || !IsNative(instruction.shape()) || !instruction.shape().IsArray()) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  const Tensor& in = operand.tensor;
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(instruction.shape(), instruction.name(), false));
  if (in.NumBytes() != out.NumBytes()) {
    return MakeError("bitcast-convert of {} ({} bytes) to {} ({} bytes)", in.ShapeString(),
                     in.NumBytes(), out.ShapeString(), out.NumBytes());
  }
  if (out.NumElements() == 0) return Value::Array(out);
  const uint64_t in_size = SizeOf(in.element_type()), out_size = SizeOf(out.element_type());
  if (in_size > out_size) {
    const uint64_t r = in_size / out_size;
    const VariableId variable = out.regions().front().variable;
    uint64_t position = 0;
    for (const MappedRegion& piece : graph_.MapRegions(in.Flatten())) {
      if (!piece.tile) return MakeError("operand {} is not mapped", in.ShapeString());
      const uint64_t size = piece.region.size();
      TILEPROF_RETURN_IF_ERROR(
          graph_.SetTileMapping(variable, position * r, (position + size) * r, *piece.tile));
      position += size;
    }
  } else if (in_size == out_size) {
    TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(out, in));
  } else {
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(out));
  }
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            codelets_.BitcastConvert(in.element_type(), out.element_type()));
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  const FieldInput input{"in", in, in_size == out_size ? Access::kSame : Access::kScaled};
  TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, *codelet, "out", out, {&input, 1}, instruction.name()));
  return Value::Array(out);
}

// JAX's threefry2x32 custom call: operands key0, key1, x0, x1 (u32, keys
// already broadcast to the counters' shape), result (out0, out1) of that
// shape, element by element. The results are mapped like the counters.
Expected<Value> Lowering::LowerThreefry(const hlo::Instruction& instruction,
                                        std::span<const Value> operands,
                                        program::Sequence& program) {
  if (operands.size() != 4) {
    return MakeError("threefry2x32 takes 4 operands (key0, key1, x0, x1), not {}", operands.size());
  }
  TILEPROF_ASSIGN_OR_RETURN(Value result, NewValue(instruction.shape(), instruction.name(), false));
  if (!result.is_tuple || result.elements.size() != 2) {
    return MakeError("threefry2x32 gives a pair of u32 arrays, not {}",
                     hlo::ShapeToString(instruction.shape()));
  }
  const Tensor& x0 = operands[2].tensor;
  const Tensor& out0 = result.elements[0].tensor;
  const Tensor& out1 = result.elements[1].tensor;
  for (const Tensor* t :
       {&operands[0].tensor, &operands[1].tensor, &x0, &operands[3].tensor, &out0, &out1}) {
    if (!t->valid() || t->element_type() != ElementType::kU32 ||
        t->NumElements() != out0.NumElements()) {
      return MakeError("threefry2x32 needs u32 operands and results of one size; got {}",
                       t->valid() ? t->ShapeString() : "a tuple");
    }
  }
  if (out0.NumElements() == 0) return result;
  TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(out0, x0));
  TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(out1, x0));
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, codelets_.Threefry());
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  // out1 is written like an input field: EmitPerTile drives one output.
  const FieldInput inputs[] = {{"key0", operands[0].tensor, Access::kSame},
                               {"key1", operands[1].tensor, Access::kSame},
                               {"x0", x0, Access::kSame},
                               {"x1", operands[3].tensor, Access::kSame},
                               {"out1", out1, Access::kSame}};
  TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, *codelet, "out0", out0, inputs, instruction.name()));
  return result;
}

}  // namespace tileprof::engine::compiler
