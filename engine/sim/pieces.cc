#include "engine/sim/pieces.h"

namespace tileprof::engine::sim {
namespace {

// Takes the pieces of a walk in order; the first unmapped one is the error.
class PieceCollector {
 public:
  PieceCollector(ElementType type, std::vector<Piece>& pieces)
      : size_(SizeOf(type)), pieces_(pieces) {}
  void Add(const TensorRegion& region, std::optional<uint32_t> tile) {
    if (!tile) {
      if (!unmapped_) unmapped_ = region;
      return;
    }
    pieces_.push_back({{region.variable, region.begin * size_, region.end * size_}, *tile});
  }
  Status Finish(const Graph& graph) const {
    if (!unmapped_) return {};
    return MakeError("elements [{}, {}) of {} are not mapped to a tile", unmapped_->begin,
                     unmapped_->end, graph.DescribeVariable(unmapped_->variable));
  }

 private:
  uint64_t size_;
  std::vector<Piece>& pieces_;
  std::optional<TensorRegion> unmapped_;
};

}  // namespace

Expected<std::vector<Piece>> Pieces(const Graph& graph, const Tensor& tensor) {
  std::vector<Piece> pieces;
  PieceCollector collect(tensor.element_type(), pieces);
  graph.ForEachMappedRegion(
      tensor, [&](const MappedRegion& mapped) { collect.Add(mapped.region, mapped.tile); });
  TILEPROF_RETURN_IF_ERROR(collect.Finish(graph));
  return pieces;
}

Status FieldPieces(const Graph& graph, const FieldView& field, std::vector<Piece>& pieces) {
  pieces.clear();
  PieceCollector collect(field.element_type(), pieces);
  for (const StridedRegion& run : field.regions().runs()) {
    graph.ForEachRunPiece(run, [&](const TensorRegion& region, const TileRun* tile_run) {
      collect.Add(region, tile_run ? std::optional(tile_run->tile) : std::nullopt);
    });
  }
  return collect.Finish(graph);
}

std::vector<ByteRun> Runs(std::span<const Piece> pieces) {
  std::vector<ByteRun> runs;
  Runs(pieces, runs);
  return runs;
}

void Runs(std::span<const Piece> pieces, std::vector<ByteRun>& runs) {
  runs.clear();
  for (const Piece& piece : pieces) {
    if (!runs.empty() && runs.back().variable == piece.run.variable &&
        runs.back().end == piece.run.begin) {
      runs.back().end = piece.run.end;
    } else {
      runs.push_back(piece.run);
    }
  }
}

void CompressRuns(std::span<const ByteRun> runs, std::vector<StridedRegion>& rows) {
  // AppendStrided makes at most a run per ByteRun; the result is cut to its
  // size, as it stays in the plan until resolved.
  rows.resize(runs.size());
  size_t used = 0;
  for (const ByteRun& run : runs)
    AppendStrided(rows.data(), used, {run.variable, run.begin, run.end});
  rows.resize(used);
  rows.shrink_to_fit();
}

}  // namespace tileprof::engine::sim
