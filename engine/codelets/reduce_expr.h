// A reduction whose reducer is a small computation rather than one binary
// op: XLA's variadic reduce (an argmax's (value, index) pairs) and reducers
// such as a sum of squares. The HLO compiler creates it on demand.
//
//   tileprof::ReduceExpr<T0,..,Tk-1,N>
//     in0..in<k-1> (each P x M elements, partial-major, as
//     popops::Reduce's partials), init0..init<k-1> (scalars), out0..out<k-1>
//     (M elements each): out_i[j] is the reducer folded over p = 0..P-1,
//     from (init_0, ..), with (acc_0.., in_0[p * M + j], ..) as arguments.
//     The reducer is an expression of N nodes held in the vertex's
//     parameters (node<n>: five words op, type, a, b, c, see ExprOp), its
//     results the registers named by result<i>. Node n writes register n;
//     parameter nodes read the 2k arguments (accumulators first).
//
// The codelet interprets the expression; its cycle estimate is that of the
// compiled loop it stands for (one cycle per node and element, plus the
// loads and stores), which is what Poplar's codelet for a known reducer
// would cost.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

enum class ExprOp : uint32_t {
  kParameter = 0,  // a: argument number
  kConstant,       // a: the value's 32 bits (f32 bits, s32/u32, pred 0/1)
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kMaximum,
  kMinimum,
  kAnd,
  kOr,
  kXor,
  kNot,
  kNegate,
  kAbs,
  kCompare,  // c: 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE
  kSelect,   // a ? b : c
  kCount
};
inline constexpr uint32_t kExprWordsPerNode = 5;

// Code bytes: the interpreter loop and its table of per-type operations,
// 512 B. Cycles: per node and input element 1, per input element a load
// (1 per operand), per output element a store and the init (2).
inline constexpr uint32_t kReduceExprCodeBytes = 512;
inline constexpr uint64_t kReduceExprCyclesPerNode = 1;
inline constexpr uint64_t kReduceExprCyclesPerOutput = 2;
// Nodes a reducer may have (its parameters hold 5 words each).
inline constexpr uint32_t kMaxExprNodes = 64;

std::string ReduceExprCodeletName(std::span<const ElementType> types, uint32_t nodes);
// Errors: no operands, more than 8, nodes outside [1, kMaxExprNodes], an
// element type other than f32, s32, u32 and pred.
Expected<std::unique_ptr<Codelet>> MakeReduceExprCodelet(std::vector<ElementType> types,
                                                         uint32_t nodes);

}  // namespace tileprof::engine
