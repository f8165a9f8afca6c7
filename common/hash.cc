#include "common/hash.h"

// The state struct is only complete with the static-linking API.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

namespace tileprof {

struct Hasher::State {
  XXH3_state_t xxh;
};

uint64_t Hash64(std::string_view bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

Hasher::Hasher(uint64_t seed) : state_(std::make_unique<State>()) {
  XXH3_64bits_reset_withSeed(&state_->xxh, seed);
}

Hasher::~Hasher() = default;

Hasher& Hasher::Add(std::string_view bytes) {
  XXH3_64bits_update(&state_->xxh, bytes.data(), bytes.size());
  return *this;
}

Hasher& Hasher::AddU64(uint64_t value) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return Add(std::string_view(bytes, 8));
}

uint64_t Hasher::Digest() const { return XXH3_64bits_digest(&state_->xxh); }

}  // namespace tileprof
