#include "common/hash.h"

#include <gtest/gtest.h>

namespace tileprof {
namespace {

TEST(Hash, StreamingEqualsOneShot) {
  Hasher h;
  h.Add("ab").Add("c");
  EXPECT_EQ(h.Digest(), Hash64("abc"));
}

TEST(Hash, SeedAndInputChangeTheHash) {
  EXPECT_NE(Hash64("abc"), Hash64("abd"));
  EXPECT_NE(Hash64("abc", 1), Hash64("abc", 2));
}

TEST(Hash, IsStableAcrossReleases) {
  // Cache keys on disk depend on this value: XXH3-64 of "" with seed 0.
  EXPECT_EQ(Hash64(""), 0x2d06800538d394c2ull);
}

TEST(Hash, NumbersHashAsLittleEndianBytes) {
  Hasher h;
  h.AddU64(0x0807060504030201ull);
  EXPECT_EQ(h.Digest(), Hash64(std::string_view("\x01\x02\x03\x04\x05\x06\x07\x08", 8)));
}

}  // namespace
}  // namespace tileprof
