// Internal to engine/codelets: the identity and the combining step of each
// ReduceOp in a compute type (numeric.h), shared by the reductions
// (reduce.cc) and the windowed reduction (window.cc).
#pragma once

#include <limits>

#include "engine/codelets/codelets.h"
#include "engine/codelets/numeric.h"

namespace tileprof::engine {

template <typename C>
C ReduceIdentity(ReduceOp op) {
  switch (op) {
    case ReduceOp::kAdd:
      return C(0);
    case ReduceOp::kMul:
      return C(1);
    case ReduceOp::kMax:
      if constexpr (numeric::kIsFloat<C>)
        return -std::numeric_limits<C>::infinity();
      else
        return std::numeric_limits<C>::lowest();
    case ReduceOp::kMin:
      if constexpr (numeric::kIsFloat<C>)
        return std::numeric_limits<C>::infinity();
      else
        return std::numeric_limits<C>::max();
    case ReduceOp::kAnd:
      return C(1);
    case ReduceOp::kOr:
      return C(0);
  }
  return C(0);
}

// Integers wrap; max and min propagate NaN (XLA's maximum/minimum); and/or
// are for pred only (Supports).
template <typename C>
C ReduceCombine(ReduceOp op, C a, C b) {
  if constexpr (numeric::kIsPred<C>) {
    return op == ReduceOp::kAnd ? (a && b) : (a || b);
  } else {
    switch (op) {
      case ReduceOp::kAdd:
        if constexpr (numeric::kIsInt<C>)
          return numeric::WrapAdd(a, b);
        else
          return a + b;
      case ReduceOp::kMul:
        if constexpr (numeric::kIsInt<C>)
          return numeric::WrapMul(a, b);
        else
          return a * b;
      case ReduceOp::kMax:
        return numeric::Max(a, b);
      case ReduceOp::kMin:
        return numeric::Min(a, b);
      default:
        return a;
    }
  }
}

}  // namespace tileprof::engine
