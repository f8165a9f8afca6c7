// Internal to engine/compiler: the one box-cutting algorithm of the index
// lowerings (gather, scatter, sort, reduce-window, select-and-scatter,
// rearrangements, dynamic slices) and the runs of a mapped result it cuts.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "engine/graph/graph.h"

namespace tileprof::engine::compiler {

// A box holding flat elements [first, first + count) (count > 0) of a
// row-major tensor of `dims`: per dimension the [lo, hi] coordinates,
// exact before the first dimension where the run's ends differ, whole after.
std::vector<std::pair<uint64_t, uint64_t>> FlatRunBox(std::span<const uint64_t> dims,
                                                      uint64_t first, uint64_t count);

// A contiguous run of a result's flat elements, computed on one tile.
struct Run {
  uint64_t first;
  uint64_t count;
  uint32_t tile;
};

// The runs of `flat`'s tile mapping, in order.
Expected<std::vector<Run>> RunsOf(const Graph& graph, const Tensor& flat);

// A run crossing a boundary of an outer result dimension can need a box of
// most of the source (a window-major patches tensor whose run spans two
// window positions; a dynamic-update-slice's run spanning two rows of the
// outer dimension, whose update box is then the whole update): when the
// box (`dims`' FlatRunBox of the run, of `box_volume` source elements) holds
// more than twice what the run needs (`needed`: its elements, a dynamic
// slice's times the start positions) plus a slack of 4096 elements, the run
// is split at the boundaries of its first differing dimension and the parts,
// each then differing first in a deeper dimension, are appended to `runs`.
// False when the box is small enough or the run cannot be cut that way.
bool SplitWideRun(std::span<const uint64_t> dims,
                  std::span<const std::pair<uint64_t, uint64_t>> box, uint64_t box_volume,
                  uint64_t needed, Run run, std::vector<Run>& runs);

// A block of rows [first_row, end_row) of a flat tensor cut in rows of
// `width` elements, held (mostly) on one tile: where a plan that computes
// where the data lives (lookups, reductions over outer dimensions) reads
// them.
struct RowBlock {
  uint32_t tile;
  uint64_t first_row;
  uint64_t end_row;
  uint64_t local;  // elements of its rows mapped to that tile
};

// Each tile's piece of `flat` (mapped) owns the rows that start in it; a
// block never crosses a multiple of `group` rows (the rows of one output).
std::vector<RowBlock> RowBlocks(const Graph& graph, const Tensor& flat, uint64_t width,
                                uint64_t group = UINT64_MAX);

// A dimension of a row-major tensor: its size and element stride.
struct StridedDim {
  uint64_t size = 1, stride = 1;
};

// Per dimension of `tensor` (one region of one variable), the run of
// elements along it held by the tile of each of a few sample elements,
// averaged (found by doubling, then halving, the step): how a producer's
// plan left it. All 0 for a view of several regions or an unmapped
// element.
std::vector<uint64_t> TileRunsAlong(const Graph& graph, const Tensor& tensor,
                                    std::span<const StridedDim> dims);

inline uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

}  // namespace tileprof::engine::compiler
