// NameTable: an open-addressing map from string_view to a pointer, used for
// the parser's name scopes (instruction names per computation, computation
// names per module) and for interning shapes by their text. The keys are views
// into the module's source text, so the table never copies a string; with one
// lookup per operand it is on the parser's hot path, where std::unordered_map
// costs a node allocation per insert.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tileprof::hlo {

// FNV-1a over 8 bytes at a time, then a murmur-style finaliser. Not for
// anything persisted: only the in-memory tables use it.
inline uint64_t HashName(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull ^ text.size();
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    __builtin_memcpy(&word, text.data() + i, 8);
    h = (h ^ word) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < text.size(); ++i) h = (h ^ static_cast<unsigned char>(text[i])) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

template <typename T>
class NameTable {
 public:
  // Returns the value stored for `name`, or nullptr.
  T* Find(std::string_view name) const {
    if (slots_.empty()) return nullptr;
    size_t mask = slots_.size() - 1;
    for (size_t i = HashName(name) & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.value == nullptr) return nullptr;
      if (slot.key == name) return slot.value;
    }
  }

  // Inserts `name` -> `value` unless present; returns the value now stored
  // (the existing one when the name was already there). `value` is non-null.
  T* Insert(std::string_view name, T* value) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    size_t mask = slots_.size() - 1;
    for (size_t i = HashName(name) & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.value == nullptr) {
        slot.key = name;
        slot.value = value;
        ++size_;
        return value;
      }
      if (slot.key == name) return slot.value;
    }
  }

  // Empties the table. Capacity up to 64K slots is kept, so a parser that
  // clears its scope per computation does not regrow it every time.
  void Clear() {
    if (slots_.size() > (1u << 16)) {
      slots_.clear();
      slots_.shrink_to_fit();
    } else if (size_ > 0) {
      std::fill(slots_.begin(), slots_.end(), Slot{});
    }
    size_ = 0;
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    std::string_view key;
    T* value = nullptr;
  };

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    size_ = 0;
    for (const Slot& slot : old)
      if (slot.value != nullptr) Insert(slot.key, slot.value);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace tileprof::hlo
