// XLA gather and scatter as executable codelets. Like the index-mapped
// codelets (indexed.h) the compiler creates them on demand, per element
// types and ranks; a vertex writes the flat run [first, first + |out|) of
// the row-major result and reads a box of the operand (gather) or updates
// (scatter) — per dimension [boxLo, boxLo + boxSize), row-major — and a box
// of the indices, [idxBoxLo, idxBoxLo + idxBoxSize): the index vectors of
// its run's batch (scatter) coordinates, the index vector dimension whole
// (the simulator gathers a fragmented box into one span, and the exchange
// counts it). Reading outside either box is an error.
//
// Dimension numbers travel as parameters. "Source" codes say where a
// coordinate comes from: a value v < opRank names operand dimension v (an
// offset / window dimension), v >= opRank names indices dimension
// v - opRank (a batch / scatter dimension). "Start" codes say how operand
// dimension j's start is found: 0 none (start 0), c + 1 component c of the
// index vector, kStartFromBatch + k the batch coordinate of indices
// dimension k (operand_batching_dims).
//
//   tileprof::Gather<T,Idx,opRank,idxRank,outRank>
//     operand, indices, out. Parameters: first, outSize<d>, opSize<j>,
//     idxSize<k>, indexVectorDim (idxRank: the implicit trailing 1),
//     outSrc<d>, start<j>, sliceSize<j>, opBoxLo<j>, opBoxSize<j>,
//     idxBoxLo<k>, idxBoxSize<k>. Starts
//     are clamped to
//     [0, opSize<j> - sliceSize<j>] as XLA does.
//   tileprof::Scatter<T,Idx,combiner,opRank,idxRank,updRank>
//     operand (the elements of out), indices, updates, out. Parameters:
//     first, opSize<j>, idxSize<k>, updSize<u>, indexVectorDim, updSrc<u>,
//     start<j>, updBoxLo<u>, updBoxSize<u>, idxBoxLo<k>, idxBoxSize<k>.
//     out = operand, then every
//     update element of the box in row-major
//     update order is combined into out: out[i] = combiner(out[i], update)
//     (assign: the update). A window whose start is outside
//     [0, opSize<j> - windowSize<j>] in any dimension is skipped whole, as
//     XLA does. Applying updates in update order makes duplicate indices
//     deterministic (the last assignment wins; sums are in update order).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

inline constexpr uint32_t kStartFromBatch = 1u << 16;

enum class ScatterCombiner : uint8_t { kAssign, kAdd, kMul, kMax, kMin, kAnd, kOr };
std::string_view ScatterCombinerName(ScatterCombiner combiner);
std::optional<ScatterCombiner> ParseScatterCombiner(std::string_view name);

// Code bytes: a gather is a rearrangement (160 B) plus the index loads and
// the clamp, 256 B; a scatter adds the bounds test of the window and the
// combiner, 320 B.
inline constexpr uint32_t kGatherCodeBytes = 256;
inline constexpr uint32_t kScatterCodeBytes = 320;
// Worker cycles per output element of a gather: one load and one store, one
// index load and one clamp per component of the index vector (counted as 2
// per element, vectors of one or two components being the common case).
inline constexpr uint64_t kGatherCyclesPerElement = 4;
// A scatter vertex copies its run (2 cycles per element) and visits every
// update element: index load, window bounds test, range test (3 cycles),
// plus the combine (load, op, store: 3) for the ones in its run; counted as
// 3 per update plus 5 per output element (the combine bounded by the run).
inline constexpr uint64_t kScatterCyclesPerUpdate = 3;
inline constexpr uint64_t kScatterCyclesPerElement = 5;

std::string GatherCodeletName(ElementType type, ElementType index, uint32_t op_rank,
                              uint32_t idx_rank, uint32_t out_rank);
std::string ScatterCodeletName(ElementType type, ElementType index, ScatterCombiner combiner,
                               uint32_t op_rank, uint32_t idx_rank, uint32_t upd_rank);

// Errors: ranks outside [0, 16] (operand rank at least 1), index types that
// are not integers, and/or on a non-pred type or arithmetic on pred.
Expected<std::unique_ptr<Codelet>> MakeGatherCodelet(ElementType type, ElementType index,
                                                     uint32_t op_rank, uint32_t idx_rank,
                                                     uint32_t out_rank);
Expected<std::unique_ptr<Codelet>> MakeScatterCodelet(ElementType type, ElementType index,
                                                      ScatterCombiner combiner, uint32_t op_rank,
                                                      uint32_t idx_rank, uint32_t upd_rank);

}  // namespace tileprof::engine
