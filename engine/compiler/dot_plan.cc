// The emission of planned contractions shared by lower_dot.cc and
// lower_conv.cc. See dot_plan.h.
#include "engine/compiler/dot_plan.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/codelets/cost_model.h"
#include "engine/compiler/runs.h"

namespace tileprof::engine::compiler {
namespace {

constexpr PlanDim kOutputDims[] = {PlanDim::kGroup,  PlanDim::kBatch,  PlanDim::kField0,
                                   PlanDim::kField1, PlanDim::kField2, PlanDim::kOutChan};
constexpr PlanDim kReduceDims[] = {PlanDim::kInChan, PlanDim::kKernel0, PlanDim::kKernel1,
                                   PlanDim::kKernel2};

std::array<uint64_t, kPlanDims> Sizes(const ContractionShape& shape) {
  std::array<uint64_t, kPlanDims> size;
  size.fill(1);
  size[static_cast<size_t>(PlanDim::kGroup)] = shape.groups;
  size[static_cast<size_t>(PlanDim::kBatch)] = shape.batch;
  size[static_cast<size_t>(PlanDim::kInChan)] = shape.in_chans;
  size[static_cast<size_t>(PlanDim::kOutChan)] = shape.out_chans;
  for (size_t s = 0; s < shape.fields.size() && s < kPlanMaxFields; ++s) {
    size[static_cast<size_t>(PlanDim::kField0) + s] = shape.fields[s].out;
    size[static_cast<size_t>(PlanDim::kKernel0) + s] = shape.fields[s].kernel;
  }
  return size;
}

// Calls f(index, ranges) for every combination of the blocks of `dims`, the
// last dimension fastest.
template <typename F>
void ForEachBlock(std::span<const PlanDim> dims, const std::array<uint64_t, kPlanDims>& size,
                  const std::array<uint64_t, kPlanDims>& offset, const Partition& partition,
                  std::array<Range, kPlanDims>& range, F&& f) {
  std::vector<uint64_t> index(dims.size(), 0);
  for (uint64_t n = 0;; ++n) {
    for (size_t i = 0; i < dims.size(); ++i) {
      const size_t d = static_cast<size_t>(dims[i]);
      range[d] = SplitRange(size[d], partition.Ways(dims[i]), index[i]);
      range[d].begin += offset[d];
    }
    f(n);
    size_t i = dims.size();
    while (i > 0) {
      --i;
      if (++index[i] < partition.Ways(dims[i])) break;
      index[i] = 0;
      if (i == 0) return;
    }
    if (dims.empty()) return;
  }
}

// The dimensions along which cells share a slice of the weights (they
// differ only in these), those that tell the slices apart, and the same
// for the input.
constexpr PlanDim kWeightReplicaDims[] = {PlanDim::kBatch, PlanDim::kField0, PlanDim::kField1,
                                          PlanDim::kField2};
constexpr PlanDim kWeightSliceDims[] = {PlanDim::kGroup,   PlanDim::kOutChan, PlanDim::kInChan,
                                        PlanDim::kKernel0, PlanDim::kKernel1, PlanDim::kKernel2};
constexpr PlanDim kInputReplicaDims[] = {PlanDim::kOutChan, PlanDim::kKernel0, PlanDim::kKernel1,
                                         PlanDim::kKernel2};
constexpr PlanDim kInputSliceDims[] = {PlanDim::kGroup,  PlanDim::kBatch,  PlanDim::kField0,
                                       PlanDim::kField1, PlanDim::kField2, PlanDim::kInChan};

// A cell's index among the cells sharing its operand slice, their number,
// and the index of the slice: row-major over the block indices of the
// given dimensions.
std::array<uint64_t, 3> HomeIndices(const std::array<Range, kPlanDims>& range,
                                    const std::array<uint64_t, kPlanDims>& size,
                                    const std::array<uint64_t, kPlanDims>& offset,
                                    const Partition& partition, std::span<const PlanDim> replica,
                                    std::span<const PlanDim> slice) {
  auto index = [&](PlanDim d) {
    const auto i = static_cast<size_t>(d);
    const uint64_t block = (size[i] + partition.Ways(d) - 1) / partition.Ways(d);
    return block == 0 ? 0 : (range[i].begin - offset[i]) / block;
  };
  uint64_t r = 0, replicas = 1, s = 0;
  for (PlanDim d : replica) {
    r = r * partition.Ways(d) + index(d);
    replicas *= partition.Ways(d);
  }
  for (PlanDim d : slice) s = s * partition.Ways(d) + index(d);
  return {r, replicas, s};
}

}  // namespace

uint64_t Product(std::span<const uint64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), uint64_t{1},
                         [](uint64_t a, uint64_t b) { return a * b; });
}

std::vector<uint64_t> Strides(std::span<const uint64_t> dims) {
  std::vector<uint64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

void SliceRuns(std::span<const TensorRegion> runs, uint64_t begin, uint64_t count,
               std::vector<TensorRegion>& out) {
  uint64_t skip = begin, need = count;
  for (const TensorRegion& run : runs) {
    if (need == 0) break;
    if (skip >= run.size()) {
      skip -= run.size();
      continue;
    }
    const uint64_t take = std::min(need, run.size() - skip);
    AppendRegion(out, run.variable, run.begin + skip, run.begin + skip + take);
    need -= take;
    skip = 0;
  }
}

ElementType SplitPartialsType(ElementType result) {
  const bool half = result == ElementType::kF16 || result == ElementType::kBF16;
  return half ? ElementType::kF32 : result;
}

ElementType PartialsType(ElementType result, const Partition& partition) {
  return partition.ReduceWays() > 1 ? SplitPartialsType(result) : result;
}

namespace {

// The module's peak-live bound over the memory plans may use on every
// tile, in thousandths, at most 1000 (PlanTarget::pressure_permille).
uint64_t PressurePermille(uint64_t bound, const PlanTarget& target) {
  const double available =
      target.available_memory_proportion * static_cast<double>(target.tile_bytes) * target.tiles;
  if (available <= 0) return 1000;
  return static_cast<uint64_t>(std::min(1.0, static_cast<double>(bound) / available) * 1000);
}

}  // namespace

std::array<uint64_t, kPlanDims> OperandTileBlocks(const Graph& graph, const Tensor& operand,
                                                  std::span<const OperandDim> dims) {
  std::vector<StridedDim> strided;
  for (const OperandDim& d : dims) strided.push_back({d.size, d.stride});
  const std::vector<uint64_t> runs = TileRunsAlong(graph, operand, strided);
  std::array<uint64_t, kPlanDims> blocks{};
  for (size_t k = 0; k < dims.size(); ++k) blocks[static_cast<size_t>(dims[k].dim)] = runs[k];
  return blocks;
}

Partition PlanContraction(Lowering& lowering, const hlo::Instruction& instruction,
                          const ContractionShape& shape, ElementType in_type,
                          ElementType acc_type) {
  const uint64_t free_bytes = lowering.FreeBytesPerTile(instruction);
  const std::string key = fmt::format("{} free {}", shape.Key(), free_bytes);
  if (const Partition* known = lowering.FindPlan(key)) return *known;
  const Target& target = lowering.graph().target();
  PlanTarget plan_target;
  plan_target.free_temporary_bytes = free_bytes;
  plan_target.tiles = target.NumTiles();
  plan_target.tile_bytes = target.BytesPerTile();
  plan_target.workers = target.NumWorkerContexts();
  plan_target.amp_macs_per_cycle = target.AmpMacsPerCycle(in_type, acc_type);
  plan_target.vector_width = cost::Width(target, in_type);
  plan_target.available_memory_proportion = lowering.options().available_memory_proportion;
  plan_target.pressure_permille = PressurePermille(lowering.PeakLiveBytes(), plan_target);
  const Partition partition = ChoosePartition(shape, plan_target);
  const PlanCost cost = EstimatePlan(shape, partition, plan_target);
  lowering.NotePlan(fmt::format(
      "{}: {} planned as {}: {} cells, {} B of temporaries and {} B of exchange code per cell, "
      "{} cycles; {} B a tile free at its step",
      instruction.name(), shape.Describe(), partition.ToString(), cost.cells, cost.temporary_bytes,
      cost.exchange_code, cost.compute_cycles + cost.exchange_cycles + cost.reduce_cycles,
      free_bytes));
  lowering.RememberPlan(key, partition);
  return partition;
}

namespace {

// An output block of one serial step, its box and element count, in cell
// order.
struct Block {
  std::array<Range, kPlanDims> range;
  std::vector<TensorRegion> runs;  // the output box, row-major
  uint64_t elements = 0;
  uint64_t row = 0;  // the box's innermost extent
};

// The step's non-empty output blocks.
Expected<std::vector<Block>> StepBlocks(const TensorIndex& out_index,
                                        const std::array<uint64_t, kPlanDims>& size,
                                        const std::array<uint64_t, kPlanDims>& offset,
                                        const Partition& partition, const OutputBox& box) {
  std::vector<uint64_t> lo, extent;
  std::vector<Block> blocks;
  std::array<Range, kPlanDims> range{};
  Cell probe;
  Status status;
  ForEachBlock(kOutputDims, size, offset, partition, range, [&](uint64_t) {
    if (!status) return;
    Block block;
    block.range = range;
    probe.range = range;
    lo.clear();
    extent.clear();
    box(probe, lo, extent);
    block.elements = Product(extent);
    block.row = extent.empty() ? 1 : extent.back();
    // The last slice of a serial dimension may be shorter: blocks past its
    // end are empty, and have no cells.
    if (block.elements == 0) return;
    status = out_index.AppendBox(lo, extent, block.runs);
    blocks.push_back(std::move(block));
  });
  TILEPROF_RETURN_IF_ERROR(status);
  return blocks;
}

// The tile of the cell of block `block` and reduce index `r`.
struct CellTiles {
  uint32_t first_tile = 0;
  uint64_t reduce_ways = 1;
  uint32_t tiles = 1;
  uint32_t operator()(uint64_t block, uint64_t r) const {
    return static_cast<uint32_t>((first_tile + block * reduce_ways + r) % tiles);
  }
};

// Piece `j` of `ways` of a block's elements: whole rows of the box (its
// innermost extent) when there are enough rows, so that the output's
// consumers read whole rows from one tile each, which travel as one message
// per tile (a piece cut mid-row would make every row two).
Range BlockPiece(const Block& block, uint64_t ways, uint64_t j) {
  const uint64_t row = block.row;
  const uint64_t rows = row == 0 ? 0 : block.elements / row;
  if (rows >= ways) {
    const Range in_rows = SplitRange(rows, ways, j);
    return {in_rows.begin * row, in_rows.size * row};
  }
  return SplitRange(block.elements, ways, j);
}

// Sums of pieces of partials: one Reduce vertex on `tile` adding the
// `partials` runs (one per partial, `size` elements each) into `out`, which
// is mapped there.
class ReduceVertices {
 public:
  static Expected<ReduceVertices> Make(Lowering& lowering, ComputeSetId cs,
                                       ElementType partials_type, ElementType out_type,
                                       std::string_view name) {
    TILEPROF_ASSIGN_OR_RETURN(const Codelet* reduce,
                              GetReduceCodelet(ReduceOp::kAdd, partials_type, out_type, false));
    const std::optional<size_t> partials_field = reduce->FindField("partials");
    const std::optional<size_t> out_field = reduce->FindField("out");
    if (!partials_field || !out_field) return MakeError("the reduce codelet lacks its fields");
    return ReduceVertices(lowering.graph(), cs, *reduce, *partials_field, *out_field, partials_type,
                          out_type, name);
  }

  Status Add(uint32_t tile, uint64_t size, std::span<const TensorRegion> partials,
             std::span<const TensorRegion> out) {
    for (const TensorRegion& run : out)
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(run.variable, run.begin, run.end, tile));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs_, reduce_, name_));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile));
    const uint64_t all = size * partials.size();
    TILEPROF_RETURN_IF_ERROR(
        graph_.ConnectRegions(vertex, partials_field_, partials_type_, {&all, 1}, partials));
    return graph_.ConnectRegions(vertex, out_field_, out_type_, {&size, 1}, out);
  }

 private:
  ReduceVertices(Graph& graph, ComputeSetId cs, const Codelet& reduce, size_t partials_field,
                 size_t out_field, ElementType partials_type, ElementType out_type,
                 std::string_view name)
      : graph_(graph),
        cs_(cs),
        reduce_(reduce),
        partials_field_(partials_field),
        out_field_(out_field),
        partials_type_(partials_type),
        out_type_(out_type),
        name_(name) {}

  Graph& graph_;
  ComputeSetId cs_;
  const Codelet& reduce_;
  size_t partials_field_, out_field_;
  ElementType partials_type_, out_type_;
  std::string name_;
};

// The reduction: block b's elements cut into reduce_ways pieces, piece j
// added up on the tile of cell (b, j) from the partial sums of every cell
// of the block, and written to the output there. Past kMaxReduceFanIn
// partials, a first stage adds each group's (ReduceStagesOf): the group's
// sum cut into a piece per member cell, on that cell's tile, into
// `group_sums`; the last stage then adds the groups' sums.
Status EmitReduction(Lowering& lowering, const hlo::Instruction& instruction, const Tensor& out,
                     const std::vector<Block>& blocks, const Tensor& partials,
                     const std::vector<uint64_t>& partial_offset, const CellTiles& tile_of,
                     std::string_view suffix, program::Sequence& program) {
  const uint64_t reduce_ways = tile_of.reduce_ways;
  const ElementType partials_type = partials.element_type();
  const ReduceStages stages = ReduceStagesOf(reduce_ways);
  std::vector<TensorRegion> runs, out_piece;
  // The runs the last stage adds for each block: `sources` copies of the
  // block's elements in `variable`, block b's from offset[b].
  VariableId variable = partials.regions()[0].variable;
  const std::vector<uint64_t>* offset = &partial_offset;
  uint64_t sources = reduce_ways;
  std::vector<uint64_t> group_offset;
  if (stages.TwoStages()) {
    uint64_t total = 0;
    for (const Block& block : blocks) {
      group_offset.push_back(total);
      total += block.elements * stages.groups;
    }
    TILEPROF_ASSIGN_OR_RETURN(
        const Tensor group_sums,
        lowering.NewTensor(partials_type, {total},
                           fmt::format("{}{}.group_sums", instruction.name(), suffix), false));
    const ComputeSetId cs = lowering.AddComputeSet(
        fmt::format("{}{}/reduce/groups", instruction.name(), suffix), program);
    TILEPROF_ASSIGN_OR_RETURN(
        ReduceVertices first,
        ReduceVertices::Make(lowering, cs, partials_type, partials_type, instruction.name()));
    const VariableId sums = group_sums.regions()[0].variable;
    for (uint64_t b = 0; b < blocks.size(); ++b) {
      const Block& block = blocks[b];
      for (uint64_t k = 0; k < stages.groups; ++k) {
        // Groups of nearly equal size: R = 512 is 6 groups of 23 and 17 of 22.
        const uint64_t first_cell = k * reduce_ways / stages.groups;
        const uint64_t members = (k + 1) * reduce_ways / stages.groups - first_cell;
        for (uint64_t i = 0; i < members; ++i) {
          const Range piece = BlockPiece(block, members, i);
          if (piece.size == 0) continue;
          runs.clear();
          for (uint64_t r = first_cell; r < first_cell + members; ++r) {
            const uint64_t begin = partial_offset[b] + r * block.elements + piece.begin;
            runs.push_back({variable, begin, begin + piece.size});
          }
          const uint64_t at = group_offset[b] + k * block.elements + piece.begin;
          const TensorRegion target{sums, at, at + piece.size};
          TILEPROF_RETURN_IF_ERROR(
              first.Add(tile_of(b, first_cell + i), piece.size, runs, {&target, 1}));
        }
      }
    }
    variable = sums;
    offset = &group_offset;
    sources = stages.groups;
  }
  const ComputeSetId reduce_cs =
      lowering.AddComputeSet(fmt::format("{}{}/reduce", instruction.name(), suffix), program);
  TILEPROF_ASSIGN_OR_RETURN(ReduceVertices last,
                            ReduceVertices::Make(lowering, reduce_cs, partials_type,
                                                 out.element_type(), instruction.name()));
  for (uint64_t b = 0; b < blocks.size(); ++b) {
    const Block& block = blocks[b];
    for (uint64_t j = 0; j < reduce_ways; ++j) {
      const Range piece = BlockPiece(block, reduce_ways, j);
      if (piece.size == 0) continue;
      runs.clear();
      for (uint64_t r = 0; r < sources; ++r) {
        const uint64_t begin = (*offset)[b] + r * block.elements + piece.begin;
        runs.push_back({variable, begin, begin + piece.size});
      }
      out_piece.clear();
      SliceRuns(block.runs, piece.begin, piece.size, out_piece);
      TILEPROF_RETURN_IF_ERROR(last.Add(tile_of(b, j), piece.size, runs, out_piece));
    }
  }
  return {};
}

// One serial step of a planned contraction: the dimensions `size` long from
// `offset` (all of it, or a slice of the serial dimension), on the tiles
// from `first_tile`; compute sets named after the instruction plus `suffix`.
Status EmitStep(Lowering& lowering, const hlo::Instruction& instruction, const Tensor& out,
                const TensorIndex& out_index, const std::array<uint64_t, kPlanDims>& size,
                const std::array<uint64_t, kPlanDims>& offset, const Partition& partition,
                uint32_t first_tile, uint64_t step, std::string_view suffix,
                program::Sequence& program, const OutputBox& box, const EmitCell& emit) {
  Graph& graph = lowering.graph();
  const uint64_t reduce_ways = partition.ReduceWays();
  TILEPROF_ASSIGN_OR_RETURN(const std::vector<Block> blocks,
                            StepBlocks(out_index, size, offset, partition, box));
  const CellTiles tile_of{first_tile, reduce_ways, graph.target().NumTiles()};
  // Partial sums: each cell's block of them contiguous, on its tile.
  Tensor partials;
  std::vector<uint64_t> partial_offset;  // per block, the first cell's offset
  if (reduce_ways > 1) {
    uint64_t total = 0;
    for (const Block& block : blocks) {
      partial_offset.push_back(total);
      total += block.elements * reduce_ways;
    }
    TILEPROF_ASSIGN_OR_RETURN(
        partials,
        lowering.NewTensor(PartialsType(out.element_type(), partition), {total},
                           fmt::format("{}{}.partials", instruction.name(), suffix), false));
  }
  // The cell of block b and reduce index r writes `target`.
  auto cell_target = [&](uint64_t b, uint64_t r, std::vector<TensorRegion>& target) {
    target.clear();
    if (reduce_ways == 1) {
      target = blocks[b].runs;
      return;
    }
    const uint64_t begin = partial_offset[b] + r * blocks[b].elements;
    target.push_back({partials.regions()[0].variable, begin, begin + blocks[b].elements});
  };
  const ComputeSetId cs =
      lowering.AddComputeSet(fmt::format("{}{}", instruction.name(), suffix), program);
  std::vector<TensorRegion> target;
  for (uint64_t b = 0; b < blocks.size(); ++b) {
    std::array<Range, kPlanDims> cell_range = blocks[b].range;
    uint64_t r = 0;
    Status cell_status;
    ForEachBlock(kReduceDims, size, offset, partition, cell_range, [&](uint64_t) {
      if (!cell_status) return;
      Cell cell;
      cell.range = cell_range;
      cell.tile = tile_of(b, r);
      // Which of the cells reading the same slice of an operand holds it,
      // when the plan lays the operand out: spread over them by slice, so
      // that no tile holds the slices of all of its replicas.
      const auto [w_replica, w_replicas, w_slice] =
          HomeIndices(cell.range, size, offset, partition, kWeightReplicaDims, kWeightSliceDims);
      cell.weights_home = w_replica == (w_slice + step * 7919) % w_replicas;
      const auto [i_replica, i_replicas, i_slice] =
          HomeIndices(cell.range, size, offset, partition, kInputReplicaDims, kInputSliceDims);
      cell.input_home = i_replica == i_slice % i_replicas;
      cell_target(b, r, target);
      for (const TensorRegion& run : target) {
        cell_status = graph.SetTileMapping(run.variable, run.begin, run.end, cell.tile);
        if (!cell_status) return;
      }
      cell_status = emit(cs, cell, target);
      ++r;
    });
    TILEPROF_RETURN_IF_ERROR(cell_status);
  }
  if (reduce_ways == 1) return {};
  return EmitReduction(lowering, instruction, out, blocks, partials, partial_offset, tile_of,
                       suffix, program);
}

}  // namespace

Status EmitPlanned(Lowering& lowering, const hlo::Instruction& instruction, const Tensor& out,
                   const ContractionShape& shape, const Partition& partition,
                   program::Sequence& program, const OutputBox& box, const EmitCell& emit) {
  const uint32_t tiles = lowering.graph().target().NumTiles();
  // Every serial step uses the same tiles.
  const uint32_t first_tile =
      lowering.mapper().TakeTiles(std::min<uint64_t>(partition.Cells(), tiles));
  const TensorIndex out_index(out);
  const std::array<uint64_t, kPlanDims> full = Sizes(shape);
  const uint64_t steps = std::max<uint64_t>(partition.serial, 1);
  const auto d = static_cast<size_t>(partition.serial_dim);
  for (uint64_t s = 0; s < steps; ++s) {
    std::array<uint64_t, kPlanDims> size = full, offset{};
    const Range slice = SplitRange(full[d], steps, s);
    if (slice.size == 0) continue;
    size[d] = slice.size;
    offset[d] = slice.begin;
    const std::string suffix = steps > 1 ? fmt::format("/step{}", s) : std::string();
    TILEPROF_RETURN_IF_ERROR(EmitStep(lowering, instruction, out, out_index, size, offset,
                                      partition, first_tile, s, suffix, program, box, emit));
  }
  return {};
}

}  // namespace tileprof::engine::compiler
