// Scatter (engine/codelets/gather.h): one vertex per tile run of the
// linearly mapped result, reading its own run of the operand and the box
// of the updates (with their index vectors) its run can receive: a window
// dimension's box is the run's coordinates widened by the slack of the
// start; a scatter dimension is whole, and a scatter whose vertices would
// receive much at once is streamed in steps (StepsOf). A scatter of whole
// rows into a table is made on the table split in column blocks
// (PlanColumnBlocks), so that a tile receives its columns of every update,
// not whole rows. Unsupported forms
// (several scatter operands, an update computation other than assign or
// one binary op) stay opaque.
#include <algorithm>

#include <fmt/format.h>

#include "engine/codelets/gather.h"
#include "engine/compiler/gather_numbers.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {
namespace {

using namespace gather_internal;

std::optional<ScatterCombiner> CombinerOf(const hlo::Computation& computation) {
  const hlo::Instruction* root = computation.root();
  if (root == nullptr) return std::nullopt;
  if (root->opcode() == hlo::Opcode::kParameter) {
    return root->parameter_number() == 1 ? std::optional(ScatterCombiner::kAssign) : std::nullopt;
  }
  if (root->operand_count() != 2) return std::nullopt;
  // Commutative ops only, so the order of the parameters does not matter;
  // both must be used.
  const auto a = root->operands()[0], b = root->operands()[1];
  if (a->opcode() != hlo::Opcode::kParameter || b->opcode() != hlo::Opcode::kParameter ||
      a->parameter_number() + b->parameter_number() != 1) {
    return std::nullopt;
  }
  switch (root->opcode()) {
    case hlo::Opcode::kAdd:
      return ScatterCombiner::kAdd;
    case hlo::Opcode::kMultiply:
      return ScatterCombiner::kMul;
    case hlo::Opcode::kMaximum:
      return ScatterCombiner::kMax;
    case hlo::Opcode::kMinimum:
      return ScatterCombiner::kMin;
    case hlo::Opcode::kAnd:
      return ScatterCombiner::kAnd;
    case hlo::Opcode::kOr:
      return ScatterCombiner::kOr;
    default:
      return std::nullopt;
  }
}

// The error when an update dimension does not fit the operand's window
// dimension or is not the indices' dimension it stands for.
Status CheckUpdateDims(const hlo::Instruction& instruction, const Numbers& n, const Tensor& operand,
                       const Tensor& indices, const Tensor& updates) {
  for (size_t u = 0; u < updates.Rank(); ++u) {
    const uint32_t src = n.res_src[u];
    const uint64_t limit =
        src < operand.Rank() ? operand.shape()[src] : indices.shape()[src - operand.Rank()];
    if (src < operand.Rank() ? updates.shape()[u] > limit : updates.shape()[u] != limit) {
      return MakeError("{}: update dimension {} has {} elements, does not fit {}",
                       Describe(instruction), u, updates.shape()[u], limit);
    }
  }
  return {};
}

// A scatter vertex's parameters after `first`, in the codelet's order
// (gather.h).
Expected<std::vector<uint32_t>> ScatterParams(const hlo::Instruction& instruction,
                                              const Tensor& operand, const Tensor& indices,
                                              const Tensor& updates, const Numbers& n) {
  std::vector<uint32_t> params;
  for (const Tensor* t : {&operand, &indices, &updates}) {
    for (uint64_t d : t->shape()) {
      TILEPROF_ASSIGN_OR_RETURN(uint32_t v, Param(d, instruction));
      params.push_back(v);
    }
  }
  params.push_back(n.ivd);
  params.insert(params.end(), n.res_src.begin(), n.res_src.end());
  params.insert(params.end(), n.start.begin(), n.start.end());
  return params;
}

// The updates box a run of the scatter's result (`run`, its FlatRunBox in
// the operand's shape) reads, [lo, lo + size) per update dimension: window
// coordinates w = c - s for the run's operand coordinates c and starts s
// in [0, slack]; scatter dimensions whole unless they are batching ones.
void ScatterReadBox(std::span<const std::pair<uint64_t, uint64_t>> run, const Numbers& n,
                    std::span<const uint64_t> op_shape, const Tensor& updates,
                    std::vector<uint64_t>& lo, std::vector<uint64_t>& size) {
  const size_t op_rank = op_shape.size();
  for (size_t u = 0; u < updates.Rank(); ++u) {
    const uint32_t j = n.res_src[u];
    lo[u] = 0;
    size[u] = updates.shape()[u];
    // A scatter dimension that is a batching one lands on the operand
    // dimension it batches, at the same coordinate (no slack).
    for (size_t k = 0; j >= op_rank && size[u] > 0 && k < op_rank; ++k) {
      if (n.start[k] >= kStartFromBatch && n.start[k] - kStartFromBatch + op_rank == j) {
        const uint64_t a = run[k].first, b = std::min<uint64_t>(run[k].second, size[u] - 1);
        lo[u] = std::min(a, b);
        size[u] = a <= b ? b - a + 1 : 1;
      }
    }
    if (j >= op_rank || size[u] == 0) continue;
    const uint64_t slack = n.start[j] == 0 ? 0 : op_shape[j] - updates.shape()[u];
    const uint64_t a = run[j].first > slack ? run[j].first - slack : 0;
    const uint64_t b = std::min<uint64_t>(run[j].second, updates.shape()[u] - 1);
    // Empty (no update can land in the run): one element, filtered out.
    lo[u] = std::min(a, b);
    size[u] = a <= b ? b - a + 1 : 1;
  }
}

// Bytes a scatter vertex with an updates box of `size` receives: the box
// and the index vectors of its scatter coordinates.
uint64_t ScatterBoxBytes(std::span<const uint64_t> size, const Numbers& n, size_t op_rank,
                         const Tensor& updates, const Tensor& indices) {
  uint64_t elements = 1, vectors = 1;
  for (size_t u = 0; u < size.size(); ++u) {
    elements = SaturatingMul(elements, size[u]);
    if (n.res_src[u] >= op_rank) vectors = SaturatingMul(vectors, size[u]);
  }
  const uint64_t components = n.ivd < indices.Rank() ? indices.shape()[n.ivd] : 1;
  return SaturatingMul(elements, SizeOf(updates.element_type())) +
         SaturatingMul(SaturatingMul(vectors, components), SizeOf(indices.element_type()));
}

// A scatter whose runs can receive any update (data-dependent indices)
// gives every vertex the whole updates and indices: jax-md's neighbour-list
// scatter put 1.35 MB on each of 1,443 tiles. Such a scatter is streamed:
// `count` compute sets, each applying a share of the updates (a range of
// the outermost scatter dimension `dim`, the same in every run) to the
// previous step's result, so a tile receives at most about
// kMaxScatterStepBytes at a time. The dimension is the updates' outermost,
// so the steps apply the updates in their row-major order, as one pass
// does: duplicates combine in the same order. At most kMaxScatterSteps:
// each step is a vertex per run of the result, so steps of 32 KiB let the
// graph grow with the updates (a 4M-token embedding gradient's 288 MB of
// updates and indices made 9,216 steps, 13.6 M vertices, 13 GB of host
// memory); past 64 steps, 2 MiB a tile, the updates are beyond any tile
// and the report says so with larger steps.
struct ScatterSteps {
  uint64_t count = 1;
  size_t dim = 0;
};
constexpr uint64_t kMaxScatterStepBytes = 32 * 1024;
constexpr uint64_t kMaxScatterSteps = 64;
ScatterSteps StepsOf(const Numbers& n, size_t op_rank, const Tensor& updates,
                     uint64_t largest_box) {
  ScatterSteps steps;
  if (largest_box <= kMaxScatterStepBytes) return steps;
  // The outermost dimension of more than one element, when it is a
  // scatter dimension: ranges of it keep the updates' row-major order.
  for (size_t u = 0; u < updates.Rank(); ++u) {
    if (updates.shape()[u] < 2) continue;
    if (n.res_src[u] < op_rank) break;
    steps.dim = u;
    steps.count = std::min<uint64_t>(
        {updates.shape()[u], (largest_box + kMaxScatterStepBytes - 1) / kMaxScatterStepBytes,
         kMaxScatterSteps});
    break;
  }
  return steps;
}

// The largest updates box (bytes, with its index vectors) a run of a
// result of `op_shape` reads, when the result is mapped linearly in runs of
// `chunk` elements (LinearMapper): the cost by which the column plan below
// is chosen, reckoned before the result is made.
uint64_t LargestBoxBytes(std::span<const uint64_t> op_shape, uint64_t chunk, const Numbers& n,
                         const Tensor& updates, const Tensor& indices) {
  uint64_t total = 1;
  for (uint64_t d : op_shape) total = SaturatingMul(total, d);
  std::vector<uint64_t> lo(updates.Rank()), size(updates.Rank());
  uint64_t largest = 0;
  for (uint64_t first = 0; chunk > 0 && first < total; first += chunk) {
    ScatterReadBox(FlatRunBox(op_shape, first, std::min(chunk, total - first)), n, op_shape,
                   updates, lo, size);
    largest = std::max(largest, ScatterBoxBytes(size, n, op_shape.size(), updates, indices));
  }
  return largest;
}

// A scatter of whole rows into a table (an embedding's gradient: the
// index picks operand row i, each update is a whole row of `width`
// elements) reads, on every tile run of a row-major result, every update's
// row: the index is only known at run time, so any update may land on the
// tile's rows. A TensorFlow MLPerf DLRM step's 1,664 rows of 128 into a
// 19,656-row table sent 852 KB to each of 1,472 tiles, 1.2 GB of exchange.
// As popops' multiUpdateAdd plans it, the table is split by columns too: the
// result is made as [width / C, rows, C] (a tile holds rows of one block of
// C columns) and a tile receives only its block's C columns of every update
// (and every index). The smaller C, the less each tile receives; but the
// result, viewed back as [rows, width], is then rows x width / C runs, so C
// is the smallest divisor of the width (of at least 16 bytes) that keeps
// them at kMaxColumnRuns.
struct ColumnBlocks {
  Tensor operand;  // [groups, rows, C], a view of the operand
  Tensor updates;  // [lookups..., groups, C], a view of the updates
  Numbers n;
  uint64_t groups = 1, columns = 1;
};
constexpr uint64_t kMaxColumnRuns = uint64_t{1} << 20;
Expected<std::optional<ColumnBlocks>> PlanColumnBlocks(const hlo::Instruction& instruction,
                                                       const Tensor& operand, const Tensor& indices,
                                                       const Tensor& updates, const IndexDims& dims,
                                                       std::span<const int64_t> window_dims,
                                                       const Numbers& n, int64_t ivd,
                                                       uint64_t chunk) {
  const size_t rank = operand.Rank(), lookups_rank = updates.Rank() + 1 - rank;
  if (rank < 2 || window_dims.size() != rank - 1 || dims.removed != std::vector<int64_t>{0} ||
      dims.start_map != std::vector<int64_t>{0} || !dims.op_batch.empty() ||
      !dims.idx_batch.empty() || updates.Rank() + 1 < rank) {
    return std::optional<ColumnBlocks>();
  }
  // Whole rows: the update's window is every operand dimension after the
  // first, whole, and its trailing dimensions.
  uint64_t width = 1;
  for (size_t k = 1; k < rank; ++k) {
    const size_t u = lookups_rank + k - 1;
    if (window_dims[k - 1] != static_cast<int64_t>(u) || updates.shape()[u] != operand.shape()[k]) {
      return std::optional<ColumnBlocks>();
    }
    width *= operand.shape()[k];
  }
  const uint64_t rows = operand.shape()[0];
  // Blocks of at least 16 bytes: each is a run its readers receive, at 8 B
  // of exchange code per run (kExchangeCodePerRegion), and thinner ones
  // cost those readers more in code than they save the scatter (BERT's
  // [30522, 16] embedding gradient in single columns: 3 MB more code).
  // The staged updates are copied from a view of lookups x groups runs,
  // held to the same bound: GraphHelper's Llama-2 step (4.2 M lookups into
  // four blocks, 16.8 M runs) had 256 MB more exchange code with them than
  // with whole rows, and its compile 2 GB more host memory.
  uint64_t lookups = 1;
  for (size_t u = 0; u < lookups_rank; ++u) lookups = SaturatingMul(lookups, updates.shape()[u]);
  uint64_t columns = std::max<uint64_t>(1, 16 / SizeOf(updates.element_type()));
  while (columns < width && (width % columns != 0 || rows * (width / columns) > kMaxColumnRuns ||
                             SaturatingMul(lookups, width / columns) > kMaxColumnRuns))
    ++columns;
  if (columns >= width) return std::optional<ColumnBlocks>();
  ColumnBlocks plan;
  plan.columns = columns;
  plan.groups = width / columns;
  const std::vector<uint64_t> shape{plan.groups, rows, columns};
  std::vector<uint64_t> update_shape(
      updates.shape().begin(), updates.shape().begin() + static_cast<ptrdiff_t>(lookups_rank));
  update_shape.push_back(plan.groups);
  update_shape.push_back(columns);
  TILEPROF_ASSIGN_OR_RETURN(plan.updates, updates.Reshape(update_shape));
  const std::vector<int64_t> windows{static_cast<int64_t>(lookups_rank),
                                     static_cast<int64_t>(lookups_rank) + 1};
  const std::vector<int64_t> rows_dim{1};
  TILEPROF_ASSIGN_OR_RETURN(plan.n, Build(instruction, 3, indices.Rank(), update_shape.size(),
                                          windows, rows_dim, rows_dim, {}, {}, ivd));
  // Taken when a tile run of a row-major result (within a row or holding
  // rows: the common run, not one that crosses a row) would receive enough
  // at once to be streamed, and when the largest box a tile receives is
  // smaller, counting the code the result's readers then need for its runs
  // (kExchangeCodePerRegion each). A KV cache written at one position
  // receives its run's share of the one row, and its readers (the host,
  // at a packet header and code per run) would pay for runs they did not
  // need: GraphHelper's Llama step had 17 MB more host exchange.
  const uint64_t common_run =
      SaturatingMul(SaturatingMul(lookups, std::min(width, chunk)), SizeOf(updates.element_type()));
  const uint64_t runs_code = 8 * ((chunk + columns - 1) / columns);
  if (common_run <= kMaxScatterStepBytes ||
      LargestBoxBytes(shape, chunk, plan.n, plan.updates, indices) + runs_code >=
          LargestBoxBytes(operand.shape(), chunk, n, updates, indices)) {
    return std::optional<ColumnBlocks>();
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor table, operand.Reshape({rows, plan.groups, columns}));
  const size_t to_blocks[] = {1, 0, 2};
  TILEPROF_ASSIGN_OR_RETURN(plan.operand, table.Dimshuffle(to_blocks));
  return std::optional<ColumnBlocks>(std::move(plan));
}

// The updates box [lo, lo + size) of a column-block plan ([lookups..., groups,
// C]), taken where the updates are staged (`to_blocks` of it: [groups,
// lookups..., C]): a box of one block is one run there, where the updates'
// view holds a run per lookup and each was found by a binary search over
// every lookup's run (GraphHelper's Llama-2 step, 4.2 M lookups into 1,472
// result runs: five minutes of its compile). A box of one block has the
// same element order in both; one of several blocks is permuted back.
Expected<Tensor> StagedBox(const TensorIndex& staged, std::span<const size_t> to_blocks,
                           std::span<const size_t> to_updates, std::span<const uint64_t> lo,
                           std::span<const uint64_t> size) {
  std::vector<uint64_t> staged_lo, staged_size;
  for (size_t d : to_blocks) {
    staged_lo.push_back(lo[d]);
    staged_size.push_back(size[d]);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor box, staged.Box(staged_lo, staged_size));
  if (size[to_blocks[0]] == 1) return box.Reshape({size.begin(), size.end()});
  return box.Dimshuffle(to_updates);
}

}  // namespace

Expected<Value> Lowering::LowerScatter(const hlo::Instruction& instruction,
                                       std::span<const Value> operands,
                                       program::Sequence& program) {
  const auto opaque = [&] { return LowerOpaque(instruction, operands, program); };
  if (operands.size() != 3 || instruction.called_computations().size() != 1 ||
      !instruction.shape().IsArray()) {
    return opaque();
  }
  for (size_t i = 0; i < 3; ++i) {
    if (!IsPlainArray(operands[i], instruction.operands()[i]->shape())) return opaque();
  }
  Tensor operand = operands[0].tensor;
  Tensor updates = operands[2].tensor;
  const std::optional<ScatterCombiner> combiner = CombinerOf(*instruction.called_computations()[0]);
  if (!combiner || operand.Rank() == 0 || updates.element_type() != operand.element_type()) {
    return opaque();
  }
  TILEPROF_ASSIGN_OR_RETURN(auto window_dims, ListAttribute(instruction, "update_window_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto inserted, ListAttribute(instruction, "inserted_window_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto start_map,
                            ListAttribute(instruction, "scatter_dims_to_operand_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto op_batch, ListAttribute(instruction, "input_batching_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto idx_batch,
                            ListAttribute(instruction, "scatter_indices_batching_dims"));
  TILEPROF_ASSIGN_OR_RETURN(std::optional<int64_t> ivd,
                            IntAttribute(instruction, "index_vector_dim"));
  if (!ivd) return MakeError("{}: no index_vector_dim", Describe(instruction));
  IndexDims index_dims{std::move(inserted), std::move(start_map), std::move(op_batch),
                       std::move(idx_batch)};
  TILEPROF_ASSIGN_OR_RETURN(
      const Tensor indices,
      IotaComponentsAsBatching(instruction, operand, operands[1].tensor, *ivd, index_dims));
  TILEPROF_ASSIGN_OR_RETURN(
      Numbers n, Build(instruction, operand.Rank(), indices.Rank(), updates.Rank(), window_dims,
                       index_dims.removed, index_dims.start_map, index_dims.op_batch,
                       index_dims.idx_batch, *ivd));
  const uint64_t components = IndexComponents(n, indices);
  if (index_dims.start_map.size() != components) {
    return MakeError("{}: scatter_dims_to_operand_dims has {} entries, the index vector {}",
                     Describe(instruction), index_dims.start_map.size(), components);
  }
  TILEPROF_RETURN_IF_ERROR(CheckUpdateDims(instruction, n, operand, indices, updates));
  if (operand.NumElements() == 0) {
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor out, NewTensor(operand.element_type(), operand.shape(), instruction.name(), true));
    return Value::Array(std::move(out));
  }
  const std::vector<uint64_t> result_shape = operand.shape();
  TILEPROF_ASSIGN_OR_RETURN(
      std::optional<ColumnBlocks> blocks,
      PlanColumnBlocks(instruction, operand, indices, updates, index_dims, window_dims, n, *ivd,
                       mapper_.ChunkElements(operand.NumElements(), operand.element_type())));
  Tensor staged;  // the column-block plan's updates, [groups, lookups..., C]
  std::vector<size_t> to_blocks, to_updates;  // updates' dimensions to staged's, and back
  if (blocks) {
    operand = std::move(blocks->operand);
    n = std::move(blocks->n);
    // The updates staged by column block first ([groups, lookups..., C],
    // mapped linearly, so a block lies on a few tiles): a tile of the
    // result then listens to the few tiles holding its block, where it
    // listened to every tile holding updates (the DLRM step's first scatter
    // step: 1,470 senders a tile, 6.7 MB of exchange code).
    const size_t rank = blocks->updates.Rank();
    to_blocks = {rank - 2};
    to_updates.resize(rank);
    for (size_t d = 0; d + 2 < rank; ++d) to_blocks.push_back(d);
    to_blocks.push_back(rank - 1);
    for (size_t d = 0; d < rank; ++d) to_updates[to_blocks[d]] = d;
    TILEPROF_ASSIGN_OR_RETURN(const Tensor by_block, blocks->updates.Dimshuffle(to_blocks));
    TILEPROF_ASSIGN_OR_RETURN(staged,
                              NewTensor(by_block.element_type(), by_block.shape(),
                                        fmt::format("{}/updates", instruction.name()), true));
    program.Add(program::Copy(by_block, staged));
    TILEPROF_ASSIGN_OR_RETURN(updates, staged.Dimshuffle(to_updates));
  }
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor out, NewTensor(operand.element_type(), operand.shape(), instruction.name(), true));
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            codelets_.Scatter(operand.element_type(), indices.element_type(),
                                              *combiner, static_cast<uint32_t>(operand.Rank()),
                                              static_cast<uint32_t>(indices.Rank()),
                                              static_cast<uint32_t>(updates.Rank())));
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint32_t> params,
                            ScatterParams(instruction, operand, indices, updates, n));
  // Each tile run of the result, with the updates box it reads.
  struct Run {
    uint64_t first, count;
    uint32_t tile;
    std::vector<uint64_t> lo, size;
  };
  std::vector<Run> runs;
  const Tensor flat_out = out.Flatten(), flat_operand = operand.Flatten();
  uint64_t position = 0, largest_box = 0;
  for (const MappedRegion& piece : graph_.MapRegions(flat_out)) {
    const uint64_t first = position, count = piece.region.size();
    position += count;
    if (!piece.tile) return MakeError("{} is not mapped", out.ShapeString());
    Run run{first, count, *piece.tile, std::vector<uint64_t>(updates.Rank()),
            std::vector<uint64_t>(updates.Rank())};
    ScatterReadBox(FlatRunBox(operand.shape(), first, count), n, operand.shape(), updates, run.lo,
                   run.size);
    largest_box =
        std::max(largest_box, ScatterBoxBytes(run.size, n, operand.Rank(), updates, indices));
    runs.push_back(std::move(run));
  }
  ScatterSteps steps = StepsOf(n, operand.Rank(), updates, largest_box);
  // Steps cut a dimension every run reads whole; a batching dimension's
  // runs read their own rows, and are not streamed.
  for (const Run& run : runs) {
    if (steps.count > 1 && run.size[steps.dim] != updates.shape()[steps.dim]) steps.count = 1;
  }
  // Steps ping-pong between the result and a copy mapped like it, so that
  // the last step writes the result.
  Tensor spare;
  if (steps.count > 1) {
    TILEPROF_ASSIGN_OR_RETURN(spare, NewTensor(operand.element_type(), operand.shape(),
                                               fmt::format("{}/steps", instruction.name()), false));
    TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(spare, out));
  }
  const Tensor flat_spare = steps.count > 1 ? spare.Flatten() : Tensor();
  const TensorIndex updates_index(blocks ? staged : updates), indices_index(indices);
  for (uint64_t step = 0; step < steps.count; ++step) {
    const ComputeSetId cs = AddComputeSet(
        steps.count > 1 ? fmt::format("{}/step{}", instruction.name(), step) : instruction.name(),
        program);
    const auto written = [&](uint64_t k) {
      return (steps.count - 1 - k) % 2 == 0 ? flat_out : flat_spare;
    };
    const Tensor& source = step == 0 ? flat_operand : written(step - 1);
    const Tensor& target = written(step);
    for (const Run& run : runs) {
      std::vector<uint64_t> lo = run.lo, size = run.size;
      if (steps.count > 1) {
        // This step's share of the split dimension (whole in every run).
        const uint64_t d = updates.shape()[steps.dim];
        lo[steps.dim] = d * step / steps.count;
        size[steps.dim] = d * (step + 1) / steps.count - lo[steps.dim];
      }
      TILEPROF_ASSIGN_OR_RETURN(Tensor out_part, target.Slice(run.first, run.first + run.count));
      TILEPROF_ASSIGN_OR_RETURN(Tensor operand_part,
                                source.Slice(run.first, run.first + run.count));
      TILEPROF_ASSIGN_OR_RETURN(Tensor box,
                                blocks ? StagedBox(updates_index, to_blocks, to_updates, lo, size)
                                       : updates_index.Box(lo, size));
      std::vector<uint64_t> hi(lo.size());
      for (size_t u = 0; u < lo.size(); ++u) hi[u] = lo[u] + size[u];
      const IndicesBox index_box = IndicesBoxOf(n, operand.Rank(), indices, lo, hi);
      TILEPROF_ASSIGN_OR_RETURN(Tensor index_part, indices_index.Box(index_box.lo, index_box.size));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex,
                                graph_.AddVertex(cs, *codelet, instruction.name()));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, run.tile));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["operand"], operand_part));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["indices"], index_part));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["updates"], box));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], out_part));
      TILEPROF_RETURN_IF_ERROR(
          SetParams(graph_, vertex, *codelet, run.first, params, lo, size, index_box));
    }
  }
  if (blocks) {
    // [groups, rows, C] back to the instruction's shape.
    const size_t to_rows[] = {1, 0, 2};
    TILEPROF_ASSIGN_OR_RETURN(Tensor rows, out.Dimshuffle(to_rows));
    TILEPROF_ASSIGN_OR_RETURN(out, rows.Reshape(result_shape));
  }
  return Value::Array(std::move(out));
}

}  // namespace tileprof::engine::compiler
