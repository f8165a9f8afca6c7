// The schedule walk. See schedule_walk.h.
#include "engine/compiler/schedule_walk.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <span>
#include <thread>

#include "engine/compiler/schedule_walk_tables.h"

namespace tileprof::engine::compiler {
namespace {

using schedule_walk_internal::LocalRun;
using schedule_walk_internal::RepeatFilter;
using schedule_walk_internal::Source;
using schedule_walk_internal::StepTiles;
using schedule_walk_internal::TileStep;

// The cost walked so far by all walkers, reported in about 256 parts.
class WalkProgress {
 public:
  WalkProgress(const ProgressCallback& callback, std::span<const uint64_t> cost, uint64_t total)
      : callback_(callback),
        cost_(cost),
        total_(total),
        part_(std::max<uint64_t>(1, total / 256)) {}

  // Step `step` is walked; `pending` is this walker's cost not yet reported.
  void Walked(uint64_t step, uint64_t& pending) {
    pending += cost_[step];
    if (pending >= part_) Flush(pending);
  }
  void Flush(uint64_t& pending) {
    if (pending == 0 || !callback_) return;
    callback_(done_.fetch_add(pending) + pending, total_);
    pending = 0;
  }

 private:
  const ProgressCallback& callback_;
  std::span<const uint64_t> cost_;
  uint64_t total_;
  uint64_t part_;
  std::atomic<uint64_t> done_{0};
};

// Bytes per element of each variable, looked up for every remote region: a
// VariableInfo, with its name and shape, is a cache miss each.
std::vector<uint8_t> ElementSizes(const Graph& graph) {
  std::vector<uint8_t> sizes(graph.num_variables());
  for (VariableId v = 0; v < sizes.size(); ++v)
    sizes[v] = static_cast<uint8_t>(SizeOf(graph.variable(v).type));
  return sizes;
}

// Where each run of each variable starts in its tile's storage: the
// elements of the variable's earlier runs on the same tile.
std::vector<std::vector<uint64_t>> StorageOffsets(const Graph& graph) {
  std::vector<std::vector<uint64_t>> offsets(graph.num_variables());
  std::vector<uint64_t> on_tile(graph.target().NumTiles(), 0);
  std::vector<uint32_t> used;
  for (VariableId v = 0; v < offsets.size(); ++v) {
    const std::vector<TileRun>& runs = graph.TileMapping(v);
    offsets[v].resize(runs.size());
    for (size_t k = 0; k < runs.size(); ++k) {
      uint64_t& at = on_tile[runs[k].tile];
      if (at == 0) used.push_back(runs[k].tile);
      offsets[v][k] = at;
      at += runs[k].end - runs[k].begin;
    }
    for (uint32_t t : used) on_tile[t] = 0;
    used.clear();
  }
  return offsets;
}

// Whether step i continues a host exchange started by the step before: a
// sequence of stream copies in one direction with nothing between them is
// one host exchange (one sync, one exchange program), as Poplar merges
// adjacent stream copies.
bool ContinuesHostExchange(const Schedule& schedule, uint64_t i) {
  const StepKind kind = schedule.steps[i].kind;
  return i > 0 && (kind == StepKind::kStreamIn || kind == StepKind::kStreamOut) &&
         schedule.steps[i - 1].kind == kind;
}

// Walks a range of the schedule's steps: what each tile reads, receives,
// sends and copies in each step, and each variable's first and last step.
class StepWalker {
 public:
  StepWalker(const Graph& graph, std::span<const uint8_t> element_size,
             const std::vector<std::vector<uint64_t>>& offsets, const Schedule& schedule)
      : graph_(graph),
        element_size_(element_size),
        offsets_(offsets),
        schedule_(schedule),
        num_tiles_(graph.target().NumTiles()),
        touched_(num_tiles_),
        group_seen_(num_tiles_, 0) {
    walk_.tiles.resize(num_tiles_);
    walk_.first.assign(graph.num_variables(), UINT64_MAX);
    walk_.last.assign(graph.num_variables(), 0);
  }

  Walk Run(uint64_t begin, uint64_t end, WalkProgress* progress) {
    uint64_t pending = 0;  // cost walked and not yet reported
    // The first step of the host exchange the current stream copy belongs to.
    uint64_t host_group = UINT64_MAX;
    for (uint64_t i = begin; i < end; ++i) {
      const Step& step = schedule_.steps[i];
      repeats_.NextStep();
      switch (step.kind) {
        case StepKind::kExecute:
          Execute(step, i);
          break;
        case StepKind::kCopy:
          Copy(step, i);
          break;
        case StepKind::kStreamIn:
        case StepKind::kStreamOut:
          if (!ContinuesHostExchange(schedule_, i) || host_group == UINT64_MAX) {
            host_group = i;
            while (host_group > 0 && ContinuesHostExchange(schedule_, host_group)) --host_group;
          }
          Stream(step, i);
          break;
        case StepKind::kBranch:
          Branch(step, i);
          break;
      }
      FinishStep(i, host_group);
      if (progress != nullptr) progress->Walked(i, pending);
    }
    if (progress != nullptr) progress->Flush(pending);
    return std::move(walk_);
  }

 private:
  void Touch(VariableId v, uint64_t step) {
    walk_.first[v] = std::min(walk_.first[v], step);
    walk_.last[v] = std::max(walk_.last[v], step);
  }

  // The rows of `strided` read on `reader` in step `i`, into its receive
  // buffer where another tile holds them.
  void ReadOn(uint32_t reader, const StridedRegion& strided, uint64_t i) {
    if (strided.length == 0 || strided.count == 0) return;
    const VariableId variable = strided.variable;
    Touch(variable, i);
    const std::vector<TileRun>& runs = graph_.TileMapping(variable);
    const std::vector<uint64_t>& at = offsets_[variable];
    const bool small = graph_.variable(variable).num_elements <= RepeatFilter::kSmallElements;
    const uint64_t element_size = element_size_[variable];
    // A small variable's row repeated (stride 0: a broadcast of a bias or a
    // scale along a leading dimension) is read once: the repeats' pieces
    // would each be found in the RepeatFilter, which the first row's have
    // just entered, and change nothing. module_0698's walk made 413 M such
    // lookups, from 60 M repeated rows of a few pieces each.
    StridedRegion rows = strided;
    if (small && rows.stride == 0) rows.count = 1;
    TileStep* receiver = nullptr;  // touched on the first remote piece
    graph_.ForEachRunPiece(rows, [&](const TensorRegion& piece, const TileRun* run) {
      if (run == nullptr || run->tile == reader) return;
      if (receiver == nullptr) receiver = &touched_[reader];
      // The piece in the sender's storage.
      const uint64_t local =
          at[static_cast<size_t>(run - runs.data())] + (piece.begin - run->begin);
      const LocalRun stored{Source(variable, run->tile), local, local + piece.size()};
      if (small && !repeats_.First(reader, stored)) return;
      bool fresh = false;
      const uint64_t received = receiver->Receive(stored, &fresh);
      if (fresh) touched_.Listen(reader, run->tile);
      receiver->receive_bytes += received * element_size;
      touched_.Send(run->tile, variable, stored.begin, stored.end);
    });
  }

  void Execute(const Step& step, uint64_t i) {
    const std::vector<VertexId>& vertices = graph_.compute_set(step.program.compute_set()).vertices;
    // When each tile's vertices are listed together (most lowerings make
    // them tile by tile), a tile's repeats are forgotten once the next
    // tile's vertices start: the filter then holds one tile's runs, where
    // it grew to every tile's (a dot whose every tile reads a small
    // transposed weight element by element: 4.5 M entries, 400 MB a walker).
    const bool grouped = GroupedByTile(vertices);
    uint32_t previous = UINT32_MAX;
    for (VertexId id : vertices) {
      const VertexInfo& vertex = graph_.vertex(id);
      if (grouped && *vertex.tile != previous) {
        if (previous != UINT32_MAX) repeats_.NextStep();
        previous = *vertex.tile;
      }
      touched_[*vertex.tile].active = true;
      for (const FieldView& field : graph_.fields(id)) {
        if (!field.connected()) continue;
        // A strided run of rows all on the vertex's own tile receives
        // nothing: one lookup for the run, not one per row (Llama-3.1
        // 8B's fields hold 1.3 G rows in 66 M runs).
        for (const StridedRegion& run : field.regions().runs()) {
          if (run.length > 0 && graph_.TileHolding(run.Hull()) == vertex.tile) {
            Touch(run.variable, i);
            continue;
          }
          ReadOn(*vertex.tile, run, i);
        }
      }
    }
  }

  // True when no tile's vertices are interrupted by another tile's.
  bool GroupedByTile(const std::vector<VertexId>& vertices) {
    ++group_stamp_;
    uint32_t previous = UINT32_MAX;
    for (VertexId id : vertices) {
      const uint32_t tile = *graph_.vertex(id).tile;
      if (tile == previous) continue;
      if (group_seen_[tile] == group_stamp_) return false;
      group_seen_[tile] = group_stamp_;
      previous = tile;
    }
    return true;
  }

  // Source and destination pieces walked together.
  void Copy(const Step& step, uint64_t i) {
    std::vector<MappedRegion> src = graph_.MapRegions(step.program.source());
    std::vector<MappedRegion> dst = graph_.MapRegions(step.program.destination());
    size_t a = 0, b = 0;
    uint64_t used_a = 0, used_b = 0;
    while (a < src.size() && b < dst.size()) {
      const uint64_t n = std::min(src[a].region.size() - used_a, dst[b].region.size() - used_b);
      Touch(src[a].region.variable, i);
      Touch(dst[b].region.variable, i);
      if (src[a].tile && dst[b].tile) {
        const uint32_t s = *src[a].tile;
        const uint32_t d = *dst[b].tile;
        touched_[d].active = true;
        touched_[s].active = true;
        if (s == d) {
          ++walk_.tiles[d].copy_regions;
        } else {
          ++touched_[d].receive_regions;
          touched_.Send(s, src[a].region.variable, src[a].region.begin + used_a);
        }
      }
      used_a += n;
      used_b += n;
      if (used_a == src[a].region.size()) ++a, used_a = 0;
      if (used_b == dst[b].region.size()) ++b, used_b = 0;
    }
  }

  void Stream(const Step& step, uint64_t i) {
    if (!ContinuesHostExchange(schedule_, i)) ++walk_.host_steps;
    walk_.host_streams.insert(step.program.stream().id);
    const Tensor& tensor =
        step.kind == StepKind::kStreamIn ? step.program.destination() : step.program.source();
    for (const TensorRegion& region : tensor.regions()) {
      if (region.begin == region.end) continue;
      Touch(region.variable, i);
      const std::vector<TileRun>& runs = graph_.TileMapping(region.variable);
      const std::vector<uint64_t>& at = offsets_[region.variable];
      graph_.ForEachRunPiece(region, [&](const TensorRegion& piece, const TileRun* run) {
        if (run == nullptr) return;
        TileStep& tile = touched_[run->tile];
        tile.active = true;
        const uint64_t local =
            at[static_cast<size_t>(run - runs.data())] + (piece.begin - run->begin);
        tile.Host(piece.variable, local, local + piece.size());
      });
    }
  }

  // The predicate is broadcast from its tile to every tile, which all
  // branch on it.
  void Branch(const Step& step, uint64_t i) {
    const std::vector<MappedRegion> pieces = graph_.MapRegions(step.program.predicate());
    const uint32_t holder = pieces.empty() || !pieces[0].tile ? 0 : *pieces[0].tile;
    for (const MappedRegion& piece : pieces) Touch(piece.region.variable, i);
    for (uint32_t t = 0; t < num_tiles_; ++t) {
      TileStep& tile = touched_[t];
      tile.active = true;
      if (t != holder) ++tile.receive_regions;
    }
    if (num_tiles_ > 1 && !pieces.empty()) {
      touched_.Send(holder, pieces[0].region.variable, pieces[0].region.begin);
    }
  }

  // Each touched tile's step into its totals.
  void FinishStep(uint64_t i, uint64_t host_group) {
    const StepKind kind = schedule_.steps[i].kind;
    const bool host = kind == StepKind::kStreamIn || kind == StepKind::kStreamOut;
    if (!host || !ContinuesHostExchange(schedule_, i)) ++walk_.control_steps;
    touched_.Finish([&](uint32_t t, const TileStep& info) {
      TileWalk& tile = walk_.tiles[t];
      if (info.active && (!host || tile.active_group != host_group)) ++tile.active_steps;
      if (info.active && host) tile.active_group = host_group;
      if (info.host_regions > 0) {
        // Once per host exchange the tile takes part in.
        if (tile.host_group != host_group) ++tile.host_steps;
        tile.host_group = host_group;
        tile.host_regions += info.host_regions;
      }
      if (info.receive_regions > 0 || info.sent_regions > 0) {
        ++tile.exchange_steps;
        tile.exchange_regions += info.receive_regions + info.sent_regions;
      }
      if (info.receive_regions > 0) ++walk_.exchanges;
      if (info.receive_bytes > 0) tile.pieces.push_back({info.receive_bytes, i, i});
    });
  }

  const Graph& graph_;
  std::span<const uint8_t> element_size_;
  const std::vector<std::vector<uint64_t>>& offsets_;
  const Schedule& schedule_;
  const uint32_t num_tiles_;
  Walk walk_;
  StepTiles touched_;
  RepeatFilter repeats_;
  std::vector<uint64_t> group_seen_;  // per tile, the stamp it was last seen at
  uint64_t group_stamp_ = 0;
};

Walk WalkSteps(const Graph& graph, std::span<const uint8_t> element_size,
               const std::vector<std::vector<uint64_t>>& offsets, const Schedule& schedule,
               uint64_t begin, uint64_t end, WalkProgress* progress) {
  return StepWalker(graph, element_size, offsets, schedule).Run(begin, end, progress);
}

// The work of a step, roughly: the regions its vertices read or it copies.
uint64_t StepCost(const Graph& graph, const Step& step) {
  uint64_t cost = 1;
  if (step.kind == StepKind::kExecute) {
    for (VertexId id : graph.compute_set(step.program.compute_set()).vertices) {
      for (const FieldView& field : graph.fields(id)) cost += field.regions().size();
    }
  } else if (step.kind == StepKind::kCopy) {
    cost += step.program.source().regions().size() + step.program.destination().regions().size();
  }
  return cost;
}

}  // namespace

Walk WalkSchedule(const Graph& graph, const Schedule& schedule, uint32_t workers,
                  const ProgressCallback& progress) {
  const uint64_t n = schedule.steps.size();
  std::vector<uint64_t> cost(n);
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) total += cost[i] = StepCost(graph, schedule.steps[i]);
  // More ranges than walkers, each taken by the next walker free: the cost
  // is a rough guess (a send costs more than a region read), and with one
  // range per walker the last one walked alone for a third of the walk.
  const uint64_t ranges = workers > 1 ? uint64_t{workers} * kRangesPerWalker : 1;
  std::vector<uint64_t> bounds{0};
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n && bounds.size() < ranges; ++i) {
    sum += cost[i];
    if (sum * ranges >= total * bounds.size()) bounds.push_back(i + 1);
  }
  if (bounds.back() != n) bounds.push_back(n);
  // A host exchange (adjacent stream copies) is never split between two
  // ranges: each tile counts it once, whatever the number of walkers.
  for (uint64_t& bound : bounds) {
    while (bound > 0 && bound < n && ContinuesHostExchange(schedule, bound) &&
           (schedule.steps[bound].kind == StepKind::kStreamIn ||
            schedule.steps[bound].kind == StepKind::kStreamOut))
      ++bound;
  }
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  WalkProgress walked(progress, cost, total);
  const std::vector<uint8_t> sizes = ElementSizes(graph);
  const std::vector<std::vector<uint64_t>> offsets = StorageOffsets(graph);
  std::vector<Walk> walks(bounds.size() - 1);
  std::atomic<size_t> next{0};
  auto walker = [&] {
    for (size_t r = next++; r < walks.size(); r = next++) {
      walks[r] = WalkSteps(graph, sizes, offsets, schedule, bounds[r], bounds[r + 1], &walked);
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < std::min<size_t>(workers, walks.size()); ++w) threads.emplace_back(walker);
  walker();
  for (std::thread& thread : threads) thread.join();
  if (walks.empty()) return WalkSteps(graph, sizes, offsets, schedule, 0, 0, nullptr);
  // Each tile's receive buffers reserved once for all ranges, and each
  // range's freed as soon as they are joined: reserved for every tile
  // first, the copies and the originals were both held (1 GB more at the
  // end of a 9.6 TB model's walk).
  for (size_t t = 0; t < walks[0].tiles.size(); ++t) {
    size_t pieces = 0;
    for (const Walk& part : walks) pieces += part.tiles[t].pieces.size();
    std::vector<Piece> all;  // exactly as long: a walker's grew by doubling
    all.reserve(pieces);
    for (Walk& part : walks) {
      std::vector<Piece>& from = part.tiles[t].pieces;
      all.insert(all.end(), from.begin(), from.end());
      from = {};
    }
    walks[0].tiles[t].pieces = std::move(all);
  }
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
    }
    for (size_t v = 0; v < joined.first.size(); ++v) {
      joined.first[v] = std::min(joined.first[v], part.first[v]);
      joined.last[v] = std::max(joined.last[v], part.last[v]);
    }
    joined.exchanges += part.exchanges;
    joined.host_steps += part.host_steps;
    joined.control_steps += part.control_steps;
    joined.host_streams.merge(part.host_streams);
  }
  return joined;
}

}  // namespace tileprof::engine::compiler
