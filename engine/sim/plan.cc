#include "engine/sim/plan.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "engine/sim/pieces.h"
#include "engine/sim/plan_compute_set.h"
#include "engine/sim/traffic.h"

namespace tileprof::engine::sim {
namespace {

using plan_internal::CheckValues;
using plan_internal::ComputeSetPlanner;
using plan_internal::PlanInputs;
using plan_internal::Refusals;
using program::ProgramKind;

// A compute set planned, waiting to be merged.
struct PlannedComputeSet {
  Status status;
  ComputeSetPlan plan;
  std::vector<const Codelet*> codelets;
  Refusals refusals;
};

// Plans every step the program reaches: the compute sets on the pool's
// threads, then, in the order the program first reaches each step, the
// transfers and the compute sets' merge (so that codelet numbers,
// refusals and the first error are those of a walk in program order).
class Planner {
 public:
  Planner(const Graph& graph, const StorageLayout& storage, std::span<const VariableId> valueless,
          bool busy_tiles, bool ipu_model)
      : in_{graph, storage, {valueless.begin(), valueless.end()}, busy_tiles, ipu_model} {}

  Status Plan(const program::Program& program, ThreadPool* pool);
  Plans Take() {
    plans_.refusals = refusals_.Take();
    return std::move(plans_);
  }

 private:
  // A step to plan: a compute set, or a transfer (its program node).
  struct Item {
    ComputeSetId compute_set = 0;
    const program::Program* transfer = nullptr;
  };
  void Walk(const program::Program& program);
  void Merge(ComputeSetId id, PlannedComputeSet& planned);
  Status PlanTransfer(const program::Program& program);
  uint32_t CodeletIndex(const Codelet* codelet);

  PlanInputs in_;
  std::vector<Item> items_;
  std::unordered_set<const void*> seen_;
  std::unordered_set<ComputeSetId> compute_sets_;
  std::unordered_map<const Codelet*, uint32_t> codelet_index_;
  Refusals refusals_;
  Plans plans_;
};

uint32_t Planner::CodeletIndex(const Codelet* codelet) {
  auto [it, added] = codelet_index_.emplace(codelet, static_cast<uint32_t>(plans_.codelets.size()));
  if (added) plans_.codelets.push_back(codelet);
  return it->second;
}

Status Planner::Plan(const program::Program& program, ThreadPool* pool) {
  Walk(program);
  std::vector<ComputeSetId> ids;
  for (const Item& item : items_)
    if (item.transfer == nullptr) ids.push_back(item.compute_set);
  std::vector<PlannedComputeSet> planned(ids.size());
  const auto plan_one = [&](size_t i) {
    ComputeSetPlanner planner(in_);
    planned[i].status = planner.Plan(ids[i], planned[i].plan);
    planned[i].codelets = std::move(planner.codelets);
    planned[i].refusals = std::move(planner.refusals);
  };
  if (pool != nullptr) {
    pool->ParallelFor(ids.size(), plan_one);
  } else {
    for (size_t i = 0; i < ids.size(); ++i) plan_one(i);
  }
  size_t next = 0;
  for (const Item& item : items_) {
    if (item.transfer != nullptr) {
      TILEPROF_RETURN_IF_ERROR(PlanTransfer(*item.transfer));
      continue;
    }
    PlannedComputeSet& done = planned[next++];
    TILEPROF_RETURN_IF_ERROR(done.status);
    Merge(item.compute_set, done);
  }
  return {};
}

void Planner::Merge(ComputeSetId id, PlannedComputeSet& planned) {
  ComputeSetPlan& plan = planned.plan;
  for (CodeletCount& count : plan.codelets)
    count.codelet = CodeletIndex(planned.codelets[count.codelet]);
  // In the program's numbering, as a walk in program order numbers them.
  std::sort(plan.codelets.begin(), plan.codelets.end(),
            [](const CodeletCount& a, const CodeletCount& b) { return a.codelet < b.codelet; });
  refusals_.Append(planned.refusals);
  plans_.arena_bytes = std::max(plans_.arena_bytes, plan.arena_bytes);
  plans_.compute_sets.emplace(id, std::move(plan));
}

void Planner::Walk(const program::Program& program) {
  if (!seen_.insert(program.id()).second) return;
  switch (program.kind()) {
    case ProgramKind::kSequence:
      for (const program::Program& step : program.steps()) Walk(step);
      return;
    case ProgramKind::kExecute:
      if (compute_sets_.insert(program.compute_set()).second)
        items_.push_back({program.compute_set(), nullptr});
      return;
    case ProgramKind::kCopy:
    case ProgramKind::kCopyFromStream:
    case ProgramKind::kCopyToStream:
      items_.push_back({0, &program});
      return;
    case ProgramKind::kRepeat:
      return Walk(program.body());
    case ProgramKind::kRepeatWhileTrue:
      Walk(program.condition());
      return Walk(program.body());
    case ProgramKind::kIf:
      Walk(program.then_body());
      return Walk(program.else_body());
  }
}

Status Planner::PlanTransfer(const program::Program& program) {
  const Target& target = in_.graph.target();
  TransferPlan plan;
  std::vector<Piece> source, destination;
  if (program.kind() != ProgramKind::kCopyFromStream) {
    TILEPROF_ASSIGN_OR_RETURN(source, Pieces(in_.graph, in_.storage, program.source()));
  }
  if (program.kind() != ProgramKind::kCopyToStream) {
    TILEPROF_ASSIGN_OR_RETURN(destination, Pieces(in_.graph, in_.storage, program.destination()));
  }
  if (program.kind() != ProgramKind::kCopy) plan.stream = program.stream().id;
  CompressRuns(Runs(source), plan.source);
  CompressRuns(Runs(destination), plan.destination);
  for (const Piece& piece : program.kind() == ProgramKind::kCopyFromStream ? destination : source) {
    plan.bytes += piece.run.end - piece.run.begin;
  }
  if (!source.empty())
    CheckValues(in_, source, in_.graph.variable(source[0].run.variable).name, refusals_);

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
    plan.cost = traffic.Cost(ipus.size() > 1, in_.busy_tiles);
  } else {
    // The host link carries the bytes; each tile takes its share through its
    // own exchange port; the slower of the two sets the pace.
    std::map<uint32_t, uint64_t> per_tile;
    for (const Piece& piece :
         program.kind() == ProgramKind::kCopyFromStream ? destination : source) {
      per_tile[piece.tile] += piece.run.end - piece.run.begin;
    }
    const uint64_t link = HostTransferCycles(plan.bytes, target, in_.ipu_model);
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
                            bool ipu_model, ThreadPool* pool) {
  graph.FlushTileMappings();  // read by several threads from here on
  StorageLayout storage(graph);
  Planner planner(graph, storage, valueless_constants, busy_tiles, ipu_model);
  TILEPROF_RETURN_IF_ERROR(planner.Plan(program, pool));
  Plans plans = planner.Take();
  plans.storage = std::move(storage);
  return plans;
}

StepCost PredicateCost(const Target& target, uint64_t bytes) {
  StepCost cost;
  const uint64_t broadcast = ExchangeCycles(bytes, 0);
  cost.duration = (target.NumIpus() > 1 ? kGlobalSyncCycles : kIpuSyncCycles) + broadcast;
  cost.exchange = broadcast * target.NumTiles();
  return cost;
}

}  // namespace tileprof::engine::sim
