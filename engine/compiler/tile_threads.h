// Internal to engine/compiler: the memory model's work spread over the
// machine's cores by tile (memory_model.cc, step_liveness.cc).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace tileprof::engine::compiler {

// Runs work() on `workers` threads, this one included.
template <typename F>
void OnThreads(uint32_t workers, F&& work) {
  std::vector<std::thread> threads;
  for (uint32_t i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
}

// Tiles are laid out independently: spread them over the machine's cores
// (the per-tile first-fit placement dominates on large graphs).
inline uint32_t TileWorkers(uint32_t num_tiles) {
  return std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1,
                              std::max<uint32_t>(1, num_tiles / 64));
}

template <typename F>
void ParallelForTiles(uint32_t num_tiles, F&& f) {
  std::atomic<uint32_t> next{0};
  OnThreads(TileWorkers(num_tiles), [&] {
    // Small batches keep the cores busy when a few tiles hold most pieces.
    constexpr uint32_t kBatch = 16;
    for (uint32_t lo = next.fetch_add(kBatch); lo < num_tiles; lo = next.fetch_add(kBatch)) {
      for (uint32_t t = lo; t < std::min(num_tiles, lo + kBatch); ++t) f(t);
    }
  });
}

// f(shard, shards) on each of a few threads; shard s owns the tiles t with
// t % shards == s, so the shards write disjoint tiles in a fixed order.
template <typename F>
void ForTileShards(uint32_t num_tiles, F&& f) {
  const uint32_t shards = TileWorkers(num_tiles);
  std::atomic<uint32_t> next{0};
  OnThreads(shards, [&] { f(next++, shards); });
}

}  // namespace tileprof::engine::compiler
