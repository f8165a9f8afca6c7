// Window codelets the HLO compiler creates on demand (their parameter lists
// depend on the rank), like engine/codelets/indexed.h, whose conventions
// (parameter `first`, `outSize<d>`, fields holding boxes of their sources)
// they share.
//
//   tileprof::SelectAndScatter<T,R>
//     operand (a box of the operand), source (a box of the source), init
//     (scalar), out: XLA's select-and-scatter, one output element at a time.
//     Parameter `select` is the select computation's comparison of the
//     current selection a with a candidate b (0 GE, 1 GT, 2 LE, 3 LT); per
//     dimension d: srcExtent<d> (source size), window<d>, stride<d>,
//     padLo<d>, opLo<d>/opSize<d> and srcLo<d>/srcSize<d> (the boxes).
//     out[q] = init + the source elements of every window that contains q
//     and selects q, in row-major source order. A window's selection is its
//     first element inside the operand (padding is never selected), then
//     each later element b replaces the selection a unless select(a, b)
//     holds: ties keep the earlier element, as XLA does. The scatter
//     computation is an add.
//
//   tileprof::ReduceWindow<T,R>
//     operand (a box of the operand), init (scalar), out: XLA's reduce-window
//     with a binary reducer (parameter `op`, a ReduceOp), one output element
//     at a time, reading the operand box directly (no patches tensor).
//     Parameters: first and firstHi (the first output element's flat index,
//     low and high 32 bits), op, outSize<d>, then per dimension d: extent<d>
//     (the operand's size), window<d>, stride<d>, padLo<d> (signed),
//     baseDil<d>, winDil<d>, opLo<d>/opSize<d> (the box). out[o] = init
//     combined with each window position in row-major window order, a
//     padding position or a base-dilation hole counting as init (the
//     padding value XLA defines); f16 and bf16 combine in f32 and round once.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

// Code bytes: the window walk of a padded rearrangement (192 B) twice (the
// windows that contain an output, the elements of each window) plus the
// comparison and the add, 320 B.
inline constexpr uint32_t kSelectAndScatterCodeBytes = 320;
// Worker cycles: per window element examined a load and a compare (2), per
// output element a load of init, a store and the window set-up (4).
inline constexpr uint64_t kSelectCyclesPerCompare = 2;
inline constexpr uint64_t kSelectCyclesPerElement = 4;

// Code bytes: the window walk (192 B) and the combining step: 256 B.
inline constexpr uint32_t kReduceWindowCodeBytes = 256;
// Worker cycles: per window element a load and the op (2), per output
// element the window set-up, the init and a store (4).
inline constexpr uint64_t kReduceWindowCyclesPerWindowElement = 2;
inline constexpr uint64_t kReduceWindowCyclesPerElement = 4;

enum class SelectDirection : uint32_t { kGe = 0, kGt = 1, kLe = 2, kLt = 3 };

std::string SelectAndScatterCodeletName(ElementType type, uint32_t rank);
// Errors: rank 0 or above 16, pred or a complex type.
Expected<std::unique_ptr<Codelet>> MakeSelectAndScatterCodelet(ElementType type, uint32_t rank);

std::string ReduceWindowCodeletName(ElementType type, uint32_t rank);
// Errors: rank 0 or above 16.
Expected<std::unique_ptr<Codelet>> MakeReduceWindowCodelet(ElementType type, uint32_t rank);

}  // namespace tileprof::engine
