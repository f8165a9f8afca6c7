// Bump allocation for the HLO model. A parsed module holds millions of small,
// immutable objects (instructions, operand lists, attributes) that all die
// with the module; one malloc each would dominate parse time and add 16 bytes
// of allocator overhead per object. Everything allocated here must be
// trivially destructible: the arena frees memory without running destructors.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tileprof::hlo {

class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  Arena(Arena&&) = default;
  Arena& operator=(Arena&&) = default;

  // Raw storage of `size` bytes aligned to `align` (a power of two <= 16).
  void* Allocate(size_t size, size_t align) {
    size_t offset = (used_ + align - 1) & ~(align - 1);
    if (blocks_.empty() || offset + size > block_size_) {
      NewBlock(size);
      offset = 0;
    }
    used_ = offset + size;
    bytes_ += size;
    return blocks_.back().get() + offset;
  }

  template <typename T, typename... Args>
  T* New(Args&&... args) {
    static_assert(std::is_trivially_destructible_v<T>);
    return new (Allocate(sizeof(T), alignof(T))) T(std::forward<Args>(args)...);
  }

  // Copies `items` into the arena; an empty input gives an empty span.
  template <typename T>
  std::span<T> Copy(std::span<const T> items) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    if (items.empty()) return {};
    T* out = static_cast<T*>(Allocate(sizeof(T) * items.size(), alignof(T)));
    std::memcpy(static_cast<void*>(out), items.data(), sizeof(T) * items.size());
    return {out, items.size()};
  }

  // Copies a string; the view stays valid for the arena's lifetime.
  std::string_view CopyString(std::string_view text) {
    if (text.empty()) return {};
    char* out = static_cast<char*>(Allocate(text.size(), 1));
    std::memcpy(out, text.data(), text.size());
    return {out, text.size()};
  }

  // Bytes handed out so far (for memory statistics).
  size_t bytes_allocated() const { return bytes_; }

 private:
  void NewBlock(size_t at_least) {
    // Blocks grow geometrically up to 1 MiB so tiny modules stay tiny.
    block_size_ = std::max(
        at_least, std::min<size_t>(std::max<size_t>(block_size_ * 2, 4096), size_t{1} << 20));
    // Not make_unique: that would zero every block for nothing.
    blocks_.push_back(std::unique_ptr<char[]>(new char[block_size_]));
    used_ = 0;
  }

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_size_ = 0;
  size_t used_ = 0;
  size_t bytes_ = 0;
};

}  // namespace tileprof::hlo
