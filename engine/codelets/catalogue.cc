// The codelet catalogue: operation names, the type table of each family, the
// codelet names and the registry built on first use. See codelets.h.
#include <algorithm>
#include <cassert>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/codelets/families.h"

namespace tileprof::engine {
namespace {

struct Catalogue {
  CodeletList owned;
  std::vector<const Codelet*> sorted;  // by name
};

const Catalogue& GetCatalogue() {
  // Built once; a function-local static is initialised thread-safely.
  static const Catalogue* const catalogue = [] {
    auto* c = new Catalogue;
    AddElementwiseCodelets(c->owned);
    AddDataCodelets(c->owned);
    AddReduceCodelets(c->owned);
    AddDotCodelets(c->owned);
    AddConvCodelets(c->owned);
    AddMiscCodelets(c->owned);
    for (const auto& codelet : c->owned) c->sorted.push_back(codelet.get());
    std::sort(c->sorted.begin(), c->sorted.end(),
              [](const Codelet* a, const Codelet* b) { return a->name() < b->name(); });
    assert(std::adjacent_find(c->sorted.begin(), c->sorted.end(),
                              [](const Codelet* a, const Codelet* b) {
                                return a->name() == b->name();
                              }) == c->sorted.end());
    return c;
  }();
  return *catalogue;
}

Expected<const Codelet*> Lookup(const std::string& name, bool supported, std::string_view why) {
  if (!supported) return MakeError("no codelet {}: {}", name, why);
  const Codelet* codelet = FindCodelet(name);
  if (codelet == nullptr) return MakeError("no codelet {} in the catalogue", name);
  return codelet;
}

std::string_view Bool(bool value) { return value ? "true" : "false"; }

}  // namespace

std::string_view BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "ADD";
    case BinaryOp::kSubtract:
      return "SUBTRACT";
    case BinaryOp::kMultiply:
      return "MULTIPLY";
    case BinaryOp::kDivide:
      return "DIVIDE";
    case BinaryOp::kRemainder:
      return "REMAINDER";
    case BinaryOp::kPower:
      return "POWER";
    case BinaryOp::kMaximum:
      return "MAXIMUM";
    case BinaryOp::kMinimum:
      return "MINIMUM";
    case BinaryOp::kAtan2:
      return "ATAN2";
    case BinaryOp::kBitwiseAnd:
      return "BITWISE_AND";
    case BinaryOp::kBitwiseOr:
      return "BITWISE_OR";
    case BinaryOp::kBitwiseXor:
      return "BITWISE_XOR";
    case BinaryOp::kShiftLeft:
      return "SHIFT_LEFT";
    case BinaryOp::kShiftRight:
      return "SHIFT_RIGHT";
    case BinaryOp::kShiftRightSignExtend:
      return "SHIFT_RIGHT_SIGN_EXTEND";
    case BinaryOp::kEqual:
      return "EQUAL";
    case BinaryOp::kNotEqual:
      return "NOT_EQUAL";
    case BinaryOp::kLessThan:
      return "LESS_THAN";
    case BinaryOp::kLessThanEqual:
      return "LESS_THAN_EQUAL";
    case BinaryOp::kGreaterThan:
      return "GREATER_THAN";
    case BinaryOp::kGreaterThanEqual:
      return "GREATER_THAN_EQUAL";
  }
  return "?";
}

std::string_view UnaryOpName(UnaryOp op) {
  switch (op) {
    case UnaryOp::kAbsolute:
      return "ABSOLUTE";
    case UnaryOp::kNegate:
      return "NEGATE";
    case UnaryOp::kSignum:
      return "SIGNUM";
    case UnaryOp::kFloor:
      return "FLOOR";
    case UnaryOp::kCeil:
      return "CEIL";
    case UnaryOp::kRound:
      return "ROUND";
    case UnaryOp::kRoundHalfEven:
      return "ROUND_HALF_EVEN";
    case UnaryOp::kExponent:
      return "EXPONENT";
    case UnaryOp::kExponentMinusOne:
      return "EXPONENT_MINUS_ONE";
    case UnaryOp::kLogarithm:
      return "LOGARITHM";
    case UnaryOp::kLogarithmOnePlus:
      return "LOGARITHM_ONE_PLUS";
    case UnaryOp::kTanh:
      return "TANH";
    case UnaryOp::kSigmoid:
      return "SIGMOID";
    case UnaryOp::kSqrt:
      return "SQRT";
    case UnaryOp::kRsqrt:
      return "RSQRT";
    case UnaryOp::kSin:
      return "SIN";
    case UnaryOp::kCos:
      return "COS";
    case UnaryOp::kIsFinite:
      return "IS_FINITE";
    case UnaryOp::kBitwiseNot:
      return "BITWISE_NOT";
    case UnaryOp::kLogicalNot:
      return "LOGICAL_NOT";
    case UnaryOp::kErf:
      return "ERF";
    case UnaryOp::kCountLeadingZeros:
      return "COUNT_LEADING_ZEROS";
    case UnaryOp::kPopcount:
      return "POPCOUNT";
  }
  return "?";
}

std::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kAdd:
      return "ReduceAdd";
    case ReduceOp::kMul:
      return "ReduceMul";
    case ReduceOp::kMax:
      return "ReduceMax";
    case ReduceOp::kMin:
      return "ReduceMin";
    case ReduceOp::kAnd:
      return "ReduceAnd";
    case ReduceOp::kOr:
      return "ReduceOr";
  }
  return "?";
}

bool IsComparison(BinaryOp op) { return op >= BinaryOp::kEqual; }

bool Supports(BinaryOp op, ElementType type) {
  if (IsComparison(op)) return true;
  switch (op) {
    case BinaryOp::kBitwiseAnd:
    case BinaryOp::kBitwiseOr:
    case BinaryOp::kBitwiseXor:
      return !IsFloat(type);
    case BinaryOp::kShiftLeft:
    case BinaryOp::kShiftRight:
    case BinaryOp::kShiftRightSignExtend:
      return IsInteger(type);
    case BinaryOp::kAtan2:
      return IsFloat(type);
    default:  // arithmetic, max, min
      return type != ElementType::kPred;
  }
}

bool Supports(UnaryOp op, ElementType type) {
  switch (op) {
    case UnaryOp::kAbsolute:
    case UnaryOp::kNegate:
    case UnaryOp::kSignum:
      return type != ElementType::kPred;
    case UnaryOp::kBitwiseNot:
    case UnaryOp::kCountLeadingZeros:
    case UnaryOp::kPopcount:
      return IsInteger(type);
    case UnaryOp::kLogicalNot:
      return type == ElementType::kPred;
    default:
      return IsFloat(type);
  }
}

bool Supports(ReduceOp op, ElementType type) {
  if (op == ReduceOp::kAnd || op == ReduceOp::kOr) return type == ElementType::kPred;
  return type != ElementType::kPred;
}

ElementType UnaryOutputType(UnaryOp op, ElementType type) {
  return op == UnaryOp::kIsFinite ? ElementType::kPred : type;
}

std::string BinaryOpCodeletName(BinaryOp op, ElementType type) {
  return fmt::format("popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::{},{}>",
                     BinaryOpName(op), PoplarName(type));
}
std::string UnaryOpCodeletName(UnaryOp op, ElementType type) {
  return fmt::format("popops::UnaryOp1DSupervisor<popops::expr::UnaryOpType::{},{}>",
                     UnaryOpName(op), PoplarName(type));
}
std::string SelectCodeletName(ElementType type) {
  return fmt::format("popops::Select<{}>", PoplarName(type));
}
std::string ClampCodeletName(ElementType type) {
  return fmt::format("popops::Clamp<{}>", PoplarName(type));
}
std::string CastCodeletName(ElementType from, ElementType to) {
  return fmt::format("popops::Cast1D<{},{}>", PoplarName(from), PoplarName(to));
}
std::string CopyCodeletName(ElementType type) {
  return fmt::format("poplar_rt::Copy1D<{}>", PoplarName(type));
}
std::string FillCodeletName(ElementType type) {
  return fmt::format("popops::Fill<{}>", PoplarName(type));
}
std::string ScaledAddCodeletName(ElementType type, bool constant_scale) {
  return fmt::format("popops::ScaledAddSupervisor<{0},{0},{1}>", PoplarName(type),
                     Bool(constant_scale));
}
std::string ReduceCodeletName(ReduceOp op, ElementType type, bool is_update) {
  return ReduceCodeletName(op, type, type, is_update);
}
std::string ReduceCodeletName(ReduceOp op, ElementType partials, ElementType out, bool is_update) {
  return fmt::format("popops::Reduce<popops::{},{},{},{},0>", ReduceOpName(op),
                     PoplarName(partials), PoplarName(out), Bool(is_update));
}
std::string ContinuousReduceCodeletName(ReduceOp op, ElementType type, bool is_update) {
  return fmt::format("popops::ContinuousReduce<popops::{},{},{},{}>", ReduceOpName(op),
                     PoplarName(type), PoplarName(type), Bool(is_update));
}
std::string MatMulPartialCodeletName(ElementType input, ElementType accumulator) {
  return fmt::format("poplin::MatMulPartial<{},{}>", PoplarName(input), PoplarName(accumulator));
}
std::string MatMulPartialTransposedCodeletName(ElementType input, ElementType accumulator,
                                               bool transpose_in, bool transpose_weights) {
  return fmt::format("poplin::MatMulPartialTransposed<{},{},{},{}>", PoplarName(input),
                     PoplarName(accumulator), Bool(transpose_in), Bool(transpose_weights));
}
std::string ConvPartial1x1OutCodeletName(ElementType input, ElementType accumulator) {
  return fmt::format("poplin::ConvPartial1x1Out<{},{},true,false>", PoplarName(input),
                     PoplarName(accumulator));
}
std::string ConvPartialCodeletName(ElementType input, ElementType accumulator) {
  using T = ElementType;
  const bool amp = accumulator == T::kF32 ? input == T::kF32 || input == T::kF16
                                          : input == T::kF16 && accumulator == T::kF16;
  if (amp) {
    return fmt::format("poplin::ConvPartialnx1<{},{},true,false>", PoplarName(input),
                       PoplarName(accumulator));
  }
  return fmt::format("poplin::ConvPartialHorizontalMac<{},{},true>", PoplarName(input),
                     PoplarName(accumulator));
}

const Codelet* FindCodelet(std::string_view name) {
  const auto& sorted = GetCatalogue().sorted;
  auto it = std::lower_bound(sorted.begin(), sorted.end(), name,
                             [](const Codelet* c, std::string_view n) { return c->name() < n; });
  if (it == sorted.end() || (*it)->name() != name) return nullptr;
  return *it;
}

std::span<const Codelet* const> AllCodelets() { return GetCatalogue().sorted; }

Expected<const Codelet*> GetBinaryOpCodelet(BinaryOp op, ElementType type) {
  return Lookup(BinaryOpCodeletName(op, type), Supports(op, type),
                fmt::format("{} is not defined for {}", BinaryOpName(op), HloName(type)));
}
Expected<const Codelet*> GetUnaryOpCodelet(UnaryOp op, ElementType type) {
  return Lookup(UnaryOpCodeletName(op, type), Supports(op, type),
                fmt::format("{} is not defined for {}", UnaryOpName(op), HloName(type)));
}
Expected<const Codelet*> GetSelectCodelet(ElementType type) {
  return Lookup(SelectCodeletName(type), true, "");
}
Expected<const Codelet*> GetClampCodelet(ElementType type) {
  return Lookup(ClampCodeletName(type), type != ElementType::kPred,
                "clamp is not defined for pred");
}
Expected<const Codelet*> GetCastCodelet(ElementType from, ElementType to) {
  return Lookup(CastCodeletName(from, to), from != to,
                "a cast needs two different types (use a copy)");
}
Expected<const Codelet*> GetCopyCodelet(ElementType type) {
  return Lookup(CopyCodeletName(type), true, "");
}
Expected<const Codelet*> GetFillCodelet(ElementType type) {
  return Lookup(FillCodeletName(type), true, "");
}
Expected<const Codelet*> GetScaledAddCodelet(ElementType type, bool constant_scale) {
  const bool supported = constant_scale ? IsFloat(type) : type != ElementType::kPred;
  return Lookup(ScaledAddCodeletName(type, constant_scale), supported,
                fmt::format("scaled add{} is not defined for {}",
                            constant_scale ? " with a constant scale" : "", HloName(type)));
}
Expected<const Codelet*> GetReduceCodelet(ReduceOp op, ElementType type, bool is_update) {
  return Lookup(ReduceCodeletName(op, type, is_update), Supports(op, type),
                fmt::format("{} is not defined for {}", ReduceOpName(op), HloName(type)));
}
Expected<const Codelet*> GetReduceCodelet(ReduceOp op, ElementType partials, ElementType out,
                                          bool is_update) {
  if (partials == out) return GetReduceCodelet(op, out, is_update);
  return Lookup(ReduceCodeletName(op, partials, out, is_update), true, "");
}
Expected<const Codelet*> GetContinuousReduceCodelet(ReduceOp op, ElementType type, bool is_update) {
  return Lookup(ContinuousReduceCodeletName(op, type, is_update), Supports(op, type),
                fmt::format("{} is not defined for {}", ReduceOpName(op), HloName(type)));
}
Expected<const Codelet*> GetMatMulPartialCodelet(ElementType input, ElementType accumulator) {
  return Lookup(MatMulPartialCodeletName(input, accumulator), true, "");
}
Expected<const Codelet*> GetMatMulPartialCodelet(ElementType input, ElementType accumulator,
                                                 bool transpose_in, bool transpose_weights) {
  if (!transpose_in && !transpose_weights) return GetMatMulPartialCodelet(input, accumulator);
  return Lookup(
      MatMulPartialTransposedCodeletName(input, accumulator, transpose_in, transpose_weights), true,
      "");
}
Expected<const Codelet*> GetConvPartial1x1OutCodelet(ElementType input, ElementType accumulator) {
  return Lookup(ConvPartial1x1OutCodeletName(input, accumulator), true, "");
}
Expected<const Codelet*> GetConvPartialCodelet(ElementType input, ElementType accumulator) {
  return Lookup(ConvPartialCodeletName(input, accumulator), true, "");
}

}  // namespace tileprof::engine
