// A growable array whose elements never move: chunks of a fixed size, so a
// push_back copies nothing and never holds two copies of the array (a
// std::vector of millions of vertices doubled, copied and faulted in fresh
// pages at each growth).
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <vector>

#include "engine/graph/chunk_ahead.h"

namespace tileprof::engine {

template <typename T, size_t kChunkBits = 15>
class StableVector {
 public:
  static constexpr size_t kChunk = size_t{1} << kChunkBits;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  T& operator[](size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const T& operator[](size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const T& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("StableVector::at");
    return (*this)[i];
  }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T value) {
    if ((size_ & (kChunk - 1)) == 0 && (size_ >> kChunkBits) == chunks_.size()) {
      chunks_.push_back(ahead_.Next());
    }
    (*this)[size_++] = std::move(value);
  }
  // Room for `count` elements in all: only the chunk table is reserved (the
  // chunks themselves are allocated as they fill).
  void reserve(size_t count) { chunks_.reserve((count + kChunk - 1) >> kChunkBits); }

  template <typename V, typename Owner>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;

    Iterator() = default;
    Iterator(Owner* owner, size_t index) : owner_(owner), index_(index) {}
    V& operator*() const { return (*owner_)[index_]; }
    V* operator->() const { return &(*owner_)[index_]; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++index_;
      return before;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    Owner* owner_ = nullptr;
    size_t index_ = 0;
  };
  using iterator = Iterator<T, StableVector>;
  using const_iterator = Iterator<const T, const StableVector>;

  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  ChunkAhead<T, kChunk> ahead_;
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace tileprof::engine
