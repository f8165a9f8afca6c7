// Element types: names, sizes, f16/bf16 rounding and XLA convert semantics.
// Expected bit patterns are worked out by hand in the comments.
#include "engine/target/element_type.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

namespace tileprof::engine {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename From, typename To>
To Convert(ElementType from, From value, ElementType to) {
  std::byte src[sizeof(From)];
  std::memcpy(src, &value, sizeof(From));
  std::byte dst[sizeof(To)] = {};
  ConvertElement(from, src, to, dst);
  To out;
  std::memcpy(&out, dst, sizeof(To));
  return out;
}

TEST(ElementType, SizesAndNames) {
  EXPECT_EQ(SizeOf(ElementType::kPred), 1u);
  EXPECT_EQ(SizeOf(ElementType::kF16), 2u);
  EXPECT_EQ(SizeOf(ElementType::kBF16), 2u);
  EXPECT_EQ(SizeOf(ElementType::kU64), 8u);
  EXPECT_EQ(HloName(ElementType::kF32), "f32");
  EXPECT_EQ(PoplarName(ElementType::kF32), "float");
  EXPECT_EQ(PoplarName(ElementType::kF16), "half");
  EXPECT_EQ(PoplarName(ElementType::kU32), "unsigned int");
  EXPECT_EQ(PoplarName(ElementType::kPred), "bool");
  for (ElementType type : kAllElementTypes) {
    EXPECT_EQ(ParseHloElementType(HloName(type)), type);
    EXPECT_EQ(ParsePoplarElementType(PoplarName(type)), type);
  }
  EXPECT_FALSE(ParseHloElementType("c64"));
  EXPECT_TRUE(IsFloat(ElementType::kBF16));
  EXPECT_TRUE(IsInteger(ElementType::kU8));
  EXPECT_FALSE(IsInteger(ElementType::kPred));
  EXPECT_TRUE(IsSigned(ElementType::kS16));
  EXPECT_FALSE(IsSigned(ElementType::kU16));
}

TEST(Half, ExactValuesAndLimits) {
  EXPECT_EQ(HalfFromDouble(1.0), 0x3C00);
  EXPECT_EQ(HalfFromDouble(-2.0), 0xC000);
  EXPECT_EQ(HalfFromDouble(65504.0), 0x7BFF);               // largest normal
  EXPECT_EQ(HalfFromDouble(std::ldexp(1.0, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(HalfFromDouble(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(HalfFromDouble(0.0), 0x0000);
  EXPECT_EQ(HalfFromDouble(-0.0), 0x8000);
  EXPECT_EQ(HalfFromDouble(kInf), 0x7C00);
  EXPECT_EQ(HalfFromDouble(-kInf), 0xFC00);
  EXPECT_EQ(HalfFromDouble(kNaN), 0x7E00);
  EXPECT_EQ(HalfFromDouble(-kNaN), 0xFE00);
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 (mantissa 0, even) and 1 + 2^-10: down.
  EXPECT_EQ(HalfFromDouble(1.0 + std::ldexp(1.0, -11)), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 0x3C01 (odd) and 0x3C02 (even): up.
  EXPECT_EQ(HalfFromDouble(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  // Just above the first tie rounds up.
  EXPECT_EQ(HalfFromDouble(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)), 0x3C01);
  // 65520 is halfway between 65504 (odd mantissa 0x3FF) and 65536, which
  // overflows: the even neighbour is infinity.
  EXPECT_EQ(HalfFromDouble(65520.0), 0x7C00);
  EXPECT_EQ(HalfFromDouble(65519.99), 0x7BFF);
  EXPECT_EQ(HalfFromDouble(1e6), 0x7C00);
  // Subnormals: 2^-25 is halfway between 0 and 2^-24: to zero (even);
  // 3 * 2^-25 is halfway between 1 and 2 units: to 2.
  EXPECT_EQ(HalfFromDouble(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(HalfFromDouble(3 * std::ldexp(1.0, -25)), 0x0002);
  EXPECT_EQ(HalfFromDouble(-std::ldexp(1.0, -26)), 0x8000);
  // Largest subnormal plus a bit more than half a unit becomes the smallest
  // normal.
  EXPECT_EQ(HalfFromDouble(std::ldexp(1023.6, -24)), 0x0400);
}

TEST(Half, DecodesExactly) {
  EXPECT_EQ(HalfToDouble(0x3555), 0.333251953125);
  EXPECT_EQ(HalfToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(HalfToDouble(0x7BFF), 65504.0);
  EXPECT_EQ(HalfToDouble(0x7C00), kInf);
  EXPECT_EQ(HalfToDouble(0xFC00), -kInf);
  EXPECT_TRUE(std::isnan(HalfToDouble(0x7E00)));
  EXPECT_TRUE(std::signbit(HalfToDouble(0x8000)));
  // Every finite half survives a round trip.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    if ((h & 0x7C00) == 0x7C00) continue;
    EXPECT_EQ(HalfFromDouble(HalfToDouble(h)), h) << bits;
  }
}

TEST(Half, F64RoundsOnceNotTwice) {
  // x = 1 + 2^-11 + 2^-40. Through f32 the 2^-40 is lost, leaving the tie
  // 1 + 2^-11, which rounds to even (1.0). Rounded once, x is above the tie.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(HalfFromFloat(static_cast<float>(x)), 0x3C00);
  EXPECT_EQ(HalfFromDouble(x), 0x3C01);
  EXPECT_EQ((Convert<double, uint16_t>(ElementType::kF64, x, ElementType::kF16)), 0x3C01);
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(BFloat16FromDouble(1.0), 0x3F80);
  EXPECT_EQ(BFloat16FromDouble(1.0 + std::ldexp(1.0, -8)), 0x3F80);         // tie, even
  EXPECT_EQ(BFloat16FromDouble(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);     // tie, even
  EXPECT_EQ(BFloat16FromFloat(std::numeric_limits<float>::max()), 0x7F80);  // rounds up
  EXPECT_EQ(BFloat16FromDouble(kNaN) & 0x7FC0, 0x7FC0);
  EXPECT_EQ(BFloat16ToFloat(0x4049), 3.140625f);
  EXPECT_EQ(BFloat16ToFloat(0x0001), std::ldexp(1.0f, -133));  // smallest subnormal
}

TEST(Float32, NarrowingIsDefinedOutOfRange) {
  const double max = std::numeric_limits<float>::max();
  EXPECT_EQ(FloatFromDouble(max), std::numeric_limits<float>::max());
  // The tie between FLT_MAX and 2^128 rounds to "even" 2^128: infinity.
  const double tie = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  EXPECT_TRUE(std::isinf(FloatFromDouble(tie)));
  EXPECT_EQ(FloatFromDouble(std::nextafter(tie, 0.0)), std::numeric_limits<float>::max());
  EXPECT_TRUE(std::isinf(FloatFromDouble(1e39)));
  EXPECT_EQ(FloatFromDouble(1e-50), 0.0f);
  EXPECT_EQ(FloatFromDouble(0.1), 0.1f);
}

TEST(Convert, FloatToIntegerTruncatesAndSaturates) {
  using T = ElementType;
  EXPECT_EQ((Convert<float, int32_t>(T::kF32, 3.9f, T::kS32)), 3);
  EXPECT_EQ((Convert<float, int32_t>(T::kF32, -3.9f, T::kS32)), -3);
  EXPECT_EQ((Convert<float, int32_t>(T::kF32, 1e10f, T::kS32)), INT32_MAX);
  EXPECT_EQ((Convert<float, int32_t>(T::kF32, -1e10f, T::kS32)), INT32_MIN);
  EXPECT_EQ((Convert<float, int32_t>(T::kF32, NAN, T::kS32)), 0);
  EXPECT_EQ((Convert<float, int32_t>(T::kF32, INFINITY, T::kS32)), INT32_MAX);
  EXPECT_EQ((Convert<float, uint8_t>(T::kF32, -1.5f, T::kU8)), 0);
  EXPECT_EQ((Convert<float, uint8_t>(T::kF32, 300.0f, T::kU8)), 255);
  EXPECT_EQ((Convert<float, int8_t>(T::kF32, -128.9f, T::kS8)), -128);
  EXPECT_EQ((Convert<double, int64_t>(T::kF64, 9.3e18, T::kS64)), INT64_MAX);
  EXPECT_EQ((Convert<double, int64_t>(T::kF64, std::ldexp(1.0, 63), T::kS64)), INT64_MAX);
  EXPECT_EQ((Convert<double, int64_t>(T::kF64, -std::ldexp(1.0, 63), T::kS64)), INT64_MIN);
  EXPECT_EQ((Convert<double, uint64_t>(T::kF64, std::ldexp(1.0, 64), T::kU64)), UINT64_MAX);
  EXPECT_EQ((Convert<double, uint64_t>(T::kF64, 1.8e19, T::kU64)), 18000000000000000000u);
  EXPECT_EQ((Convert<uint16_t, int16_t>(T::kF16, 0xFC00, T::kS16)), INT16_MIN);  // -inf
}

TEST(Convert, IntegerToIntegerWraps) {
  using T = ElementType;
  EXPECT_EQ((Convert<int32_t, int8_t>(T::kS32, 300, T::kS8)), 44);
  EXPECT_EQ((Convert<int32_t, uint8_t>(T::kS32, -1, T::kU8)), 255);
  EXPECT_EQ((Convert<uint8_t, int8_t>(T::kU8, 255, T::kS8)), -1);
  EXPECT_EQ((Convert<int8_t, uint32_t>(T::kS8, -1, T::kU32)), 0xFFFFFFFFu);  // sign extends
  EXPECT_EQ((Convert<uint32_t, int64_t>(T::kU32, 0xFFFFFFFFu, T::kS64)), 4294967295);
  EXPECT_EQ((Convert<int64_t, int32_t>(T::kS64, 0x100000005LL, T::kS32)), 5);
}

TEST(Convert, IntegerToFloatRoundsCorrectly) {
  using T = ElementType;
  // 2^64 - 1 is closest to 2^64.
  EXPECT_EQ((Convert<uint64_t, float>(T::kU64, UINT64_MAX, T::kF32)), std::ldexp(1.0f, 64));
  // 2^24 + 1 is a tie in f32: to even, 2^24.
  EXPECT_EQ((Convert<int32_t, float>(T::kS32, 16777217, T::kF32)), 16777216.0f);
  // 2^60 + 2^36 + 1 is just above a tie in f32 (ulp 2^37): rounds up. Going
  // through double first would drop the +1 and round the tie down.
  const int64_t v = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  const float expected = std::ldexp(1.0f, 60) + std::ldexp(1.0f, 37);
  EXPECT_EQ((Convert<int64_t, float>(T::kS64, v, T::kF32)), expected);
  EXPECT_EQ((Convert<int64_t, float>(T::kS64, -v, T::kF32)), -expected);
  EXPECT_EQ((Convert<int32_t, uint16_t>(T::kS32, 65520, T::kF16)), 0x7C00);
  EXPECT_EQ((Convert<int32_t, uint16_t>(T::kS32, 2049, T::kF16)), 0x6800);  // 2048, tie
  EXPECT_EQ((Convert<int64_t, double>(T::kS64, INT64_MIN, T::kF64)), -std::ldexp(1.0, 63));
}

// XLA converts to bf16 from f32 only (EmitF32ToBF16 after a cast to F32),
// so a value just off a bf16 tie that f32 rounds onto the tie rounds twice.
TEST(Convert, ToBFloat16GoesThroughF32) {
  using T = ElementType;
  // 2^24 + 2^16 + 1: f32 gives the bf16 tie 2^24 + 2^16, which goes to even
  // 2^24 (0x4B80); once from the exact value it would be 2^24 + 2^17 (0x4B81).
  EXPECT_EQ((Convert<int32_t, uint16_t>(T::kS32, 16842753, T::kBF16)), 0x4B80);
  EXPECT_EQ((Convert<int32_t, uint16_t>(T::kS32, -16842753, T::kBF16)), 0xCB80);
  EXPECT_EQ((Convert<uint32_t, uint16_t>(T::kU32, 16842753u, T::kBF16)), 0x4B80);
  EXPECT_EQ((Convert<int32_t, uint16_t>(T::kS32, 16842754, T::kBF16)), 0x4B81);  // above the tie
  // 1 + 2^-8 + 2^-30: f32 gives the tie 1 + 2^-8, then even 1.0.
  const double above_tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  EXPECT_EQ((Convert<double, uint16_t>(T::kF64, above_tie, T::kBF16)), 0x3F80);
  EXPECT_EQ(
      (Convert<float, uint16_t>(
          T::kF32, static_cast<float>(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20)), T::kBF16)),
      0x3F81);
  // (f16 from f64 rounds once: Half.F64RoundsOnceNotTwice.)
}

TEST(Convert, PredSemantics) {
  using T = ElementType;
  EXPECT_EQ((Convert<float, uint8_t>(T::kF32, NAN, T::kPred)), 1);  // NaN != 0
  EXPECT_EQ((Convert<float, uint8_t>(T::kF32, 0.0f, T::kPred)), 0);
  EXPECT_EQ((Convert<float, uint8_t>(T::kF32, -0.0f, T::kPred)), 0);
  EXPECT_EQ((Convert<float, uint8_t>(T::kF32, 0.5f, T::kPred)), 1);
  EXPECT_EQ((Convert<int32_t, uint8_t>(T::kS32, -7, T::kPred)), 1);
  EXPECT_EQ((Convert<uint8_t, float>(T::kPred, 1, T::kF32)), 1.0f);
  EXPECT_EQ((Convert<uint8_t, int32_t>(T::kPred, 2, T::kS32)), 1);  // any nonzero byte is true
}

TEST(Convert, FloatToFloat) {
  using T = ElementType;
  EXPECT_EQ((Convert<float, uint16_t>(T::kF32, 0.1f, T::kF16)), 0x2E66);
  EXPECT_EQ((Convert<uint16_t, float>(T::kF16, 0x2E66, T::kF32)), 0.0999755859375f);
  EXPECT_EQ((Convert<uint16_t, uint16_t>(T::kBF16, 0x4049, T::kF16)), 0x4248);  // 3.140625
  EXPECT_TRUE(std::isnan(Convert<uint16_t, float>(T::kF16, 0x7E00, T::kF32)));
  EXPECT_EQ((Convert<double, float>(T::kF64, 1e300, T::kF32)), INFINITY);
}

TEST(Convert, StoreAndLoadHelpers) {
  std::byte buffer[8];
  StoreFromDouble(ElementType::kF16, 1.5, buffer);
  EXPECT_EQ(LoadAsDouble(ElementType::kF16, buffer), 1.5);
  StoreFromInt64(ElementType::kU8, 257, buffer);
  EXPECT_EQ(LoadAsDouble(ElementType::kU8, buffer), 1.0);
  StoreFromInt64(ElementType::kU64, -1, buffer);
  EXPECT_EQ(LoadAsDouble(ElementType::kU64, buffer), std::ldexp(1.0, 64));
}

}  // namespace
}  // namespace tileprof::engine

namespace tileprof::engine {
namespace {

// The bit-level f32 conversions against the double route they replaced.
TEST(HalfAndBFloat16, FloatConversionsEqualTheDoubleRouteBitForBit) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    ASSERT_EQ(std::bit_cast<uint32_t>(HalfToFloat(bits)),
              std::bit_cast<uint32_t>(static_cast<float>(HalfToDouble(bits))))
        << std::hex << h;
    ASSERT_EQ(std::bit_cast<uint32_t>(BFloat16ToFloat(bits)),
              std::bit_cast<uint32_t>(static_cast<float>(BFloat16ToDouble(bits))))
        << std::hex << h;
  }
  // Every sign and exponent, with mantissas around each rounding boundary
  // of f16 (13 dropped bits) and bf16 (16), and some at random.
  std::vector<uint32_t> mantissas;
  for (uint32_t high : {0u, 1u, 2u, 3u, 0x3FFu, 0x3FEu, 0x200u, 0x7Fu, 0x40u})
    for (uint32_t low :
         {0u, 1u, 0xFFFu, 0x1000u, 0x1001u, 0x1FFFu, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
      mantissas.push_back(((high << 13) | (low & 0x1FFFu)) & 0x7FFFFFu),
          mantissas.push_back(((high << 16) | low) & 0x7FFFFFu);
  uint32_t state = 12345;
  for (int i = 0; i < 200; ++i) mantissas.push_back((state = state * 1664525u + 1013904223u) >> 9);
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t exp = 0; exp < 256; ++exp) {
      for (uint32_t mant : mantissas) {
        const float f = std::bit_cast<float>(sign | (exp << 23) | mant);
        ASSERT_EQ(HalfFromFloat(f), HalfFromDouble(f)) << std::hexfloat << f;
        ASSERT_EQ(BFloat16FromFloat(f), BFloat16FromDouble(f)) << std::hexfloat << f;
      }
    }
  }
}

}  // namespace
}  // namespace tileprof::engine
