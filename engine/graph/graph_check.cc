// Graph validation and statistics. See graph.h.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "engine/graph/graph.h"

namespace tileprof::engine {
namespace {

// Unmapped ranges listed per variable before "and N more".
constexpr size_t kMaxGapsListed = 3;
// Write conflicts reported per compute set: the first few locate the bug;
// thousands would drown it.
constexpr size_t kMaxConflictsPerComputeSet = 3;

// Which (codelet, tile) pairs have a vertex, a bit each, with the codelets
// numbered densely in order of first appearance: a tree of pairs inserted
// into once per vertex was most of the time of Stats and TileUsages.
class CodeletTiles {
 public:
  explicit CodeletTiles(uint32_t num_tiles) : num_tiles_(num_tiles) {}

  uint32_t Index(const Codelet* codelet) {
    // Consecutive vertices mostly share a codelet.
    if (codelet != last_) {
      last_ = codelet;
      last_index_ = index_.emplace(codelet, static_cast<uint32_t>(index_.size())).first->second;
      if (bits_.size() < index_.size() * num_tiles_) bits_.resize(index_.size() * num_tiles_);
    }
    return last_index_;
  }
  // True the first time a codelet is seen on a tile.
  bool Insert(uint32_t index, uint32_t tile) {
    auto bit = bits_[uint64_t{index} * num_tiles_ + tile];
    if (bit) return false;
    bit = true;
    return true;
  }

 private:
  uint32_t num_tiles_;
  std::unordered_map<const Codelet*, uint32_t> index_;
  const Codelet* last_ = nullptr;
  uint32_t last_index_ = 0;
  std::vector<bool> bits_;
};

// One field's elements of one variable, for the overlap sweep.
struct Access {
  VariableId variable;
  uint64_t begin;
  uint64_t end;
  VertexId vertex;
  size_t field;
  bool written;
};

}  // namespace

Status Graph::CheckVertex(VertexId id) const {
  const VertexInfo& vertex = vertices_[id];
  const Codelet& codelet = *vertex.codelet;
  if (!vertex.tile) return MakeError("{}: not mapped to a tile", DescribeVertex(id));
  const std::span<const FieldView> fields = this->fields(id);
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!fields[i].connected()) {
      return MakeError("{}: field '{}' is not connected", DescribeVertex(id),
                       codelet.fields()[i].name);
    }
  }
  const std::span<const std::optional<uint32_t>> params = this->params(id);
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i]) {
      return MakeError("{}: parameter '{}' is not set", DescribeVertex(id), codelet.params()[i]);
    }
  }
  const std::vector<uint64_t> elements = FieldElements(id);
  const std::vector<uint32_t> values = ParamValues(id);
  if (auto status = codelet.CheckShape({elements, values}); !status) {
    return status.error().Within(DescribeVertex(id));
  }
  return {};
}

// Sorts every access of the compute set's vertices by variable and start,
// then sweeps, keeping the accesses still open at each start. Two accesses
// conflict when they overlap and either (a) they are different fields of one
// vertex and one is written (a vertex must not read what it is writing), or
// (b) they belong to different vertices and both write (the result would
// depend on the order the tiles' workers run in).
void Graph::CheckComputeSetWrites(ComputeSetId id, std::vector<Error>& problems) const {
  std::vector<Access> accesses;
  for (VertexId v : compute_sets_[id].vertices) {
    const VertexInfo& vertex = vertices_[v];
    const std::span<const FieldView> fields = this->fields(v);
    for (size_t f = 0; f < fields.size(); ++f) {
      if (!fields[f].connected()) continue;
      const bool written = vertex.codelet->fields()[f].IsWritten();
      for (const TensorRegion& r : fields[f].regions()) {
        accesses.push_back({r.variable, r.begin, r.end, v, f, written});
      }
    }
  }
  // Stable: ties keep vertex order, so messages name the earlier vertex first.
  std::stable_sort(accesses.begin(), accesses.end(), [](const Access& a, const Access& b) {
    return a.variable != b.variable ? a.variable < b.variable : a.begin < b.begin;
  });
  size_t reported = 0;
  std::vector<const Access*> open;
  for (const Access& access : accesses) {
    std::erase_if(open, [&](const Access* a) {
      return a->variable != access.variable || a->end <= access.begin;
    });
    for (const Access* other : open) {
      const bool same_vertex = other->vertex == access.vertex;
      const bool conflict = same_vertex
                                ? other->field != access.field && (other->written || access.written)
                                : other->written && access.written;
      if (!conflict) continue;
      const uint64_t element = access.begin;  // the first element both touch
      const auto field_name = [&](const Access& a) {
        return vertices_[a.vertex].codelet->fields()[a.field].name;
      };
      if (same_vertex) {
        problems.push_back(
            MakeError("{}: fields '{}' and '{}' overlap at element {} of {}, and one is written",
                      DescribeVertex(access.vertex), field_name(*other), field_name(access),
                      element, DescribeVariable(access.variable)));
      } else {
        problems.push_back(MakeError(
            "compute set '{}': {} field '{}' and {} field '{}' both write element {} of {}",
            compute_sets_[id].name, DescribeVertex(other->vertex), field_name(*other),
            DescribeVertex(access.vertex), field_name(access), element,
            DescribeVariable(access.variable)));
      }
      if (++reported == kMaxConflictsPerComputeSet) return;
    }
    open.push_back(&access);
  }
}

std::vector<Error> Graph::Check() const {
  std::vector<Error> problems;
  for (VariableId id = 0; id < variables_.size(); ++id) {
    const auto gaps = tile_maps_[id].Gaps(variables_[id].num_elements);
    if (gaps.empty()) continue;
    std::string ranges;
    for (size_t i = 0; i < gaps.size() && i < kMaxGapsListed; ++i) {
      ranges += fmt::format("{}[{}, {})", i == 0 ? "" : ", ", gaps[i].first, gaps[i].second);
    }
    if (gaps.size() > kMaxGapsListed) {
      ranges += fmt::format(" and {} more ranges", gaps.size() - kMaxGapsListed);
    }
    problems.push_back(
        MakeError("{}: elements {} are not mapped to a tile", DescribeVariable(id), ranges));
  }
  for (VertexId id = 0; id < vertices_.size(); ++id) {
    if (auto status = CheckVertex(id); !status) problems.push_back(status.error());
  }
  for (ComputeSetId id = 0; id < compute_sets_.size(); ++id) {
    CheckComputeSetWrites(id, problems);
  }
  return problems;
}

Status Graph::Validate() const {
  const std::vector<Error> problems = Check();
  if (problems.empty()) return {};
  if (problems.size() == 1) return problems.front();
  return MakeError("{} (and {} more problem{})", problems.front().message(), problems.size() - 1,
                   problems.size() == 2 ? "" : "s");
}

std::vector<TileUsage> Graph::TileUsages() const {
  const uint32_t num_tiles = target_.NumTiles();
  std::vector<TileUsage> tiles(num_tiles);
  std::vector<bool> used(num_tiles);
  auto tile_entry = [&](uint32_t tile) -> TileUsage& {
    used[tile] = true;
    return tiles[tile];
  };
  for (VariableId id = 0; id < variables_.size(); ++id) {
    const uint64_t size = SizeOf(variables_[id].type);
    for (const TileRun& run : tile_maps_[id].Runs()) {
      tile_entry(run.tile).data_bytes += (run.end - run.begin) * size;
    }
  }
  CodeletTiles code_on_tile(num_tiles);
  for (const VertexInfo& vertex : vertices_) {
    if (!vertex.tile) continue;
    TileUsage& usage = tile_entry(*vertex.tile);
    usage.vertices += 1;
    usage.edges += vertex.NumEdges();
    usage.vertex_state_bytes += vertex.codelet->state_bytes();
    if (code_on_tile.Insert(code_on_tile.Index(vertex.codelet), *vertex.tile)) {
      usage.vertex_code_bytes += vertex.codelet->code_bytes();
    }
  }
  std::vector<TileUsage> result;
  for (uint32_t tile = 0; tile < num_tiles; ++tile) {
    if (!used[tile]) continue;
    result.push_back(tiles[tile]);
    result.back().tile = tile;
  }
  return result;
}

GraphStats Graph::Stats() const {
  GraphStats stats;
  for (const VariableInfo& info : variables_) {
    const uint64_t bytes = info.num_elements * SizeOf(info.type);
    if (info.is_constant) {
      stats.num_constants += 1;
      stats.constant_bytes += bytes;
    } else {
      stats.num_variables += 1;
      stats.variable_bytes += bytes;
    }
  }
  stats.num_compute_sets = compute_sets_.size();
  stats.num_vertices = vertices_.size();
  stats.num_streams = streams_.size();
  CodeletTiles tiles_per_codelet(target_.NumTiles());
  for (const VertexInfo& vertex : vertices_) {
    const Codelet& codelet = *vertex.codelet;
    stats.num_edges += vertex.NumEdges();
    stats.edge_pointer_bytes += codelet.edge_pointer_bytes();
    stats.internal_state_bytes += codelet.internal_state_bytes();
    const uint32_t index = tiles_per_codelet.Index(&codelet);
    if (index == stats.by_codelet.size()) stats.by_codelet.push_back({.codelet = &codelet});
    CodeletUsage& entry = stats.by_codelet[index];
    entry.vertices += 1;
    entry.edges += vertex.NumEdges();
    entry.state_bytes += codelet.state_bytes();
    if (vertex.tile && tiles_per_codelet.Insert(index, *vertex.tile)) {
      entry.tiles += 1;
      stats.vertex_code_bytes += codelet.code_bytes();
    }
  }
  std::sort(stats.by_codelet.begin(), stats.by_codelet.end(),
            [](const CodeletUsage& a, const CodeletUsage& b) {
              if (a.state_bytes != b.state_bytes) return a.state_bytes > b.state_bytes;
              return a.codelet->name() < b.codelet->name();
            });
  stats.tiles_used = TileUsages().size();
  return stats;
}

}  // namespace tileprof::engine
