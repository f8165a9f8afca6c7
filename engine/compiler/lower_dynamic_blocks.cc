// A dynamic-slice of a block of rows at a run-time offset, cut into column
// blocks. Mapped linearly, a tile holds part of one row of the result (or a
// few rows) and its vertex reads, for every start the slice may take, those
// columns of every row it could come from: the whole slack of the operand
// for a piece of one row. MaxText's Llama-3 8B training step takes its
// partition's 1,024 of 4,096 rows of each all-reduced gradient that way (a
// reduce-scatter written as all-reduce and dynamic-slice): each of 1,472
// tiles received 3,073 rows of its 89 K columns, 1 TB of receive buffers
// in all for a 262 MB result. Cut by columns, a tile holds all the rows of
// its few columns and reads the operand's rows of those columns once: the
// operand is received once in all. The start of a whole dimension is
// clamped to 0, so a column block is itself a dynamic-slice of the
// operand's columns, which the same vertices compute.
#include <algorithm>
#include <vector>

#include "engine/codelets/cost_model.h"
#include "engine/compiler/dot_plan.h"
#include "engine/compiler/dynamic_slice.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/memory_model.h"

namespace tileprof::engine::compiler {
namespace {

using cost::CeilDiv;

// Rows of the operand a block of `rows` result rows (from the first) reads
// for any start: per row dimension the block's extent plus its slack.
uint64_t BoxRows(const SliceRows& s, uint64_t rows) {
  const auto box = FlatRunBox(s.rows, 0, rows);
  uint64_t n = 1;
  for (size_t d = 0; d < box.size(); ++d) {
    n = SaturatingMul(n, box[d].second - box[d].first + 1 + s.slack[d]);
  }
  return n;
}

}  // namespace

uint64_t SliceBlockBytes(const SliceRows& s, uint64_t rows, uint64_t cols, uint64_t element_bytes) {
  const uint64_t box_rows = BoxRows(s, rows);
  const auto add = [](uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; };
  uint64_t bytes = add(SaturatingMul(SaturatingMul(box_rows, cols), element_bytes),
                       SaturatingMul(SaturatingMul(rows, cols), element_bytes));
  if (cols < s.width) {
    bytes = add(bytes, SaturatingMul(2 * memory::kExchangeCodePerRegion, box_rows));
  }
  return bytes;
}

std::optional<SliceBlocks> ChooseSliceBlocks(const SliceRows& s, uint64_t element_bytes,
                                             uint64_t tiles, uint64_t linear_chunk) {
  const uint64_t total_rows = Product(s.rows);
  if (s.width < 2 || total_rows == 0 || tiles < 2 || linear_chunk == 0) return std::nullopt;
  // The linear mapping: whole rows a tile, or a part of one.
  const uint64_t linear =
      linear_chunk >= s.width
          ? SliceBlockBytes(s, std::min(total_rows, CeilDiv(linear_chunk, s.width)), s.width,
                            element_bytes)
          : SliceBlockBytes(s, 1, linear_chunk, element_bytes);
  if (linear <= kMinBlockedSliceBytes) return std::nullopt;
  std::optional<SliceBlocks> best;
  uint64_t best_bytes = UINT64_MAX;
  const uint64_t most = std::min(tiles, s.width);
  for (uint64_t wanted = 2; wanted <= most;
       wanted = wanted == most ? most + 1 : std::min(most, 2 * wanted)) {
    SliceBlocks b;
    b.cols_per = CeilDiv(s.width, wanted);
    b.col_blocks = CeilDiv(s.width, b.cols_per);
    b.row_blocks = std::clamp<uint64_t>(tiles / b.col_blocks, 1, total_rows);
    b.rows_per = CeilDiv(total_rows, b.row_blocks);
    b.row_blocks = CeilDiv(total_rows, b.rows_per);
    const uint64_t bytes = SliceBlockBytes(s, b.rows_per, b.cols_per, element_bytes);
    if (bytes < best_bytes) {
      best = b;
      best_bytes = bytes;
    }
  }
  if (!best || best_bytes >= linear / 2) return std::nullopt;
  return best;
}

Expected<bool> Lowering::EmitDynamicSliceBlocks(const Tensor& out, const Tensor& base,
                                                std::span<const Tensor> starts,
                                                std::string_view name, ComputeSetId cs) {
  const std::vector<uint64_t>& dims = out.shape();
  const size_t rank = dims.size();
  // The columns: the whole dimensions after the last one sliced.
  size_t k = rank;
  while (k > 0 && dims[k - 1] == base.shape()[k - 1]) --k;
  if (k == 0 || k == rank || out.regions().size() != 1) return false;
  SliceRows s;
  s.rows.assign(dims.begin(), dims.begin() + static_cast<ptrdiff_t>(k));
  for (size_t d = 0; d < k; ++d) s.slack.push_back(base.shape()[d] - dims[d]);
  s.width = Product(std::span(dims).subspan(k));
  const ElementType type = out.element_type();
  const uint32_t tiles = graph_.target().NumTiles();
  const std::optional<SliceBlocks> b =
      ChooseSliceBlocks(s, SizeOf(type), tiles, mapper_.ChunkElements(out.NumElements(), type));
  if (!b) return false;
  Expected<const Codelet*> codelet =
      codelets_.DynamicSlice(type, starts[0].element_type(), static_cast<uint32_t>(k + 1), false);
  if (!codelet) return false;
  const uint64_t total_rows = Product(s.rows);
  const uint32_t first_tile = mapper_.TakeTiles(b->row_blocks * b->col_blocks);
  auto tile_of = [&](uint64_t rb, uint64_t cb) {
    return static_cast<uint32_t>((first_tile + rb * b->col_blocks + cb) % tiles);
  };
  // Mapped in element order: each row is col_blocks pieces.
  const TensorRegion whole = out.regions()[0];
  for (uint64_t r = 0; r < total_rows; ++r) {
    for (uint64_t cb = 0; cb < b->col_blocks; ++cb) {
      const uint64_t begin = whole.begin + r * s.width + cb * b->cols_per;
      const uint64_t end = whole.begin + r * s.width + std::min(s.width, (cb + 1) * b->cols_per);
      TILEPROF_RETURN_IF_ERROR(
          graph_.SetTileMapping(whole.variable, begin, end, tile_of(r / b->rows_per, cb)));
    }
  }
  // Each column block: the slice of the operand's columns, its result rows
  // cut in row blocks. The column dimension's start is any start: clamped
  // to 0 like the whole dimensions it stands for.
  std::vector<uint64_t> out_rows = s.rows,
                        base_rows(base.shape().begin(),
                                  base.shape().begin() + static_cast<ptrdiff_t>(k));
  out_rows.push_back(s.width);
  base_rows.push_back(s.width);
  TILEPROF_ASSIGN_OR_RETURN(Tensor out2, out.Reshape(out_rows));
  TILEPROF_ASSIGN_OR_RETURN(Tensor base2, base.Reshape(base_rows));
  std::vector<Tensor> sub_starts(starts.begin(), starts.begin() + static_cast<ptrdiff_t>(k));
  sub_starts.push_back(starts[k]);
  for (uint64_t cb = 0; cb < b->col_blocks; ++cb) {
    const uint64_t c0 = cb * b->cols_per, c1 = std::min(s.width, c0 + b->cols_per);
    TILEPROF_ASSIGN_OR_RETURN(Tensor out_block, out2.Slice(c0, c1, k));
    TILEPROF_ASSIGN_OR_RETURN(Tensor base_block, base2.Slice(c0, c1, k));
    std::vector<Run> runs;
    for (uint64_t rb = 0; rb < b->row_blocks; ++rb) {
      const uint64_t r0 = rb * b->rows_per, r1 = std::min(total_rows, r0 + b->rows_per);
      runs.push_back({r0 * (c1 - c0), (r1 - r0) * (c1 - c0), tile_of(rb, cb)});
    }
    TILEPROF_RETURN_IF_ERROR(
        AddDynamicSliceVertices(graph_, cs, **codelet, name,
                                SliceProblem{out_block.shape(), &base_block, nullptr, sub_starts},
                                out_block.Flatten(), std::move(runs)));
  }
  return true;
}

}  // namespace tileprof::engine::compiler
