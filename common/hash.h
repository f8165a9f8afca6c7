// 64-bit hashing (XXH3) for fingerprints and cache keys. Stable across runs,
// platforms and versions of tileprof: keys written to disk depend on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

namespace tileprof {

uint64_t Hash64(std::string_view bytes, uint64_t seed = 0);

// Streaming form, for hashing a structure piece by piece without building
// one string. Feeding "ab" then "c" equals feeding "abc".
class Hasher {
 public:
  explicit Hasher(uint64_t seed = 0);
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  Hasher& Add(std::string_view bytes);
  // Adds the value's 8 little-endian bytes, so the hash of a number does not
  // depend on the host's byte order.
  Hasher& AddU64(uint64_t value);
  uint64_t Digest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tileprof
