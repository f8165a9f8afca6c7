#include "engine/sim/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace tileprof::engine::sim {

ThreadPool::ThreadPool(uint32_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads - 1);
  for (uint32_t i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

// Items are taken a chunk at a time: one shared counter bumped per item
// (a tile) bounced between the cores' caches on every bump, which cost as
// much as a small tile's work. Sixteen chunks a thread still balance
// uneven tiles.
void ThreadPool::Drain() {
  const size_t chunk = std::max<size_t>(1, count_ / (16 * size()));
  for (size_t first = next_.fetch_add(chunk, std::memory_order_relaxed); first < count_;
       first = next_.fetch_add(chunk, std::memory_order_relaxed)) {
    const size_t last = std::min(count_, first + chunk);
    for (size_t i = first; i < last; ++i) (*fn_)(i);
  }
}

// A simulation is a chain of short jobs (a compute set each, often tens of
// microseconds) separated by serial work; a thread put to sleep on a
// condition variable takes about as long to wake up. So both sides first
// spin for up to kSpin before they block.
template <typename Done>
void ThreadPool::SpinUntil(Done done) {
  constexpr auto kSpin = std::chrono::microseconds(50);
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t i = 1; !done(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 64 == 0 && std::chrono::steady_clock::now() - start > kSpin) return;
  }
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  for (;;) {
    SpinUntil([&] { return generation_.load(std::memory_order_acquire) != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    Drain();
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last = --pending_ == 0;
    }
    if (last) done_.notify_one();
  }
}

void ThreadPool::ParallelFor(size_t count, const std::function<void(size_t)>& fn) {
  if (count == 0) return;
  if (workers_.empty() || count == 1) {
    for (size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    count_ = count;
    next_.store(0, std::memory_order_relaxed);
    pending_ = static_cast<uint32_t>(workers_.size());
    ++generation_;
  }
  start_.notify_all();
  Drain();
  SpinUntil([&] { return pending_.load(std::memory_order_acquire) == 0; });
  // Every worker checks in once per job, even one that woke after the items
  // ran out, so none can still be reading this job when the next is set up.
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  fn_ = nullptr;
}

}  // namespace tileprof::engine::sim
