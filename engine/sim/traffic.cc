#include "engine/sim/traffic.h"

#include <algorithm>

namespace tileprof::engine::sim {

StepCost Traffic::Cost(bool spans_ipus, bool busy_tiles) const {
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
    global = std::max(global,
                      kExchangeSetupCycles + IpuLinkCycles(std::max(bytes.in, bytes.out), target_));
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

}  // namespace tileprof::engine::sim
