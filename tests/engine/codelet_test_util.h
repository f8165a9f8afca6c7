// Helpers for the codelet tests: typed buffers as field spans, and running a
// codelet by name on them.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "engine/codelets/codelets.h"

namespace tileprof::engine::testing {

// The bytes of `values` (host representation; f16/bf16 as uint16_t bits,
// pred as uint8_t 0/1).
template <typename T>
std::vector<std::byte> Bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> Values(const std::vector<std::byte>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

// Runs `codelet` on `fields` (modified in place) with `params`.
inline Status RunOn(const Codelet& codelet, std::vector<std::vector<std::byte>>& fields,
                    std::vector<uint32_t> params = {}, TileState* tile = nullptr) {
  std::vector<std::span<std::byte>> spans;
  for (auto& field : fields) spans.emplace_back(field);
  return codelet.Run(VertexIo{spans, params, tile});
}

// The codelet a Make*Codelet function made (fails the test on its error).
inline std::unique_ptr<Codelet> Made(Expected<std::unique_ptr<Codelet>> made) {
  EXPECT_TRUE(made.has_value()) << made.error().message();
  if (!made) std::abort();
  return std::move(*made);
}

// Looks up `name` in the catalogue (fails the test if absent).
inline const Codelet& Get(std::string_view name) {
  const Codelet* codelet = FindCodelet(name);
  EXPECT_NE(codelet, nullptr) << name;
  if (codelet == nullptr) std::abort();
  return *codelet;
}

}  // namespace tileprof::engine::testing
