// Internal to engine/sim: per-tile values of one program step, used like the
// std::map the planner had (operator[] value-initialises on first use,
// iteration in tile order over the tiles used), stored densely: the planner
// looks a tile up for every remote piece of every field, and a tree's search
// and node allocations were a tenth of preparing ResNet-50 to run. The slots
// are allocated on first use only, so a step that touches no tile (most
// host transfers) costs nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tileprof::engine::sim {

template <typename T>
class TileTable {
 public:
  explicit TileTable(uint32_t num_tiles) : num_tiles_(num_tiles) {}

  // `tile` must be a tile of the target (the graph checked every mapping).
  T& operator[](uint32_t tile) {
    if (slots_.empty()) slots_.resize(num_tiles_);
    Slot& slot = slots_[tile];
    if (!slot.used) {
      slot.used = true;
      used_.push_back(tile);
      sorted_ = used_.size() < 2 || (sorted_ && used_[used_.size() - 2] < tile);
    }
    return slot.value;
  }
  bool empty() const { return used_.empty(); }
  // Calls f(tile, value) for each tile used, in tile order.
  template <typename F>
  void ForEach(F&& f) const {
    Sort();
    for (uint32_t tile : used_) f(tile, slots_[tile].value);
  }
  template <typename F>
  void ForEach(F&& f) {
    Sort();
    for (uint32_t tile : used_) f(tile, slots_[tile].value);
  }

 private:
  void Sort() const {
    if (!sorted_) {
      std::sort(used_.begin(), used_.end());
      sorted_ = true;
    }
  }
  struct Slot {
    T value{};
    bool used = false;
  };
  uint32_t num_tiles_;
  std::vector<Slot> slots_;
  // Sorted on the first ordered walk; mutable so that a const walk can.
  mutable std::vector<uint32_t> used_;
  mutable bool sorted_ = true;
};

}  // namespace tileprof::engine::sim
