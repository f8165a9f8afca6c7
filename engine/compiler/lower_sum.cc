// Summing rows of partials held on many tiles into a mapped target: the
// second half of every "compute where the data lives" plan (table lookups,
// lower_lookup.cc; reductions over outer dimensions, lower_reduce_held.cc).
// Each piece of the target is computed on its tile by a popops::Reduce
// vertex reading that piece of every row; past kMaxSumFanIn rows the sum
// takes two stages (groups of about the square root of the rows, each
// group's sum cut into pieces on its rows' tiles), so no tile receives a
// piece from each of ~1,472 rows.
#include <algorithm>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

// Elements (rows x outputs) a worker's vertex sums at least before a piece
// is shared among workers: past the vertex's own overhead.
constexpr uint64_t kMinWorkerSumElements = 256;

// Adds to `cs` the vertices of `sum` of each mapped piece of `target`
// (flat, M elements; one vertex per piece, or up to one per worker of a
// piece summing many rows), each reading its part of every row of `rows`
// (each flat, M elements), partial-major as popops::Reduce takes them.
Status AddSumVertices(Graph& graph, ComputeSetId cs, const Codelet& sum,
                      std::span<const Tensor> rows, const Tensor& target, std::string_view name) {
  std::vector<Tensor> pieces(rows.size());
  const uint64_t workers = graph.target().NumWorkerContexts();
  uint64_t position = 0;
  for (const MappedRegion& piece : graph.MapRegions(target)) {
    const uint64_t first = position, n = piece.region.size();
    position += n;
    if (!piece.tile) return MakeError("{} is not mapped", target.ShapeString());
    // popops::Reduce is a worker vertex: a piece summing many rows is
    // shared among the tile's workers, as popops splits a reduction's
    // regions between them (one vertex summing 38 rows of 64 took six
    // times as long as the step's other tiles).
    const uint64_t split = std::clamp<uint64_t>(
        SaturatingMul(n, rows.size()) / kMinWorkerSumElements, 1, std::min(workers, n));
    for (uint64_t w = 0; w < split; ++w) {
      const uint64_t begin = first + n * w / split, end = first + n * (w + 1) / split;
      for (size_t s = 0; s < rows.size(); ++s) {
        TILEPROF_ASSIGN_OR_RETURN(pieces[s], rows[s].Slice(begin, end));
      }
      TILEPROF_ASSIGN_OR_RETURN(Tensor in, Tensor::Concat(pieces));
      TILEPROF_ASSIGN_OR_RETURN(Tensor out, target.Slice(begin, end));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, sum, name));
      TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, *piece.tile));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["partials"], in));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], out));
    }
  }
  return {};
}

}  // namespace

size_t SumFanIn(size_t rows) {
  return rows <= kMaxSumFanIn ? rows : static_cast<size_t>(CeilSqrt(rows));
}

Status Lowering::SumRows(std::span<SumJob> jobs, const RowSum& how, std::string_view name,
                         program::Sequence& program) {
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* group_sum,
                            GetReduceCodelet(how.op, how.type, how.fill_groups != nullptr));
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* final_sum,
                            GetReduceCodelet(how.op, how.type, how.into_target));
  // Stage 1, for the jobs with more rows than one vertex sums.
  std::optional<ComputeSetId> group_cs;
  for (SumJob& job : jobs) {
    const size_t fan_in = SumFanIn(job.rows.size());
    if (fan_in >= job.rows.size()) continue;
    const uint64_t width = job.target.NumElements();
    const size_t groups = (job.rows.size() + fan_in - 1) / fan_in;
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor group_sums,
        NewTensor(how.type, {groups, width}, fmt::format("{}/group sums", name), false));
    std::vector<Tensor> group_rows(groups);
    for (size_t g = 0; g < groups; ++g) {
      const size_t first = g * fan_in, count = std::min(fan_in, job.rows.size() - first);
      TILEPROF_ASSIGN_OR_RETURN(Tensor row, group_sums.Slice(g, g + 1));
      group_rows[g] = row.Flatten();
      // The group's sum in pieces of at least kMinSumPieceBytes, on tiles
      // spread over its rows': each piece costs every row's tile a region
      // sent and its own tile one received per row, and exchange code is
      // always live (a 2 KB row cut 37 ways was 74 regions a tile).
      const size_t pieces = static_cast<size_t>(std::clamp<uint64_t>(
          cost::CeilDiv(width * SizeOf(how.type), kMinSumPieceBytes), 1, count));
      for (size_t j = 0; j < pieces; ++j) {
        const uint64_t begin = width * j / pieces, end = width * (j + 1) / pieces;
        if (end == begin) continue;
        TILEPROF_ASSIGN_OR_RETURN(Tensor piece, group_rows[g].Slice(begin, end));
        TILEPROF_RETURN_IF_ERROR(
            graph_.SetTileMapping(piece, job.tiles[first + j * count / pieces]));
      }
    }
    if (how.fill_groups) TILEPROF_RETURN_IF_ERROR(how.fill_groups(group_sums));
    if (!group_cs) group_cs = AddComputeSet(fmt::format("{}/group sum", name), program);
    for (size_t g = 0; g < groups; ++g) {
      const size_t first = g * fan_in, count = std::min(fan_in, job.rows.size() - first);
      TILEPROF_RETURN_IF_ERROR(AddSumVertices(graph_, *group_cs, *group_sum,
                                              std::span(job.rows).subspan(first, count),
                                              group_rows[g], name));
    }
    job.rows = std::move(group_rows);
  }
  // Stage 2 (or the only one): into the targets.
  const ComputeSetId cs = AddComputeSet(fmt::format("{}/sum", name), program);
  for (const SumJob& job : jobs) {
    TILEPROF_RETURN_IF_ERROR(AddSumVertices(graph_, cs, *final_sum, job.rows, job.target, name));
  }
  return {};
}

}  // namespace tileprof::engine::compiler
