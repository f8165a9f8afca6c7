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

TEST(NarrowHalves, FloatsOfEveryKindGiveHalfFromFloatsBits) {
  // A sample spread over all 2^32 encodings (every kind: NaNs, subnormals,
  // overflow, ties) and the edges; an odd count so the remainder runs too.
  std::vector<float> floats;
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 4093)
    floats.push_back(std::bit_cast<float>(static_cast<uint32_t>(i)));
  for (uint32_t edge : {0x33000000u, 0x33000001u, 0x387fe000u, 0x38800000u, 0x477fefffu,
                        0x477ff000u, 0x7f800001u, 0xff800000u, 0x3f801000u, 0x3f803000u})
    floats.push_back(std::bit_cast<float>(edge));
  std::vector<std::byte> out(2 * floats.size());
  NarrowHalves(floats.data(), floats.size(), out.data());
  for (size_t i = 0; i < floats.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, out.data() + 2 * i, 2);
    ASSERT_EQ(bits, HalfFromFloat(floats[i])) << std::hex << std::bit_cast<uint32_t>(floats[i]);
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
