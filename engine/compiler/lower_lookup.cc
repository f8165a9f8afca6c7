// A planned gather of whole rows of a table: the embedding lookup
// (jnp.take(table, ids, axis=0), nn.Embed), in the spirit of popops'
// multiSlice over a dictionary split across tiles. The unplanned gather
// (lower_gather.cc) gives each tile run of the result the box of the table
// its run can touch for any index: every row, so each tile receives a
// column slice of the whole table (Gemma's 262,144-row embedding: 630
// million regions and host memory beyond 24 GB). Here the table stays
// where it is mapped: the tile holding a block of rows writes a partial
// result, its rows where a lookup hits the block and the additive
// identity elsewhere (engine/codelets/lookup.h), and the partials are
// summed across the blocks. The cost model choosing between the two is in
// docs/memory-model.md, "Lowering choices".
#include <algorithm>

#include <fmt/format.h>

#include "engine/codelets/lookup.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

// Whether the result's flat order is [lookups, row]: its dimensions (of
// more than one element) are the indices' dimensions in order, then the
// table's row dimensions in order.
bool IsLookupMajor(std::span<const uint64_t> dims, std::span<const uint32_t> res_src,
                   size_t op_rank) {
  bool in_row = false;
  int64_t last_index = -1, last_operand = -1;
  for (size_t r = 0; r < dims.size(); ++r) {
    if (dims[r] == 1) continue;
    const auto src = static_cast<int64_t>(res_src[r]);
    if (src >= static_cast<int64_t>(op_rank)) {
      if (in_row || src - static_cast<int64_t>(op_rank) <= last_index) return false;
      last_index = src - static_cast<int64_t>(op_rank);
    } else {
      if (src <= last_operand) return false;
      in_row = true;
      last_operand = src;
    }
  }
  return true;
}

// Neighbouring blocks merged until each holds at least `lookups` rows: a
// block's partial holds `lookups` rows, so a thinner block costs more in
// partials than its rows would cost to receive. The merged block is
// computed on the tile holding most of it.
std::vector<RowBlock> Coarsen(std::vector<RowBlock> blocks, uint64_t lookups) {
  std::vector<RowBlock> merged;
  for (const RowBlock& b : blocks) {
    if (merged.empty() || merged.back().end_row - merged.back().first_row >= lookups ||
        merged.back().end_row != b.first_row) {
      merged.push_back(b);
      continue;
    }
    RowBlock& m = merged.back();
    m.end_row = b.end_row;
    if (b.local > m.local) m.tile = b.tile, m.local = b.local;
  }
  return merged;
}

}  // namespace

Expected<std::optional<Value>> Lowering::LowerLookup(const hlo::Instruction& instruction,
                                                     const Tensor& table, const Tensor& indices,
                                                     const LookupForm& form,
                                                     program::Sequence& program) {
  const size_t op_rank = table.Rank();
  // The form: dimension 0 chosen by the one index component, every other
  // dimension whole, the result in [lookups, row] order.
  if (form.components != 1 || form.start[0] != 1 || form.slice_sizes[0] != 1)
    return std::optional<Value>();
  for (size_t j = 1; j < op_rank; ++j) {
    if (form.start[j] != 0 || static_cast<uint64_t>(form.slice_sizes[j]) != table.shape()[j]) {
      return std::optional<Value>();
    }
  }
  if (!IsLookupMajor(form.dims, form.res_src, op_rank)) return std::optional<Value>();
  const uint64_t rows = table.shape()[0], lookups = indices.NumElements();
  if (rows == 0 || lookups == 0 || table.NumElements() == 0 || rows > UINT32_MAX) {
    return std::optional<Value>();
  }
  const uint64_t width = table.NumElements() / rows;
  if (width > UINT32_MAX) return std::optional<Value>();
  const Tensor flat_table = table.Flatten();
  for (const MappedRegion& piece : graph_.MapRegions(flat_table)) {
    if (!piece.tile) return MakeError("{} is not mapped", table.ShapeString());
  }
  const std::vector<RowBlock> blocks = Coarsen(RowBlocks(graph_, flat_table, width), lookups);
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor out,
      NewTensor(table.element_type(), std::vector<uint64_t>(form.dims.begin(), form.dims.end()),
                instruction.name(), true));
  const Tensor flat_out = out.Flatten();
  uint64_t out_run = 0;
  for (const MappedRegion& piece : graph_.MapRegions(flat_out))
    out_run = std::max<uint64_t>(out_run, piece.region.size());
  // Elements a tile receives or holds for the op, at most, under each plan:
  // unplanned, a run of the result reads every row of its columns; planned,
  // a block's tile holds its partial and receives the part of its rows
  // mapped elsewhere (and, when the sum has two stages, about one more
  // partial), and a result run's tile receives the run from every block
  // (or every group of fan_in blocks).
  const uint64_t unplanned = SaturatingMul(rows, std::min(width, out_run));
  const size_t fan_in = SumFanIn(blocks.size());
  const uint64_t sums = (blocks.size() + fan_in - 1) / fan_in;
  const uint64_t partial = lookups * width * (fan_in < blocks.size() ? 2 : 1);
  uint64_t planned = 0;
  for (const RowBlock& b : blocks) {
    planned = std::max(planned, (b.end_row - b.first_row) * width - b.local + partial);
  }
  planned = std::max(planned, SaturatingMul(sums, out_run));
  if (planned >= unplanned) return std::optional<Value>();

  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            codelets_.LookupPartial(table.element_type(), indices.element_type()));
  TILEPROF_ASSIGN_OR_RETURN(Tensor partials,
                            NewTensor(table.element_type(), {blocks.size(), lookups * width},
                                      fmt::format("{}/partials", instruction.name()), false));
  const Tensor flat_indices = indices.Flatten();
  SumJob job{{}, {}, flat_out};
  const ComputeSetId cs = AddComputeSet(fmt::format("{}/lookup", instruction.name()), program);
  for (size_t s = 0; s < blocks.size(); ++s) {
    const RowBlock& b = blocks[s];
    TILEPROF_ASSIGN_OR_RETURN(Tensor partial, partials.Slice(s, s + 1));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(partial, b.tile));
    TILEPROF_ASSIGN_OR_RETURN(Tensor rows_held,
                              flat_table.Slice(b.first_row * width, b.end_row * width));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, b.tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["table"], rows_held));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["indices"], flat_indices));
    job.rows.push_back(partial.Flatten());
    job.tiles.push_back(b.tile);
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], job.rows.back()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["rows"], static_cast<uint32_t>(rows)));
    TILEPROF_RETURN_IF_ERROR(
        graph_.SetInitialValue(vertex["rowLo"], static_cast<uint32_t>(b.first_row)));
    TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["width"], static_cast<uint32_t>(width)));
  }
  // The sum across blocks (lower_sum.cc). Floats start from -0.0, the
  // identity the partials hold, so a -0.0 row keeps its sign
  // (popops::Reduce starts from +0.0): targets and group sums are filled
  // with it and summed into.
  const ElementType type = table.element_type();
  RowSum how{type == ElementType::kPred ? ReduceOp::kOr : ReduceOp::kAdd, type, false, nullptr};
  if (IsFloat(type)) {
    const double value[] = {-0.0};
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor zero,
        graph_.AddConstantFromDoubles(type, {}, value, fmt::format("{}/-0", instruction.name())));
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(zero));
    TILEPROF_ASSIGN_OR_RETURN(const Codelet* fill, GetFillCodelet(type));
    const FillFn fill_negative_zero = [this, zero, fill, &instruction,
                                       &program](const Tensor& target) -> Status {
      const ComputeSetId cs = AddComputeSet(fmt::format("{}/init", instruction.name()), program);
      const FieldInput in_field{"in", zero, Access::kWhole};
      return EmitPerTile(cs, *fill, "out", target, {&in_field, 1}, instruction.name());
    };
    TILEPROF_RETURN_IF_ERROR(fill_negative_zero(out));
    how.into_target = true;
    how.fill_groups = fill_negative_zero;
  }
  TILEPROF_RETURN_IF_ERROR(SumRows({&job, 1}, how, instruction.name(), program));
  return std::optional(Value::Array(std::move(out)));
}

}  // namespace tileprof::engine::compiler
