#include "engine/sim/simulator.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "engine/sim/plan.h"
#include "engine/sim/refusal.h"
#include "engine/sim/thread_pool.h"

namespace tileprof::engine::sim {

using program::ProgramKind;

struct Simulator::State {
  const Graph* graph = nullptr;
  program::Program program;
  SimOptions options;
  Plans plans;
  ThreadPool pool;
  std::vector<std::vector<std::byte>> memory;  // by variable
  std::vector<TileState> tile_states;          // by tile
  std::vector<std::byte> arena;
  std::vector<std::byte> copy_buffer;
  std::set<ComputeSetId> executed;  // compute sets run at least once

  // Report accumulators.
  uint64_t total_cycles = 0;
  uint64_t compute_including_idle = 0;  // summed over tiles
  uint64_t compute_excluding_idle = 0;
  uint64_t exchange = 0;
  uint64_t global_exchange = 0;
  uint64_t host_exchange = 0;
  std::vector<uint64_t> codelet_instances;  // by Plans::codelets index
  std::vector<uint64_t> codelet_cycles;
  std::vector<report::ExecutionStep> steps;
  uint64_t unrecorded_steps = 0;
  uint64_t tile_cycles_kept = 0;  // figures in the steps' cycles_by_tile
  // The steps past max_recorded_steps, summed (their program left empty).
  report::ExecutionStep unrecorded{{}, 0, {}, 0, 0, 0};
  std::vector<report::TileCycleSplit> tile_split;  // by tile, a tile-level profile

  // The current run.
  const HostData* inputs = nullptr;
  HostData* outputs = nullptr;
  uint64_t run_cycles = 0;

  State(const Graph& g, program::Program p, const SimOptions& o, Plans pl)
      : graph(&g), program(std::move(p)), options(o), plans(std::move(pl)), pool(o.threads) {}

  void AddStep(std::string name, const StepCost& cost);
  void AddTileSplit(const StepCost& cost, uint32_t tiles);
  Status Execute(const program::Program& program);
  Status RunComputeSet(ComputeSetId id);
  Status RunTransfer(const program::Program& program);
  Expected<bool> ReadPredicate(const Tensor& predicate);

  // A field's or a transfer's runs, in order, copied to (kGather) or from
  // one contiguous buffer, row by row.
  template <bool kGather, typename Byte>  // std::byte, or const std::byte to scatter
  static void Copy(std::span<const HostRun> runs, Byte* buffer) {
    for (const HostRun& run : runs) {
      // Short rows of the usual sizes are copied with the size known here:
      // a library call per row of a few elements (a convolution's input
      // rows, its weights' features) cost more than the bytes it moved.
      buffer = CopyRun<kGather>(run, buffer, std::integer_sequence<uint64_t, 4, 8, 12, 16, 32>());
    }
  }
  template <bool kGather, typename Byte, uint64_t... kSizes>
  static Byte* CopyRun(const HostRun& run, Byte* buffer,
                       std::integer_sequence<uint64_t, kSizes...>) {
    Byte* end = nullptr;
    const bool known =
        ((run.bytes == kSizes &&
          (end = CopyRows<kGather>(run, buffer, std::integral_constant<uint64_t, kSizes>()),
           true)) ||
         ...);
    return known ? end : CopyRows<kGather>(run, buffer, run.bytes);
  }
  template <bool kGather, typename Byte, typename Size>
  static Byte* CopyRows(const HostRun& run, Byte* buffer, Size bytes) {
    for (uint64_t k = 0; k < run.count; ++k) {
      std::byte* row = run.at + static_cast<std::ptrdiff_t>(k) * run.stride;
      if constexpr (kGather)
        std::memcpy(buffer, row, bytes);
      else
        std::memcpy(row, buffer, bytes);
      buffer += bytes;
    }
    return buffer;
  }
  static void Gather(std::span<const HostRun> runs, std::byte* out) { Copy<true>(runs, out); }
  static void Scatter(std::span<const HostRun> runs, const std::byte* in) { Copy<false>(runs, in); }
  // `runs` resolved into `host`, and freed: one field at a time, so that
  // the memory freed serves the next field's (a run-heavy model has tens of
  // millions).
  void Resolve(std::vector<StridedRegion>& runs, std::vector<HostRun>& host) {
    host.reserve(runs.size());
    for (const StridedRegion& run : runs)
      host.push_back({memory[run.variable].data() + run.begin, run.length, run.stride, run.count});
    std::vector<StridedRegion>().swap(runs);
  }
  Status ResolveRuns();
  // The first vertex of a packed compute set that fails Codelet::Check, as
  // a message naming it and its tile (empty when all pass).
  std::string CheckVertices(const PackedComputeSet& packed) const;
};

// Every plan's runs become pointers into `memory`, and every vertex's
// field spans are set once: in its variable's buffer or in the arena,
// neither of which moves after Create. The ByteRuns are freed. The
// compute sets are resolved on the pool's threads: each touches only its
// own plan. Every vertex is checked here, once: its spans and parameters
// are the same at every execution.
Status Simulator::State::ResolveRuns() {
  std::vector<ComputeSetPlan*> compute_sets;
  compute_sets.reserve(plans.compute_sets.size());
  for (auto& [id, plan] : plans.compute_sets) compute_sets.push_back(&plan);
  // In compute set order, so that the error reported is the same whatever
  // the threads.
  std::sort(compute_sets.begin(), compute_sets.end(),
            [](const ComputeSetPlan* a, const ComputeSetPlan* b) { return a->id < b->id; });
  std::vector<std::string> errors(compute_sets.size());
  pool.ParallelFor(compute_sets.size(), [&](size_t i) {
    for (TilePlan& tile : compute_sets[i]->tiles) {
      for (VertexPlan& vertex : tile.vertices) {
        for (size_t f = 0; f < vertex.fields.size(); ++f) {
          FieldPlan& field = vertex.fields[f];
          Resolve(field.runs, field.host);
          if (field.in_place) {
            const bool rows = f < vertex.rows.size() && vertex.rows[f].strided();
            const uint64_t extent = rows ? vertex.rows[f].extent() : field.bytes;
            vertex.spans[f] = {field.host[0].at, extent};
            continue;
          }
          // Gathered whether read or not: a codelet need not write every
          // element of an output, and the write-back must not invent the rest.
          std::byte* at = arena.data() + field.arena_offset;
          vertex.spans[f] = {at, field.bytes};
          tile.gathers.push_back({at, field.host});
          if (field.written) tile.write_backs.push_back({at, field.host});
        }
      }
    }
    compute_sets[i]->packed = Pack(compute_sets[i]->tiles);
    std::vector<TilePlan>().swap(compute_sets[i]->tiles);
    errors[i] = CheckVertices(compute_sets[i]->packed);
  });
  for (const std::string& error : errors) {
    if (!error.empty()) return Error(error);
  }
  for (auto& [node, plan] : plans.transfers) {
    Resolve(plan.source, plan.host_source);
    Resolve(plan.destination, plan.host_destination);
  }
  return {};
}

std::string Simulator::State::CheckVertices(const PackedComputeSet& packed) const {
  for (const PackedTile& tile : packed.tiles) {
    for (const PackedVertex& vertex : tile.vertices) {
      const VertexIo io{vertex.spans, vertex.params, nullptr, vertex.rows};
      if (Status status = vertex.codelet->Check(io); !status) {
        return fmt::format("{} on tile {}: {}", graph->DescribeVertex(vertex.id), tile.tile,
                           status.error().message());
      }
    }
  }
  return {};
}

void Simulator::State::AddStep(std::string name, const StepCost& cost) {
  total_cycles += cost.duration;
  run_cycles += cost.duration;
  compute_including_idle += cost.compute_including_idle;
  compute_excluding_idle += cost.compute_excluding_idle;
  exchange += cost.exchange;
  global_exchange += cost.global_exchange;
  host_exchange += cost.host_exchange;
  const uint32_t tiles = graph->target().NumTiles();
  // The step's tile cycles: what is not compute or exchange is sync.
  const uint64_t step_compute = cost.compute_including_idle;
  const uint64_t step_exchange = cost.exchange + cost.global_exchange + cost.host_exchange;
  const uint64_t all = cost.duration * tiles;
  const uint64_t step_sync =
      all > step_compute + step_exchange ? all - step_compute - step_exchange : 0;
  if (options.tile_cycles) AddTileSplit(cost, tiles);
  if (steps.size() < options.max_recorded_steps) {
    std::vector<uint64_t> by_tile;
    // A tile-level profile keeps a row per step until the rows would hold
    // kMaxTileCycles figures (a 64-IPU run of 10,000 steps would be 7 GB);
    // later steps carry their totals only.
    if (options.tile_cycles && tile_cycles_kept + tiles <= kMaxTileCycles) {
      tile_cycles_kept += tiles;
      if (cost.busy_tiles.empty()) {
        by_tile.assign(tiles, cost.duration);
      } else {
        by_tile.assign(tiles, 0);
        for (const StepCost::Busy& busy : cost.busy_tiles)
          if (busy.tile < tiles) by_tile[busy.tile] = busy.compute + busy.exchange;
      }
    }
    steps.push_back({std::move(name), cost.duration, std::move(by_tile), step_compute,
                     step_exchange, step_sync});
  } else {
    ++unrecorded_steps;
    unrecorded.cycles += cost.duration;
    *unrecorded.compute_cycles += step_compute;
    *unrecorded.exchange_cycles += step_exchange;
    *unrecorded.sync_cycles += step_sync;
  }
}

// Each tile's compute and exchange over the run (its sync is the rest of
// the total, worked out in Report). A step costed for the whole chip at
// once (no busy tiles: a host transfer, a broadcast) is shared evenly.
void Simulator::State::AddTileSplit(const StepCost& cost, uint32_t tiles) {
  if (tile_split.empty()) tile_split.resize(tiles);
  if (cost.busy_tiles.empty()) {
    const uint64_t compute = cost.compute_including_idle / tiles;
    const uint64_t moved = (cost.exchange + cost.global_exchange + cost.host_exchange) / tiles;
    for (report::TileCycleSplit& tile : tile_split) {
      tile.compute += compute;
      tile.exchange += moved;
    }
    return;
  }
  for (const StepCost::Busy& busy : cost.busy_tiles) {
    if (busy.tile >= tiles) continue;
    tile_split[busy.tile].compute += busy.compute;
    tile_split[busy.tile].exchange += busy.exchange;
  }
}

Status Simulator::State::RunComputeSet(ComputeSetId id) {
  ComputeSetPlan& plan = plans.compute_sets.at(id);
  if (executed.insert(id).second) {
    for (const CodeletCount& count : plan.codelets)
      codelet_instances[count.codelet] += count.instances;
  }
  for (const CodeletCount& count : plan.codelets) codelet_cycles[count.codelet] += count.cycles;

  const PackedComputeSet& packed = plan.packed;
  std::vector<std::string> errors(packed.tiles.size());
  // A tile's gathered fields are copied in before any of its vertices runs:
  // the same as copying each just before its vertex, since a field written
  // in place is read by no other vertex (plan.cc, KeepInPlaceOnlyUnread).
  pool.ParallelFor(packed.tiles.size(), [&](size_t t) {
    const PackedTile& tile = packed.tiles[t];
    TileState& tile_state = tile_states[tile.tile];
    for (const ArenaCopy& copy : tile.gathers) Gather(copy.runs, copy.arena);
    for (const PackedVertex& vertex : tile.vertices) {
      VertexIo io{vertex.spans, vertex.params, &tile_state, vertex.rows};
      if (Status status = vertex.codelet->RunChecked(io); !status) {
        errors[t] = fmt::format("{} on tile {}: {}", graph->DescribeVertex(vertex.id), tile.tile,
                                status.error().message());
        return;
      }
    }
  });
  for (const std::string& error : errors) {
    if (!error.empty()) return Error(error);
  }
  if (plan.scatters)
    pool.ParallelFor(packed.tiles.size(), [&](size_t t) {
      for (const ArenaCopy& copy : packed.tiles[t].write_backs) Scatter(copy.runs, copy.arena);
    });
  AddStep(graph->compute_set(id).name, plan.cost);
  return {};
}

Status Simulator::State::RunTransfer(const program::Program& step) {
  const TransferPlan& plan = plans.transfers.at(step.id());
  switch (step.kind()) {
    case ProgramKind::kCopy: {
      copy_buffer.resize(plan.bytes);
      Gather(plan.host_source, copy_buffer.data());
      Scatter(plan.host_destination, copy_buffer.data());
      AddStep(program::StepName(*graph, step), plan.cost);
      return {};
    }
    case ProgramKind::kCopyFromStream: {
      const StreamInfo& stream = graph->stream(plan.stream);
      auto it = inputs->find(stream.name);
      if (it == inputs->end())
        return MakeError("no data for host-to-device stream '{}'", stream.name);
      Scatter(plan.host_destination, it->second.data());
      AddStep(program::StepName(*graph, step), plan.cost);
      return {};
    }
    case ProgramKind::kCopyToStream: {
      const StreamInfo& stream = graph->stream(plan.stream);
      std::vector<std::byte>& out = (*outputs)[stream.name];
      out.resize(plan.bytes);
      Gather(plan.host_source, out.data());
      AddStep(program::StepName(*graph, step), plan.cost);
      return {};
    }
    default:
      return MakeError("not a transfer");
  }
}

Expected<bool> Simulator::State::ReadPredicate(const Tensor& predicate) {
  if (predicate.NumElements() != 1 || predicate.regions().size() != 1) {
    return MakeError("predicate {} is not one element", predicate.ShapeString());
  }
  const TensorRegion& region = predicate.regions()[0];
  const uint64_t size = SizeOf(predicate.element_type());
  const std::byte* at = memory[region.variable].data() +
                        plans.storage.Of(*graph, region.variable, region.begin) * size;
  // pred is one byte, nonzero for true; other types: any nonzero bit, as
  // Poplar's If and RepeatWhileTrue test a scalar against zero.
  bool value = false;
  for (uint64_t i = 0; i < size; ++i) value = value || at[i] != std::byte{0};
  AddStep("Sync (predicate)", PredicateCost(graph->target(), size));
  return value;
}

Status Simulator::State::Execute(const program::Program& step) {
  switch (step.kind()) {
    case ProgramKind::kSequence:
      for (const program::Program& child : step.steps()) TILEPROF_RETURN_IF_ERROR(Execute(child));
      return {};
    case ProgramKind::kExecute:
      return RunComputeSet(step.compute_set());
    case ProgramKind::kCopy:
    case ProgramKind::kCopyFromStream:
    case ProgramKind::kCopyToStream:
      return RunTransfer(step);
    case ProgramKind::kRepeat:
      for (uint32_t i = 0; i < step.count(); ++i) TILEPROF_RETURN_IF_ERROR(Execute(step.body()));
      return {};
    case ProgramKind::kRepeatWhileTrue: {
      TILEPROF_RETURN_IF_ERROR(Execute(step.condition()));
      for (uint64_t iteration = 0;; ++iteration) {
        TILEPROF_ASSIGN_OR_RETURN(bool go_on, ReadPredicate(step.predicate()));
        if (!go_on) return {};
        if (iteration == options.max_loop_iterations) {
          return MakeError("a loop ran {} iterations without its condition turning false",
                           options.max_loop_iterations);
        }
        TILEPROF_RETURN_IF_ERROR(Execute(step.body()));
        TILEPROF_RETURN_IF_ERROR(Execute(step.condition()));
      }
    }
    case ProgramKind::kIf: {
      TILEPROF_ASSIGN_OR_RETURN(bool taken, ReadPredicate(step.predicate()));
      return Execute(taken ? step.then_body() : step.else_body());
    }
  }
  return {};
}

Simulator::Simulator(std::unique_ptr<State> state) : state_(std::move(state)) {}
Simulator::~Simulator() = default;

const Graph& Simulator::graph() const { return *state_->graph; }
uint32_t Simulator::threads() const { return state_->pool.size(); }

namespace {

// The valueless constants `filled` leaves unfilled: those the planner
// refuses. Error if `filled` names a variable that is not a valueless
// constant or gives it the wrong number of bytes.
Expected<std::vector<VariableId>> Unfilled(const Graph& graph,
                                           std::span<const VariableId> valueless,
                                           const FilledConstants* filled) {
  if (filled == nullptr) return std::vector<VariableId>(valueless.begin(), valueless.end());
  std::vector<VariableId> unfilled;
  for (VariableId id : valueless)
    if (!filled->contains(id)) unfilled.push_back(id);
  for (const auto& [id, bytes] : *filled) {
    if (std::find(valueless.begin(), valueless.end(), id) == valueless.end())
      return MakeError("variable {} is filled but is not a constant without values", id);
    const VariableInfo& variable = graph.variable(id);
    if (bytes.size() != variable.num_elements * SizeOf(variable.type)) {
      return MakeError("{} is filled with {} bytes, expected {}", graph.DescribeVariable(id),
                       bytes.size(), variable.num_elements * SizeOf(variable.type));
    }
  }
  return unfilled;
}

}  // namespace

Expected<std::unique_ptr<Simulator>> Simulator::Create(
    const Graph& graph, const program::Program& program,
    std::span<const VariableId> valueless_constants, const SimOptions& options) {
  TILEPROF_ASSIGN_OR_RETURN(std::vector<VariableId> unfilled,
                            Unfilled(graph, valueless_constants, options.filled_constants));
  // The state first: its threads plan the compute sets.
  auto state = std::make_unique<State>(graph, program, options, Plans{});
  TILEPROF_ASSIGN_OR_RETURN(state->plans, PlanProgram(graph, program, unfilled, options.tile_cycles,
                                                      options.ipu_model, &state->pool));
  if (!state->plans.refusals.empty()) return RefusalError(state->plans.refusals, options.module);
  state->options.filled_constants = nullptr;  // read here only: it need not outlive Create
  state->memory.resize(graph.num_variables());
  // Filled on the pool's threads: it is mostly page faults.
  std::vector<std::pair<VariableId, const std::vector<std::byte>*>> filled;
  for (VariableId id = 0; id < graph.num_variables(); ++id) {
    const VariableInfo& variable = graph.variable(id);
    const uint64_t bytes = variable.num_elements * SizeOf(variable.type);
    const std::vector<std::byte>* values = nullptr;
    if (options.filled_constants != nullptr && options.filled_constants->contains(id)) {
      values = &options.filled_constants->at(id);
    } else if (variable.is_constant) {
      values = &variable.constant_data;
    }
    if (values != nullptr && values->size() != bytes) {
      return MakeError("{} has {} bytes of values, expected {}", graph.DescribeVariable(id),
                       values->size(), bytes);
    }
    filled.emplace_back(id, values);
  }
  // Values are given in element order and kept in storage order.
  const StorageLayout& storage = state->plans.storage;
  state->pool.ParallelFor(filled.size(), [&](size_t i) {
    const auto [id, values] = filled[i];
    std::vector<std::byte>& memory = state->memory[id];
    if (values == nullptr) {
      const VariableInfo& variable = graph.variable(id);
      memory.assign(variable.num_elements * SizeOf(variable.type), std::byte{0});
    } else if (storage.InElementOrder(id)) {
      memory = *values;
    } else {
      memory.resize(values->size());
      storage.ToStorage(graph, id, *values, memory);
    }
  });
  state->tile_states.resize(graph.target().NumTiles());
  for (uint32_t tile = 0; tile < state->tile_states.size(); ++tile)
    state->tile_states[tile].tile = tile;
  state->arena.resize(state->plans.arena_bytes);
  state->codelet_instances.assign(state->plans.codelets.size(), 0);
  state->codelet_cycles.assign(state->plans.codelets.size(), 0);
  TILEPROF_RETURN_IF_ERROR(state->ResolveRuns());
  return std::unique_ptr<Simulator>(new Simulator(std::move(state)));
}

Expected<std::unique_ptr<Simulator>> Simulator::Create(const compiler::CompileResult& compiled,
                                                       const SimOptions& options) {
  if (!compiled.graph) return MakeError("the compile result has no graph");
  return Create(*compiled.graph, compiled.program, compiled.valueless_constants, options);
}

Expected<RunResult> Simulator::Run(const HostData& inputs) {
  State& state = *state_;
  const Graph& graph = *state.graph;
  for (StreamId id = 0; id < graph.num_streams(); ++id) {
    const StreamInfo& stream = graph.stream(id);
    if (stream.direction != StreamDirection::kHostToDevice) continue;
    const uint64_t bytes = stream.num_elements * SizeOf(stream.type);
    auto it = inputs.find(stream.name);
    if (it == inputs.end()) {
      return MakeError("no input for host-to-device stream '{}' ({}[{}])", stream.name,
                       HloName(stream.type), stream.num_elements);
    }
    if (it->second.size() != bytes) {
      return MakeError("input for stream '{}' has {} bytes, the stream takes {} ({} x {})",
                       stream.name, it->second.size(), bytes, stream.num_elements,
                       HloName(stream.type));
    }
  }
  for (const auto& [name, data] : inputs) {
    bool known = false;
    for (StreamId id = 0; id < graph.num_streams() && !known; ++id) {
      known = graph.stream(id).direction == StreamDirection::kHostToDevice &&
              graph.stream(id).name == name;
    }
    if (!known) return MakeError("no host-to-device stream named '{}'", name);
  }
  RunResult result;
  state.inputs = &inputs;
  state.outputs = &result.outputs;
  state.run_cycles = 0;
  Status status = state.Execute(state.program);
  state.inputs = nullptr;
  state.outputs = nullptr;
  if (!status) return status.error();
  result.cycles = state.run_cycles;
  return result;
}

report::ExecutionReport Simulator::Report() const {
  const State& state = *state_;
  report::ExecutionReport report;
  report.programs = {"<anonymous>"};
  report.total_cycles = state.total_cycles;
  report.clock_hz = state.graph->target().ClockHz();
  const double tiles = state.graph->target().NumTiles();
  using report::CycleKind;
  auto set = [&](CycleKind kind, double value) {
    report.tile_average_cycles[static_cast<size_t>(kind)] = value;
  };
  const double compute = static_cast<double>(state.compute_including_idle) / tiles;
  const double exchange = static_cast<double>(state.exchange) / tiles;
  const double global = static_cast<double>(state.global_exchange) / tiles;
  const double host = static_cast<double>(state.host_exchange) / tiles;
  set(CycleKind::kComputeIncludingIdle, compute);
  set(CycleKind::kComputeExcludingIdle, static_cast<double>(state.compute_excluding_idle) / tiles);
  set(CycleKind::kIpuExchange, exchange);
  set(CycleKind::kGlobalExchange, global);
  set(CycleKind::kHostExchange, host);
  // Every tile spends every step's whole duration somewhere; what is not
  // compute or exchange is sync (the barrier and waiting for other tiles).
  set(CycleKind::kSync,
      std::max(0.0, static_cast<double>(state.total_cycles) - compute - exchange - global - host));
  for (size_t i = 0; i < state.plans.codelets.size(); ++i) {
    if (state.codelet_instances[i] == 0) continue;
    report.cycles_by_vertex_type.push_back(
        {state.plans.codelets[i]->name(), state.codelet_instances[i], state.codelet_cycles[i]});
  }
  std::stable_sort(report.cycles_by_vertex_type.begin(), report.cycles_by_vertex_type.end(),
                   [](const auto& a, const auto& b) {
                     return a.cycles != b.cycles ? a.cycles > b.cycles : a.name < b.name;
                   });
  report.steps = state.steps;
  if (state.unrecorded_steps > 0) {
    report::ExecutionStep more = state.unrecorded;
    more.program = fmt::format("({} more steps)", state.unrecorded_steps);
    report.steps.push_back(std::move(more));
  }
  report.tile_cycles = state.tile_split;
  for (report::TileCycleSplit& tile : report.tile_cycles) {
    tile.tile = static_cast<uint32_t>(&tile - report.tile_cycles.data());
    const uint64_t busy = tile.compute + tile.exchange;
    tile.sync = state.total_cycles > busy ? state.total_cycles - busy : 0;
  }
  return report;
}

}  // namespace tileprof::engine::sim
