// Converting stored elements to their compute type a field at a time
// (engine/codelets/widen.h): the same bits as the element-by-element
// conversion the codelets use otherwise.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <vector>

#include "engine/codelets/widen.h"

namespace tileprof::engine::numeric {
namespace {

TEST(WidenHalves, EveryHalfGivesHalfToFloatsBits) {
  // All 65,536 encodings (NaNs signalling and quiet, subnormals, zeros of
  // both signs, infinities), from an odd offset so that the vector loop and
  // the remainder both see every kind.
  constexpr uint64_t kCount = 65536 + 5;
  std::vector<std::byte> bytes(2 * kCount + 2);
  for (uint64_t i = 0; i < kCount; ++i) {
    const auto bits = static_cast<uint16_t>(i);
    std::memcpy(bytes.data() + 2 + 2 * i, &bits, 2);
  }
  std::vector<float> out(kCount);
  WidenHalves(bytes.data() + 2, kCount, out.data());
  for (uint64_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(out[i]),
              std::bit_cast<uint32_t>(HalfToFloat(static_cast<uint16_t>(i))))
        << "half 0x" << std::hex << (i & 0xffff);
  }
}

TEST(Widen, OtherTypesLoadAsTheirComputeType) {
  const std::vector<int8_t> values = {-128, -1, 0, 7, 127};
  std::vector<int32_t> out(values.size());
  Widen<ElementType::kS8, int32_t>(reinterpret_cast<const std::byte*>(values.data()), values.size(),
                                   out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{-128, -1, 0, 7, 127}));
  const std::vector<uint16_t> bf16 = {0x3f80, 0xc000, 0x7f81};  // 1, -2, a signalling NaN
  std::vector<float> widened(bf16.size());
  Widen<ElementType::kBF16, float>(reinterpret_cast<const std::byte*>(bf16.data()), bf16.size(),
                                   widened.data());
  EXPECT_EQ(widened[0], 1.0f);
  EXPECT_EQ(widened[1], -2.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(widened[2]), 0x7fc10000u);  // made quiet
}

}  // namespace
}  // namespace tileprof::engine::numeric
