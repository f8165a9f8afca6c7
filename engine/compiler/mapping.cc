#include "engine/compiler/mapping.h"

#include <algorithm>

#include "engine/compiler/compiler.h"

namespace tileprof::engine::compiler {
namespace {

// Maps a tensor's elements to tiles a run at a time, in element order,
// walking its regions once: a Slice per run built a Tensor (a shape and a
// region vector) for each, a tenth of the allocations of graph construction.
class ElementMapper {
 public:
  ElementMapper(Graph& graph, const Tensor& tensor) : graph_(graph), regions_(tensor.regions()) {}

  // Maps the next `count` elements to `tile`.
  Status MapNext(uint64_t count, uint32_t tile) {
    while (count > 0) {
      if (index_ == regions_.size())
        return MakeError("tile mapping runs past the tensor's elements");
      const TensorRegion& region = regions_[index_];
      const uint64_t take = std::min(count, region.size() - offset_);
      const uint64_t begin = region.begin + offset_;
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(region.variable, begin, begin + take, tile));
      offset_ += take;
      count -= take;
      if (offset_ == region.size()) {
        ++index_;
        offset_ = 0;
      }
    }
    return {};
  }

 private:
  Graph& graph_;
  std::span<const TensorRegion> regions_;
  size_t index_ = 0;
  uint64_t offset_ = 0;
};

}  // namespace

LinearMapper::LinearMapper(Graph& graph, const CompileOptions& options)
    : graph_(graph), options_(options) {}

uint64_t LinearMapper::ChunkElements(uint64_t elements, ElementType type) const {
  const uint64_t size = SizeOf(type);
  const uint64_t grain = std::max<uint64_t>(1, options_.grain_bytes / size);
  const uint64_t minimum = std::max<uint64_t>(1, options_.min_bytes_per_tile / size);
  const uint64_t tiles = graph_.target().NumTiles();
  uint64_t chunk = std::max<uint64_t>((elements + tiles - 1) / tiles, minimum);
  chunk = (chunk + grain - 1) / grain * grain;
  return chunk;
}

Status LinearMapper::Map(const Tensor& tensor) {
  const uint64_t n = tensor.NumElements();
  if (n == 0) return {};
  const uint64_t chunk = ChunkElements(n, tensor.element_type());
  const uint32_t tiles = graph_.target().NumTiles();
  if (!tensor.valid()) return MakeError("tile mapping of an invalid tensor");
  ElementMapper mapper(graph_, tensor);
  uint32_t tile = options_.rotate_start_tile ? next_tile_ : 0;
  for (uint64_t begin = 0; begin < n; begin += chunk) {
    TILEPROF_RETURN_IF_ERROR(mapper.MapNext(std::min(n, begin + chunk) - begin, tile));
    tile = (tile + 1) % tiles;
  }
  next_tile_ = tile;
  return {};
}

uint32_t LinearMapper::TakeTiles(uint64_t count) {
  const uint32_t tiles = graph_.target().NumTiles();
  const uint32_t first = options_.rotate_start_tile ? next_tile_ : 0;
  next_tile_ = static_cast<uint32_t>((first + count) % tiles);
  return first;
}

Status LinearMapper::MapToTile(const Tensor& tensor, uint32_t tile) {
  if (tensor.NumElements() == 0) return {};
  return graph_.SetTileMapping(tensor, tile);
}

Status LinearMapper::MapLike(const Tensor& out, const Tensor& like) {
  const uint64_t n = out.NumElements();
  if (n == 0) return {};
  // A view that repeats elements (a broadcast) holds its data on a few
  // tiles: following it would put everything there.
  if (like.HasAliases()) return Map(out);
  std::vector<MappedRegion> pieces = graph_.MapRegions(like.Flatten());
  // Coalesce neighbouring pieces on one tile: a view may split a tile's data
  // into many runs that are adjacent in the view's order.
  struct Run {
    uint64_t size;
    uint32_t tile;
  };
  std::vector<Run> runs;
  for (const MappedRegion& piece : pieces) {
    if (!piece.tile) return Map(out);
    if (!runs.empty() && runs.back().tile == *piece.tile) {
      runs.back().size += piece.region.size();
    } else {
      runs.push_back({piece.region.size(), *piece.tile});
    }
  }
  const uint64_t grain = std::max<uint64_t>(1, options_.grain_bytes / SizeOf(out.element_type()));
  if (runs.size() > 1 && runs.size() * grain > n) return Map(out);
  if (!out.valid()) return MakeError("tile mapping of an invalid tensor");
  ElementMapper mapper(graph_, out);
  for (const Run& run : runs) TILEPROF_RETURN_IF_ERROR(mapper.MapNext(run.size, run.tile));
  return {};
}

}  // namespace tileprof::engine::compiler
