// Internal to engine/compiler: the vertices of a dynamic-slice or
// dynamic-update-slice (lower_index.cc) and the plan that cuts a large
// dynamic-slice into column blocks (lower_dynamic_blocks.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/runs.h"
#include "engine/graph/graph.h"

namespace tileprof::engine::compiler {

// One dynamic-slice (or update) as its vertices see it: the result's
// dimensions, the operand, the update (null for a slice) and one start
// scalar per dimension.
struct SliceProblem {
  std::span<const uint64_t> dims;
  const Tensor* base = nullptr;
  const Tensor* update = nullptr;
  std::span<const Tensor> starts;
};

// One vertex of `codelet` per run of `flat_out` (the result's flat
// elements, `runs` of it with their tiles), each reading the box of the
// operand (the update) its outputs can touch for any start; a run whose box
// is much wider than it needs is split (SplitWideRun).
Status AddDynamicSliceVertices(Graph& graph, ComputeSetId cs, const Codelet& codelet,
                               std::string_view name, const SliceProblem& problem,
                               const Tensor& flat_out, std::vector<Run> runs);

// A dynamic-slice seen as rows and columns: the dimensions up to the last
// one the slice cuts are the rows (`rows` of the result, each dimension
// with its slack, operand minus result), the whole dimensions after them
// the columns (`width` elements, the same in the operand and the result).
struct SliceRows {
  std::vector<uint64_t> rows;   // the result's row dimensions
  std::vector<uint64_t> slack;  // per row dimension: operand minus result
  uint64_t width = 1;
};

// The result cut into row_blocks x col_blocks blocks of at most `rows_per`
// rows (flat over the row dimensions) and `cols_per` columns, one tile
// each.
struct SliceBlocks {
  uint64_t row_blocks = 1, col_blocks = 1;
  uint64_t rows_per = 1, cols_per = 1;
};

// Bytes one tile spends on a block of `rows` rows and `cols` columns: the
// box of the operand it reads for any start (every start position of its
// rows, in its columns), its part of the result, and the exchange code of
// the box's rows (one region each on the receiver and on the sender) when
// the columns are not whole rows of the operand.
uint64_t SliceBlockBytes(const SliceRows& s, uint64_t rows, uint64_t cols, uint64_t element_bytes);

// The column blocks that cost a tile the fewest bytes (SliceBlockBytes) on
// `tiles` tiles, or nullopt when the linear mapping (`linear_chunk`
// elements a tile, whole rows or part of one) costs less than twice as
// much or at most kMinBlockedSliceBytes: cutting the columns only pays when
// the slice's slack is large against the rows a tile holds (a block of a
// long operand taken at a run-time offset: a batch of a dataset, the
// partition's share after an all-reduce).
std::optional<SliceBlocks> ChooseSliceBlocks(const SliceRows& s, uint64_t element_bytes,
                                             uint64_t tiles, uint64_t linear_chunk);

inline constexpr uint64_t kMinBlockedSliceBytes = 16 * 1024;

}  // namespace tileprof::engine::compiler
