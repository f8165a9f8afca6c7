// Internal to engine/compiler: evaluation of small scalar computations (a
// sort comparator) on given parameter values, so the lowering can check
// what order a comparator implements by probing it rather than trusting
// its shape.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "engine/hlo/module.h"

namespace tileprof::engine::compiler {

// A scalar of an HLO type: the value's bits (two's complement for integers
// in their width, IEEE bits for f32/f64, 0/1 for pred).
struct Scalar {
  hlo::PrimitiveType type = hlo::PrimitiveType::kInvalid;
  uint64_t bits = 0;

  static Scalar F32(float v);
  static Scalar F64(double v);
  static Scalar Int(hlo::PrimitiveType type, int64_t v);
};

// The value of `instruction` with parameter i bound to params[i]. Supports
// parameter, constant, compare (incl. type=TOTALORDER), select,
// bitcast-convert, convert, add, subtract, multiply, negate, and, or, not
// on pred, s8..s64, u8..u64, f32 and f64 scalars; nullopt for anything else.
std::optional<Scalar> EvaluateScalar(const hlo::Instruction& instruction,
                                     std::span<const Scalar> params);

}  // namespace tileprof::engine::compiler
