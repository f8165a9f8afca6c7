#include "engine/sim/plan_compute_set.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "engine/sim/tile_table.h"
#include "engine/sim/traffic.h"

namespace tileprof::engine::sim::plan_internal {

// A read interval a tile needs from another tile, for counting each remote
// byte once per receiving tile however many of its vertices read it.
struct RemoteRead {
  ByteRun run;
  uint32_t owner = 0;
};

// A written field's one byte run, for the in-place rule (written runs
// are pairwise disjoint: the graph forbids two vertices of a compute set
// writing one element).
struct FieldAccess {
  ByteRun run;
  TilePlan* tile;
  size_t vertex;  // index in tile->vertices
  size_t field;
};

// What planning one compute set gathers from its vertices.
struct ComputeSetWork {
  explicit ComputeSetWork(const Target& target)
      : tiles(target.NumTiles()),
        remote_reads(target.NumTiles()),
        cycles(target.NumTiles()),
        traffic(target) {}
  TileTable<TilePlan> tiles;  // slots never move: FieldAccess points into them
  TileTable<std::vector<RemoteRead>> remote_reads;
  TileTable<std::pair<std::vector<uint64_t>, std::vector<uint64_t>>>
      cycles;  // workers, supervisors
  std::map<uint32_t, CodeletCount> counts;
  Traffic traffic;
  std::vector<FieldAccess> writes;  // written fields that may be used in place
  std::unordered_set<uint32_t> ipus;
};

namespace {

uint64_t Align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

void CountRemoteReads(uint32_t tile, std::vector<RemoteRead>& reads, Traffic& traffic) {
  std::sort(reads.begin(), reads.end(), [](const RemoteRead& a, const RemoteRead& b) {
    return a.run.variable != b.run.variable ? a.run.variable < b.run.variable
                                            : a.run.begin < b.run.begin;
  });
  VariableId variable = 0;
  uint64_t covered = 0;
  bool any = false;
  for (const RemoteRead& read : reads) {
    if (!any || read.run.variable != variable) {
      variable = read.run.variable;
      covered = 0;
      any = true;
    }
    const uint64_t begin = std::max(read.run.begin, covered);
    if (read.run.end > begin) {
      traffic.Move(read.owner, tile, read.run.end - begin);
      covered = read.run.end;
    }
  }
}

// A written field is used in place only if no other vertex of the step reads
// its bytes. `writes` are the runs of the written fields that could be
// (one run each); the reads are walked where they lie, in the tiles' plans,
// rather than listed (a step of ResNet-50 reads millions of runs).
void KeepInPlaceOnlyUnread(std::vector<FieldAccess>& writes, TileTable<TilePlan>& tiles) {
  if (writes.empty()) return;
  std::sort(writes.begin(), writes.end(), [](const FieldAccess& a, const FieldAccess& b) {
    return a.run.variable != b.run.variable ? a.run.variable < b.run.variable
                                            : a.run.begin < b.run.begin;
  });
  // The writes overlapping `read` by vertex `v` of `tile`, unless its own.
  const auto read_by = [&](const TensorRegion& read, const TilePlan& tile, size_t v) {
    auto it = std::lower_bound(
        writes.begin(), writes.end(), read, [](const FieldAccess& w, const TensorRegion& r) {
          return w.run.variable != r.variable ? w.run.variable < r.variable : w.run.end <= r.begin;
        });
    for (; it != writes.end() && it->run.variable == read.variable && it->run.begin < read.end;
         ++it) {
      if (it->tile != &tile || it->vertex != v)
        it->tile->vertices[it->vertex].fields[it->field].in_place = false;
    }
  };
  tiles.ForEach([&](uint32_t, TilePlan& tile) {
    for (size_t v = 0; v < tile.vertices.size(); ++v) {
      for (const FieldPlan& field : tile.vertices[v].fields) {
        if (field.written) continue;
        for (const StridedRegion& rows : field.runs)
          for (uint32_t k = 0; k < rows.count; ++k) read_by(rows.At(k), tile, v);
      }
    }
  });
}

}  // namespace

void CheckValues(const PlanInputs& in, std::span<const Piece> pieces, std::string_view who,
                 Refusals& refusals) {
  for (const Piece& piece : pieces) {
    if (!in.valueless.contains(piece.run.variable)) continue;
    // One refusal per constant (its name is the constant instruction's),
    // naming the first reader.
    const VariableInfo& variable = in.graph.variable(piece.run.variable);
    std::string key = "constant\n" + variable.name;
    if (refusals.Contains(key)) continue;
    refusals.Add(std::move(key),
                 {variable.name,
                  fmt::format("its values are unknown (elided as {{...}} in the HLO text, or of a "
                              "type the engine has no arithmetic for), and '{}' reads it",
                              who)});
  }
}

uint32_t ComputeSetPlanner::CodeletIndex(const Codelet* codelet) {
  auto [it, added] = codelet_index_.emplace(codelet, static_cast<uint32_t>(codelets.size()));
  if (added) codelets.push_back(codelet);
  return it->second;
}

Status ComputeSetPlanner::Plan(ComputeSetId id, ComputeSetPlan& plan) {
  const ComputeSetInfo& info = in_.graph.compute_set(id);
  const Target& target = in_.graph.target();
  ComputeSetWork work(target);
  for (VertexId vertex_id : info.vertices) TILEPROF_RETURN_IF_ERROR(PlanVertex(vertex_id, work));
  KeepInPlaceOnlyUnread(work.writes, work.tiles);

  plan.id = id;
  work.remote_reads.ForEach([&](uint32_t tile, std::vector<RemoteRead>& reads_of_tile) {
    CountRemoteReads(tile, reads_of_tile, work.traffic);
  });
  work.cycles.ForEach([&](uint32_t tile, const auto& lists) {
    const TileCompute compute = PackTile(lists.first, lists.second, target.NumWorkerContexts());
    work.traffic.Local(tile, compute.including_idle, compute.excluding_idle);
  });
  // Fields not used in place get their own bytes of the compute set's arena.
  work.tiles.ForEach([&](uint32_t, TilePlan& tile_plan) {
    for (VertexPlan& vertex : tile_plan.vertices) {
      for (FieldPlan& field : vertex.fields) {
        if (field.in_place) continue;
        field.arena_offset = plan.arena_bytes;
        plan.arena_bytes = Align8(plan.arena_bytes + field.bytes);
        if (field.written) plan.scatters = true;
      }
    }
    plan.tiles.push_back(std::move(tile_plan));
  });
  plan.cost = work.traffic.Cost(work.ipus.size() > 1, in_.busy_tiles);
  for (const auto& [index, count] : work.counts) {
    plan.codelets.push_back(count);
    plan.codelets.back().codelet = index;
  }
  return {};
}

Status ComputeSetPlanner::PlanVertex(VertexId vertex_id, ComputeSetWork& work) {
  const Graph& graph = in_.graph;
  const VertexInfo& vertex = graph.vertex(vertex_id);
  // Only for refusals: a string per vertex was a cost of every run.
  const auto who = [&] {
    return vertex.debug_name.empty() ? graph.DescribeVertex(vertex_id)
                                     : std::string(vertex.debug_name);
  };
  if (!vertex.codelet->executable()) {
    std::string reason =
        fmt::format("{} has no compute function in the simulator", vertex.codelet->name());
    std::string key = who() + "\n" + reason;
    refusals.Add(std::move(key), {who(), std::move(reason)});
    return {};
  }
  if (!vertex.tile) return MakeError("{} is not mapped to a tile", graph.DescribeVertex(vertex_id));
  const uint32_t tile = *vertex.tile;
  work.ipus.insert(graph.target().IpuOfTile(tile));
  TilePlan& tile_plan = work.tiles[tile];
  tile_plan.tile = tile;
  VertexPlan vertex_plan;
  vertex_plan.id = vertex_id;
  vertex_plan.codelet = vertex.codelet;
  vertex_plan.params = graph.ParamValues(vertex_id);
  const auto specs = vertex.codelet->fields();
  const std::span<const FieldView> fields = graph.fields(vertex_id);
  for (size_t f = 0; f < specs.size(); ++f) {
    if (!fields[f].connected()) {
      return MakeError("{}: field '{}' is not connected", graph.DescribeVertex(vertex_id),
                       specs[f].name);
    }
    std::vector<Piece>& pieces = pieces_;
    if (Status found = FieldPieces(graph, in_.storage, fields[f], pieces); !found) {
      return found.error().Within(
          fmt::format("{} field '{}'", graph.DescribeVertex(vertex_id), specs[f].name));
    }
    const bool reads_field = specs[f].direction != FieldDirection::kOutput;
    if (reads_field && !in_.valueless.empty()) CheckValues(in_, pieces, who(), refusals);
    FieldPlan field;
    field.written = specs[f].IsWritten();
    for (const Piece& piece : pieces) {
      const uint64_t bytes = piece.run.end - piece.run.begin;
      field.bytes += bytes;
      if (piece.tile != tile) {
        if (reads_field) work.remote_reads[tile].push_back({piece.run, piece.tile});
        if (field.written) work.traffic.Move(tile, piece.tile, bytes, /*after=*/true);
      }
    }
    std::vector<ByteRun>& runs = runs_;
    Runs(pieces, runs);
    field.in_place = runs.size() == 1;
    if (!field.in_place && !field.written && vertex.codelet->ReadsRows(f)) {
      const FieldRows rows = EvenRows(runs);
      field.in_place = rows.strided();
      if (field.in_place) {
        vertex_plan.rows.resize(specs.size());
        vertex_plan.rows[f] = rows;
      }
    }
    if (field.written && field.in_place)
      work.writes.push_back({runs[0], &tile_plan, tile_plan.vertices.size(), f});
    CompressRuns(runs, field.runs);
    vertex_plan.fields.push_back(std::move(field));
  }
  vertex_plan.spans.resize(vertex_plan.fields.size());
  const uint64_t vertex_cycles = graph.VertexCycles(vertex_id);
  auto& lists = work.cycles[tile];
  (vertex.codelet->execution_kind() == ExecutionKind::kWorker ? lists.first : lists.second)
      .push_back(vertex_cycles);
  CodeletCount& count = work.counts[CodeletIndex(vertex.codelet)];
  ++count.instances;
  count.cycles += vertex_cycles;
  tile_plan.vertices.push_back(std::move(vertex_plan));
  return {};
}

}  // namespace tileprof::engine::sim::plan_internal
