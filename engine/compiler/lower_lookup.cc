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
#include <unordered_map>

#include <fmt/format.h>

#include "engine/codelets/lookup.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {
namespace {

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

// Whether the planned lookup has a tile receive or hold fewer elements
// than the unplanned gather and than `rival` (another plan's): `blocks` of
// a table of `rows` rows of `width`, `lookups` of them into `flat_out`.
bool LookupIsCheaper(const Graph& graph, const Tensor& flat_out,
                     const std::vector<RowBlock>& blocks, uint64_t rows, uint64_t width,
                     uint64_t lookups, uint64_t rival) {
  uint64_t out_run = 0;
  for (const MappedRegion& piece : graph.MapRegions(flat_out))
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
  return planned < unplanned && planned < rival;
}

// Each block's LookupPartial vertex (`codelet`), on the block's tile,
// writing its row of `partials` (mapped there too) from the table rows it
// holds; the partial rows, flat, by block.
Expected<std::vector<Tensor>> EmitLookupPartials(Graph& graph, ComputeSetId cs,
                                                 const Codelet& codelet, std::string_view name,
                                                 const std::vector<RowBlock>& blocks,
                                                 const Tensor& partials, const Tensor& flat_table,
                                                 const Tensor& flat_indices, uint64_t rows,
                                                 uint64_t width) {
  std::vector<Tensor> partial_rows;
  for (size_t s = 0; s < blocks.size(); ++s) {
    const RowBlock& b = blocks[s];
    TILEPROF_ASSIGN_OR_RETURN(Tensor partial, partials.Slice(s, s + 1));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(partial, b.tile));
    TILEPROF_ASSIGN_OR_RETURN(Tensor rows_held,
                              flat_table.Slice(b.first_row * width, b.end_row * width));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, codelet, name));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, b.tile));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["table"], rows_held));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["indices"], flat_indices));
    partial_rows.push_back(partial.Flatten());
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], partial_rows.back()));
    TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex["rows"], static_cast<uint32_t>(rows)));
    TILEPROF_RETURN_IF_ERROR(
        graph.SetInitialValue(vertex["rowLo"], static_cast<uint32_t>(b.first_row)));
    TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex["width"], static_cast<uint32_t>(width)));
  }
  return partial_rows;
}

// Fills its target with -0.0 of the float `type` (a constant made and
// mapped now): the identity the partials hold.
Expected<std::function<Status(const Tensor&)>> NegativeZeroFill(Lowering& lowering,
                                                                const hlo::Instruction& instruction,
                                                                ElementType type,
                                                                program::Sequence& program) {
  const double value[] = {-0.0};
  TILEPROF_ASSIGN_OR_RETURN(Tensor zero,
                            lowering.graph().AddConstantFromDoubles(
                                type, {}, value, fmt::format("{}/-0", instruction.name())));
  TILEPROF_RETURN_IF_ERROR(lowering.mapper().Map(zero));
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* fill, GetFillCodelet(type));
  return std::function<Status(const Tensor&)>(
      [&lowering, zero, fill, &instruction, &program](const Tensor& target) -> Status {
        const ComputeSetId cs =
            lowering.AddComputeSet(fmt::format("{}/init", instruction.name()), program);
        const FieldInput in_field{"in", zero, Access::kWhole};
        return lowering.EmitPerTile(cs, *fill, "out", target, {&in_field, 1}, instruction.name());
      });
}

}  // namespace

// See lower.h.
bool TakesWholeRows(const Tensor& table, std::span<const uint32_t> start,
                    std::span<const int64_t> slice_sizes, uint64_t components) {
  if (components != 1 || start[0] != 1 || slice_sizes[0] != 1) return false;
  for (size_t j = 1; j < table.Rank(); ++j) {
    if (start[j] != 0 || static_cast<uint64_t>(slice_sizes[j]) != table.shape()[j]) {
      return false;
    }
  }
  return true;
}

// See lower.h.
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

// The sum of the lookup partials into `out` (its jobs' targets), across
// the blocks (lower_sum.cc). Floats start from -0.0, the identity the
// partials hold, so a -0.0 row keeps its sign (popops::Reduce starts from
// +0.0): targets and group sums are filled with it and summed into.
Status Lowering::SumLookupPartials(const hlo::Instruction& instruction, const Tensor& out,
                                   std::span<SumJob> jobs, program::Sequence& program) {
  const ElementType type = out.element_type();
  RowSum how{type == ElementType::kPred ? ReduceOp::kOr : ReduceOp::kAdd, type, false, nullptr};
  if (IsFloat(type)) {
    TILEPROF_ASSIGN_OR_RETURN(const FillFn fill_negative_zero,
                              NegativeZeroFill(*this, instruction, type, program));
    TILEPROF_RETURN_IF_ERROR(fill_negative_zero(out));
    how.into_target = true;
    how.fill_groups = fill_negative_zero;
  }
  return SumRows(jobs, how, instruction.name(), program);
}

Expected<std::optional<Value>> Lowering::LowerLookup(const hlo::Instruction& instruction,
                                                     const Tensor& table, const Tensor& indices,
                                                     const LookupForm& form,
                                                     program::Sequence& program) {
  const size_t op_rank = table.Rank();
  // The form: dimension 0 chosen by the one index component, every other
  // dimension whole, the result in [lookups, row] order.
  if (!TakesWholeRows(table, form.start, form.slice_sizes, form.components) ||
      !IsLookupMajor(form.dims, form.res_src, op_rank)) {
    return std::optional<Value>();
  }
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
  if (!LookupIsCheaper(graph_, flat_out, blocks, rows, width, lookups, form.rival)) {
    return std::optional<Value>();
  }

  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            codelets_.LookupPartial(table.element_type(), indices.element_type()));
  TILEPROF_ASSIGN_OR_RETURN(Tensor partials,
                            NewTensor(table.element_type(), {blocks.size(), lookups * width},
                                      fmt::format("{}/partials", instruction.name()), false));
  const Tensor flat_indices = indices.Flatten();
  SumJob job{{}, {}, flat_out};
  const ComputeSetId cs = AddComputeSet(fmt::format("{}/lookup", instruction.name()), program);
  TILEPROF_ASSIGN_OR_RETURN(
      job.rows, EmitLookupPartials(graph_, cs, *codelet, instruction.name(), blocks, partials,
                                   flat_table, flat_indices, rows, width));
  for (const RowBlock& b : blocks) job.tiles.push_back(b.tile);
  TILEPROF_RETURN_IF_ERROR(SumLookupPartials(instruction, out, {&job, 1}, program));
  return std::optional(Value::Array(std::move(out)));
}

Expected<std::optional<Value>> Lowering::LowerMinorLookup(const hlo::Instruction& instruction,
                                                          const Tensor& table,
                                                          const Tensor& indices,
                                                          program::Sequence& program) {
  if (table.Rank() != 2 || !instruction.shape().IsArray()) return std::optional<Value>();
  const uint64_t w = table.shape()[0], r = table.shape()[1], lookups = indices.NumElements();
  if (w == 0 || r == 0 || lookups == 0 || r > UINT32_MAX || table.NumElements() == 0)
    return std::optional<Value>();
  const Tensor flat_table = table.Flatten();
  for (const MappedRegion& piece : graph_.MapRegions(flat_table)) {
    if (!piece.tile) return MakeError("{} is not mapped", table.ShapeString());
  }
  // Blocks of one row of the table each (cut where a row ends), merged
  // within the row up to `lookups` elements, as Coarsen does. A merged
  // block goes to the tile holding most of it that has the fewest partials
  // yet: a transposed table lies in boxes of many short row pieces a tile,
  // and the first tile of each merged block took 43 partials.
  std::vector<RowBlock> blocks;
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> holders;  // tile, local; per block
  for (const RowBlock& b : RowBlocks(graph_, flat_table, 1, r)) {
    RowBlock* last = blocks.empty() ? nullptr : &blocks.back();
    if (last != nullptr && last->end_row == b.first_row && last->first_row / r == b.first_row / r &&
        last->end_row - last->first_row < lookups) {
      last->end_row = b.end_row;
      holders.back().emplace_back(b.tile, b.local);
      continue;
    }
    blocks.push_back(b);
    holders.push_back({{b.tile, b.local}});
  }
  std::unordered_map<uint32_t, uint64_t> partials_on;  // tile -> partials placed
  for (size_t s = 0; s < blocks.size(); ++s) {
    std::unordered_map<uint32_t, uint64_t> local;
    uint64_t most = 0;
    for (const auto& [tile, n] : holders[s]) most = std::max(most, local[tile] += n);
    std::pair<uint32_t, uint64_t> best{blocks[s].tile, 0};
    uint64_t best_load = UINT64_MAX;
    for (const auto& [tile, n] : holders[s]) {
      const uint64_t load = partials_on[tile];
      if (2 * local[tile] >= most &&
          (load < best_load || (load == best_load && tile < best.first))) {
        best = {tile, local[tile]};
        best_load = load;
      }
    }
    blocks[s].tile = best.first;
    blocks[s].local = best.second;
    ++partials_on[best.first];
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> dims, StorageShape(instruction.shape()));
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor out, NewTensor(table.element_type(), std::move(dims), instruction.name(), true));
  const Tensor flat_out = out.Flatten();
  if (flat_out.NumElements() != w * lookups)
    return MakeError("{}: result size", instruction.name());
  // The cost, per tile, as LookupIsCheaper counts it: as it is, a run of
  // the result reads the whole row of the table it picks from.
  uint64_t out_run = 0, per_row = 0, in_row = 0, row = UINT64_MAX;
  for (const MappedRegion& piece : graph_.MapRegions(flat_out))
    out_run = std::max<uint64_t>(out_run, piece.region.size());
  for (const RowBlock& b : blocks) {
    in_row = b.first_row / r == row ? in_row + 1 : 1;
    row = b.first_row / r;
    per_row = std::max(per_row, in_row);
  }
  const size_t fan_in = SumFanIn(per_row);
  const uint64_t partial = lookups * (fan_in < per_row ? 2 : 1);
  uint64_t planned = SaturatingMul((per_row + fan_in - 1) / fan_in, out_run);
  std::unordered_map<uint32_t, uint64_t> on_tile;  // received and held, per tile
  for (const RowBlock& b : blocks) {
    uint64_t& held = on_tile[b.tile];
    held += (b.end_row - b.first_row) - b.local + partial;
    planned = std::max(planned, held);
  }
  if (planned >= r) return std::optional<Value>();

  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            codelets_.LookupPartial(table.element_type(), indices.element_type()));
  TILEPROF_ASSIGN_OR_RETURN(Tensor partials,
                            NewTensor(table.element_type(), {blocks.size(), lookups},
                                      fmt::format("{}/partials", instruction.name()), false));
  const Tensor flat_indices = indices.Flatten();
  const ComputeSetId cs = AddComputeSet(fmt::format("{}/lookup", instruction.name()), program);
  std::vector<SumJob> jobs(w);
  for (uint64_t c = 0; c < w; ++c) {
    TILEPROF_ASSIGN_OR_RETURN(jobs[c].target, flat_out.Slice(c * lookups, (c + 1) * lookups));
  }
  for (size_t s = 0; s < blocks.size(); ++s) {
    const RowBlock& b = blocks[s];
    const uint64_t c = b.first_row / r;
    TILEPROF_ASSIGN_OR_RETURN(Tensor partial, partials.Slice(s, s + 1));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(partial, b.tile));
    TILEPROF_ASSIGN_OR_RETURN(Tensor held, flat_table.Slice(b.first_row, b.end_row));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, b.tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["table"], held));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["indices"], flat_indices));
    jobs[c].rows.push_back(partial.Flatten());
    jobs[c].tiles.push_back(b.tile);
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], jobs[c].rows.back()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["rows"], static_cast<uint32_t>(r)));
    TILEPROF_RETURN_IF_ERROR(
        graph_.SetInitialValue(vertex["rowLo"], static_cast<uint32_t>(b.first_row - c * r)));
    TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["width"], uint32_t{1}));
  }
  TILEPROF_RETURN_IF_ERROR(SumLookupPartials(instruction, out, jobs, program));
  return std::optional(Value::Array(std::move(out)));
}

}  // namespace tileprof::engine::compiler
