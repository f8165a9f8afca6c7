// Fresh chunks for the graph's growing arrays, made ready on another thread.
//
// A large graph fills a chunk every few hundred microseconds, and the first
// touch of a fresh chunk's pages (the kernel zeroing and charging each one)
// was a fifth of mobilenet_v2's graph construction, on the one thread that
// builds the graph while the other core idled. So from the second chunk on,
// the next chunk is allocated and touched on a helper thread while the
// current one fills. A small graph, which never fills its first chunk,
// never starts a thread.
#pragma once

#include <cstddef>
#include <future>
#include <memory>
#include <system_error>

namespace tileprof::engine {

template <typename T, size_t kCount>
class ChunkAhead {
 public:
  std::unique_ptr<T[]> Next() {
    std::unique_ptr<T[]> chunk = ahead_.valid() ? ahead_.get() : Make();
    if (++handed_out_ >= 2) {
      try {
        ahead_ = std::async(std::launch::async, &ChunkAhead::Make);
      } catch (const std::system_error&) {
        // No thread to spare: the next chunk is made on demand instead.
      }
    }
    return chunk;
  }

 private:
  // Value-initialised: every page is written here, on whichever thread
  // makes the chunk.
  static std::unique_ptr<T[]> Make() { return std::make_unique<T[]>(kCount); }

  std::future<std::unique_ptr<T[]>> ahead_;
  size_t handed_out_ = 0;
};

}  // namespace tileprof::engine
