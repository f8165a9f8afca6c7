#include "common/byte_reader.h"

#include <limits>

#include <gtest/gtest.h>

#include "common/checked.h"

namespace tileprof {
namespace {

const uint8_t kBytes[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09};

TEST(ByteReader, ReadsBothByteOrders) {
  ByteReader le(std::span<const uint8_t>(kBytes), std::endian::little);
  ByteReader be(std::span<const uint8_t>(kBytes), std::endian::big);
  EXPECT_EQ(*le.U16(0, "f"), 0x0201);
  EXPECT_EQ(*be.U16(0, "f"), 0x0102);
  EXPECT_EQ(*le.U32(1, "f"), 0x05040302u);
  EXPECT_EQ(*be.U32(1, "f"), 0x02030405u);
  EXPECT_EQ(*le.U64(1, "f"), 0x0908070605040302ull);
  EXPECT_EQ(*be.Word(0, 8, "f"), 0x0102030405060708ull);
}

TEST(ByteReader, OutOfBoundsNamesFieldOffsetAndSize) {
  ByteReader r{std::span<const uint8_t>(kBytes)};
  auto v = r.U32(6, "e_shoff");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().message(),
            "e_shoff: 4 bytes at offset 0x6 run past the end of the data (9 bytes)");
}

TEST(ByteReader, HugeOffsetsDoNotWrap) {
  ByteReader r{std::span<const uint8_t>(kBytes)};
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_FALSE(r.Bytes(max, 2, "x"));
  EXPECT_FALSE(r.Bytes(2, max, "x"));
  EXPECT_FALSE(r.U8(max, "x"));
  EXPECT_TRUE(r.Bytes(9, 0, "x"));
  EXPECT_FALSE(r.Bytes(10, 0, "x"));
}

TEST(ByteCursor, AdvancesOnlyOnSuccess) {
  ByteCursor c(ByteReader(std::span<const uint8_t>(kBytes), std::endian::big));
  EXPECT_EQ(*c.U16("a"), 0x0102);
  EXPECT_EQ(c.offset(), 2u);
  EXPECT_FALSE(c.U64("b"));
  EXPECT_EQ(c.offset(), 2u);
  EXPECT_TRUE(c.Skip(7, "c"));
  EXPECT_EQ(c.remaining(), 0u);
}

TEST(Checked, DetectsOverflow) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_FALSE(CheckedAdd(max, 1));
  EXPECT_EQ(*CheckedAdd(max - 1, 1), max);
  EXPECT_FALSE(CheckedMul(1ull << 32, 1ull << 32));
  EXPECT_EQ(*CheckedMul(1ull << 31, 2), 1ull << 32);
  EXPECT_TRUE(InBounds(0, 0, 0));
  EXPECT_FALSE(InBounds(1, max, 10));
}

}  // namespace
}  // namespace tileprof
