// Elementwise unary and binary codelets:
//   popops::UnaryOp1DSupervisor<popops::expr::UnaryOpType::OP,T>   in -> out
//   popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::OP,T> in1, in2 -> out
// Supervisor vertices: the elements are split evenly over the tile's worker
// contexts. Scalar semantics are in numeric.h; codelets.h states them.
#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>

#include "engine/codelets/codelets.h"
#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"
#include "engine/codelets/widen.h"

namespace tileprof::engine {
namespace {

using numeric::Get;
using numeric::kIsFloat;
using numeric::kIsInt;
using numeric::kIsPred;
using numeric::Put;

// One input or two, as numeric::MapElements (widen.h) maps them.
template <ElementType kIn, ElementType kOut, typename F>
Status Map1(const VertexIo& io, uint64_t n, F f) {
  numeric::MapElements<kIn, kOut, 1>({io.fields[0]}, io.fields[1], n, f);
  return {};
}

template <ElementType kIn, ElementType kOut, typename F>
Status Map2(const VertexIo& io, uint64_t n, F f) {
  numeric::MapElements<kIn, kOut, 2>({io.fields[0], io.fields[1]}, io.fields[2], n, f);
  return {};
}

Error NotDefined(std::string_view op, ElementType type) {
  return MakeError("{} is not defined for {}", op, HloName(type));
}

template <ElementType kT>
Status RunBinary(BinaryOp op, const VertexIo& io, uint64_t n) {
  using C = typename numeric::Traits<kT>::Compute;
  constexpr ElementType kPred = ElementType::kPred;
  auto map = [&](auto f) { return Map2<kT, kT>(io, n, f); };
  auto compare = [&](auto f) { return Map2<kT, kPred>(io, n, f); };
  switch (op) {
    case BinaryOp::kAdd:
      if constexpr (kIsInt<C>) return map([](C a, C b) -> C { return numeric::WrapAdd<C>(a, b); });
      if constexpr (kIsFloat<C>) return map([](C a, C b) -> C { return a + b; });
      break;
    case BinaryOp::kSubtract:
      if constexpr (kIsInt<C>) return map([](C a, C b) -> C { return numeric::WrapSub<C>(a, b); });
      if constexpr (kIsFloat<C>) return map([](C a, C b) -> C { return a - b; });
      break;
    case BinaryOp::kMultiply:
      if constexpr (kIsInt<C>) return map([](C a, C b) -> C { return numeric::WrapMul<C>(a, b); });
      if constexpr (kIsFloat<C>) return map([](C a, C b) -> C { return a * b; });
      break;
    case BinaryOp::kDivide:
      if constexpr (kIsInt<C>)
        return map([](C a, C b) -> C { return numeric::IntDivide<C>(a, b); });
      if constexpr (kIsFloat<C>) return map([](C a, C b) -> C { return a / b; });
      break;
    case BinaryOp::kRemainder:
      if constexpr (kIsInt<C>)
        return map([](C a, C b) -> C { return numeric::IntRemainder<C>(a, b); });
      if constexpr (kIsFloat<C>) return map([](C a, C b) -> C { return std::fmod(a, b); });
      break;
    case BinaryOp::kPower:
      if constexpr (kIsInt<C>) return map([](C a, C b) -> C { return numeric::IntPower<C>(a, b); });
      if constexpr (kIsFloat<C>) return map([](C a, C b) -> C { return std::pow(a, b); });
      break;
    case BinaryOp::kMaximum:
      if constexpr (!kIsPred<C>) return map([](C a, C b) -> C { return numeric::Max<C>(a, b); });
      break;
    case BinaryOp::kMinimum:
      if constexpr (!kIsPred<C>) return map([](C a, C b) -> C { return numeric::Min<C>(a, b); });
      break;
    case BinaryOp::kAtan2:
      if constexpr (kIsFloat<C>) return map([](C a, C b) -> C { return std::atan2(a, b); });
      break;
    case BinaryOp::kBitwiseAnd:
      if constexpr (!kIsFloat<C>) return map([](C a, C b) -> C { return static_cast<C>(a & b); });
      break;
    case BinaryOp::kBitwiseOr:
      if constexpr (!kIsFloat<C>) return map([](C a, C b) -> C { return static_cast<C>(a | b); });
      break;
    case BinaryOp::kBitwiseXor:
      if constexpr (!kIsFloat<C>) return map([](C a, C b) -> C { return static_cast<C>(a ^ b); });
      break;
    case BinaryOp::kShiftLeft:
      if constexpr (kIsInt<C>)
        return map([](C a, C b) -> C { return numeric::ShiftLeft<C>(a, b); });
      break;
    case BinaryOp::kShiftRight:
      if constexpr (kIsInt<C>)
        return map([](C a, C b) -> C { return numeric::ShiftRightLogical<C>(a, b); });
      break;
    case BinaryOp::kShiftRightSignExtend:
      if constexpr (kIsInt<C>)
        return map([](C a, C b) -> C { return numeric::ShiftRightArithmetic<C>(a, b); });
      break;
    case BinaryOp::kEqual:
      return compare([](C a, C b) { return a == b; });
    case BinaryOp::kNotEqual:
      return compare([](C a, C b) { return a != b; });
    case BinaryOp::kLessThan:
      return compare([](C a, C b) { return a < b; });
    case BinaryOp::kLessThanEqual:
      return compare([](C a, C b) { return a <= b; });
    case BinaryOp::kGreaterThan:
      return compare([](C a, C b) { return a > b; });
    case BinaryOp::kGreaterThanEqual:
      return compare([](C a, C b) { return a >= b; });
  }
  return NotDefined(BinaryOpName(op), kT);
}

template <ElementType kT>
Status RunUnary(UnaryOp op, const VertexIo& io, uint64_t n) {
  using C = typename numeric::Traits<kT>::Compute;
  auto map = [&](auto f) { return Map1<kT, kT>(io, n, f); };
  switch (op) {
    case UnaryOp::kAbsolute:
      if constexpr (!kIsPred<C>) return map([](C a) -> C { return numeric::Absolute<C>(a); });
      break;
    case UnaryOp::kNegate:
      if constexpr (!kIsPred<C>) return map([](C a) -> C { return numeric::Negate<C>(a); });
      break;
    case UnaryOp::kSignum:
      if constexpr (!kIsPred<C>) return map([](C a) -> C { return numeric::Signum<C>(a); });
      break;
    case UnaryOp::kBitwiseNot:
      if constexpr (kIsInt<C>) return map([](C a) -> C { return static_cast<C>(~a); });
      break;
    case UnaryOp::kCountLeadingZeros:
      if constexpr (kIsInt<C>) {
        return map([](C a) -> C {
          return static_cast<C>(std::countl_zero(static_cast<std::make_unsigned_t<C>>(a)));
        });
      }
      break;
    case UnaryOp::kPopcount:
      if constexpr (kIsInt<C>) {
        return map([](C a) -> C {
          return static_cast<C>(std::popcount(static_cast<std::make_unsigned_t<C>>(a)));
        });
      }
      break;
    case UnaryOp::kLogicalNot:
      if constexpr (kIsPred<C>) return map([](C a) -> C { return !a; });
      break;
    default:
      break;
  }
  if constexpr (kIsFloat<C>) {
    switch (op) {
      case UnaryOp::kFloor:
        return map([](C a) -> C { return std::floor(a); });
      case UnaryOp::kCeil:
        return map([](C a) -> C { return std::ceil(a); });
      case UnaryOp::kRound:
        return map([](C a) -> C { return std::round(a); });
      case UnaryOp::kRoundHalfEven:
        return map([](C a) -> C { return std::nearbyint(a); });
      case UnaryOp::kExponent:
        return map([](C a) -> C { return std::exp(a); });
      case UnaryOp::kExponentMinusOne:
        return map([](C a) -> C { return std::expm1(a); });
      case UnaryOp::kLogarithm:
        return map([](C a) -> C { return std::log(a); });
      case UnaryOp::kLogarithmOnePlus:
        return map([](C a) -> C { return std::log1p(a); });
      case UnaryOp::kTanh:
        return map([](C a) -> C { return std::tanh(a); });
      case UnaryOp::kErf:
        return map([](C a) -> C { return std::erf(a); });
      case UnaryOp::kSigmoid:
        return map([](C a) -> C { return C{1} / (C{1} + std::exp(-a)); });
      case UnaryOp::kSqrt:
        return map([](C a) -> C { return std::sqrt(a); });
      case UnaryOp::kRsqrt:
        return map([](C a) -> C { return C{1} / std::sqrt(a); });
      case UnaryOp::kSin:
        return map([](C a) -> C { return std::sin(a); });
      case UnaryOp::kCos:
        return map([](C a) -> C { return std::cos(a); });
      case UnaryOp::kIsFinite:
        return Map1<kT, ElementType::kPred>(io, n, [](C a) { return std::isfinite(a); });
      default:
        break;
    }
  }
  return NotDefined(UnaryOpName(op), kT);
}

class BinaryOpCodelet final : public Codelet {
 public:
  BinaryOpCodelet(BinaryOp op, ElementType type)
      : Codelet(BinaryOpCodeletName(op, type), ExecutionKind::kSupervisor,
                {In("in1", type), In("in2", type),
                 Out("out", IsComparison(op) ? ElementType::kPred : type, VectorLayout::kSpan)},
                {}, cost::kSupervisorElementwiseCodeBytes),
        op_(op),
        type_(type) {}

  Status CheckShape(const VertexShape& shape) const override {
    TILEPROF_RETURN_IF_ERROR(CheckSameSize(*this, shape, 2, 0));
    return CheckSameSize(*this, shape, 2, 1);
  }

  // SupervisorLoop(n, width(T), 2 loads + 1 store + op cycles).
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    return cost::SupervisorLoop(shape.field_elements[2], cost::Width(target, type_),
                                cost::CyclesPerVector(BinaryOpClass(op_, type_), type_, 2, 1),
                                target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t n = Count(io, 2);
    return numeric::Dispatch(type_,
                             [&](auto tag) { return RunBinary<decltype(tag)::value>(op_, io, n); });
  }

 private:
  BinaryOp op_;
  ElementType type_;
};

class UnaryOpCodelet final : public Codelet {
 public:
  UnaryOpCodelet(UnaryOp op, ElementType type)
      : Codelet(UnaryOpCodeletName(op, type), ExecutionKind::kSupervisor,
                {In("in", type), Out("out", UnaryOutputType(op, type), VectorLayout::kSpan)}, {},
                cost::kSupervisorElementwiseCodeBytes),
        op_(op),
        type_(type) {}

  Status CheckShape(const VertexShape& shape) const override {
    return CheckSameSize(*this, shape, 1, 0);
  }

  // SupervisorLoop(n, width(T), 1 load + 1 store + op cycles).
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    return cost::SupervisorLoop(shape.field_elements[1], cost::Width(target, type_),
                                cost::CyclesPerVector(UnaryOpClass(op_), type_, 1, 1), target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t n = Count(io, 1);
    return numeric::Dispatch(type_,
                             [&](auto tag) { return RunUnary<decltype(tag)::value>(op_, io, n); });
  }

 private:
  UnaryOp op_;
  ElementType type_;
};

constexpr BinaryOp kBinaryOps[] = {
    BinaryOp::kAdd,           BinaryOp::kSubtract,    BinaryOp::kMultiply,
    BinaryOp::kDivide,        BinaryOp::kRemainder,   BinaryOp::kPower,
    BinaryOp::kMaximum,       BinaryOp::kMinimum,     BinaryOp::kAtan2,
    BinaryOp::kBitwiseAnd,    BinaryOp::kBitwiseOr,   BinaryOp::kBitwiseXor,
    BinaryOp::kShiftLeft,     BinaryOp::kShiftRight,  BinaryOp::kShiftRightSignExtend,
    BinaryOp::kEqual,         BinaryOp::kNotEqual,    BinaryOp::kLessThan,
    BinaryOp::kLessThanEqual, BinaryOp::kGreaterThan, BinaryOp::kGreaterThanEqual};

constexpr UnaryOp kUnaryOps[] = {UnaryOp::kAbsolute,
                                 UnaryOp::kNegate,
                                 UnaryOp::kSignum,
                                 UnaryOp::kFloor,
                                 UnaryOp::kCeil,
                                 UnaryOp::kRound,
                                 UnaryOp::kRoundHalfEven,
                                 UnaryOp::kExponent,
                                 UnaryOp::kExponentMinusOne,
                                 UnaryOp::kLogarithm,
                                 UnaryOp::kLogarithmOnePlus,
                                 UnaryOp::kTanh,
                                 UnaryOp::kSigmoid,
                                 UnaryOp::kSqrt,
                                 UnaryOp::kRsqrt,
                                 UnaryOp::kSin,
                                 UnaryOp::kCos,
                                 UnaryOp::kIsFinite,
                                 UnaryOp::kBitwiseNot,
                                 UnaryOp::kLogicalNot,
                                 UnaryOp::kErf,
                                 UnaryOp::kCountLeadingZeros,
                                 UnaryOp::kPopcount};

}  // namespace

void AddElementwiseCodelets(CodeletList& out) {
  for (ElementType type : kAllElementTypes) {
    for (BinaryOp op : kBinaryOps) {
      if (Supports(op, type)) out.push_back(std::make_unique<BinaryOpCodelet>(op, type));
    }
    for (UnaryOp op : kUnaryOps) {
      if (Supports(op, type)) out.push_back(std::make_unique<UnaryOpCodelet>(op, type));
    }
  }
}

cost::OpClass BinaryOpClass(BinaryOp op, ElementType type) {
  switch (op) {
    case BinaryOp::kDivide:
      return cost::OpClass::kDivide;
    case BinaryOp::kRemainder:
      return IsFloat(type) ? cost::OpClass::kTranscendental : cost::OpClass::kDivide;
    case BinaryOp::kPower:
    case BinaryOp::kAtan2:
      return cost::OpClass::kTranscendental;
    default:
      return cost::OpClass::kSimple;
  }
}

cost::OpClass UnaryOpClass(UnaryOp op) {
  switch (op) {
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt:
      return cost::OpClass::kDivide;
    case UnaryOp::kExponent:
    case UnaryOp::kExponentMinusOne:
    case UnaryOp::kLogarithm:
    case UnaryOp::kLogarithmOnePlus:
    case UnaryOp::kTanh:
    case UnaryOp::kErf:
    case UnaryOp::kSigmoid:
    case UnaryOp::kSin:
    case UnaryOp::kCos:
      return cost::OpClass::kTranscendental;
    default:
      return cost::OpClass::kSimple;
  }
}

}  // namespace tileprof::engine
