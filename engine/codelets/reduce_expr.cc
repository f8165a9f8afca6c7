// The interpreted reducer. See reduce_expr.h.
#include "engine/codelets/reduce_expr.h"

#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"

namespace tileprof::engine {
namespace {

constexpr uint32_t kMaxOperands = 8;

bool Supported(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kS32 || type == ElementType::kU32 ||
         type == ElementType::kPred;
}

// A register: the value in the compute type of its element type.
struct Reg {
  ElementType type = ElementType::kF32;
  float f = 0;
  int32_t s = 0;
  uint32_t u = 0;
  bool p = false;
};

Reg Load(ElementType type, std::span<const std::byte> bytes, uint64_t i) {
  Reg r;
  r.type = type;
  switch (type) {
    case ElementType::kF32:
      r.f = numeric::Get<ElementType::kF32>(bytes, i);
      break;
    case ElementType::kS32:
      r.s = numeric::Get<ElementType::kS32>(bytes, i);
      break;
    case ElementType::kU32:
      r.u = numeric::Get<ElementType::kU32>(bytes, i);
      break;
    default:
      r.p = numeric::Get<ElementType::kPred>(bytes, i);
      break;
  }
  return r;
}

void Store(const Reg& r, std::span<std::byte> bytes, uint64_t i) {
  switch (r.type) {
    case ElementType::kF32:
      numeric::Put<ElementType::kF32>(bytes, i, r.f);
      break;
    case ElementType::kS32:
      numeric::Put<ElementType::kS32>(bytes, i, r.s);
      break;
    case ElementType::kU32:
      numeric::Put<ElementType::kU32>(bytes, i, r.u);
      break;
    default:
      numeric::Put<ElementType::kPred>(bytes, i, r.p);
      break;
  }
}

template <typename C>
Expected<C> Arith(ExprOp op, C a, C b) {
  if constexpr (numeric::kIsPred<C>) {
    switch (op) {
      case ExprOp::kAnd:
      case ExprOp::kMinimum:
      case ExprOp::kMultiply:
        return a && b;
      case ExprOp::kOr:
      case ExprOp::kMaximum:
        return a || b;
      case ExprOp::kXor:
        return a != b;
      default:
        break;
    }
  } else if constexpr (numeric::kIsFloat<C>) {
    switch (op) {
      case ExprOp::kAdd:
        return a + b;
      case ExprOp::kSubtract:
        return a - b;
      case ExprOp::kMultiply:
        return a * b;
      case ExprOp::kDivide:
        return a / b;
      case ExprOp::kMaximum:
        return numeric::Max(a, b);
      case ExprOp::kMinimum:
        return numeric::Min(a, b);
      default:
        break;
    }
  } else {
    switch (op) {
      case ExprOp::kAdd:
        return numeric::WrapAdd(a, b);
      case ExprOp::kSubtract:
        return numeric::WrapSub(a, b);
      case ExprOp::kMultiply:
        return numeric::WrapMul(a, b);
      case ExprOp::kDivide:
        return numeric::IntDivide(a, b);
      case ExprOp::kMaximum:
        return numeric::Max(a, b);
      case ExprOp::kMinimum:
        return numeric::Min(a, b);
      case ExprOp::kAnd:
        return static_cast<C>(a & b);
      case ExprOp::kOr:
        return static_cast<C>(a | b);
      case ExprOp::kXor:
        return static_cast<C>(a ^ b);
      default:
        break;
    }
  }
  return MakeError("operation {} is not defined for this type", static_cast<uint32_t>(op));
}

template <typename C>
Expected<bool> Compare(uint32_t direction, C a, C b) {
  switch (direction) {
    case 0:
      return a == b;
    case 1:
      return a != b;
    case 2:
      return a < b;
    case 3:
      return a <= b;
    case 4:
      return a > b;
    case 5:
      return a >= b;
    default:
      return MakeError("comparison direction {} is not one of 0..5", direction);
  }
}

// Applies f to the typed values of r (and s).
template <typename F>
auto Visit(const Reg& r, F&& f) {
  switch (r.type) {
    case ElementType::kF32:
      return f(r.f);
    case ElementType::kS32:
      return f(r.s);
    case ElementType::kU32:
      return f(r.u);
    default:
      return f(r.p);
  }
}

template <typename C>
Reg Make(ElementType type, C v) {
  Reg r;
  r.type = type;
  if constexpr (std::is_same_v<C, float>)
    r.f = v;
  else if constexpr (std::is_same_v<C, int32_t>)
    r.s = v;
  else if constexpr (std::is_same_v<C, uint32_t>)
    r.u = v;
  else
    r.p = v;
  return r;
}

class ReduceExprCodelet final : public Codelet {
 public:
  ReduceExprCodelet(std::vector<ElementType> types, uint32_t nodes)
      : Codelet(ReduceExprCodeletName(types, nodes), ExecutionKind::kWorker, Fields(types),
                Params(nodes, static_cast<uint32_t>(types.size())), kReduceExprCodeBytes),
        types_(std::move(types)),
        nodes_(nodes) {}

  Status CheckShape(const VertexShape& shape) const override {
    const size_t k = types_.size();
    const uint64_t outputs = shape.field_elements[2 * k];
    for (size_t i = 0; i < k; ++i) {
      if (shape.field_elements[2 * k + i] != outputs) {
        return MakeError("field 'out{}' has {} elements, 'out0' has {}", i,
                         shape.field_elements[2 * k + i], outputs);
      }
      if (shape.field_elements[i] != shape.field_elements[0]) {
        return MakeError("field 'in{}' has {} elements, 'in0' has {}", i, shape.field_elements[i],
                         shape.field_elements[0]);
      }
    }
    if (outputs == 0 || shape.field_elements[0] % outputs != 0) {
      return MakeError("field 'in0' has {} elements, not a multiple of the {} of 'out0'",
                       shape.field_elements[0], outputs);
    }
    return Validate(shape.params);
  }

  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    const size_t k = types_.size();
    const uint64_t inputs = shape.field_elements[0], outputs = shape.field_elements[2 * k];
    return cost::WorkerLoop(inputs, 1, kReduceExprCyclesPerNode * nodes_ + k) +
           outputs * kReduceExprCyclesPerOutput * k;
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const size_t k = types_.size();
    const uint64_t m = Count(io, 2 * k);
    const uint64_t p = Count(io, 0) / m;
    std::vector<Reg> regs(nodes_), acc(k), args(2 * k);
    for (uint64_t j = 0; j < m; ++j) {
      for (size_t i = 0; i < k; ++i) acc[i] = Load(types_[i], io.fields[k + i], 0);
      for (uint64_t row = 0; row < p; ++row) {
        for (size_t i = 0; i < k; ++i) {
          args[i] = acc[i];
          args[k + i] = Load(types_[i], io.fields[i], row * m + j);
        }
        for (uint32_t n = 0; n < nodes_; ++n) {
          auto value = Eval(io.params, n, regs, args);
          if (!value) return value.error();
          regs[n] = *value;
        }
        for (size_t i = 0; i < k; ++i) acc[i] = regs[io.params[kExprWordsPerNode * nodes_ + i]];
      }
      for (size_t i = 0; i < k; ++i) Store(acc[i], io.fields[2 * k + i], j);
    }
    return {};
  }

 private:
  static std::vector<FieldSpec> Fields(const std::vector<ElementType>& types) {
    std::vector<FieldSpec> fields;
    for (size_t i = 0; i < types.size(); ++i)
      fields.push_back(In(fmt::format("in{}", i), types[i], VectorLayout::kSpan));
    for (size_t i = 0; i < types.size(); ++i)
      fields.push_back(ScalarIn(fmt::format("init{}", i), types[i]));
    for (size_t i = 0; i < types.size(); ++i)
      fields.push_back(Out(fmt::format("out{}", i), types[i], VectorLayout::kSpan));
    return fields;
  }
  static std::vector<std::string> Params(uint32_t nodes, uint32_t k) {
    static constexpr const char* kWords[] = {"Op", "Type", "A", "B", "C"};
    std::vector<std::string> params;
    for (uint32_t n = 0; n < nodes; ++n)
      for (const char* word : kWords) params.push_back(fmt::format("node{}{}", n, word));
    for (uint32_t i = 0; i < k; ++i) params.push_back(fmt::format("result{}", i));
    return params;
  }

  // Types and register references checked once per vertex, so that Eval
  // only meets well-formed programs.
  Status Validate(std::span<const uint32_t> params) const {
    std::vector<ElementType> reg_types(nodes_);
    const size_t k = types_.size();
    for (uint32_t n = 0; n < nodes_; ++n) {
      const auto w = params.subspan(kExprWordsPerNode * n, kExprWordsPerNode);
      if (w[0] >= static_cast<uint32_t>(ExprOp::kCount))
        return MakeError("node {}: op {}", n, w[0]);
      if (w[1] > 0xff) return MakeError("node {}: element type {} not supported", n, w[1]);
      const auto op = static_cast<ExprOp>(w[0]);
      const auto type = static_cast<ElementType>(w[1]);
      if (!Supported(type) || w[1] != static_cast<uint32_t>(type)) {
        return MakeError("node {}: element type {} not supported", n, w[1]);
      }
      reg_types[n] = type;
      auto operand = [&](uint32_t r) -> Expected<ElementType> {
        if (r >= n) return MakeError("node {} reads register {}, not computed before it", n, r);
        return reg_types[r];
      };
      switch (op) {
        case ExprOp::kParameter:
          if (w[2] >= 2 * k || types_[w[2] % k] != type) {
            return MakeError("node {}: argument {} of type {} invalid", n, w[2], HloName(type));
          }
          break;
        case ExprOp::kConstant:
          break;
        case ExprOp::kNot:
        case ExprOp::kNegate:
        case ExprOp::kAbs: {
          TILEPROF_ASSIGN_OR_RETURN(ElementType a, operand(w[2]));
          if (a != type) return MakeError("node {}: operand type differs", n);
          break;
        }
        case ExprOp::kCompare: {
          TILEPROF_ASSIGN_OR_RETURN(ElementType a, operand(w[2]));
          TILEPROF_ASSIGN_OR_RETURN(ElementType b, operand(w[3]));
          if (a != b || type != ElementType::kPred || w[4] > 5) {
            return MakeError("node {}: bad comparison", n);
          }
          break;
        }
        case ExprOp::kSelect: {
          TILEPROF_ASSIGN_OR_RETURN(ElementType c, operand(w[2]));
          TILEPROF_ASSIGN_OR_RETURN(ElementType a, operand(w[3]));
          TILEPROF_ASSIGN_OR_RETURN(ElementType b, operand(w[4]));
          if (c != ElementType::kPred || a != type || b != type) {
            return MakeError("node {}: bad select", n);
          }
          break;
        }
        default: {
          TILEPROF_ASSIGN_OR_RETURN(ElementType a, operand(w[2]));
          TILEPROF_ASSIGN_OR_RETURN(ElementType b, operand(w[3]));
          if (a != type || b != type) return MakeError("node {}: operand types differ", n);
          break;
        }
      }
    }
    for (size_t i = 0; i < k; ++i) {
      const uint32_t r = params[kExprWordsPerNode * nodes_ + i];
      if (r >= nodes_ || reg_types[r] != types_[i]) {
        return MakeError("result {} names register {}, not one of type {}", i, r,
                         HloName(types_[i]));
      }
    }
    return {};
  }

  Expected<Reg> Eval(std::span<const uint32_t> params, uint32_t n, const std::vector<Reg>& regs,
                     const std::vector<Reg>& args) const {
    const auto w = params.subspan(kExprWordsPerNode * n, kExprWordsPerNode);
    const auto op = static_cast<ExprOp>(w[0]);
    const auto type = static_cast<ElementType>(w[1]);
    switch (op) {
      case ExprOp::kParameter:
        return args[w[2]];
      case ExprOp::kConstant: {
        switch (type) {
          case ElementType::kF32:
            return Make(type, std::bit_cast<float>(w[2]));
          case ElementType::kS32:
            return Make(type, static_cast<int32_t>(w[2]));
          case ElementType::kU32:
            return Make(type, w[2]);
          default:
            return Make(type, w[2] != 0);
        }
      }
      case ExprOp::kCompare: {
        const Reg& b = regs[w[3]];
        return Visit(regs[w[2]], [&](auto a) -> Expected<Reg> {
          using C = decltype(a);
          C bv{};
          if constexpr (std::is_same_v<C, float>)
            bv = b.f;
          else if constexpr (std::is_same_v<C, int32_t>)
            bv = b.s;
          else if constexpr (std::is_same_v<C, uint32_t>)
            bv = b.u;
          else
            bv = b.p;
          TILEPROF_ASSIGN_OR_RETURN(bool result, Compare(w[4], a, bv));
          return Make(ElementType::kPred, result);
        });
      }
      case ExprOp::kSelect:
        return regs[w[2]].p ? regs[w[3]] : regs[w[4]];
      case ExprOp::kNot:
      case ExprOp::kNegate:
      case ExprOp::kAbs:
        return Visit(regs[w[2]], [&](auto a) -> Expected<Reg> {
          using C = decltype(a);
          if constexpr (numeric::kIsPred<C>) {
            if (op == ExprOp::kNot) return Make(type, !a);
          } else if constexpr (numeric::kIsFloat<C>) {
            if (op == ExprOp::kNegate) return Make(type, -a);
            if (op == ExprOp::kAbs) return Make(type, std::fabs(a));
          } else {
            if (op == ExprOp::kNot) return Make(type, static_cast<C>(~a));
            if (op == ExprOp::kNegate) return Make(type, numeric::Negate(a));
            if (op == ExprOp::kAbs) return Make(type, numeric::Absolute(a));
          }
          return MakeError("node {}: operation not defined for {}", n, HloName(type));
        });
      default: {
        const Reg& b = regs[w[3]];
        return Visit(regs[w[2]], [&](auto a) -> Expected<Reg> {
          using C = decltype(a);
          C bv{};
          if constexpr (std::is_same_v<C, float>)
            bv = b.f;
          else if constexpr (std::is_same_v<C, int32_t>)
            bv = b.s;
          else if constexpr (std::is_same_v<C, uint32_t>)
            bv = b.u;
          else
            bv = b.p;
          Expected<C> result = Arith(op, a, bv);
          if (!result) return result.error().Within(fmt::format("node {}", n));
          return Make(type, *result);
        });
      }
    }
  }

  std::vector<ElementType> types_;
  uint32_t nodes_;
};

}  // namespace

std::string ReduceExprCodeletName(std::span<const ElementType> types, uint32_t nodes) {
  std::string name = "tileprof::ReduceExpr<";
  for (ElementType type : types) name += fmt::format("{},", PoplarName(type));
  return name + fmt::format("{}>", nodes);
}

Expected<std::unique_ptr<Codelet>> MakeReduceExprCodelet(std::vector<ElementType> types,
                                                         uint32_t nodes) {
  if (types.empty() || types.size() > kMaxOperands) {
    return MakeError("reduce of {} operands (1 to {} supported)", types.size(), kMaxOperands);
  }
  if (nodes == 0 || nodes > kMaxExprNodes) {
    return MakeError("reducer of {} nodes (1 to {} supported)", nodes, kMaxExprNodes);
  }
  for (ElementType type : types) {
    if (!Supported(type))
      return MakeError("reduce of {} (f32, s32, u32, pred supported)", HloName(type));
  }
  return std::unique_ptr<Codelet>(new ReduceExprCodelet(std::move(types), nodes));
}

}  // namespace tileprof::engine
