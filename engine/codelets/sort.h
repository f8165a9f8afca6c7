// XLA sort as an executable codelet, created on demand by the compiler.
//
//   tileprof::Sort<rank,key,order,T0,...,Tn-1>
//     in0..in<n-1> (the same box of every operand: per dimension
//     [boxLo<d>, boxLo<d> + boxSize<d>), the sorted dimension whole),
//     out0..out<n-1> (the same flat run [first, first + |out0|) of every
//     result). Parameters: first, size<d> (the common shape), dim (the
//     sorted dimension), boxLo<d>, boxSize<d>. Every line
//     along `dim` that the run touches is sorted by operand `key` with a
//     stable merge sort, and the run of each result is gathered through
//     the line's permutation. `order` is the comparator:
//       lt, gt             compare(a, b), direction=LT / GT (a NaN compares
//                          false both ways, so it keeps its place relative
//                          to what it is tied with)
//       lt_total, gt_total type=TOTALORDER: -NaN < -inf < ... < -0 < +0 <
//                          ... < +inf < +NaN
//       lt_nanlast, gt_nanlast  jax's float comparator (NaNs canonicalised
//                          and placed last, -0 == +0, then LT / GT)
//     A stable sort serves is_stable=false too (any order is allowed).
//
//   tileprof::SortMerge<key,order,T0,...,Tn-1>
//     a0..a<n-1>, b0..b<n-1> (two sorted blocks, a before b), out0..out<n-1>.
//     Parameter: upper. The stable merge of a and b by operand `key` (a
//     tie takes a's element first); the vertex writes its first |out|
//     elements (upper = 0) or its last |out| (upper = 1). One side of a
//     merge-split step of a sort spread over tiles (the compiler's
//     LowerSpreadSort): the tile of a keeps the lower block, b's the upper.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

enum class SortOrder : uint8_t { kLt, kGt, kLtTotal, kGtTotal, kLtNanLast, kGtNanLast };
std::string_view SortOrderName(SortOrder order);
std::optional<SortOrder> ParseSortOrder(std::string_view name);

// Code bytes: a merge sort of a permutation (the merge loop, the key
// compare, the line walk) plus the gather of every result, 384 B.
inline constexpr uint32_t kSortCodeBytes = 384;
// Worker cycles per comparison of the merge sort (two key loads through the
// permutation, the compare, the move): 4; per output element gathered
// through the permutation (load, store): 2.
inline constexpr uint64_t kSortCyclesPerComparison = 4;
inline constexpr uint64_t kSortCyclesPerElement = 2;

// Code bytes of the merge: the two-way merge loop and the copy of every
// operand, 192 B.
inline constexpr uint32_t kSortMergeCodeBytes = 192;

std::string SortCodeletName(uint32_t rank, uint32_t key, SortOrder order,
                            std::span<const ElementType> types);

// Errors: rank outside [1, 16], no operands or more than 16, key beyond the
// operands, a total or jax order on a non-float key.
Expected<std::unique_ptr<Codelet>> MakeSortCodelet(uint32_t rank, uint32_t key, SortOrder order,
                                                   std::vector<ElementType> types);

std::string SortMergeCodeletName(uint32_t key, SortOrder order, std::span<const ElementType> types);
// Errors: as MakeSortCodelet's, but for the rank.
Expected<std::unique_ptr<Codelet>> MakeSortMergeCodelet(uint32_t key, SortOrder order,
                                                        std::vector<ElementType> types);

}  // namespace tileprof::engine
