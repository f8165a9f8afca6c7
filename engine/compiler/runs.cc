#include "engine/compiler/runs.h"

#include <algorithm>
#include <optional>

namespace tileprof::engine::compiler {
namespace {

// Source elements a vertex may read beyond twice its outputs before its run
// is split (SplitWideRun): 4096 (16 KiB of f32) keeps ordinary transposes in
// one vertex per tile.
constexpr uint64_t kMaxBoxSlackElements = 4096;

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> FlatRunBox(std::span<const uint64_t> dims,
                                                      uint64_t first, uint64_t count) {
  const size_t rank = dims.size();
  std::vector<uint64_t> f(rank), l(rank);
  uint64_t a = first, b = first + count - 1;
  for (size_t d = rank; d-- > 0;) {
    f[d] = a % dims[d];
    a /= dims[d];
    l[d] = b % dims[d];
    b /= dims[d];
  }
  std::vector<std::pair<uint64_t, uint64_t>> box(rank);
  bool split = false;
  for (size_t d = 0; d < rank; ++d) {
    box[d] = split ? std::pair<uint64_t, uint64_t>{0, dims[d] - 1} : std::pair{f[d], l[d]};
    split = split || f[d] != l[d];
  }
  return box;
}

Expected<std::vector<Run>> RunsOf(const Graph& graph, const Tensor& flat) {
  std::vector<Run> runs;
  uint64_t position = 0;
  for (const MappedRegion& piece : graph.MapRegions(flat)) {
    if (!piece.tile) return MakeError("{} is not mapped", flat.ShapeString());
    runs.push_back({position, piece.region.size(), *piece.tile});
    position += piece.region.size();
  }
  return runs;
}

bool SplitWideRun(std::span<const uint64_t> dims,
                  std::span<const std::pair<uint64_t, uint64_t>> box, uint64_t box_volume,
                  uint64_t needed, Run run, std::vector<Run>& runs) {
  if (box_volume <= 2 * needed + kMaxBoxSlackElements) return false;
  size_t k = 0;
  while (k < dims.size() && box[k].first == box[k].second) ++k;
  uint64_t block = 1;
  for (size_t d = k + 1; d < dims.size(); ++d) block *= dims[d];
  if (k + 1 >= dims.size() || block >= run.count + (run.first % block)) return false;
  for (uint64_t at = run.first; at < run.first + run.count;) {
    const uint64_t end = std::min(run.first + run.count, (at / block + 1) * block);
    runs.push_back({at, end - at, run.tile});
    at = end;
  }
  return true;
}

std::vector<RowBlock> RowBlocks(const Graph& graph, const Tensor& flat, uint64_t width,
                                uint64_t group) {
  std::vector<RowBlock> blocks;
  uint64_t position = 0;
  for (const MappedRegion& piece : graph.MapRegions(flat)) {
    const uint64_t a = position, b = position + piece.region.size();
    position = b;
    if (!piece.tile) continue;  // callers check the tensor is mapped
    const uint64_t first = (a + width - 1) / width, end = (b + width - 1) / width;
    if (!blocks.empty() && blocks.back().tile == *piece.tile && blocks.back().end_row == first) {
      blocks.back().end_row = end;
    } else if (end > first) {
      blocks.push_back({*piece.tile, first, end, 0});
    }
    // Elements of this piece inside rows its tile's block owns.
    if (!blocks.empty() && blocks.back().tile == *piece.tile) {
      RowBlock& last = blocks.back();
      const uint64_t lo = std::max(a, last.first_row * width);
      const uint64_t hi = std::min(b, last.end_row * width);
      if (hi > lo) last.local += hi - lo;
    }
  }
  if (group == UINT64_MAX) return blocks;
  // Cut at the group boundaries, sharing `local` out by rows.
  std::vector<RowBlock> cut;
  for (const RowBlock& b : blocks) {
    const uint64_t rows = b.end_row - b.first_row;
    for (uint64_t at = b.first_row; at < b.end_row;) {
      const uint64_t end = std::min(b.end_row, (at / group + 1) * group);
      cut.push_back({b.tile, at, end, b.local / rows * (end - at)});
      at = end;
    }
  }
  return cut;
}

std::vector<uint64_t> TileRunsAlong(const Graph& graph, const Tensor& tensor,
                                    std::span<const StridedDim> dims) {
  std::vector<uint64_t> runs(dims.size(), 0);
  const uint64_t n = tensor.NumElements();
  if (tensor.regions().size() != 1 || tensor.regions()[0].size() != n || n == 0) return runs;
  const TensorRegion whole = tensor.regions()[0];
  const auto tile_of = [&](uint64_t e) {
    return graph.TileHolding(TensorRegion{whole.variable, whole.begin + e, whole.begin + e + 1});
  };
  constexpr uint64_t kSamples = 3;
  for (size_t k = 0; k < dims.size(); ++k) {
    const StridedDim& d = dims[k];
    if (d.size <= 1 || d.stride == 0) continue;
    uint64_t total = 0;
    for (uint64_t sample = 1; sample <= kSamples; ++sample) {
      const uint64_t e = n * sample / (kSamples + 1);
      const std::optional<uint32_t> tile = tile_of(e);
      if (!tile) return std::vector<uint64_t>(dims.size(), 0);
      const uint64_t at = e / d.stride % d.size;
      // Steps along the dimension that stay on the tile, one way: `room`
      // at most.
      const auto reach = [&](uint64_t room, bool forward) {
        const auto same = [&](uint64_t steps) {
          return tile_of(forward ? e + steps * d.stride : e - steps * d.stride) == tile;
        };
        uint64_t good = 0, step = 1;
        while (step <= room && same(step)) good = step, step *= 2;
        uint64_t bad = std::min(step, room + 1);
        while (bad - good > 1) {
          const uint64_t mid = good + (bad - good) / 2;
          (same(mid) ? good : bad) = mid;
        }
        return good;
      };
      total += 1 + reach(d.size - 1 - at, true) + reach(at, false);
    }
    runs[k] = std::max<uint64_t>(1, total / kSamples);
  }
  return runs;
}

}  // namespace tileprof::engine::compiler
