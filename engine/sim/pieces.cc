#include "engine/sim/pieces.h"

namespace tileprof::engine::sim {
namespace {

// Takes the pieces of a walk in order, each with the tile run holding it;
// the first unmapped one is the error.
class PieceCollector {
 public:
  PieceCollector(const Graph& graph, const StorageLayout& storage, ElementType type,
                 std::vector<Piece>& pieces)
      : graph_(graph), storage_(storage), size_(SizeOf(type)), pieces_(pieces) {}
  void Add(const TensorRegion& region, const TileRun* run) {
    if (run == nullptr) {
      if (!unmapped_) unmapped_ = region;
      return;
    }
    const auto index = static_cast<size_t>(run - graph_.TileMapping(region.variable).data());
    const uint64_t at = storage_.InRun(region.variable, index, *run, region.begin);
    pieces_.push_back(
        {{region.variable, at * size_, (at + region.end - region.begin) * size_}, run->tile});
  }
  Status Finish() const {
    if (!unmapped_) return {};
    return MakeError("elements [{}, {}) of {} are not mapped to a tile", unmapped_->begin,
                     unmapped_->end, graph_.DescribeVariable(unmapped_->variable));
  }

 private:
  const Graph& graph_;
  const StorageLayout& storage_;
  uint64_t size_;
  std::vector<Piece>& pieces_;
  std::optional<TensorRegion> unmapped_;
};

}  // namespace

Expected<std::vector<Piece>> Pieces(const Graph& graph, const StorageLayout& storage,
                                    const Tensor& tensor) {
  std::vector<Piece> pieces;
  PieceCollector collect(graph, storage, tensor.element_type(), pieces);
  for (const TensorRegion& region : tensor.regions()) {
    graph.ForEachRunPiece(
        region, [&](const TensorRegion& piece, const TileRun* run) { collect.Add(piece, run); });
  }
  TILEPROF_RETURN_IF_ERROR(collect.Finish());
  return pieces;
}

Status FieldPieces(const Graph& graph, const StorageLayout& storage, const FieldView& field,
                   std::vector<Piece>& pieces) {
  pieces.clear();
  PieceCollector collect(graph, storage, field.element_type(), pieces);
  for (const StridedRegion& run : field.regions().runs()) {
    graph.ForEachRunPiece(run, [&](const TensorRegion& region, const TileRun* tile_run) {
      collect.Add(region, tile_run);
    });
  }
  return collect.Finish();
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
