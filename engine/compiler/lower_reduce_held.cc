// A reduction over dimensions with output dimensions inside them ([A, R, I]
// row-major, R reduced, I > 1 inner outputs: a bias gradient summing
// [batch x sequence, features] over its rows, a mask count over the middle
// of [2, 8192, 8192]), computed where the input lives, as popops' reductions
// are: the input's tiles each reduce the whole rows (of I) they hold into
// one partial row, and the partial rows are summed into the output
// (lower_sum.cc). The [F, outputs] view of ReduceArray instead gives each
// output tile a strip of every row: one region per row and output piece
// (Llama-3.1 8B's training step: 4 million regions per such reduce, host
// memory past 16 GB).
#include <map>

#include <fmt/format.h>

#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {

Expected<std::optional<Value>> Lowering::ReduceWhereHeld(
    const hlo::Instruction& instruction, const Tensor& in, const std::vector<bool>& is_reduced,
    ReduceOp op, const hlo::Shape& shape, const FillFn& fill_init, program::Sequence& program) {
  const auto none = [] { return std::optional<Value>(); };
  // [A, R, I]: the reduced dimensions one contiguous range, outputs inside.
  const size_t rank = in.Rank();
  size_t first = rank, last = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (is_reduced[d]) first = std::min(first, d), last = d;
  }
  if (first == rank || last + 1 == rank) return none();
  uint64_t outer = 1, reduced = 1, inner = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (d < first) {
      outer *= in.shape()[d];
    } else if (d <= last) {
      if (!is_reduced[d]) return none();
      reduced *= in.shape()[d];
    } else {
      inner *= in.shape()[d];
    }
  }
  if (inner < 2 || reduced < 2) return none();
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
  if (2 * local < in.NumElements()) return none();
  // One partial row per tile and output: a tile's pieces of one output's
  // rows are read by one vertex.
  struct Block {
    uint32_t tile;
    uint64_t output;
    std::vector<const RowBlock*> pieces;
    uint64_t rows = 0, local = 0;
  };
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
  // Elements a tile receives or holds for the op at most, as for lookups
  // (docs/memory-model.md, "Lowering choices"): the [F, outputs] view gives
  // an output run every row's strip; here a block's tile holds a partial
  // row (two with a two-stage sum) and receives the part of its rows
  // mapped elsewhere, and an output run's tile the run from each block (or
  // group of blocks) of its output.
  const uint64_t run = mapper_.ChunkElements(outer * inner, in.element_type());
  const uint64_t unplanned = SaturatingMul(reduced, std::min(run, inner));
  const uint64_t per_output = (blocks.size() + outer - 1) / outer;
  const size_t fan_in = SumFanIn(per_output);
  const uint64_t partial = inner * (fan_in < per_output ? 2 : 1);
  uint64_t planned = SaturatingMul((per_output + fan_in - 1) / fan_in, std::min(run, inner));
  for (const Block& b : blocks) {
    planned = std::max(planned, b.rows * inner - b.local + partial);
  }
  if (planned >= unplanned) return none();

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
  std::vector<Tensor> held;
  for (size_t s = 0; s < blocks.size(); ++s) {
    const Block& b = blocks[s];
    TILEPROF_ASSIGN_OR_RETURN(Tensor row, partials.Slice(s, s + 1));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(row, b.tile));
    held.clear();
    for (const RowBlock* piece : b.pieces) {
      TILEPROF_ASSIGN_OR_RETURN(held.emplace_back(),
                                flat_in.Slice(piece->first_row * inner, piece->end_row * inner));
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor rows, Tensor::Concat(held));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *reduce, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, b.tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["partials"], rows));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], row.Flatten()));
    SumJob& job = jobs[b.output];
    job.rows.push_back(row.Flatten());
    job.tiles.push_back(b.tile);
  }
  if (fill_init) TILEPROF_RETURN_IF_ERROR(fill_init(out));
  RowSum how{op, type, fill_init != nullptr, nullptr};
  TILEPROF_RETURN_IF_ERROR(SumRows(jobs, how, instruction.name(), program));
  return std::optional(Value::Array(out));
}

}  // namespace tileprof::engine::compiler
