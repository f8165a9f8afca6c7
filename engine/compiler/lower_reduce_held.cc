// A reduction over dimensions with output dimensions inside them ([A, R, I]
// row-major, R reduced, I > 1 inner outputs: a bias gradient summing
// [batch x sequence, features] over its rows, a mask count over the middle
// of [2, 8192, 8192]), computed where the input lives, as popops' reductions
// are: the input's tiles each reduce the whole rows (of I) they hold into
// one partial row, and the partial rows are summed into the output
// (lower_sum.cc). The [F, outputs] view of ReduceArray instead gives each
// output tile a strip of every row: one region per row and output piece
// (Llama-3.1 8B's training step: 4 million regions per such reduce, host
// memory past 16 GB). Where the tiles hold pieces of rows instead (a
// convolution's output with its channels split: each tile a range of the
// channels of its pixels), each tile reduces its piece of its rows into a
// partial row of those columns: the [F, outputs] view made a batch norm's
// statistics of ResNet-50's activations read a region per pixel, a tenth
// of its training step's exchange code.
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

// The input as [A, R, I]: outer, reduced and inner element counts.
struct HeldShape {
  uint64_t outer = 1, reduced = 1, inner = 1;
};

// [A, R, I]: the reduced dimensions one contiguous range, outputs inside;
// nullopt when the reduction is not of that form.
std::optional<HeldShape> HeldShapeOf(const Tensor& in, const std::vector<bool>& is_reduced) {
  const size_t rank = in.Rank();
  size_t first = rank, last = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (is_reduced[d]) first = std::min(first, d), last = d;
  }
  if (first == rank || last + 1 == rank) return std::nullopt;
  HeldShape s;
  for (size_t d = 0; d < rank; ++d) {
    if (d < first) {
      s.outer *= in.shape()[d];
    } else if (d <= last) {
      if (!is_reduced[d]) return std::nullopt;
      s.reduced *= in.shape()[d];
    } else {
      s.inner *= in.shape()[d];
    }
  }
  return s;
}

// A row reduction (the reduced dimensions innermost, several outputs) as
// [outputs, R, 1]: each tile reduces its pieces of each row it holds into a
// partial, and the partials are summed per output.
std::optional<HeldShape> RowShapeOf(const Tensor& in, const std::vector<bool>& is_reduced) {
  HeldShape s;
  bool reducing = true;
  for (size_t d = in.Rank(); d-- > 0;) {
    reducing = reducing && is_reduced[d];
    if (!reducing && is_reduced[d]) return std::nullopt;
    (reducing ? s.reduced : s.outer) *= in.shape()[d];
  }
  if (s.outer < 2 || s.reduced == 1) return std::nullopt;
  return s;
}

// One partial row per tile and output: a tile's pieces of one output's
// rows are read by one vertex.
struct Block {
  uint32_t tile;
  uint64_t output;
  std::vector<const RowBlock*> pieces;
  uint64_t rows = 0, local = 0;
};

// The blocks of `pieces` (rows of I), in the order of their first piece;
// each output has `reduced` rows.
std::vector<Block> BlocksOf(const std::vector<RowBlock>& pieces, uint64_t reduced) {
  std::vector<Block> blocks;
  std::map<std::pair<uint32_t, uint64_t>, size_t> block_of;
  for (const RowBlock& b : pieces) {
    const uint64_t output = b.first_row / reduced;
    auto [it, added] = block_of.try_emplace({b.tile, output}, blocks.size());
    if (added) blocks.push_back({b.tile, output, {}, 0, 0});
    Block& block = blocks[it->second];
    block.pieces.push_back(&b);
    block.rows += b.end_row - b.first_row;
    block.local += b.local;
  }
  return blocks;
}

// Whether the blocks' plan has a tile receive or hold fewer elements for
// the op than the [F, outputs] view, at most (`run`: the elements of a run
// of the linearly mapped output).
bool HeldIsCheaper(const std::vector<Block>& blocks, const HeldShape& s, uint64_t run) {
  // Elements a tile receives or holds for the op at most, as for lookups
  // (docs/memory-model.md, "Lowering choices"): the [F, outputs] view gives
  // an output run every row's strip; here a block's tile holds a partial
  // row (two with a two-stage sum) and receives the part of its rows
  // mapped elsewhere, and an output run's tile the run from each block (or
  // group of blocks) of its output.
  // (Outputs of one element: an output run's tile reads its rows whole.)
  const uint64_t unplanned = SaturatingMul(s.reduced, s.inner == 1 ? run : std::min(run, s.inner));
  const uint64_t per_output = (blocks.size() + s.outer - 1) / s.outer;
  const size_t fan_in = SumFanIn(per_output);
  const uint64_t partial = s.inner * (fan_in < per_output ? 2 : 1);
  uint64_t planned = SaturatingMul((per_output + fan_in - 1) / fan_in, std::min(run, s.inner));
  for (const Block& b : blocks) {
    planned = std::max(planned, b.rows * s.inner - b.local + partial);
  }
  return planned < unplanned;
}

// Each block's vertex of `reduce`, on the block's tile, reducing the rows
// it holds into its row of `partials` (mapped there too); the partial rows,
// flat, by block.
Expected<std::vector<Tensor>> EmitPartialRows(Graph& graph, ComputeSetId cs, const Codelet& reduce,
                                              std::string_view name,
                                              const std::vector<Block>& blocks,
                                              const Tensor& partials, const Tensor& flat_in,
                                              uint64_t inner) {
  std::vector<Tensor> partial_rows;
  std::vector<Tensor> held;
  for (size_t s = 0; s < blocks.size(); ++s) {
    const Block& b = blocks[s];
    TILEPROF_ASSIGN_OR_RETURN(Tensor row, partials.Slice(s, s + 1));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(row, b.tile));
    held.clear();
    for (const RowBlock* piece : b.pieces) {
      TILEPROF_ASSIGN_OR_RETURN(held.emplace_back(),
                                flat_in.Slice(piece->first_row * inner, piece->end_row * inner));
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor rows, Tensor::Concat(held));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, reduce, name));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, b.tile));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["partials"], rows));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], row.Flatten()));
    partial_rows.push_back(row.Flatten());
  }
  return partial_rows;
}

// A tile's elements of one output's rows in one column range [begin, end)
// of I: whole rows where the tile holds whole rows, else the same piece of
// each row (a convolution's output with its channels split holds a range
// of channels of each of its pixels).
struct ColumnBlock {
  uint32_t tile;
  uint64_t output;
  uint64_t begin, end;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // of the flat input
  uint64_t at = 0;                                    // its partial row's offset
};

// At most this many column blocks per tile of the target: past it the
// input is too fragmented for a vertex per block.
constexpr uint64_t kMaxColumnBlocksPerTile = 16;

// The column blocks of `flat` ([A, R, I] flat, mapped), in the order of
// their first element; nullopt past kMaxColumnBlocksPerTile a tile.
std::optional<std::vector<ColumnBlock>> ColumnBlocksOf(const Graph& graph, const Tensor& flat,
                                                       const HeldShape& s) {
  std::vector<ColumnBlock> blocks;
  std::map<std::tuple<uint32_t, uint64_t, uint64_t, uint64_t>, size_t> block_of;
  const uint64_t limit = kMaxColumnBlocksPerTile * graph.target().NumTiles();
  uint64_t position = 0;
  for (const MappedRegion& piece : graph.MapRegions(flat)) {
    uint64_t a = position;
    const uint64_t b = position + piece.region.size();
    position = b;
    while (a < b) {
      const uint64_t row = a / s.inner, column = a % s.inner;
      const uint64_t output = row / s.reduced;
      uint64_t begin = column, end = s.inner, next = 0;
      if (column == 0 && b - a >= s.inner) {
        // Whole rows, up to the output's last.
        const uint64_t rows = std::min((b - a) / s.inner, (output + 1) * s.reduced - row);
        next = a + rows * s.inner;
      } else {
        end = std::min(s.inner, column + (b - a));
        next = a + (end - begin);
      }
      auto [it, added] = block_of.try_emplace({*piece.tile, output, begin, end}, blocks.size());
      if (added) {
        if (blocks.size() == limit) return std::nullopt;
        blocks.push_back({*piece.tile, output, begin, end, {}, 0});
      }
      auto& ranges = blocks[it->second].ranges;
      if (!ranges.empty() && ranges.back().second == a)
        ranges.back().second = next;
      else
        ranges.emplace_back(a, next);
      a = next;
    }
  }
  return blocks;
}

// A job per output and range of columns between its blocks' bounds: the
// partial rows of the blocks covering the range, as (block, first column).
struct ColumnJob {
  uint64_t output, begin, end;
  std::vector<const ColumnBlock*> blocks;
};

// The jobs of `blocks`; nullopt when the blocks' bounds cut their partial
// rows into more than kMaxPiecesPerBlock pieces on average (rows mapped
// across tiles at arbitrary columns: the [F, outputs] view is cheaper).
constexpr uint64_t kMaxPiecesPerBlock = 2;
// Rows a column block reduces on average, at least.
constexpr uint64_t kMinRowsPerColumnBlock = 4;
std::optional<std::vector<ColumnJob>> ColumnJobsOf(const std::vector<ColumnBlock>& blocks,
                                                   uint64_t outer) {
  std::vector<std::vector<const ColumnBlock*>> by_output(outer);
  for (const ColumnBlock& b : blocks) by_output[b.output].push_back(&b);
  std::vector<ColumnJob> jobs;
  std::vector<uint64_t> bounds;
  std::vector<const ColumnBlock*> active;
  uint64_t pieces = 0;
  for (uint64_t a = 0; a < outer; ++a) {
    std::vector<const ColumnBlock*>& list = by_output[a];
    bounds.clear();
    for (const ColumnBlock* b : list) bounds.insert(bounds.end(), {b->begin, b->end});
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    // A sweep over the bounds: no bound lies inside a range between two,
    // so the blocks open at its start cover all of it (work in proportion
    // to the pieces, which are bounded).
    std::stable_sort(list.begin(), list.end(), [](const ColumnBlock* x, const ColumnBlock* y) {
      return x->begin < y->begin;
    });
    active.clear();
    size_t next = 0;
    for (size_t k = 0; k + 1 < bounds.size(); ++k) {
      const uint64_t x = bounds[k];
      std::erase_if(active, [x](const ColumnBlock* b) { return b->end <= x; });
      while (next < list.size() && list[next]->begin <= x) active.push_back(list[next++]);
      pieces += active.size();
      if (pieces > kMaxPiecesPerBlock * blocks.size()) return std::nullopt;
      jobs.push_back(ColumnJob{a, x, bounds[k + 1], active});
    }
  }
  return jobs;
}

// Whether the column blocks' plan has a tile receive or hold fewer
// elements than the [F, outputs] view, at most (`run`: the elements of a
// run of the linearly mapped output), as HeldIsCheaper: there an output
// run's tile reads a strip of every row; here a block's tile holds its
// partial row (two with a two-stage sum) and a job's target tile receives
// a run from each block or group.
bool ColumnsAreCheaper(const std::vector<ColumnBlock>& blocks, const std::vector<ColumnJob>& jobs,
                       const HeldShape& s, uint64_t run) {
  const uint64_t unplanned = SaturatingMul(s.reduced, std::min(run, s.inner));
  uint64_t planned = 0;
  bool two_stages = false;
  for (const ColumnJob& job : jobs) {
    const size_t fan_in = SumFanIn(job.blocks.size());
    two_stages = two_stages || fan_in < job.blocks.size();
    const uint64_t sums = (job.blocks.size() + fan_in - 1) / fan_in;
    planned = std::max(planned, SaturatingMul(sums, std::min(run, job.end - job.begin)));
  }
  for (const ColumnBlock& b : blocks)
    planned = std::max(planned, (b.end - b.begin) * (two_stages ? 2 : 1));
  return planned < unplanned;
}

}  // namespace

// The rows of an input whose tiles hold pieces of rows (a convolution's
// output with its channels split): each block's vertex reduces its piece of
// its rows into a partial row of its columns, on its tile, and each column
// range of an output is the sum of the partial rows of the blocks covering
// it (SumRows).
Expected<std::optional<Value>> Lowering::ReduceColumnsWhereHeld(
    const hlo::Instruction& instruction, const Tensor& flat_in, uint64_t outer, uint64_t reduced,
    uint64_t inner, ReduceOp op, const hlo::Shape& shape, const FillFn& fill_init,
    program::Sequence& program) {
  const HeldShape form{outer, reduced, inner};
  std::optional<std::vector<ColumnBlock>> found = ColumnBlocksOf(graph_, flat_in, form);
  if (!found) return std::optional<Value>();
  std::vector<ColumnBlock>& blocks = *found;
  uint64_t width = 0;
  for (ColumnBlock& b : blocks) {
    b.at = width;
    width += b.end - b.begin;
  }
  // Blocks of about a row each (a tensor already reduced along its rows,
  // spread a few elements a tile: mobilenet_v2's batch norm sums over N
  // after H and W) would copy the data into partials, a vertex a tile, for
  // a view that reads a strip of each of a hundred rows (80,000 vertices
  // for its batch norms against 1,000, 5% of its compile).
  if (width * kMinRowsPerColumnBlock > flat_in.NumElements()) return std::optional<Value>();
  const std::optional<std::vector<ColumnJob>> column_jobs = ColumnJobsOf(blocks, outer);
  if (!column_jobs ||
      !ColumnsAreCheaper(blocks, *column_jobs, form,
                         mapper_.ChunkElements(outer * inner, flat_in.element_type()))) {
    return std::optional<Value>();
  }
  const ElementType type = flat_in.element_type();
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* reduce, GetReduceCodelet(op, type, false));
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor partials,
      NewTensor(type, {width}, fmt::format("{}/partials", instruction.name()), false));
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), true));
  if (out.NumElements() != outer * inner)
    return MakeError("{}: result size", Describe(instruction));
  const ComputeSetId cs = AddComputeSet(fmt::format("{}/partials", instruction.name()), program);
  std::vector<Tensor> held;
  for (const ColumnBlock& b : blocks) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor row, partials.Slice(b.at, b.at + (b.end - b.begin)));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(row, b.tile));
    held.clear();
    for (const auto& [begin, end] : b.ranges) {
      TILEPROF_ASSIGN_OR_RETURN(held.emplace_back(), flat_in.Slice(begin, end));
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor rows, Tensor::Concat(held));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *reduce, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, b.tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["partials"], rows));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], row));
  }
  const Tensor flat_out = out.Flatten();
  std::vector<SumJob> jobs(column_jobs->size());
  for (size_t k = 0; k < jobs.size(); ++k) {
    const ColumnJob& c = (*column_jobs)[k];
    SumJob& job = jobs[k];
    TILEPROF_ASSIGN_OR_RETURN(job.target,
                              flat_out.Slice(c.output * inner + c.begin, c.output * inner + c.end));
    for (const ColumnBlock* b : c.blocks) {
      const uint64_t at = b->at + (c.begin - b->begin);
      TILEPROF_ASSIGN_OR_RETURN(job.rows.emplace_back(),
                                partials.Slice(at, at + (c.end - c.begin)));
      job.tiles.push_back(b->tile);
    }
  }
  if (fill_init) TILEPROF_RETURN_IF_ERROR(fill_init(out));
  RowSum how{op, type, fill_init != nullptr, nullptr};
  TILEPROF_RETURN_IF_ERROR(SumRows(jobs, how, instruction.name(), program));
  return std::optional(Value::Array(out));
}

Expected<std::optional<Value>> Lowering::ReduceWhereHeld(
    const hlo::Instruction& instruction, const Tensor& in, const std::vector<bool>& is_reduced,
    ReduceOp op, const hlo::Shape& shape, const FillFn& fill_init, program::Sequence& program) {
  const auto none = [] { return std::optional<Value>(); };
  std::optional<HeldShape> held_shape = HeldShapeOf(in, is_reduced);
  const bool rows = !held_shape;
  if (rows) held_shape = RowShapeOf(in, is_reduced);
  if (!held_shape) return none();
  const auto [outer, reduced, inner] = *held_shape;
  if ((inner < 2 && !rows) || reduced < 2) return none();
  const Tensor flat_in = in.Flatten();
  for (const MappedRegion& piece : graph_.MapRegions(flat_in)) {
    if (!piece.tile) return none();
  }
  const std::vector<RowBlock> pieces = RowBlocks(graph_, flat_in, inner, reduced);
  // Rows mostly held by the tile that owns them: a layout splitting rows
  // across tiles (a convolution's output, channels split) would have each
  // owner receive most of its rows; such inputs keep the [F, outputs] view.
  uint64_t local = 0;
  for (const RowBlock& b : pieces) local += b.local;
  if (2 * local < in.NumElements()) {
    return ReduceColumnsWhereHeld(instruction, flat_in, outer, reduced, inner, op, shape, fill_init,
                                  program);
  }
  const std::vector<Block> blocks = BlocksOf(pieces, reduced);
  const uint64_t run = mapper_.ChunkElements(outer * inner, in.element_type());
  if (!HeldIsCheaper(blocks, *held_shape, run)) return none();

  const ElementType type = in.element_type();
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* reduce, GetReduceCodelet(op, type, false));
  TILEPROF_ASSIGN_OR_RETURN(Tensor partials,
                            NewTensor(type, {blocks.size(), inner},
                                      fmt::format("{}/partials", instruction.name()), false));
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), true));
  if (out.NumElements() != outer * inner)
    return MakeError("{}: result size", Describe(instruction));
  const Tensor flat_out = out.Flatten();
  std::vector<SumJob> jobs(outer);
  for (uint64_t a = 0; a < outer; ++a) {
    TILEPROF_ASSIGN_OR_RETURN(jobs[a].target, flat_out.Slice(a * inner, (a + 1) * inner));
  }
  const ComputeSetId cs = AddComputeSet(fmt::format("{}/partials", instruction.name()), program);
  TILEPROF_ASSIGN_OR_RETURN(
      std::vector<Tensor> partial_rows,
      EmitPartialRows(graph_, cs, *reduce, instruction.name(), blocks, partials, flat_in, inner));
  for (size_t s = 0; s < blocks.size(); ++s) {
    SumJob& job = jobs[blocks[s].output];
    job.rows.push_back(std::move(partial_rows[s]));
    job.tiles.push_back(blocks[s].tile);
  }
  if (fill_init) TILEPROF_RETURN_IF_ERROR(fill_init(out));
  RowSum how{op, type, fill_init != nullptr, nullptr};
  TILEPROF_RETURN_IF_ERROR(SumRows(jobs, how, instruction.name(), program));
  return std::optional(Value::Array(out));
}

}  // namespace tileprof::engine::compiler
