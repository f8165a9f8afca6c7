// The schedule walk. See schedule_walk.h.
#include "engine/compiler/schedule_walk.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <span>
#include <thread>

namespace tileprof::engine::compiler {
namespace {

// steps touch up to every tile, and a hash map or a set per tile here was
// most of the compile time of the large corpus modules.
// A run of a tile's storage: elements [begin, end) of `variable` in the
// order the tile stores them (docs/memory-model.md: a variable's elements on
// a tile are one contiguous block, in element order).
// The variable and the tile are one 64-bit key: compared as a pair of
// 32-bit fields, GCC stored the pair to the stack and reloaded it as one
// word in Receive's loop, a failed store forward that was half the walk.
struct LocalRun {
  uint64_t source = 0;  // Source(variable, tile)
  uint64_t begin = 0;
  uint64_t end = 0;
};
constexpr uint64_t Source(VariableId variable, uint32_t tile) {
  return uint64_t{variable} << 32 | tile;
}

struct TileStep {
  bool active = false;
  bool touched = false;
  // Senders received from: the receiving tile sets up its incoming
  // exchange once per sender it listens to (its buffer takes a sender's
  // messages one after the other), so its code counts senders, where the
  // sender's counts the runs of its storage it sends.
  uint64_t receive_regions = 0;
  uint64_t receive_bytes = 0;  // into a buffer (vertex operands)
  uint64_t sent_regions = 0;   // distinct runs of storage sent
  uint64_t host_regions = 0;
  // The last runs received (a field that reads a broadcast view reads the
  // same run again and again: it arrives once), and the last host run.
  std::array<LocalRun, 4> recent{};
  uint8_t recent_count = 0;
  uint8_t recent_next = 0;
  LocalRun last_host{};
  bool has_host = false;

  // Adds a received run: a repeat of a recent one costs nothing; one that
  // continues a recent run of the same sender's storage extends that
  // message; anything else is a new message (*fresh set). Returns the new
  // elements.
  uint64_t Receive(const LocalRun& run, bool* fresh) {
    *fresh = false;
    // One pass (this is most of the walk's time: tens of millions of
    // pieces): a recent run holding this one makes it a repeat; else the
    // first recent run it continues is extended. Reads interleave senders
    // (a row of channels from two blocks, then the next row): a run
    // continues whichever recent run it follows.
    const size_t n = recent_count;
    size_t follows = n;
    for (size_t k = 0; k < n; ++k) {
      const LocalRun& r = recent[k];
      if (r.source != run.source) continue;
      if (r.begin <= run.begin && run.end <= r.end) return 0;
      if (follows == n && r.end == run.begin) follows = k;
    }
    if (follows < n) {
      recent[follows].end = run.end;
      return run.end - run.begin;
    }
    *fresh = true;
    recent[recent_next] = run;
    recent_next = static_cast<uint8_t>((recent_next + 1) % recent.size());
    if (recent_count < recent.size()) ++recent_count;
    return run.end - run.begin;
  }
  // A run of this tile's storage moved by a host stream copy.
  void Host(VariableId variable, uint64_t begin, uint64_t end) {
    if (has_host && last_host.source == Source(variable, 0) && last_host.end == begin) {
      last_host.end = end;
      return;
    }
    ++host_regions;
    last_host = {Source(variable, 0), begin, end};
    has_host = true;
  }
};

// A region sent: (variable, first element).
struct Sent {
  uint64_t begin = 0;
  VariableId variable = 0;
  bool operator==(const Sent&) const = default;
};

// Counts the distinct regions in a list, with an open-addressing table that
// is reused from one list to the next (so it stays in cache). A slot is
// empty unless stamped with the current count's generation: clearing the
// table for every list was a sixth of the walk.
class DistinctCounter {
 public:
  size_t Count(std::span<const Sent> sent) {
    if (sent.size() <= 1) return sent.size();
    size_t slots = kMinSlots;
    while (slots < 2 * sent.size()) slots *= 2;
    if (slots_.size() < slots) slots_.resize(slots);
    ++generation_;
    const size_t mask = slots - 1;
    size_t distinct = 0;
    for (const Sent& s : sent) {
      for (size_t slot = Hash(s) & mask;; slot = (slot + 1) & mask) {
        Slot& entry = slots_[slot];
        if (entry.generation != generation_) {
          entry = {s, generation_};
          ++distinct;
          break;
        }
        if (entry.sent == s) break;
      }
    }
    // A table grown for one very long list is not kept for the rest of
    // the walker's range.
    if (slots_.size() > kKeepSlots) slots_ = {};
    return distinct;
  }

 private:
  static constexpr size_t kMinSlots = 16;
  static constexpr size_t kKeepSlots = size_t{1} << 20;
  struct Slot {
    Sent sent;
    uint64_t generation = 0;
  };
  static size_t Hash(const Sent& s) {
    uint64_t h = (static_cast<uint64_t>(s.variable) * 0x9E3779B97F4A7C15ull) ^ s.begin;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return static_cast<size_t>(h);
  }
  std::vector<Slot> slots_;
  uint64_t generation_ = 0;
};

// The runs of small variables each tile has received in the current step.
// A field that reads a broadcast view (a normalisation's scale, a bias)
// reads the same few runs once per row; the source is spread over several
// tiles, and with two or three such operands the repeats cycle through more
// runs than TileStep::recent holds. Only small variables are looked up
// here: a large one's runs rarely repeat, and a set of every run of a step
// made each insertion a cache miss.
class RepeatFilter {
 public:
  // Elements a variable may have to be looked up.
  static constexpr uint64_t kSmallElements = 16384;

  // The table is cut to the current step's entries: the whole table, once
  // grown by one large step, spread every later step's few entries over
  // megabytes (each lookup a cache miss, a quarter of the walk).
  void NextStep() {
    // A table grown by one step of millions of reads is not kept for the
    // rest of the walker's range; fresh slots are of generation 0, never
    // current.
    if (slots_.size() > kKeepSlots) {
      slots_ = {};
      live_ = {};
    }
    if (++generation_ == 0) {  // wrapped: no slot may look current
      std::fill(slots_.begin(), slots_.end(), Slot{});
      generation_ = 1;
    }
    count_ = 0;
    used_ = kMinSlots;
    if (slots_.size() < used_) slots_.resize(used_);
  }
  // True when `reader` has not received `run` before in this step.
  bool First(uint32_t reader, const LocalRun& run) {
    if (2 * (count_ + 1) > used_) Grow();
    // A small variable's runs lie below kSmallElements: begin and end
    // share a word, so that a slot is 24 bytes.
    const Slot key{run.begin | run.end << 32, run.source, reader, generation_};
    const size_t mask = used_ - 1;
    for (size_t slot = Hash(key) & mask;; slot = (slot + 1) & mask) {
      Slot& entry = slots_[slot];
      if (entry.generation != generation_) {
        entry = key;
        ++count_;
        return true;
      }
      if (entry == key) return false;
    }
  }

 private:
  static constexpr size_t kMinSlots = 64;
  static constexpr size_t kKeepSlots = size_t{1} << 20;
  struct Slot {
    uint64_t span = 0;  // begin | end << 32
    uint64_t source = 0;
    uint32_t reader = 0;
    uint32_t generation = 0;
    bool operator==(const Slot&) const = default;
  };
  static size_t Hash(const Slot& k) {
    uint64_t h = k.span * 0x9E3779B97F4A7C15ull ^ k.source;
    h ^= (h >> 29) ^ (uint64_t{k.reader} * 0xBF58476D1CE4E5B9ull);
    h *= 0x94D049BB133111EBull;
    return static_cast<size_t>(h ^ (h >> 31));
  }
  void Grow() {
    live_.clear();
    for (size_t slot = 0; slot < used_; ++slot)
      if (slots_[slot].generation == generation_) live_.push_back(slots_[slot]);
    used_ *= 2;
    if (slots_.size() < used_) slots_.resize(used_);
    // The entries move to the new generation; what they leave behind is
    // of an older one, so empty.
    if (++generation_ == 0) {
      std::fill(slots_.begin(), slots_.end(), Slot{});
      generation_ = 1;
    }
    const size_t mask = used_ - 1;
    for (Slot entry : live_) {
      entry.generation = generation_;
      for (size_t slot = Hash(entry) & mask;; slot = (slot + 1) & mask) {
        if (slots_[slot].generation != generation_) {
          slots_[slot] = entry;
          break;
        }
      }
    }
  }
  std::vector<Slot> slots_;
  std::vector<Slot> live_;  // scratch for Grow
  size_t used_ = 0;         // slots of this step's table: a power of two
  uint32_t generation_ = 0;
  size_t count_ = 0;
};

// The tiles one step touches.
class StepTiles {
 public:
  explicit StepTiles(uint32_t num_tiles) : tiles_(num_tiles), seen_(num_tiles) {}

  TileStep& operator[](uint32_t tile) { return Touch(tile).step; }
  // `reader` listens to `sender` in this step.
  void Listen(uint32_t reader, uint32_t sender) {
    Slot& slot = Touch(reader);
    if (slot.senders.empty() || slot.senders.back() != sender) slot.senders.push_back(sender);
  }
  // A region (variable, first element) sent by `tile`; a region read by
  // several vertices of a step is sent once (many vertices of a step read
  // the same regions: a broadcast operand). The regions are listed per
  // sending tile and counted tile by tile when the step ends: one hash set
  // for the whole step, millions of entries, made nearly every insertion a
  // cache miss (a third of mobilenet_v2's compile time). The last region
  // listed is kept beside the tile's counts, so the common repeat is found
  // without reading the list's far end (that read was a third of Send).
  void Send(uint32_t tile, VariableId variable, uint64_t begin) {
    Send(tile, variable, begin, begin);
  }
  // A run [begin, end) of the tile's storage sent: a run that continues the
  // last one sent is the same message.
  void Send(uint32_t tile, VariableId variable, uint64_t begin, uint64_t end) {
    Slot& slot = Touch(tile);
    const Sent region{begin, variable};
    if (slot.has_last && (slot.last == region || (slot.last.variable == variable &&
                                                  slot.last_end == begin && begin != end))) {
      slot.last_end = std::max(slot.last_end, end);
      return;
    }
    slot.last = region;
    slot.last_end = end;
    slot.has_last = true;
    slot.sent.push_back(region);
  }
  // Calls f(tile, step) per tile the step touched, then resets.
  template <typename F>
  void Finish(F&& f) {
    for (uint32_t tile : list_) {
      Slot& slot = tiles_[tile];
      slot.step.sent_regions = counter_.Count(slot.sent);
      if (!slot.senders.empty()) {
        // Distinct senders by a stamp per tile: sorting the lists was a
        // seventh of a large model's compile.
        ++stamp_;
        for (uint32_t sender : slot.senders) {
          if (seen_[sender] == stamp_) continue;
          seen_[sender] = stamp_;
          ++slot.step.receive_regions;
        }
        slot.senders.clear();
      }
      f(tile, slot.step);
      slot.step = TileStep{};
      slot.has_last = false;
      // Keep a tile's list for the next step unless it grew large: 1,472
      // tiles each keeping their longest list would hold gigabytes (and at
      // 16 K entries a tile, 0.38 GB a walker).
      if (slot.sent.capacity() > kKeepSent)
        slot.sent = {};
      else
        slot.sent.clear();
    }
    list_.clear();
  }

 private:
  static constexpr size_t kKeepSent = 1 << 10;
  struct Slot {
    TileStep step;
    std::vector<uint32_t> senders;
    Sent last;
    uint64_t last_end = 0;
    bool has_last = false;
    std::vector<Sent> sent;
  };
  Slot& Touch(uint32_t tile) {
    Slot& slot = tiles_[tile];
    if (!slot.step.touched) {
      slot.step.touched = true;
      list_.push_back(tile);
    }
    return slot;
  }
  std::vector<Slot> tiles_;
  std::vector<uint32_t> list_;
  std::vector<uint64_t> seen_;  // per sending tile, the stamp it was last counted at
  uint64_t stamp_ = 0;
  DistinctCounter counter_;
};

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
    TileStep* receiver = nullptr;  // touched on the first remote piece
    graph_.ForEachRunPiece(strided, [&](const TensorRegion& piece, const TileRun* run) {
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
