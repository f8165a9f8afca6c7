#include "engine/compiler/memory_model.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <iterator>
#include <set>
#include <span>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "engine/compiler/memory_pool.h"
#include "engine/compiler/schedule_walk.h"
#include "engine/compiler/tile_threads.h"

namespace tileprof::engine::compiler {
namespace {

using report::Category;
using report::Region;
using report::VertexDataCategory;

// What one tile holds: the schedule walk, then vertex state, code and
// constants.
struct TileAccount : TileWalk {
  uint64_t vertices = 0;
  uint64_t internal_state = 0;
  uint64_t edge_pointers = 0;
  // By vertex type index: state bytes, and whether the type has a vertex
  // (and so its code) here.
  std::vector<uint64_t> type_bytes;
  std::vector<bool> has_type;
  uint64_t vertex_code = 0;
  uint64_t constant_bytes = 0;            // aligned
  std::vector<PlacedConstant> constants;  // offsets from the start of the constants
};

// What one step does on one tile. Dense per tile and reset after each step:
uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

class RegionBytes {
 public:
  RegionBytes(uint64_t interleaved_start, uint64_t tile_bytes)
      : bounds_{interleaved_start, tile_bytes} {}

  // Bytes [start, start + size) of the tile, excluding gaps.
  void Add(uint64_t start, uint64_t size) {
    uint64_t lo = start;
    const uint64_t hi = start + size;
    for (size_t r = 0; r < 3 && lo < hi; ++r) {
      const uint64_t region_end = r < 2 ? bounds_[r] : UINT64_MAX;
      if (lo >= region_end) continue;
      const uint64_t end = std::min(hi, region_end);
      excluding_[r] += end - lo;
      lo = end;
    }
  }
  void Fill(uint64_t end, report::TileMemory& tile) const {
    uint64_t lo = 0;
    for (size_t r = 0; r < 3; ++r) {
      const uint64_t region_end = r < 2 ? bounds_[r] : UINT64_MAX;
      const uint64_t including = end > lo ? std::min(end, region_end) - lo : 0;
      tile.by_region[r] = {excluding_[r], std::max(including, excluding_[r])};
      lo = region_end;
    }
  }

 private:
  uint64_t bounds_[2];
  uint64_t excluding_[3] = {0, 0, 0};
};

// The layout's progress in thousandths, each part of the work given the
// share of mobilenet_v2's layout time it took.
class LayoutProgress {
 public:
  static constexpr uint64_t kTotal = 1000;
  // The parts' ends.
  static constexpr uint64_t kVertices = 50, kWalk = 600, kLiveness = 680, kTiles = kTotal;

  explicit LayoutProgress(const ProgressCallback& callback) : callback_(callback) {}

  // `done` of `total` of the part from `from` to `to`.
  void Report(uint64_t from, uint64_t to, uint64_t done, uint64_t total) const {
    if (!callback_) return;
    callback_(from + (total == 0 ? to - from : (to - from) * std::min(done, total) / total),
              kTotal);
  }
  void Reached(uint64_t at) const { Report(at, at, 0, 0); }

 private:
  const ProgressCallback& callback_;
};

// The categories of a tile that follow from what its steps and vertices
// use (all but the variables and what has no model yet).
void SetFixedCategories(const TileAccount& account, uint64_t steps, uint64_t host_steps,
                        bool instrument_vertices, report::CategoryBytes& cat) {
  report::At(cat, Category::kVertexCode) = account.vertex_code;
  report::At(cat, Category::kControlCode) =
      memory::kControlCodeBaseBytes + account.active_steps * memory::kControlCodePerActiveStep +
      (steps - std::min(steps, account.active_steps)) * memory::kControlCodePerIdleStep;
  report::At(cat, Category::kInternalExchangeCode) =
      account.exchange_steps * memory::kExchangeCodePerStep +
      account.exchange_regions * memory::kExchangeCodePerRegion;
  report::At(cat, Category::kHostExchangeCode) =
      host_steps * memory::kHostExchangeCodePerStep +
      account.host_steps * memory::kHostExchangeCodePerActiveStep +
      account.host_regions * memory::kHostExchangeCodePerRegion;
  report::At(cat, Category::kVertexInstances) = account.internal_state + account.edge_pointers;
  report::At(cat, Category::kCopyDescriptors) = account.copy_regions * memory::kCopyDescriptorBytes;
  report::At(cat, Category::kHostExchangePacketHeaders) =
      (host_steps > 0 ? memory::kHostSyncPacketHeaderBytes : 0) +
      account.host_regions * memory::kHostPacketHeaderBytes;
  report::At(cat, Category::kInstrumentationResults) =
      instrument_vertices ? account.vertices * memory::kInstrumentationBytesPerVertex : 0;
  report::At(cat, Category::kStack) = memory::kStackBytes;
  report::At(cat, Category::kConstants) = account.constant_bytes;
}

// What is always live, over all tiles, as libpva's alwaysLiveVariables: each
// constant by name, then the rest of each category's always-live bytes under
// the category's machine name, as Poplar names them ("vertexCode", "stack",
// "controlCode", ...; "constant" then holds the constants' alignment). Their
// sum is the tiles' alwaysLiveBytes.
template <typename IsConstant>
std::vector<report::NamedBytes> AlwaysLiveVariables(const Graph& graph, IsConstant&& is_constant,
                                                    std::span<const report::TileMemory> tiles) {
  std::vector<report::NamedBytes> out;
  report::CategoryBytes rest{};
  for (const report::TileMemory& tile : tiles) {
    for (size_t c = 0; c < report::kNumCategories; ++c) rest[c] += tile.by_category[c];
    report::At(rest, Category::kVariables) -= tile.not_always_live;
  }
  for (VariableId v = 0; v < graph.num_variables(); ++v) {
    if (!is_constant(v)) continue;
    uint64_t elements = 0;
    for (const TileRun& run : graph.TileMapping(v)) elements += run.end - run.begin;
    const uint64_t bytes = elements * SizeOf(graph.variable(v).type);
    if (bytes == 0) continue;
    out.push_back({graph.variable(v).name, bytes});
    report::At(rest, Category::kConstants) -= bytes;
  }
  for (size_t c = 0; c < report::kNumCategories; ++c) {
    if (rest[c] != 0)
      out.push_back({std::string(report::CategoryMachineName(static_cast<Category>(c))), rest[c]});
  }
  std::sort(out.begin(), out.end(), [](const report::NamedBytes& a, const report::NamedBytes& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
  });
  return out;
}

// ---- Vertices: state, types, code, instrumentation -----------------------
// Each tile's vertices, their state by type and each type's code once.
Status AccountVertices(const Graph& graph, std::span<TileAccount> tiles,
                       std::vector<report::VertexType>& types) {
  std::unordered_map<const Codelet*, uint32_t> type_index;
  // Consecutive vertices mostly share a codelet: a hash lookup and a tree
  // insertion per vertex were most of this serial pass.
  const Codelet* last_codelet = nullptr;
  uint32_t last_type = 0;
  uint64_t internal_state = 0, edge_pointers = 0, state_bytes = 0, code_bytes = 0;
  for (VertexId id = 0; id < graph.num_vertices(); ++id) {
    const VertexInfo& vertex = graph.vertex(id);
    if (!vertex.tile) return MakeError("{} is not mapped to a tile", graph.DescribeVertex(id));
    TileAccount& tile = tiles[*vertex.tile];
    const Codelet* codelet = vertex.codelet;
    if (codelet != last_codelet) {
      auto [it, added] = type_index.emplace(codelet, static_cast<uint32_t>(types.size()));
      if (added) types.push_back({codelet->name()});
      last_codelet = codelet;
      last_type = it->second;
      internal_state = codelet->internal_state_bytes();
      edge_pointers = codelet->edge_pointer_bytes();
      state_bytes = codelet->state_bytes();
      code_bytes = codelet->code_bytes();
    }
    ++tile.vertices;
    tile.internal_state += internal_state;
    tile.edge_pointers += edge_pointers;
    if (tile.has_type.size() <= last_type) {
      tile.has_type.resize(last_type + 1);
      tile.type_bytes.resize(last_type + 1);
    }
    tile.type_bytes[last_type] += state_bytes;
    if (!tile.has_type[last_type]) {
      tile.has_type[last_type] = true;
      tile.vertex_code += code_bytes;
    }
  }
  return {};
}

// ---- Liveness: a variable used inside a loop and outside it lives for the
// whole loop (every iteration reads or rewrites it). Innermost loops first.
void ExtendAcrossLoops(std::vector<std::pair<uint64_t, uint64_t>> loops,
                       std::vector<uint64_t>& first, std::vector<uint64_t>& last) {
  std::sort(loops.begin(), loops.end(),
            [](const auto& x, const auto& y) { return x.second - x.first < y.second - y.first; });
  for (const auto& [start, end] : loops) {
    if (start == end) continue;
    for (size_t v = 0; v < first.size(); ++v) {
      if (first[v] == UINT64_MAX) continue;
      const bool overlaps = first[v] < end && last[v] >= start;
      const bool inside = first[v] >= start && last[v] < end;
      if (overlaps && !inside) {
        first[v] = std::min(first[v], start);
        last[v] = std::max(last[v], end - 1);
      }
    }
  }
}

// Each tile's constants (always live) and not-always-live pieces, one per
// variable and tile, live from the variable's first use to its last.
// A variable's elements on a tile are one block of its memory, in element
// order (as Poplar's planned layouts keep each tile's share of a tensor
// together): one piece per variable and tile, however many runs. Each shard
// of tiles has its pieces counted first and reserved: grown by doubling
// instead, the vectors were copied and faulted in again, on one thread, for
// a tenth of the layout.
template <typename IsConstant>
void AllocateVariables(const Graph& graph, IsConstant&& is_constant,
                       const std::vector<uint64_t>& first, const std::vector<uint64_t>& last,
                       std::span<TileAccount> tiles) {
  const uint32_t num_tiles = static_cast<uint32_t>(tiles.size());
  const size_t num_vars = graph.num_variables();
  ForTileShards(num_tiles, [&](uint32_t shard, uint32_t shards) {
    std::vector<uint64_t> tile_pieces(num_tiles, 0);
    std::vector<uint64_t> on_tile(num_tiles, 0);
    std::vector<uint32_t> used;
    auto each_block = [&](VariableId v, auto&& f) {
      for (const TileRun& run : graph.TileMapping(v)) {
        if (run.tile % shards != shard) continue;
        if (on_tile[run.tile] == 0) used.push_back(run.tile);
        on_tile[run.tile] += run.end - run.begin;
      }
      for (uint32_t t : used) {
        f(t, on_tile[t]);
        on_tile[t] = 0;
      }
      used.clear();
    };
    for (VariableId v = 0; v < num_vars; ++v) {
      if (first[v] == UINT64_MAX || is_constant(v)) continue;
      each_block(v, [&](uint32_t t, uint64_t) { ++tile_pieces[t]; });
    }
    for (uint32_t t = shard; t < num_tiles; t += shards) {
      tiles[t].pieces.reserve(tiles[t].pieces.size() + tile_pieces[t]);
    }
    for (VariableId v = 0; v < num_vars; ++v) {
      const bool constant = is_constant(v);
      if (!constant && first[v] == UINT64_MAX) continue;  // never used: never allocated
      const uint64_t size = SizeOf(graph.variable(v).type);
      each_block(v, [&](uint32_t t, uint64_t elements) {
        const uint64_t bytes = elements * size;
        TileAccount& tile = tiles[t];
        if (constant) {
          const uint64_t aligned = AlignUp(bytes, memory::kDataAlignment);
          tile.constants.push_back({v, bytes, tile.constant_bytes});
          tile.constant_bytes += aligned;
        } else {
          tile.pieces.push_back({bytes, first[v], last[v], v});
        }
      });
    }
  });
}

// What is live at each step (step_liveness.h), into the layout.
void RecordLiveness(const Graph& graph, const Schedule& schedule,
                    std::span<const TileAccount> tiles,
                    const std::function<std::string(uint64_t)>& buffer_name, MemoryLayout& layout) {
  const size_t steps = schedule.steps.size();
  TilePieces pieces;
  pieces.reserve(tiles.size());
  for (const TileAccount& tile : tiles) pieces.push_back(tile.pieces);
  // Each IPU's bytes when there are several (their sum is the step's).
  const uint32_t ipus = graph.target().NumIpus();
  std::vector<std::vector<uint64_t>> live_by_ipu;
  if (ipus > 1) {
    const size_t per_ipu = graph.target().TilesPerIpu();
    for (uint32_t ipu = 0; ipu < ipus; ++ipu) {
      const auto first = pieces.begin() + static_cast<ptrdiff_t>(ipu * per_ipu);
      live_by_ipu.push_back(
          LiveBytesPerStep(TilePieces(first, first + static_cast<ptrdiff_t>(per_ipu)), steps));
    }
  }
  std::vector<uint64_t> live(steps, 0);
  if (live_by_ipu.empty()) {
    live = LiveBytesPerStep(pieces, steps);
  } else {
    for (const std::vector<uint64_t>& ipu : live_by_ipu)
      for (size_t i = 0; i < steps; ++i) live[i] += ipu[i];
  }
  const std::vector<report::StepTile> fullest = FullestTilePerStep(pieces, steps);
  const std::vector<uint64_t> received = ReceiveBytesPerStep(pieces, steps);
  layout.liveness.reserve(steps);
  for (size_t i = 0; i < steps; ++i) {
    StepLiveness step{schedule.steps[i].program, live[i], fullest[i], received[i], {}};
    for (const std::vector<uint64_t>& ipu : live_by_ipu) step.by_ipu.push_back(ipu[i]);
    layout.liveness.push_back(std::move(step));
  }
  layout.not_always_live_variables = NotAlwaysLiveVariables(graph, pieces, steps, buffer_name);
}

// What every tile's layout reads.
struct TileLayoutInputs {
  const Graph& graph;
  uint64_t steps = 0;
  uint64_t host_steps = 0;
  uint64_t runtime_variables = 0;  // stream positions
  bool instrument_vertices = true;
  const std::function<std::string(uint64_t)>& buffer_name;
};

// ---- One tile's layout: its categories, then addresses: code first (it
// must sit in non-interleaved memory), then vertex state and descriptors,
// the stack from the next memory element, constants, and the
// not-always-live pool. Frees the account's pieces and constants.
void LayOutTile(const TileLayoutInputs& in, uint32_t t, TileAccount& account,
                report::TileMemory& tile, std::vector<report::Variable>& variables) {
  const Target& target = in.graph.target();
  tile.tile = t;
  auto& cat = tile.by_category;
  SetFixedCategories(account, in.steps, in.host_steps, in.instrument_vertices, cat);
  const PoolExtent pool = FirstFitExtent(account.pieces);
  const uint64_t live_peak = pool.peak;
  report::At(cat, Category::kVariables) = in.runtime_variables + live_peak;

  report::At(tile.vertex_data, VertexDataCategory::kInternalVertexState) = account.internal_state;
  report::At(tile.vertex_data, VertexDataCategory::kEdgePointers) = account.edge_pointers;
  report::At(tile.vertex_data, VertexDataCategory::kDescriptors) =
      report::At(cat, Category::kCopyDescriptors);
  for (uint32_t type = 0; type < account.has_type.size(); ++type) {
    if (account.has_type[type]) tile.vertex_types.push_back({type, account.type_bytes[type]});
  }

  RegionBytes regions(target.InterleavedMemoryStart(), target.BytesPerTile());
  uint64_t cursor = 0;
  auto place = [&](uint64_t bytes, uint64_t alignment) {
    cursor = AlignUp(cursor, alignment);
    regions.Add(cursor, bytes);
    cursor += bytes;
  };
  for (Category c :
       {Category::kVertexCode, Category::kControlCode, Category::kInternalExchangeCode,
        Category::kHostExchangeCode, Category::kGlobalExchangeCode, Category::kSharedCodeStorage}) {
    place(report::At(cat, c), memory::kDataAlignment);
  }
  for (Category c :
       {Category::kVertexInstances, Category::kCopyDescriptors, Category::kVectorListDescriptors,
        Category::kVertexFieldData, Category::kControlTable, Category::kHostExchangePacketHeaders,
        Category::kGlobalExchangePacketHeaders, Category::kInstrumentationResults,
        Category::kSharedDataStorage}) {
    place(report::At(cat, c), memory::kWordAlignment);
  }
  // The stack starts a memory element of its own: worker stack traffic then
  // never competes with instruction fetch for a bank. This is what makes a
  // seed 004 tile span 19.6 KB including gaps for 4.4 KB of data.
  for (uint32_t offset : target.MemoryElementOffsets()) {
    if (offset >= cursor) {
      cursor = offset;
      break;
    }
  }
  place(memory::kStackBytes, memory::kDataAlignment);
  const uint64_t constants_start = AlignUp(cursor, memory::kDataAlignment);
  for (PlacedConstant& c : account.constants) c.offset += constants_start;
  place(account.constant_bytes, memory::kDataAlignment);
  place(in.runtime_variables, memory::kWordAlignment);
  cursor = AlignUp(cursor, memory::kDataAlignment);
  const uint64_t pool_start = cursor;
  regions.Add(pool_start, live_peak);
  const uint64_t end = pool_start + std::max(pool.extent, live_peak);
  regions.Fill(end, tile);
  tile.not_always_live = live_peak;
  tile.always_live = tile.ExcludingGaps() - live_peak;
  variables =
      LargestVariables(in.graph, t, account.pieces, pool_start, account.constants, in.buffer_name);
  std::vector<Piece>().swap(account.pieces);
  std::vector<PlacedConstant>().swap(account.constants);
}

}  // namespace

Expected<MemoryLayout> LayOutMemory(const Graph& graph, const program::Program& program,
                                    std::span<const VariableId> valueless_constants,
                                    const MemoryOptions& options) {
  graph.FlushTileMappings();  // the schedule is walked in parallel
  const uint32_t num_tiles = graph.target().NumTiles();
  MemoryLayout layout;
  std::vector<TileAccount> tiles(num_tiles);
  TILEPROF_RETURN_IF_ERROR(AccountVertices(graph, tiles, layout.vertex_types));
  const LayoutProgress progress(options.progress);
  progress.Reached(LayoutProgress::kVertices);

  // ---- The schedule: accesses, exchanges, participation --------------------
  Schedule schedule;
  schedule.Walk(program);
  layout.program_steps = schedule.steps.size();
  const uint32_t walkers =
      options.walkers != 0
          ? options.walkers
          : std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, kMaxWalkers);
  Walk walk = WalkSchedule(graph, schedule, walkers, [&](uint64_t done, uint64_t total) {
    progress.Report(LayoutProgress::kVertices, LayoutProgress::kWalk, done, total);
  });
  layout.exchanges = walk.exchanges;
  for (uint32_t t = 0; t < num_tiles; ++t)
    static_cast<TileWalk&>(tiles[t]) = std::move(walk.tiles[t]);
  ExtendAcrossLoops(schedule.loops, walk.first, walk.last);

  const size_t num_vars = graph.num_variables();
  std::vector<bool> is_constant(num_vars, false);
  for (VariableId v : valueless_constants) {
    if (v < num_vars) is_constant[v] = true;
  }
  auto is_constant_variable = [&](VariableId v) {
    return graph.variable(v).is_constant || is_constant[v];
  };
  AllocateVariables(graph, is_constant_variable, walk.first, walk.last, tiles);
  progress.Reached(LayoutProgress::kLiveness);
  // Receive buffers hold what a step's vertices read from other tiles.
  const std::function<std::string(uint64_t)> buffer_name = [&](uint64_t step) {
    const Step& at = schedule.steps[step];
    if (at.kind == StepKind::kExecute) {
      return fmt::format("exchange buffer of {}", graph.compute_set(at.program.compute_set()).name);
    }
    return fmt::format("exchange buffer of program step {}", step);
  };
  RecordLiveness(graph, schedule, tiles, buffer_name, layout);

  // ---- Per-tile layout -------------------------------------------------------
  layout.tiles.resize(num_tiles);
  const TileLayoutInputs inputs{
      .graph = graph,
      .steps = walk.control_steps,
      .host_steps = walk.host_steps,
      .runtime_variables = walk.host_streams.size() * memory::kStreamPositionBytes,
      .instrument_vertices = options.instrument_vertices,
      .buffer_name = buffer_name};
  std::vector<std::vector<report::Variable>> variables(num_tiles);
  std::atomic<uint32_t> tiles_done{0};
  ParallelForTiles(num_tiles, [&](uint32_t t) {
    LayOutTile(inputs, t, tiles[t], layout.tiles[t], variables[t]);
    progress.Report(LayoutProgress::kLiveness, LayoutProgress::kTiles, ++tiles_done, num_tiles);
  });
  progress.Reached(LayoutProgress::kTiles);
  layout.always_live_variables = AlwaysLiveVariables(graph, is_constant_variable, layout.tiles);
  for (std::vector<report::Variable>& on_tile : variables) {
    std::move(on_tile.begin(), on_tile.end(), std::back_inserter(layout.variables));
  }
  return layout;
}

}  // namespace tileprof::engine::compiler
