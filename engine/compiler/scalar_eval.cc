#include "engine/compiler/scalar_eval.h"

#include <bit>
#include <cmath>
#include <string_view>

#include "engine/hlo/literal.h"

namespace tileprof::engine::compiler {
namespace {

using hlo::Opcode;
using hlo::PrimitiveType;

constexpr int kMaxDepth = 64;

bool IsF(PrimitiveType t) { return t == PrimitiveType::kF32 || t == PrimitiveType::kF64; }
bool IsS(PrimitiveType t) { return hlo::IsSignedIntegerType(t) && hlo::BitWidth(t) >= 8; }
bool IsU(PrimitiveType t) { return hlo::IsUnsignedIntegerType(t) && hlo::BitWidth(t) >= 8; }
bool Supported(PrimitiveType t) { return t == PrimitiveType::kPred || IsF(t) || IsS(t) || IsU(t); }

uint64_t Mask(PrimitiveType t) {
  const int w = t == PrimitiveType::kPred ? 1 : hlo::BitWidth(t);
  return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}
int64_t AsSigned(const Scalar& s) {
  const int w = hlo::BitWidth(s.type);
  if (w >= 64) return static_cast<int64_t>(s.bits);
  const uint64_t sign = uint64_t{1} << (w - 1);
  return static_cast<int64_t>((s.bits ^ sign) - sign);
}
double AsDouble(const Scalar& s) {
  if (s.type == PrimitiveType::kF32) return std::bit_cast<float>(static_cast<uint32_t>(s.bits));
  if (s.type == PrimitiveType::kF64) return std::bit_cast<double>(s.bits);
  if (IsS(s.type)) return static_cast<double>(AsSigned(s));
  return static_cast<double>(s.bits);
}
Scalar FromDouble(PrimitiveType t, double v) {
  return t == PrimitiveType::kF32 ? Scalar::F32(static_cast<float>(v)) : Scalar::F64(v);
}
Scalar Bits(PrimitiveType t, uint64_t bits) { return Scalar{t, bits & Mask(t)}; }

// XLA's total order of floats as a signed integer.
int64_t TotalKey(double v) {
  const auto bits = std::bit_cast<int64_t>(v);
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

std::optional<bool> Compare(std::string_view direction, bool total, const Scalar& a,
                            const Scalar& b) {
  int order = 0;  // -1, 0, 1; 2 unordered
  if (IsF(a.type)) {
    const double x = AsDouble(a), y = AsDouble(b);
    if (total) {
      const int64_t p = TotalKey(x), q = TotalKey(y);
      order = p < q ? -1 : p > q ? 1 : 0;
    } else {
      order = std::isnan(x) || std::isnan(y) ? 2 : x < y ? -1 : x > y ? 1 : 0;
    }
  } else if (IsS(a.type)) {
    const int64_t x = AsSigned(a), y = AsSigned(b);
    order = x < y ? -1 : x > y ? 1 : 0;
  } else {
    order = a.bits < b.bits ? -1 : a.bits > b.bits ? 1 : 0;
  }
  if (direction == "EQ") return order == 0;
  if (direction == "NE") return order != 0;
  if (direction == "LT") return order == -1;
  if (direction == "LE") return order == -1 || order == 0;
  if (direction == "GT") return order == 1;
  if (direction == "GE") return order == 1 || order == 0;
  return std::nullopt;
}

std::string_view Text(const hlo::Instruction& i, std::string_view name) {
  const hlo::Attribute* a = i.FindAttribute(name);
  return a == nullptr ? std::string_view{} : a->value();
}

// Long on purpose: one dispatch over the opcodes the scalar evaluator
// knows, each a few lines; the list is easier to check against XLA's
// semantics in one place.
std::optional<Scalar> Eval(const hlo::Instruction& i, std::span<const Scalar> params, int depth) {
  if (depth > kMaxDepth || !i.shape().IsArray() || i.shape().rank() != 0) return std::nullopt;
  const PrimitiveType type = i.shape().element_type;
  if (!Supported(type)) return std::nullopt;
  if (i.opcode() == Opcode::kParameter) {
    const int64_t n = i.parameter_number();
    if (n < 0 || static_cast<size_t>(n) >= params.size() || params[n].type != type)
      return std::nullopt;
    return params[static_cast<size_t>(n)];
  }
  if (i.opcode() == Opcode::kConstant) {
    Expected<hlo::Literal> literal = hlo::ParseLiteral(i.literal(), i.shape());
    if (!literal || literal->kind != hlo::Literal::Kind::kArray) return std::nullopt;
    if (IsF(type) && literal->reals.size() == 1) return FromDouble(type, literal->reals[0]);
    if (literal->integers.size() == 1)
      return Bits(type, static_cast<uint64_t>(literal->integers[0]));
    if (literal->unsigneds.size() == 1) return Bits(type, literal->unsigneds[0]);
    return std::nullopt;
  }
  std::vector<Scalar> v;
  for (const hlo::Instruction* operand : i.operands()) {
    std::optional<Scalar> s = Eval(*operand, params, depth + 1);
    if (!s) return std::nullopt;
    v.push_back(*s);
  }
  const auto arity = [&](size_t n) { return v.size() == n; };
  switch (i.opcode()) {
    case Opcode::kCompare: {
      if (!arity(2) || v[0].type != v[1].type) return std::nullopt;
      auto r = Compare(Text(i, "direction"), Text(i, "type") == "TOTALORDER", v[0], v[1]);
      if (!r) return std::nullopt;
      return Scalar{PrimitiveType::kPred, *r ? 1u : 0u};
    }
    case Opcode::kSelect:
      if (!arity(3) || v[0].type != PrimitiveType::kPred || v[1].type != type ||
          v[2].type != type) {
        return std::nullopt;
      }
      return v[0].bits ? v[1] : v[2];
    case Opcode::kBitcastConvert:
      if (!arity(1) || hlo::BitWidth(v[0].type) != hlo::BitWidth(type)) return std::nullopt;
      return Bits(type, v[0].bits);
    case Opcode::kConvert:
      if (!arity(1)) return std::nullopt;
      if (IsF(type)) return FromDouble(type, AsDouble(v[0]));
      if (IsF(v[0].type)) return std::nullopt;  // float -> int saturation: not needed
      return Bits(type, IsS(v[0].type) ? static_cast<uint64_t>(AsSigned(v[0])) : v[0].bits);
    case Opcode::kNegate:
      if (!arity(1)) return std::nullopt;
      if (IsF(type)) return FromDouble(type, -AsDouble(v[0]));
      return Bits(type, 0 - v[0].bits);
    case Opcode::kNot:
      if (!arity(1)) return std::nullopt;
      return Bits(type, type == PrimitiveType::kPred ? !v[0].bits : ~v[0].bits);
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kAnd:
    case Opcode::kOr: {
      if (!arity(2) || v[0].type != type || v[1].type != type) return std::nullopt;
      const Opcode op = i.opcode();
      if (IsF(type)) {
        const double x = AsDouble(v[0]), y = AsDouble(v[1]);
        if (op == Opcode::kAdd) return FromDouble(type, x + y);
        if (op == Opcode::kSubtract) return FromDouble(type, x - y);
        if (op == Opcode::kMultiply) return FromDouble(type, x * y);
        return std::nullopt;
      }
      const uint64_t x = v[0].bits, y = v[1].bits;
      switch (op) {
        case Opcode::kAdd:
          return Bits(type, x + y);
        case Opcode::kSubtract:
          return Bits(type, x - y);
        case Opcode::kMultiply:
          return Bits(type, x * y);
        case Opcode::kAnd:
          return Bits(type, x & y);
        default:
          return Bits(type, x | y);
      }
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

Scalar Scalar::F32(float v) { return {PrimitiveType::kF32, std::bit_cast<uint32_t>(v)}; }
Scalar Scalar::F64(double v) { return {PrimitiveType::kF64, std::bit_cast<uint64_t>(v)}; }
Scalar Scalar::Int(PrimitiveType type, int64_t v) { return Bits(type, static_cast<uint64_t>(v)); }

std::optional<Scalar> EvaluateScalar(const hlo::Instruction& instruction,
                                     std::span<const Scalar> params) {
  return Eval(instruction, params, 0);
}

}  // namespace tileprof::engine::compiler
