// A fixed pool of host threads for the simulator's per-tile work. One job at
// a time: ParallelFor hands out chunks of item indices from a shared counter, so
// uneven tiles balance themselves, and returns when every item is done. The
// items of one job must be independent (the simulator's are: each tile
// works on its own vertices), which is what makes results independent of
// the number of threads.
//
//   ThreadPool pool(4);                     // 0: std::thread::hardware_concurrency
//   pool.ParallelFor(tiles.size(), [&](size_t i) { Run(tiles[i]); });
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tileprof::engine::sim {

class ThreadPool {
 public:
  // `threads` counts the calling thread: ThreadPool(1) starts no thread.
  explicit ThreadPool(uint32_t threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  uint32_t size() const { return static_cast<uint32_t>(workers_.size()) + 1; }

  // Calls fn(i) for every i in [0, count), on the pool and the calling
  // thread. Not reentrant: fn must not call ParallelFor.
  void ParallelFor(size_t count, const std::function<void(size_t)>& fn);

 private:
  void WorkerLoop();
  void Drain();
  // Waits a little, without sleeping, for `done` to turn true.
  template <typename Done>
  static void SpinUntil(Done done);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  // Written under mutex_; atomic so that a worker can spin on it before it
  // sleeps (SpinUntil).
  std::atomic<uint64_t> generation_{0};
  bool stop_ = false;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t count_ = 0;
  std::atomic<size_t> next_{0};
  std::atomic<uint32_t> pending_{0};  // workers yet to finish the current job (under mutex_)
};

}  // namespace tileprof::engine::sim
