// Internal to engine/sim: the bytes one program step moves between tiles
// and IPUs, and the cycles that costs (the planner's, plan.cc).
#pragma once

#include <cstdint>
#include <map>
#include <unordered_set>
#include <utility>

#include "engine/sim/cycle_model.h"
#include "engine/sim/tile_table.h"
#include "engine/target/target.h"

namespace tileprof::engine::sim {

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
  StepCost Cost(bool spans_ipus, bool busy_tiles) const;

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

}  // namespace tileprof::engine::sim
