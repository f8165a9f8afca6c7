#include "engine/compiler/memory_model.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "engine/compiler/memory_pool.h"

namespace tileprof::engine::compiler {
namespace {

using program::ProgramKind;
using report::Category;
using report::Region;
using report::VertexDataCategory;

enum class StepKind : uint8_t { kExecute, kCopy, kStreamIn, kStreamOut, kBranch };

struct Step {
  StepKind kind;
  program::Program program;
};

// The control program in execution order, each loop body once, both
// branches of an If one after the other (their temporaries are never live
// together, and a linear order keeps the interval analysis simple).
struct Schedule {
  std::vector<Step> steps;
  std::vector<std::pair<uint64_t, uint64_t>> loops;  // [first step, end step)

  void Walk(const program::Program& p) {
    switch (p.kind()) {
      case ProgramKind::kSequence:
        for (const program::Program& step : p.steps()) Walk(step);
        break;
      case ProgramKind::kExecute: steps.push_back({StepKind::kExecute, p}); break;
      case ProgramKind::kCopy: steps.push_back({StepKind::kCopy, p}); break;
      case ProgramKind::kCopyFromStream: steps.push_back({StepKind::kStreamIn, p}); break;
      case ProgramKind::kCopyToStream: steps.push_back({StepKind::kStreamOut, p}); break;
      case ProgramKind::kRepeat: {
        const uint64_t start = steps.size();
        Walk(p.body());
        loops.emplace_back(start, steps.size());
        break;
      }
      case ProgramKind::kRepeatWhileTrue: {
        const uint64_t start = steps.size();
        Walk(p.condition());
        steps.push_back({StepKind::kBranch, p});
        Walk(p.body());
        loops.emplace_back(start, steps.size());
        break;
      }
      case ProgramKind::kIf:
        steps.push_back({StepKind::kBranch, p});
        Walk(p.then_body());
        Walk(p.else_body());
        break;
    }
  }
};

// What the schedule does on one tile (WalkSteps): the steps it takes part
// in, its exchanges, and its receive buffers as pieces in step order.
struct TileWalk {
  uint64_t active_steps = 0;
  uint64_t host_steps = 0;
  uint64_t host_regions = 0;
  uint64_t exchange_steps = 0;
  uint64_t exchange_regions = 0;
  uint64_t copy_regions = 0;
  std::vector<Piece> pieces;
};

struct TileAccount : TileWalk {
  uint64_t vertices = 0;
  uint64_t internal_state = 0;
  uint64_t edge_pointers = 0;
  std::map<uint32_t, uint64_t> type_bytes;  // vertex type index -> state bytes
  uint64_t vertex_code = 0;
  uint64_t constant_bytes = 0;  // aligned
  std::vector<PlacedConstant> constants;  // offsets from the start of the constants
};

// What one step does on one tile. Dense per tile and reset after each step:
// steps touch up to every tile, and a hash map or a set per tile here was
// most of the compile time of the large corpus modules.
struct TileStep {
  bool active = false;
  bool touched = false;
  uint64_t receive_regions = 0;
  uint64_t receive_bytes = 0;  // into a buffer (vertex operands)
  uint64_t sent_regions = 0;   // distinct regions sent
  uint64_t host_regions = 0;
};

// A region sent: (variable, first element).
struct Sent {
  uint64_t begin = 0;
  VariableId variable = 0;
  bool operator==(const Sent&) const = default;
};

// Counts the distinct regions in a list, with an open-addressing table that
// is reused from one list to the next (so it stays in cache).
class DistinctCounter {
 public:
  size_t Count(std::span<const Sent> sent) {
    size_t slots = kMinSlots;
    while (slots < 2 * sent.size()) slots *= 2;
    if (slots_.size() < slots) slots_.resize(slots);
    std::fill_n(slots_.begin(), slots, Slot{});
    const size_t mask = slots - 1;
    size_t distinct = 0;
    for (const Sent& s : sent) {
      for (size_t slot = Hash(s) & mask;; slot = (slot + 1) & mask) {
        Slot& entry = slots_[slot];
        if (!entry.used) {
          entry = {s, true};
          ++distinct;
          break;
        }
        if (entry.sent == s) break;
      }
    }
    return distinct;
  }

 private:
  static constexpr size_t kMinSlots = 16;
  struct Slot {
    Sent sent;
    bool used = false;
  };
  static size_t Hash(const Sent& s) {
    uint64_t h = (static_cast<uint64_t>(s.variable) * 0x9E3779B97F4A7C15ull) ^ s.begin;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return static_cast<size_t>(h);
  }
  std::vector<Slot> slots_;
};

// The tiles one step touches.
class StepTiles {
 public:
  explicit StepTiles(uint32_t num_tiles) : tiles_(num_tiles), sent_(num_tiles) {}

  TileStep& operator[](uint32_t tile) {
    TileStep& step = tiles_[tile];
    if (!step.touched) {
      step.touched = true;
      list_.push_back(tile);
    }
    return step;
  }
  // A region (variable, first element) sent by `tile`; a region read by
  // several vertices of a step is sent once (many vertices of a step read
  // the same regions: a broadcast operand). The regions are listed per
  // sending tile and counted tile by tile when the step ends: one hash set
  // for the whole step, millions of entries, made nearly every insertion a
  // cache miss (a third of mobilenet_v2's compile time).
  void Send(uint32_t tile, VariableId variable, uint64_t begin) {
    (*this)[tile];
    std::vector<Sent>& sent = sent_[tile];
    const Sent region{begin, variable};
    if (sent.empty() || !(sent.back() == region)) sent.push_back(region);
  }
  // Calls f(tile, step) per tile the step touched, then resets.
  template <typename F>
  void Finish(F&& f) {
    for (uint32_t tile : list_) {
      TileStep& step = tiles_[tile];
      std::vector<Sent>& sent = sent_[tile];
      step.sent_regions = counter_.Count(sent);
      f(tile, step);
      step = TileStep{};
      // Keep a tile's list for the next step unless it grew large: 1,472
      // tiles each keeping their longest list would hold gigabytes.
      if (sent.capacity() > kKeepSent) sent = {};
      else sent.clear();
    }
    list_.clear();
  }

 private:
  static constexpr size_t kKeepSent = 1 << 14;
  std::vector<TileStep> tiles_;
  std::vector<std::vector<Sent>> sent_;
  std::vector<uint32_t> list_;
  DistinctCounter counter_;
};

// What the steps [begin, end) of the schedule do: per tile, the counts the
// memory model needs and the receive buffers (as pieces, in step order); per
// variable, the first and last step touching it. Walks of consecutive ranges
// add up to the walk of their union, so the schedule is walked in parallel.
struct Walk {
  std::vector<TileWalk> tiles;
  std::vector<uint64_t> first;  // by variable; UINT64_MAX if untouched
  std::vector<uint64_t> last;
  uint64_t exchanges = 0;
  uint64_t host_steps = 0;
  std::set<StreamId> host_streams;
};

Walk WalkSteps(const Graph& graph, const Schedule& schedule, uint64_t begin, uint64_t end) {
  const uint32_t num_tiles = graph.target().NumTiles();
  Walk walk;
  walk.tiles.resize(num_tiles);
  walk.first.assign(graph.num_variables(), UINT64_MAX);
  walk.last.assign(graph.num_variables(), 0);
  auto touch = [&](VariableId v, uint64_t step) {
    walk.first[v] = std::min(walk.first[v], step);
    walk.last[v] = std::max(walk.last[v], step);
  };
  StepTiles touched(num_tiles);
  for (uint64_t i = begin; i < end; ++i) {
    const Step& step = schedule.steps[i];
    // Elements of `regions` read on `reader` (or written there by a copy,
    // when `buffered` is false).
    auto read_on = [&](uint32_t reader, const Tensor& tensor, bool buffered) {
      graph.ForEachMappedRegion(tensor, [&](const MappedRegion& piece) {
        touch(piece.region.variable, i);
        if (!piece.tile || *piece.tile == reader) return;
        TileStep& receiver = touched[reader];
        ++receiver.receive_regions;
        if (buffered) {
          receiver.receive_bytes += piece.region.size() * SizeOf(graph.variable(piece.region.variable).type);
        }
        touched.Send(*piece.tile, piece.region.variable, piece.region.begin);
      });
    };
    switch (step.kind) {
      case StepKind::kExecute: {
        for (VertexId id : graph.compute_set(step.program.compute_set()).vertices) {
          const VertexInfo& vertex = graph.vertex(id);
          touched[*vertex.tile].active = true;
          for (const std::optional<Tensor>& field : vertex.fields) {
            if (field) read_on(*vertex.tile, *field, true);
          }
        }
        break;
      }
      case StepKind::kCopy: {
        // Walk source and destination pieces together.
        std::vector<MappedRegion> src = graph.MapRegions(step.program.source());
        std::vector<MappedRegion> dst = graph.MapRegions(step.program.destination());
        size_t a = 0, b = 0;
        uint64_t used_a = 0, used_b = 0;
        while (a < src.size() && b < dst.size()) {
          const uint64_t n = std::min(src[a].region.size() - used_a, dst[b].region.size() - used_b);
          touch(src[a].region.variable, i);
          touch(dst[b].region.variable, i);
          if (src[a].tile && dst[b].tile) {
            const uint32_t s = *src[a].tile;
            const uint32_t d = *dst[b].tile;
            touched[d].active = true;
            touched[s].active = true;
            if (s == d) {
              ++walk.tiles[d].copy_regions;
            } else {
              ++touched[d].receive_regions;
              touched.Send(s, src[a].region.variable, src[a].region.begin + used_a);
            }
          }
          used_a += n;
          used_b += n;
          if (used_a == src[a].region.size()) ++a, used_a = 0;
          if (used_b == dst[b].region.size()) ++b, used_b = 0;
        }
        break;
      }
      case StepKind::kStreamIn:
      case StepKind::kStreamOut: {
        ++walk.host_steps;
        walk.host_streams.insert(step.program.stream().id);
        const Tensor& tensor = step.kind == StepKind::kStreamIn ? step.program.destination()
                                                                : step.program.source();
        for (const MappedRegion& piece : graph.MapRegions(tensor)) {
          touch(piece.region.variable, i);
          if (!piece.tile) continue;
          TileStep& tile = touched[*piece.tile];
          tile.active = true;
          ++tile.host_regions;
        }
        break;
      }
      case StepKind::kBranch: {
        // The predicate is broadcast from its tile to every tile, which all
        // branch on it.
        const std::vector<MappedRegion> pieces = graph.MapRegions(step.program.predicate());
        const uint32_t holder = pieces.empty() || !pieces[0].tile ? 0 : *pieces[0].tile;
        for (const MappedRegion& piece : pieces) touch(piece.region.variable, i);
        for (uint32_t t = 0; t < num_tiles; ++t) {
          TileStep& tile = touched[t];
          tile.active = true;
          if (t != holder) ++tile.receive_regions;
        }
        if (num_tiles > 1 && !pieces.empty()) {
          touched.Send(holder, pieces[0].region.variable, pieces[0].region.begin);
        }
        break;
      }
    }
    touched.Finish([&](uint32_t t, const TileStep& info) {
      TileWalk& tile = walk.tiles[t];
      if (info.active) ++tile.active_steps;
      if (info.host_regions > 0) {
        ++tile.host_steps;
        tile.host_regions += info.host_regions;
      }
      if (info.receive_regions > 0 || info.sent_regions > 0) {
        ++tile.exchange_steps;
        tile.exchange_regions += info.receive_regions + info.sent_regions;
      }
      if (info.receive_regions > 0) ++walk.exchanges;
      if (info.receive_bytes > 0) tile.pieces.push_back({info.receive_bytes, i, i});
    });
  }
  return walk;
}

// The default number of walkers is one per core, up to this: more only add
// memory (a StepTiles and a per-tile account each) and join time.
constexpr uint32_t kMaxWalkers = 4;

// The work of a step, roughly: the regions its vertices read or it copies.
uint64_t StepCost(const Graph& graph, const Step& step) {
  uint64_t cost = 1;
  if (step.kind == StepKind::kExecute) {
    for (VertexId id : graph.compute_set(step.program.compute_set()).vertices) {
      for (const std::optional<Tensor>& field : graph.vertex(id).fields) {
        if (field) cost += field->regions().size();
      }
    }
  } else if (step.kind == StepKind::kCopy) {
    cost += step.program.source().regions().size() + step.program.destination().regions().size();
  }
  return cost;
}

// Walks the schedule in up to `workers` consecutive ranges of about equal
// cost, in parallel, and joins them in step order (so the result does not
// depend on the number of workers).
Walk WalkSchedule(const Graph& graph, const Schedule& schedule, uint32_t workers) {
  const uint64_t n = schedule.steps.size();
  std::vector<uint64_t> cost(n);
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) total += cost[i] = StepCost(graph, schedule.steps[i]);
  std::vector<uint64_t> bounds{0};
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n && bounds.size() < workers; ++i) {
    sum += cost[i];
    if (sum * workers >= total * bounds.size()) bounds.push_back(i + 1);
  }
  if (bounds.back() != n) bounds.push_back(n);
  std::vector<Walk> walks(bounds.size() - 1);
  std::vector<std::thread> threads;
  for (size_t w = 1; w < walks.size(); ++w) {
    threads.emplace_back([&, w] { walks[w] = WalkSteps(graph, schedule, bounds[w], bounds[w + 1]); });
  }
  if (!walks.empty()) walks[0] = WalkSteps(graph, schedule, bounds[0], bounds[1]);
  for (std::thread& thread : threads) thread.join();
  if (walks.empty()) return WalkSteps(graph, schedule, 0, 0);
  Walk joined = std::move(walks[0]);
  for (size_t w = 1; w < walks.size(); ++w) {
    Walk& part = walks[w];
    for (size_t t = 0; t < joined.tiles.size(); ++t) {
      TileWalk& a = joined.tiles[t];
      TileWalk& b = part.tiles[t];
      a.active_steps += b.active_steps;
      a.host_steps += b.host_steps;
      a.host_regions += b.host_regions;
      a.exchange_steps += b.exchange_steps;
      a.exchange_regions += b.exchange_regions;
      a.copy_regions += b.copy_regions;
      a.pieces.insert(a.pieces.end(), b.pieces.begin(), b.pieces.end());
    }
    for (size_t v = 0; v < joined.first.size(); ++v) {
      joined.first[v] = std::min(joined.first[v], part.first[v]);
      joined.last[v] = std::max(joined.last[v], part.last[v]);
    }
    joined.exchanges += part.exchanges;
    joined.host_steps += part.host_steps;
    joined.host_streams.merge(part.host_streams);
  }
  return joined;
}

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Tiles are laid out independently: spread them over the machine's cores
// (the per-tile first-fit placement dominates on large graphs).
template <typename F>
void ParallelForTiles(uint32_t num_tiles, F&& f) {
  const uint32_t workers =
      std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, std::max<uint32_t>(1, num_tiles / 64));
  if (workers <= 1) {
    for (uint32_t t = 0; t < num_tiles; ++t) f(t);
    return;
  }
  std::atomic<uint32_t> next{0};
  auto work = [&] {
    // Small batches keep the cores busy when a few tiles hold most pieces.
    constexpr uint32_t kBatch = 16;
    for (uint32_t lo = next.fetch_add(kBatch); lo < num_tiles; lo = next.fetch_add(kBatch)) {
      for (uint32_t t = lo; t < std::min(num_tiles, lo + kBatch); ++t) f(t);
    }
  };
  std::vector<std::thread> threads;
  for (uint32_t i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
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

}  // namespace

Expected<MemoryLayout> LayOutMemory(const Graph& graph, const program::Program& program,
                                    std::span<const VariableId> valueless_constants,
                                    const MemoryOptions& options) {
  const Target& target = graph.target();
  const uint32_t num_tiles = target.NumTiles();
  MemoryLayout layout;
  std::vector<TileAccount> tiles(num_tiles);

  // ---- Vertices: state, types, code, instrumentation -----------------------
  std::unordered_map<const Codelet*, uint32_t> type_index;
  std::vector<std::set<const Codelet*>> codelets_on_tile(num_tiles);
  for (VertexId id = 0; id < graph.num_vertices(); ++id) {
    const VertexInfo& vertex = graph.vertex(id);
    if (!vertex.tile) return MakeError("{} is not mapped to a tile", graph.DescribeVertex(id));
    TileAccount& tile = tiles[*vertex.tile];
    const Codelet* codelet = vertex.codelet;
    auto [it, added] = type_index.emplace(codelet, static_cast<uint32_t>(layout.vertex_types.size()));
    if (added) layout.vertex_types.push_back({codelet->name()});
    ++tile.vertices;
    tile.internal_state += codelet->internal_state_bytes();
    tile.edge_pointers += codelet->edge_pointer_bytes();
    tile.type_bytes[it->second] += codelet->state_bytes();
    if (codelets_on_tile[*vertex.tile].insert(codelet).second) tile.vertex_code += codelet->code_bytes();
  }

  // ---- The schedule: accesses, exchanges, participation --------------------
  Schedule schedule;
  schedule.Walk(program);
  layout.program_steps = schedule.steps.size();
  const size_t num_vars = graph.num_variables();
  const uint32_t walkers = options.walkers != 0
                              ? options.walkers
                              : std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, kMaxWalkers);
  Walk walk = WalkSchedule(graph, schedule, walkers);
  std::vector<uint64_t>& first = walk.first;
  std::vector<uint64_t>& last = walk.last;
  const uint64_t host_steps = walk.host_steps;
  const std::set<StreamId>& host_streams = walk.host_streams;
  layout.exchanges = walk.exchanges;
  for (uint32_t t = 0; t < num_tiles; ++t) static_cast<TileWalk&>(tiles[t]) = std::move(walk.tiles[t]);

  // ---- Liveness: a variable used inside a loop and outside it lives for
  // the whole loop (every iteration reads or rewrites it). -------------------
  std::sort(schedule.loops.begin(), schedule.loops.end(), [](const auto& x, const auto& y) {
    return x.second - x.first < y.second - y.first;
  });
  for (const auto& [start, end] : schedule.loops) {
    if (start == end) continue;
    for (size_t v = 0; v < num_vars; ++v) {
      if (first[v] == UINT64_MAX) continue;
      const bool overlaps = first[v] < end && last[v] >= start;
      const bool inside = first[v] >= start && last[v] < end;
      if (overlaps && !inside) {
        first[v] = std::min(first[v], start);
        last[v] = std::max(last[v], end - 1);
      }
    }
  }
  std::vector<bool> is_constant(num_vars, false);
  for (VariableId v : valueless_constants) {
    if (v < num_vars) is_constant[v] = true;
  }
  for (VariableId v = 0; v < num_vars; ++v) {
    const VariableInfo& info = graph.variable(v);
    const bool constant = info.is_constant || is_constant[v];
    if (!constant && first[v] == UINT64_MAX) continue;  // never used: never allocated
    const uint64_t size = SizeOf(info.type);
    for (const TileRun& run : graph.TileMapping(v)) {
      const uint64_t bytes = (run.end - run.begin) * size;
      TileAccount& tile = tiles[run.tile];
      if (constant) {
        const uint64_t aligned = AlignUp(bytes, memory::kDataAlignment);
        tile.constants.push_back({v, bytes, tile.constant_bytes});
        tile.constant_bytes += aligned;
      } else {
        tile.pieces.push_back({bytes, first[v], last[v], v});
      }
    }
  }

  // ---- Per-tile layout -------------------------------------------------------
  const std::span<const uint32_t> elements = target.MemoryElementOffsets();
  layout.tiles.resize(num_tiles);
  const uint64_t runtime_variables = host_streams.size() * memory::kStreamPositionBytes;
  std::vector<std::vector<report::Variable>> variables(num_tiles);
  // Receive buffers hold what a step's vertices read from other tiles.
  const std::function<std::string(uint64_t)> buffer_name = [&](uint64_t step) {
    const Step& at = schedule.steps[step];
    if (at.kind == StepKind::kExecute) {
      return fmt::format("exchange buffer of {}", graph.compute_set(at.program.compute_set()).name);
    }
    return fmt::format("exchange buffer of program step {}", step);
  };
  auto lay_out_tile = [&](uint32_t t) {
    TileAccount& account = tiles[t];
    report::TileMemory& tile = layout.tiles[t];
    tile.tile = t;
    auto& cat = tile.by_category;
    const uint64_t steps = schedule.steps.size();
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
        options.instrument_vertices ? account.vertices * memory::kInstrumentationBytesPerVertex : 0;
    report::At(cat, Category::kStack) = memory::kStackBytes;
    report::At(cat, Category::kConstants) = account.constant_bytes;
    const uint64_t live_peak = PeakLive(account.pieces);
    report::At(cat, Category::kVariables) = runtime_variables + live_peak;

    report::At(tile.vertex_data, VertexDataCategory::kInternalVertexState) = account.internal_state;
    report::At(tile.vertex_data, VertexDataCategory::kEdgePointers) = account.edge_pointers;
    report::At(tile.vertex_data, VertexDataCategory::kDescriptors) =
        report::At(cat, Category::kCopyDescriptors);
    for (const auto& [type, bytes] : account.type_bytes) tile.vertex_types.push_back({type, bytes});

    // Addresses: code first (it must sit in non-interleaved memory), then
    // vertex state and descriptors, the stack from the next memory element,
    // constants, and the not-always-live pool.
    RegionBytes regions(target.InterleavedMemoryStart(), target.BytesPerTile());
    uint64_t cursor = 0;
    auto place = [&](uint64_t bytes, uint64_t alignment) {
      cursor = AlignUp(cursor, alignment);
      regions.Add(cursor, bytes);
      cursor += bytes;
    };
    for (Category c : {Category::kVertexCode, Category::kControlCode, Category::kInternalExchangeCode,
                       Category::kHostExchangeCode, Category::kGlobalExchangeCode,
                       Category::kSharedCodeStorage}) {
      place(report::At(cat, c), memory::kDataAlignment);
    }
    for (Category c : {Category::kVertexInstances, Category::kCopyDescriptors,
                       Category::kVectorListDescriptors, Category::kVertexFieldData,
                       Category::kControlTable, Category::kHostExchangePacketHeaders,
                       Category::kGlobalExchangePacketHeaders, Category::kInstrumentationResults,
                       Category::kSharedDataStorage}) {
      place(report::At(cat, c), memory::kWordAlignment);
    }
    // The stack starts a memory element of its own: worker stack traffic then
    // never competes with instruction fetch for a bank. This is what makes a
    // seed 004 tile span 19.6 KB including gaps for 4.4 KB of data.
    for (uint32_t offset : elements) {
      if (offset >= cursor) {
        cursor = offset;
        break;
      }
    }
    place(memory::kStackBytes, memory::kDataAlignment);
    const uint64_t constants_start = AlignUp(cursor, memory::kDataAlignment);
    for (PlacedConstant& c : account.constants) c.offset += constants_start;
    place(account.constant_bytes, memory::kDataAlignment);
    place(runtime_variables, memory::kWordAlignment);
    cursor = AlignUp(cursor, memory::kDataAlignment);
    const uint64_t pool_start = cursor;
    regions.Add(pool_start, live_peak);
    const uint64_t extent = FirstFitExtent(account.pieces);
    const uint64_t end = pool_start + std::max(extent, live_peak);
    regions.Fill(end, tile);
    tile.not_always_live = live_peak;
    tile.always_live = tile.ExcludingGaps() - live_peak;
    variables[t] = LargestVariables(graph, t, account.pieces, pool_start, account.constants, buffer_name);
    std::vector<Piece>().swap(account.pieces);
    std::vector<PlacedConstant>().swap(account.constants);
  };
  ParallelForTiles(num_tiles, lay_out_tile);
  for (std::vector<report::Variable>& on_tile : variables) {
    std::move(on_tile.begin(), on_tile.end(), std::back_inserter(layout.variables));
  }
  return layout;
}

}  // namespace tileprof::engine::compiler
