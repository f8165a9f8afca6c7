// The bit codelets of engine/codelets/bits.h, run directly: Threefry-2x32
// against the published known-answer vectors, bitcast-convert within and
// between widths, and the shape checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codelet_test_util.h"
#include "engine/codelets/bits.h"

namespace tileprof::engine {
namespace {

using testing::Bytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Made;
using testing::RunOn;
using testing::Values;

// Random123's kat_vectors for threefry2x32 with 20 rounds (also JAX's
// random_test known answers).
TEST(Threefry, MatchesTheKnownAnswerVectors) {
  EXPECT_EQ(Threefry2x32(0, 0, 0, 0), std::make_pair(0x6B200159u, 0x99BA4EFEu));
  EXPECT_EQ(Threefry2x32(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu),
            std::make_pair(0x1CB996FCu, 0xBB002BE7u));
  EXPECT_EQ(Threefry2x32(0x13198A2Eu, 0x03707344u, 0x243F6A88u, 0x85A308D3u),
            std::make_pair(0xC4923A9Cu, 0x483DF7A0u));
}

TEST(Threefry, VertexHashesEachElement) {
  auto codelet = Made(MakeThreefryCodelet());
  EXPECT_EQ(codelet->name(), "tileprof::Threefry2x32<unsigned int>");
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<uint32_t>{0, 0x13198A2Eu}),
                                           Bytes(std::vector<uint32_t>{0, 0x03707344u}),
                                           Bytes(std::vector<uint32_t>{0, 0x243F6A88u}),
                                           Bytes(std::vector<uint32_t>{0, 0x85A308D3u}),
                                           Bytes(std::vector<uint32_t>(2)),
                                           Bytes(std::vector<uint32_t>(2))};
  ASSERT_TRUE(RunOn(*codelet, f, {}));
  EXPECT_THAT(Values<uint32_t>(f[4]), ElementsAre(0x6B200159u, 0xC4923A9Cu));
  EXPECT_THAT(Values<uint32_t>(f[5]), ElementsAre(0x99BA4EFEu, 0x483DF7A0u));
  f[3] = Bytes(std::vector<uint32_t>{1});
  Status status = RunOn(*codelet, f, {});
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("element by element"));
}

TEST(BitcastConvert, ReadsTheSameBytesAsAnotherType) {
  auto same = Made(MakeBitcastConvertCodelet(ElementType::kF32, ElementType::kU32));
  EXPECT_EQ(same->name(), "tileprof::BitcastConvert<float,unsigned int>");
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{1.0f, -2.0f}),
                                           Bytes(std::vector<uint32_t>(2))};
  ASSERT_TRUE(RunOn(*same, f, {}));
  EXPECT_THAT(Values<uint32_t>(f[1]), ElementsAre(0x3F800000u, 0xC0000000u));

  // Narrower: each f32 becomes its four bytes, least significant first.
  auto bytes = Made(MakeBitcastConvertCodelet(ElementType::kF32, ElementType::kU8));
  f = {Bytes(std::vector<float>{1.0f}), Bytes(std::vector<uint8_t>(4))};
  ASSERT_TRUE(RunOn(*bytes, f, {}));
  EXPECT_THAT(Values<uint8_t>(f[1]), ElementsAre(0x00, 0x00, 0x80, 0x3F));

  // Wider: two u32 words make one s64, the first the low word.
  auto wide = Made(MakeBitcastConvertCodelet(ElementType::kU32, ElementType::kS64));
  f = {Bytes(std::vector<uint32_t>{0xFFFFFFFEu, 0xFFFFFFFFu}), Bytes(std::vector<int64_t>(1))};
  ASSERT_TRUE(RunOn(*wide, f, {}));
  EXPECT_THAT(Values<int64_t>(f[1]), ElementsAre(-2));

  f = {Bytes(std::vector<uint32_t>{1, 2, 3}), Bytes(std::vector<int64_t>(1))};
  Status status = RunOn(*wide, f, {});
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("keeps every byte"));
  EXPECT_FALSE(MakeBitcastConvertCodelet(ElementType::kPred, ElementType::kU8));
}

}  // namespace
}  // namespace tileprof::engine
