#include "engine/sim/plan.h"

namespace tileprof::engine::sim {
namespace {

// Appends `items` to `to` and returns them where they now lie; `to` was
// reserved for all of them, so earlier spans stay valid.
template <typename T>
std::span<const T> Append(std::vector<T>& to, std::span<const T> items) {
  const size_t at = to.size();
  to.insert(to.end(), items.begin(), items.end());
  return std::span<const T>(to).subspan(at, items.size());
}

}  // namespace

PackedComputeSet Pack(std::span<const TilePlan> tiles) {
  PackedComputeSet packed;
  size_t vertices = 0, spans = 0, params = 0, rows = 0, copies = 0, host = 0;
  for (const TilePlan& tile : tiles) {
    vertices += tile.vertices.size();
    for (const VertexPlan& vertex : tile.vertices) {
      spans += vertex.spans.size();
      params += vertex.params.size();
      rows += vertex.rows.size();
    }
    copies += tile.gathers.size() + tile.write_backs.size();
    for (const ArenaCopy& copy : tile.gathers) host += copy.runs.size();
    for (const ArenaCopy& copy : tile.write_backs) host += copy.runs.size();  // if unshared
  }
  packed.tiles.reserve(tiles.size());
  packed.vertices.reserve(vertices);
  packed.spans.reserve(spans);
  packed.params.reserve(params);
  packed.rows.reserve(rows);
  packed.copies.reserve(copies);
  packed.host.reserve(host);

  for (const TilePlan& tile : tiles) {
    PackedTile& to = packed.tiles.emplace_back();
    to.tile = tile.tile;
    const size_t first_vertex = packed.vertices.size();
    for (const VertexPlan& vertex : tile.vertices) {
      packed.vertices.push_back({.codelet = vertex.codelet,
                                 .spans = Append<std::span<std::byte>>(packed.spans, vertex.spans),
                                 .params = Append<uint32_t>(packed.params, vertex.params),
                                 .rows = Append<FieldRows>(packed.rows, vertex.rows),
                                 .id = vertex.id});
    }
    to.vertices =
        std::span<const PackedVertex>(packed.vertices).subspan(first_vertex, tile.vertices.size());
    const size_t first_gather = packed.copies.size();
    for (const ArenaCopy& copy : tile.gathers)
      packed.copies.push_back({copy.arena, Append<HostRun>(packed.host, copy.runs)});
    to.gathers =
        std::span<const ArenaCopy>(packed.copies).subspan(first_gather, tile.gathers.size());
    // A write-back copies back what its gather copied, and the write-backs
    // are the written gathers in order: each shares its gather's runs.
    const size_t first_write_back = packed.copies.size();
    size_t g = 0;
    const auto same = [](const ArenaCopy& a, const ArenaCopy& b) {
      return a.arena == b.arena && a.runs.data() == b.runs.data() && a.runs.size() == b.runs.size();
    };
    for (const ArenaCopy& copy : tile.write_backs) {
      while (g < tile.gathers.size() && !same(tile.gathers[g], copy)) ++g;
      packed.copies.push_back(g < tile.gathers.size()
                                  ? to.gathers[g]
                                  : ArenaCopy{copy.arena, Append<HostRun>(packed.host, copy.runs)});
    }
    to.write_backs = std::span<const ArenaCopy>(packed.copies)
                         .subspan(first_write_back, tile.write_backs.size());
  }
  return packed;
}

}  // namespace tileprof::engine::sim
