#include "engine/sim/plan.h"

#include "engine/sim/pieces.h"
#include "engine/sim/tile_table.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include <fmt/format.h>

namespace tileprof::engine::sim {
namespace {

using program::ProgramKind;

uint64_t Align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// Bytes a step moves, per tile and per IPU, and what they cost.
class Traffic {
 public:
  explicit Traffic(const Target& target)
      : target_(target),
        before_(target.NumTiles()),
        after_(target.NumTiles()),
        compute_(target.NumTiles()) {}

  // `bytes` owned by `from` are needed on `to`; `after` puts the transfer
  // after the compute phase (a written field on another tile).
  void Move(uint32_t from, uint32_t to, uint64_t bytes, bool after = false) {
    if (from == to || bytes == 0) return;
    const uint32_t from_ipu = target_.IpuOfTile(from);
    const uint32_t to_ipu = target_.IpuOfTile(to);
    if (from_ipu != to_ipu) {
      global_[from_ipu].out += bytes;
      global_[to_ipu].in += bytes;
      global_tiles_.insert(from);
      global_tiles_.insert(to);
      return;
    }
    auto& phase = after ? after_ : before_;
    phase[from].out += bytes;
    phase[to].in += bytes;
  }

  void Local(uint32_t tile, uint64_t cycles_including, uint64_t cycles_excluding) {
    auto& compute = compute_[tile];
    compute.first += cycles_including;
    compute.second += cycles_excluding;
  }

  // Sync, then the exchange before compute, the global exchange, compute,
  // and the exchange of written fields after it.
  // With `busy_tiles`, each tile's exchange and compute cycles are listed.
  StepCost Cost(bool spans_ipus, bool busy_tiles) const {
    StepCost cost;
    uint64_t before = 0, after = 0, compute = 0, global = 0;
    std::map<uint32_t, StepCost::Busy> busy;  // by tile, filled only with busy_tiles
    before_.ForEach([&](uint32_t tile, const Bytes& bytes) {
      const uint64_t cycles = ExchangeCycles(bytes.in, bytes.out);
      before = std::max(before, cycles);
      cost.exchange += cycles;
      if (busy_tiles) busy[tile].exchange += cycles;
    });
    after_.ForEach([&](uint32_t tile, const Bytes& bytes) {
      const uint64_t cycles = ExchangeCycles(bytes.in, bytes.out);
      after = std::max(after, cycles);
      cost.exchange += cycles;
      if (busy_tiles) busy[tile].exchange += cycles;
    });
    compute_.ForEach([&](uint32_t tile, const std::pair<uint64_t, uint64_t>& cycles) {
      compute = std::max(compute, cycles.first);
      cost.compute_including_idle += cycles.first;
      cost.compute_excluding_idle += cycles.second;
      if (busy_tiles) busy[tile].compute += cycles.first;
    });
    for (const auto& [ipu, bytes] : global_) {
      global = std::max(
          global, kExchangeSetupCycles + IpuLinkCycles(std::max(bytes.in, bytes.out), target_));
    }
    cost.global_exchange = global * global_tiles_.size();
    if (busy_tiles) {
      for (uint32_t tile : global_tiles_) busy[tile].exchange += global;
      cost.busy_tiles.reserve(busy.size());
      for (auto& [tile, cycles] : busy) {
        cycles.tile = tile;
        cost.busy_tiles.push_back(cycles);
      }
    }
    const bool global_sync = spans_ipus || !global_.empty();
    cost.duration =
        (global_sync ? kGlobalSyncCycles : kIpuSyncCycles) + before + global + compute + after;
    return cost;
  }

 private:
  struct Bytes {
    uint64_t in = 0;
    uint64_t out = 0;
  };
  const Target& target_;
  TileTable<Bytes> before_, after_;
  std::map<uint32_t, Bytes> global_;  // by IPU
  std::unordered_set<uint32_t> global_tiles_;
  TileTable<std::pair<uint64_t, uint64_t>> compute_;
};

// A read interval a tile needs from another tile, for counting each remote
// byte once per receiving tile however many of its vertices read it.
struct RemoteRead {
  ByteRun run;
  uint32_t owner = 0;
};

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

class Planner {
 public:
  Planner(const Graph& graph, std::span<const VariableId> valueless, bool busy_tiles,
          bool ipu_model)
      : graph_(graph),
        valueless_(valueless.begin(), valueless.end()),
        busy_tiles_(busy_tiles),
        ipu_model_(ipu_model) {}

  Status Walk(const program::Program& program);
  Plans Take() { return std::move(plans_); }

 private:
  Status PlanComputeSet(ComputeSetId id);
  Status PlanVertex(VertexId vertex_id, ComputeSetWork& work);
  Status PlanTransfer(const program::Program& program);
  uint32_t CodeletIndex(const Codelet* codelet);
  // Refuses reading a valueless constant.
  void CheckValues(std::span<const Piece> pieces, std::string_view who);

  const Graph& graph_;
  std::unordered_set<VariableId> valueless_;
  bool busy_tiles_ = false;  // list each step's busy tiles (a tile-level profile)
  bool ipu_model_ = false;   // cost host transfers at the IPU Model's link rate
  std::unordered_set<const void*> seen_;
  std::unordered_map<const Codelet*, uint32_t> codelet_index_;
  std::unordered_set<std::string> refused_;  // "instruction\nreason", reported once
  std::vector<ByteRun> runs_;                // PlanVertex's, reused field to field
  std::vector<Piece> pieces_;                // PlanVertex's, reused field to field
  Plans plans_;
};

uint32_t Planner::CodeletIndex(const Codelet* codelet) {
  auto [it, added] = codelet_index_.emplace(codelet, static_cast<uint32_t>(plans_.codelets.size()));
  if (added) plans_.codelets.push_back(codelet);
  return it->second;
}

void Planner::CheckValues(std::span<const Piece> pieces, std::string_view who) {
  for (const Piece& piece : pieces) {
    if (!valueless_.contains(piece.run.variable)) continue;
    // One refusal per constant (its name is the constant instruction's),
    // naming the first reader.
    const VariableInfo& variable = graph_.variable(piece.run.variable);
    if (refused_.insert("constant\n" + variable.name).second) {
      plans_.refusals.push_back(
          {variable.name,
           fmt::format(
               "its values are unknown (elided as {{...}} in the HLO text, or of a type the "
               "engine has no arithmetic for), and '{}' reads it",
               who)});
    }
  }
}

Status Planner::Walk(const program::Program& program) {
  if (!seen_.insert(program.id()).second) return {};
  switch (program.kind()) {
    case ProgramKind::kSequence:
      for (const program::Program& step : program.steps()) TILEPROF_RETURN_IF_ERROR(Walk(step));
      return {};
    case ProgramKind::kExecute:
      if (plans_.compute_sets.contains(program.compute_set())) return {};
      return PlanComputeSet(program.compute_set());
    case ProgramKind::kCopy:
    case ProgramKind::kCopyFromStream:
    case ProgramKind::kCopyToStream:
      return PlanTransfer(program);
    case ProgramKind::kRepeat:
      return Walk(program.body());
    case ProgramKind::kRepeatWhileTrue:
      TILEPROF_RETURN_IF_ERROR(Walk(program.condition()));
      return Walk(program.body());
    case ProgramKind::kIf:
      TILEPROF_RETURN_IF_ERROR(Walk(program.then_body()));
      return Walk(program.else_body());
  }
  return {};
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

Status Planner::PlanComputeSet(ComputeSetId id) {
  const ComputeSetInfo& info = graph_.compute_set(id);
  const Target& target = graph_.target();
  ComputeSetWork work(target);
  for (VertexId vertex_id : info.vertices) TILEPROF_RETURN_IF_ERROR(PlanVertex(vertex_id, work));
  KeepInPlaceOnlyUnread(work.writes, work.tiles);

  ComputeSetPlan plan;
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
  plan.cost = work.traffic.Cost(work.ipus.size() > 1, busy_tiles_);
  for (const auto& [index, count] : work.counts) {
    plan.codelets.push_back(count);
    plan.codelets.back().codelet = index;
  }
  plans_.arena_bytes = std::max(plans_.arena_bytes, plan.arena_bytes);
  plans_.compute_sets.emplace(id, std::move(plan));
  return {};
}

Status Planner::PlanVertex(VertexId vertex_id, ComputeSetWork& work) {
  const VertexInfo& vertex = graph_.vertex(vertex_id);
  // Only for refusals: a string per vertex was a cost of every run.
  const auto who = [&] {
    return vertex.debug_name.empty() ? graph_.DescribeVertex(vertex_id)
                                     : std::string(vertex.debug_name);
  };
  if (!vertex.codelet->executable()) {
    std::string reason =
        fmt::format("{} has no compute function in the simulator", vertex.codelet->name());
    if (refused_.insert(who() + "\n" + reason).second)
      plans_.refusals.push_back({who(), std::move(reason)});
    return {};
  }
  if (!vertex.tile)
    return MakeError("{} is not mapped to a tile", graph_.DescribeVertex(vertex_id));
  const uint32_t tile = *vertex.tile;
  work.ipus.insert(graph_.target().IpuOfTile(tile));
  TilePlan& tile_plan = work.tiles[tile];
  tile_plan.tile = tile;
  VertexPlan vertex_plan;
  vertex_plan.id = vertex_id;
  vertex_plan.codelet = vertex.codelet;
  vertex_plan.params = graph_.ParamValues(vertex_id);
  const auto specs = vertex.codelet->fields();
  const std::span<const FieldView> fields = graph_.fields(vertex_id);
  for (size_t f = 0; f < specs.size(); ++f) {
    if (!fields[f].connected()) {
      return MakeError("{}: field '{}' is not connected", graph_.DescribeVertex(vertex_id),
                       specs[f].name);
    }
    std::vector<Piece>& pieces = pieces_;
    if (Status found = FieldPieces(graph_, fields[f], pieces); !found) {
      return found.error().Within(
          fmt::format("{} field '{}'", graph_.DescribeVertex(vertex_id), specs[f].name));
    }
    const bool reads_field = specs[f].direction != FieldDirection::kOutput;
    if (reads_field && !valueless_.empty()) CheckValues(pieces, who());
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
  const uint64_t vertex_cycles = graph_.VertexCycles(vertex_id);
  auto& lists = work.cycles[tile];
  (vertex.codelet->execution_kind() == ExecutionKind::kWorker ? lists.first : lists.second)
      .push_back(vertex_cycles);
  CodeletCount& count = work.counts[CodeletIndex(vertex.codelet)];
  ++count.instances;
  count.cycles += vertex_cycles;
  tile_plan.vertices.push_back(std::move(vertex_plan));
  return {};
}

Status Planner::PlanTransfer(const program::Program& program) {
  const Target& target = graph_.target();
  TransferPlan plan;
  std::vector<Piece> source, destination;
  if (program.kind() != ProgramKind::kCopyFromStream) {
    TILEPROF_ASSIGN_OR_RETURN(source, Pieces(graph_, program.source()));
  }
  if (program.kind() != ProgramKind::kCopyToStream) {
    TILEPROF_ASSIGN_OR_RETURN(destination, Pieces(graph_, program.destination()));
  }
  if (program.kind() != ProgramKind::kCopy) plan.stream = program.stream().id;
  CompressRuns(Runs(source), plan.source);
  CompressRuns(Runs(destination), plan.destination);
  for (const Piece& piece : program.kind() == ProgramKind::kCopyFromStream ? destination : source) {
    plan.bytes += piece.run.end - piece.run.begin;
  }
  if (!source.empty()) CheckValues(source, graph_.variable(source[0].run.variable).name);

  if (program.kind() == ProgramKind::kCopy) {
    // Walk both sides in element order: bytes that stay on a tile are an
    // on-tile copy, the others are exchanged.
    Traffic traffic(target);
    std::map<uint32_t, uint64_t> local;
    std::unordered_set<uint32_t> ipus;
    size_t i = 0, j = 0;
    uint64_t used_i = 0, used_j = 0;
    while (i < source.size() && j < destination.size()) {
      const uint64_t left_i = source[i].run.end - source[i].run.begin - used_i;
      const uint64_t left_j = destination[j].run.end - destination[j].run.begin - used_j;
      const uint64_t bytes = std::min(left_i, left_j);
      ipus.insert(target.IpuOfTile(source[i].tile));
      ipus.insert(target.IpuOfTile(destination[j].tile));
      if (source[i].tile == destination[j].tile)
        local[source[i].tile] += bytes;
      else
        traffic.Move(source[i].tile, destination[j].tile, bytes);
      used_i += bytes;
      used_j += bytes;
      if (used_i == source[i].run.end - source[i].run.begin) ++i, used_i = 0;
      if (used_j == destination[j].run.end - destination[j].run.begin) ++j, used_j = 0;
    }
    for (const auto& [tile, bytes] : local) {
      const uint64_t copy = LocalCopyCycles(bytes);
      traffic.Local(tile, copy, copy);
    }
    plan.cost = traffic.Cost(ipus.size() > 1, busy_tiles_);
  } else {
    // The host link carries the bytes; each tile takes its share through its
    // own exchange port; the slower of the two sets the pace.
    std::map<uint32_t, uint64_t> per_tile;
    for (const Piece& piece :
         program.kind() == ProgramKind::kCopyFromStream ? destination : source) {
      per_tile[piece.tile] += piece.run.end - piece.run.begin;
    }
    const uint64_t link = HostTransferCycles(plan.bytes, target, ipu_model_);
    uint64_t busiest = 0, ports = 0;  // tile exchange-port cycles: the busiest, the sum
    for (const auto& [tile, bytes] : per_tile) {
      busiest = std::max(busiest, CeilDiv(bytes, kExchangeBytesPerCycle));
      ports += CeilDiv(bytes, kExchangeBytesPerCycle);
    }
    // The host round trip and the link transfer are host exchange for every
    // tile: the device waits on the host (Poplar's reports put a host-bound
    // run's time there). Where the bytes then cross the tiles' exchange
    // ports (StreamCopyUsesExchange), each tile's share is IPU exchange and
    // the wait for the busiest tile is sync; elsewhere the port time hides
    // behind the link unless it is the slower.
    if (StreamCopyUsesExchange(target)) {
      plan.cost.duration = kHostSyncCycles + link + busiest;
      plan.cost.host_exchange = (kHostSyncCycles + link) * target.NumTiles();
      plan.cost.exchange = ports;
    } else {
      plan.cost.duration = kHostSyncCycles + std::max(link, busiest);
      plan.cost.host_exchange = plan.cost.duration * target.NumTiles();
    }
  }
  plans_.transfers.emplace(program.id(), std::move(plan));
  return {};
}

}  // namespace

Expected<Plans> PlanProgram(const Graph& graph, const program::Program& program,
                            std::span<const VariableId> valueless_constants, bool busy_tiles,
                            bool ipu_model) {
  graph.FlushTileMappings();  // the tiles are simulated in parallel
  Planner planner(graph, valueless_constants, busy_tiles, ipu_model);
  TILEPROF_RETURN_IF_ERROR(planner.Walk(program));
  return planner.Take();
}

StepCost PredicateCost(const Target& target, uint64_t bytes) {
  StepCost cost;
  const uint64_t broadcast = ExchangeCycles(bytes, 0);
  cost.duration = (target.NumIpus() > 1 ? kGlobalSyncCycles : kIpuSyncCycles) + broadcast;
  cost.exchange = broadcast * target.NumTiles();
  return cost;
}

}  // namespace tileprof::engine::sim
