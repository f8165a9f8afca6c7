// Internal to engine/compiler/schedule_walk.cc: the per-step tables of the
// schedule walk (what a tile receives and sends in one step, which regions
// repeat, how many distinct regions a tile sends). Steps touch up to every
// tile, and a hash map or a set per tile here was most of the compile time
// of the large corpus modules.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "engine/graph/graph.h"

namespace tileprof::engine::compiler::schedule_walk_internal {

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

}  // namespace tileprof::engine::compiler::schedule_walk_internal
