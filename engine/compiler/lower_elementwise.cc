// Elementwise lowering: unary and binary ops, comparisons, select, clamp and
// convert. The output follows the tile mapping of an operand, so a vertex
// reads its operands where they already are (Poplar's elementwise ops do the
// same); operands mapped differently are exchanged (memory_model.cc).
#include <optional>

#include "engine/codelets/codelets.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {
namespace {

using hlo::Opcode;

std::optional<UnaryOp> UnaryOf(Opcode op, ElementType type) {
  switch (op) {
    case Opcode::kAbs:
      return UnaryOp::kAbsolute;
    case Opcode::kNegate:
      return UnaryOp::kNegate;
    case Opcode::kSign:
      return UnaryOp::kSignum;
    case Opcode::kFloor:
      return UnaryOp::kFloor;
    case Opcode::kCeil:
      return UnaryOp::kCeil;
    case Opcode::kRoundNearestAfz:
      return UnaryOp::kRound;
    case Opcode::kRoundNearestEven:
      return UnaryOp::kRoundHalfEven;
    case Opcode::kExp:
      return UnaryOp::kExponent;
    case Opcode::kExpm1:
      return UnaryOp::kExponentMinusOne;
    case Opcode::kLog:
      return UnaryOp::kLogarithm;
    case Opcode::kLog1p:
      return UnaryOp::kLogarithmOnePlus;
    case Opcode::kTanh:
      return UnaryOp::kTanh;
    case Opcode::kErf:
      return UnaryOp::kErf;
    case Opcode::kLogistic:
      return UnaryOp::kSigmoid;
    case Opcode::kSqrt:
      return UnaryOp::kSqrt;
    case Opcode::kRsqrt:
      return UnaryOp::kRsqrt;
    case Opcode::kSin:
      return UnaryOp::kSin;
    case Opcode::kCos:
      return UnaryOp::kCos;
    case Opcode::kIsFinite:
      return UnaryOp::kIsFinite;
    case Opcode::kNot:
      return type == ElementType::kPred ? UnaryOp::kLogicalNot : UnaryOp::kBitwiseNot;
    case Opcode::kClz:
      return UnaryOp::kCountLeadingZeros;
    case Opcode::kPopulationCount:
      return UnaryOp::kPopcount;
    default:
      return std::nullopt;
  }
}

std::optional<BinaryOp> BinaryOf(const hlo::Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kAdd:
      return BinaryOp::kAdd;
    case Opcode::kSubtract:
      return BinaryOp::kSubtract;
    case Opcode::kMultiply:
      return BinaryOp::kMultiply;
    case Opcode::kDivide:
      return BinaryOp::kDivide;
    case Opcode::kRemainder:
      return BinaryOp::kRemainder;
    case Opcode::kPower:
      return BinaryOp::kPower;
    case Opcode::kMaximum:
      return BinaryOp::kMaximum;
    case Opcode::kMinimum:
      return BinaryOp::kMinimum;
    case Opcode::kAtan2:
      return BinaryOp::kAtan2;
    case Opcode::kAnd:
      return BinaryOp::kBitwiseAnd;
    case Opcode::kOr:
      return BinaryOp::kBitwiseOr;
    case Opcode::kXor:
      return BinaryOp::kBitwiseXor;
    case Opcode::kShiftLeft:
      return BinaryOp::kShiftLeft;
    case Opcode::kShiftRightLogical:
      return BinaryOp::kShiftRight;
    case Opcode::kShiftRightArithmetic:
      return BinaryOp::kShiftRightSignExtend;
    case Opcode::kCompare: {
      const hlo::Attribute* direction = instruction.FindAttribute("direction");
      if (direction == nullptr) return std::nullopt;
      const std::string_view d = direction->value();
      if (d == "EQ") return BinaryOp::kEqual;
      if (d == "NE") return BinaryOp::kNotEqual;
      if (d == "LT") return BinaryOp::kLessThan;
      if (d == "LE") return BinaryOp::kLessThanEqual;
      if (d == "GT") return BinaryOp::kGreaterThan;
      if (d == "GE") return BinaryOp::kGreaterThanEqual;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// A single array operand of the output's element count, or nullopt.
const Tensor* ArrayOperand(const Value& value, uint64_t elements) {
  if (value.is_tuple || !value.tensor.valid()) return nullptr;
  if (value.tensor.NumElements() != elements) return nullptr;
  return &value.tensor;
}

}  // namespace

std::optional<UnaryOp> UnaryOpOf(hlo::Opcode op, ElementType type) { return UnaryOf(op, type); }
std::optional<BinaryOp> BinaryOpOf(const hlo::Instruction& instruction) {
  return BinaryOf(instruction);
}

// The operand the output's mapping follows: the first that is neither a
// constant (a constant is mapped for its own sake, the data it combines with
// is what the vertex should sit next to) nor a broadcast (a view repeating
// a small operand: following it would put the whole output on the tiles of
// that operand).
const Tensor& Leader(const Graph& graph, std::span<const Tensor* const> operands) {
  const Tensor* fallback = nullptr;
  for (const Tensor* operand : operands) {
    bool constant = true;
    for (const TensorRegion& region : operand->regions())
      constant = constant && graph.variable(region.variable).is_constant;
    if (constant) continue;
    if (!operand->HasAliases()) return *operand;
    if (fallback == nullptr) fallback = operand;
  }
  return fallback != nullptr ? *fallback : *operands[0];
}

Expected<Value> Lowering::LowerUnary(const hlo::Instruction& instruction, const Value& operand,
                                     program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  if (!shape.IsArray() || !IsNative(shape) || operand.is_tuple || !operand.tensor.valid() ||
      !IsNative(instruction.operand(0)->shape())) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  const Tensor& in = operand.tensor;
  const std::optional<UnaryOp> op = UnaryOf(instruction.opcode(), in.element_type());
  if (!op || !Supports(*op, in.element_type()))
    return LowerOpaque(instruction, {&operand, 1}, program);
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  if (shape.ElementCount().value_or(-1) != static_cast<int64_t>(in.NumElements()) ||
      storage.type != UnaryOutputType(*op, in.element_type())) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), false));
  TILEPROF_RETURN_IF_ERROR(mapper().MapLike(out, in));
  if (out.NumElements() == 0) return Value::Array(out);
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, GetUnaryOpCodelet(*op, in.element_type()));
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  const FieldInput input{"in", in, Access::kSame};
  TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, *codelet, "out", out, {&input, 1}, instruction.name()));
  return Value::Array(out);
}

Expected<Value> Lowering::LowerBinary(const hlo::Instruction& instruction,
                                      std::span<const Value> operands, program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  const std::optional<BinaryOp> op = BinaryOf(instruction);
  if (!op || !shape.IsArray() || !IsNative(shape) || !IsNative(instruction.operand(0)->shape()) ||
      !IsNative(instruction.operand(1)->shape())) {
    return LowerOpaque(instruction, operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  const auto n = static_cast<uint64_t>(shape.ElementCount().value_or(0));
  const Tensor* a = ArrayOperand(operands[0], n);
  const Tensor* b = ArrayOperand(operands[1], n);
  // Mixed precision (MatchPrecision): operands wider than the result are
  // combined at their precision, and the result rounded once.
  const bool narrows = a != nullptr && !IsComparison(*op) && IsFloat(storage.type) &&
                       IsFloat(a->element_type()) &&
                       SizeOf(a->element_type()) > SizeOf(storage.type);
  if (a == nullptr || b == nullptr || a->element_type() != b->element_type() ||
      !Supports(*op, a->element_type()) ||
      (storage.type != (IsComparison(*op) ? ElementType::kPred : a->element_type()) && !narrows)) {
    return LowerOpaque(instruction, operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> dims, StorageShape(shape));
  TILEPROF_ASSIGN_OR_RETURN(Tensor out,
                            narrows ? NewTensor(a->element_type(), std::move(dims),
                                                fmt::format("{}/wide", instruction.name()), false)
                                    : NewTensor(shape, instruction.name(), false));
  const Tensor* both[] = {a, b};
  TILEPROF_RETURN_IF_ERROR(mapper().MapLike(out, Leader(graph(), both)));
  if (out.NumElements() == 0) return Value::Array(out);
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, GetBinaryOpCodelet(*op, a->element_type()));
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  const FieldInput inputs[] = {{"in1", *a, Access::kSame}, {"in2", *b, Access::kSame}};
  TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, *codelet, "out", out, inputs, instruction.name()));
  if (!narrows) return Value::Array(out);
  TILEPROF_ASSIGN_OR_RETURN(Tensor rounded, Cast(out, storage.type, instruction.name(), program));
  return Value::Array(std::move(rounded));
}

Expected<Value> Lowering::LowerSelectOrClamp(const hlo::Instruction& instruction,
                                             std::span<const Value> operands,
                                             program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  const bool is_select = instruction.opcode() == Opcode::kSelect;
  bool native = shape.IsArray() && IsNative(shape);
  for (const Value& operand : operands)
    native = native && !operand.is_tuple && operand.tensor.valid();
  for (const hlo::Instruction* operand : instruction.operands())
    native = native && IsNative(operand->shape());
  if (!native) return LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  const uint64_t n = shape.ElementCount().value_or(0);
  // Scalar predicates (select) and bounds (clamp) are broadcast first: the
  // codelets take one element per output element.
  std::vector<Tensor> ins;
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& t = operands[i].tensor;
    if (t.NumElements() == n) {
      ins.push_back(t);
    } else if (t.NumElements() == 1) {
      // Of the result's type but for select's predicate (an operand of
      // another precision has been converted: MatchPrecision).
      hlo::Shape full = shape;
      if (is_select && i == 0) full.element_type = instruction.operand(0)->shape().element_type;
      TILEPROF_ASSIGN_OR_RETURN(
          Tensor filled,
          Fill(t, full, fmt::format("{}.broadcast{}", instruction.name(), i), program));
      ins.push_back(filled);
    } else {
      return LowerOpaque(instruction, operands, program);
    }
  }
  // select(pred, on_true, on_false) -> Select(in1 = on_true, in2 = on_false,
  // in3 = pred); clamp(low, x, high) -> Clamp(in1 = x, in2 = low, in3 = high).
  const Tensor& first = ins[1];
  const Tensor& second = is_select ? ins[2] : ins[0];
  const Tensor& third = is_select ? ins[0] : ins[2];
  Expected<const Codelet*> codelet =
      is_select ? GetSelectCodelet(storage.type) : GetClampCodelet(storage.type);
  if (!codelet) return LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), false));
  const Tensor* leaders[] = {&first, &second, &third};
  TILEPROF_RETURN_IF_ERROR(mapper().MapLike(out, Leader(graph(), leaders)));
  if (n == 0) return Value::Array(out);
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  const FieldInput inputs[] = {
      {"in1", first, Access::kSame}, {"in2", second, Access::kSame}, {"in3", third, Access::kSame}};
  TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, **codelet, "out", out, inputs, instruction.name()));
  return Value::Array(out);
}

Expected<Value> Lowering::LowerConvert(const hlo::Instruction& instruction, const Value& operand,
                                       program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  if (!shape.IsArray() || !IsNative(shape) || !IsNative(instruction.operand(0)->shape()) ||
      operand.is_tuple || !operand.tensor.valid()) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  if (storage.type == operand.tensor.element_type()) return operand;  // a no-op convert
  if (!GetCastCodelet(operand.tensor.element_type(), storage.type))
    return LowerOpaque(instruction, {&operand, 1}, program);
  TILEPROF_ASSIGN_OR_RETURN(Tensor out,
                            Cast(operand.tensor, storage.type, instruction.name(), program));
  return Value::Array(out);
}

Expected<Tensor> Lowering::Cast(const Tensor& in, ElementType type, std::string_view name,
                                program::Sequence& program) {
  if (type == in.element_type()) return in;  // a no-op convert
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, GetCastCodelet(in.element_type(), type));
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(type, in.shape(), name, false));
  TILEPROF_RETURN_IF_ERROR(mapper().MapLike(out, in));
  if (out.NumElements() == 0) return out;
  const ComputeSetId cs = AddComputeSet(name, program);
  const FieldInput input{"in", in, Access::kSame};
  TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, *codelet, "out", out, {&input, 1}, name));
  return out;
}

namespace {

// The float type both `a` and `b` convert to exactly: the wider, or f32 for
// f16 and bf16 (neither holds the other).
ElementType Wider(ElementType a, ElementType b) {
  if (a == b || SizeOf(a) > SizeOf(b)) return a;
  if (SizeOf(b) > SizeOf(a)) return b;
  return ElementType::kF32;
}

}  // namespace

Expected<Value> Lowering::RoundToResult(const hlo::Instruction& instruction, Tensor out,
                                        program::Sequence& program) {
  TILEPROF_ASSIGN_OR_RETURN(const StorageType result, StorageOf(instruction.shape().element_type));
  if (result.type == out.element_type()) return Value::Array(std::move(out));
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor rounded, Cast(out, result.type, fmt::format("{}/round", instruction.name()), program));
  return Value::Array(std::move(rounded));
}

Expected<std::vector<Value>> Lowering::MatchPrecision(const hlo::Instruction& instruction,
                                                      std::span<const Value> operands,
                                                      program::Sequence& program) {
  using hlo::Opcode;
  const Opcode op = instruction.opcode();
  if (!instruction.shape().IsArray()) return std::vector<Value>{};
  size_t first = 0;              // the operands that take the op's type
  if (!BinaryOf(instruction)) {  // binary ops, compare included: both operands
    switch (op) {
      case Opcode::kClamp:
      case Opcode::kPad:  // the operand and the padding value
        break;
      case Opcode::kSelect:
        first = 1;  // the predicate stays
        break;
      case Opcode::kGather:  // the operand; the indices stay
        if (operands.size() != 2) return std::vector<Value>{};
        break;
      default:
        return std::vector<Value>{};
    }
  }
  const auto is_float_array = [](const Value& value) {
    return value.IsArray() && value.tensor.valid() && IsFloat(value.tensor.element_type());
  };
  ElementType type = ElementType::kF32;
  const bool arithmetic = op != Opcode::kCompare && op != Opcode::kClamp && op != Opcode::kPad &&
                          op != Opcode::kSelect && op != Opcode::kGather;
  if (op == Opcode::kCompare) {
    // pred result: the operands meet at the wider type.
    if (operands.size() != 2 || !is_float_array(operands[0]) || !is_float_array(operands[1]))
      return std::vector<Value>{};
    type = Wider(operands[0].tensor.element_type(), operands[1].tensor.element_type());
  } else {
    Expected<StorageType> storage = StorageOf(instruction.shape().element_type);
    if (!storage || !IsFloat(storage->type)) return std::vector<Value>{};
    type = storage->type;
    // Arithmetic is done at the widest operand's precision and rounded
    // once (LowerBinary); selecting, clamping, padding and gathering
    // commute with the rounding, so their operands take the result's type.
    if (arithmetic) {
      for (const Value& operand : operands)
        if (is_float_array(operand)) type = Wider(type, operand.tensor.element_type());
    }
  }
  bool differs = false;  // (a gather's indices are integers: they stay)
  for (size_t i = first; i < operands.size(); ++i)
    differs = differs || (is_float_array(operands[i]) && operands[i].tensor.element_type() != type);
  if (!differs) return std::vector<Value>{};
  std::vector<Value> matched(operands.begin(), operands.end());
  for (size_t i = first; i < matched.size(); ++i) {
    if (!is_float_array(matched[i]) || matched[i].tensor.element_type() == type) continue;
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor cast,
        Cast(matched[i].tensor, type, fmt::format("{}/convert{}", instruction.name(), i), program));
    matched[i] = Value::Array(std::move(cast));
  }
  return matched;
}

}  // namespace tileprof::engine::compiler
