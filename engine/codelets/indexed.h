// Index-mapped data movement: codelets whose output element q reads an input
// element found by index arithmetic on q's coordinates. The HLO compiler
// creates them on demand (their parameter lists depend on the ranks), so
// they are factories here rather than catalogue entries.
//
// Common conventions. A vertex writes elements [first, first + |out|) of the
// row-major flattening of the whole result (parameter `first`, its low 32
// bits, then the result's dimensions `outSize<d>`; the last parameter,
// `firstHigh`, holds its high 32 bits), so the work can be split over tiles
// along the flat order. Its `in` field holds a box of the source: per source
// dimension j the coordinates [boxLo<j>, boxLo<j> + boxSize<j>), row-major;
// the compiler connects exactly the box the vertex's outputs can touch, which
// keeps the exchange volume honest. Compute checks every index against the
// box and reports an error rather than read outside it.
//
// Signed parameters (multipliers, offsets) are stored as 32-bit two's
// complement.
//
//   tileprof::Rearrange<T,I,O> / RearrangePadded<T,I,O>
//     in, [padding (scalar)], out. Source coordinate j of output coordinates
//     o is c = add<j> + mul<j> * o[src<j>] + mul2<j> * o[src2<j>]; the
//     element is padding unless c >= 0, c % div<j> == 0 and
//     c / div<j> < extent<j> (padded variant; the plain one treats that as
//     an error). Covers transpose (a permutation of src), reverse (mul -1),
//     broadcast (output dimensions no source dimension reads), strided
//     slice (mul = stride, add = start), pad (add = -low, div = interior+1)
//     and windows (a convolution's or reduce-window's patches: two output
//     coordinates per source dimension, base dilation as div).
//   tileprof::DynamicSlice<T,Idx,R>
//     in, start0..start<R-1> (scalars), out: out[o] = in[o + s] with
//     s_d = clamp(start_d, 0, inSize<d> - outSize<d>) (XLA's clamping).
//   tileprof::DynamicUpdateSlice<T,Idx,R>
//     operand (same elements as out), update, start0.., out: out[o] =
//     update[o - s] where o lies in the update's placement, else operand[o];
//     s clamped as above; update is a box in update coordinates.
//   tileprof::Iota<T>
//     out: out[q] = ((first + q) / inner) % dimSize, converted to T.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

// Code bytes. A rearrangement is a copy loop with computed addresses: a
// Copy1D (96 B) plus the coordinate walk, 160 B; the padded variant adds the
// validity test, 192 B. A dynamic slice adds the clamp of the start indices
// to a rearrangement, 192 B; the update variant a bounds test per element,
// 224 B. Iota is a Fill (a store loop) with a counter and a conversion,
// 128 B.
inline constexpr uint32_t kRearrangeCodeBytes = 160;
inline constexpr uint32_t kRearrangePaddedCodeBytes = 192;
inline constexpr uint32_t kDynamicSliceCodeBytes = 192;
inline constexpr uint32_t kDynamicUpdateSliceCodeBytes = 224;
inline constexpr uint32_t kIotaCodeBytes = 128;
// Worker cycles per output element: one load and one store (a
// rearrangement), plus one for a padding test or a placement test, plus one
// for iota's conversion. The coordinate walk is incremental (an odometer),
// so it adds no per-element multiply.
inline constexpr uint64_t kRearrangeCyclesPerElement = 2;
inline constexpr uint64_t kTestedMoveCyclesPerElement = 3;
inline constexpr uint64_t kIotaCyclesPerElement = 2;

std::string RearrangeCodeletName(ElementType type, uint32_t in_rank, uint32_t out_rank,
                                 bool padded);
std::string DynamicSliceCodeletName(ElementType type, ElementType index, uint32_t rank);
std::string DynamicUpdateSliceCodeletName(ElementType type, ElementType index, uint32_t rank);
std::string IotaCodeletName(ElementType type);

// Errors: rank 0 or above 16 (in_rank may be 0 for a scalar source), an
// index type that is not an integer, iota of pred.
Expected<std::unique_ptr<Codelet>> MakeRearrangeCodelet(ElementType type, uint32_t in_rank,
                                                        uint32_t out_rank, bool padded);
Expected<std::unique_ptr<Codelet>> MakeDynamicSliceCodelet(ElementType type, ElementType index,
                                                           uint32_t rank);
Expected<std::unique_ptr<Codelet>> MakeDynamicUpdateSliceCodelet(ElementType type,
                                                                 ElementType index, uint32_t rank);
Expected<std::unique_ptr<Codelet>> MakeIotaCodelet(ElementType type);

}  // namespace tileprof::engine
