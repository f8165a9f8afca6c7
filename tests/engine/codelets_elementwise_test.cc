// Unary and binary codelets: hand-checked numerics, XLA integer semantics
// (wrap-around, x/0, INT_MIN/-1, shifts), NaN/inf, and f16/bf16 rounding.
#include <bit>
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codelet_test_util.h"

namespace tileprof::engine {
namespace {

using testing::Bytes;
using ::testing::ElementsAre;
using testing::RunOn;
using testing::Values;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Runs a binary op on equal-length inputs and returns the outputs.
template <typename In, typename Out = In>
std::vector<Out> Binary(BinaryOp op, ElementType type, std::vector<In> a, std::vector<In> b) {
  auto codelet = GetBinaryOpCodelet(op, type);
  EXPECT_TRUE(codelet) << codelet.error().message();
  std::vector<std::vector<std::byte>> fields = {Bytes(a), Bytes(b),
                                                Bytes(std::vector<Out>(a.size()))};
  auto status = RunOn(**codelet, fields);
  EXPECT_TRUE(status) << status.error().message();
  return Values<Out>(fields[2]);
}

template <typename In, typename Out = In>
std::vector<Out> Unary(UnaryOp op, ElementType type, std::vector<In> a) {
  auto codelet = GetUnaryOpCodelet(op, type);
  EXPECT_TRUE(codelet) << codelet.error().message();
  std::vector<std::vector<std::byte>> fields = {Bytes(a), Bytes(std::vector<Out>(a.size()))};
  auto status = RunOn(**codelet, fields);
  EXPECT_TRUE(status) << status.error().message();
  return Values<Out>(fields[1]);
}

constexpr auto kF32 = ElementType::kF32;
constexpr auto kS32 = ElementType::kS32;

TEST(BinaryOp, FloatAddWithInfAndNaN) {
  const auto out =
      Binary<float>(BinaryOp::kAdd, kF32, {1, 2.5f, kInf, kNaN, kInf}, {2, -0.5f, -kInf, 1, 1});
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], 2.0f);
  EXPECT_TRUE(std::isnan(out[2]));  // inf + -inf
  EXPECT_TRUE(std::isnan(out[3]));
  EXPECT_EQ(out[4], kInf);
}

TEST(BinaryOp, IntegerArithmeticWraps) {
  EXPECT_THAT(Binary<int32_t>(BinaryOp::kAdd, kS32, {INT32_MAX, -5}, {1, 3}),
              ElementsAre(INT32_MIN, -2));
  EXPECT_THAT(Binary<int32_t>(BinaryOp::kSubtract, kS32, {INT32_MIN}, {1}), ElementsAre(INT32_MAX));
  EXPECT_THAT(Binary<int32_t>(BinaryOp::kMultiply, kS32, {65536}, {65536}), ElementsAre(0));
  EXPECT_THAT(Binary<int8_t>(BinaryOp::kAdd, ElementType::kS8, {127}, {1}), ElementsAre(-128));
  EXPECT_THAT(Binary<uint8_t>(BinaryOp::kAdd, ElementType::kU8, {255}, {1}), ElementsAre(0));
  // 65535 * 65535 = 1 (mod 2^16); in C++ the u16 operands promote to int and
  // the product would overflow it.
  EXPECT_THAT(Binary<uint16_t>(BinaryOp::kMultiply, ElementType::kU16, {65535}, {65535}),
              ElementsAre(1));
  EXPECT_THAT(Binary<int64_t>(BinaryOp::kAdd, ElementType::kS64, {INT64_MAX}, {1}),
              ElementsAre(INT64_MIN));
  EXPECT_THAT(Binary<uint64_t>(BinaryOp::kSubtract, ElementType::kU64, {0}, {1}),
              ElementsAre(UINT64_MAX));
}

TEST(BinaryOp, IntegerDivisionFollowsXla) {
  // x / 0 = -1 (all ones); INT_MIN / -1 = INT_MIN; otherwise truncation.
  EXPECT_THAT(
      Binary<int32_t>(BinaryOp::kDivide, kS32, {7, -7, INT32_MIN, 0, -7}, {0, 2, -1, 0, -2}),
      ElementsAre(-1, -3, INT32_MIN, -1, 3));
  EXPECT_THAT(Binary<uint32_t>(BinaryOp::kDivide, ElementType::kU32, {7, 7}, {0, 2}),
              ElementsAre(0xFFFFFFFFu, 3u));
  EXPECT_THAT(Binary<int8_t>(BinaryOp::kDivide, ElementType::kS8, {-128}, {-1}), ElementsAre(-128));
  EXPECT_THAT(Binary<int64_t>(BinaryOp::kDivide, ElementType::kS64, {INT64_MIN, 5}, {-1, 0}),
              ElementsAre(INT64_MIN, -1));
}

TEST(BinaryOp, RemainderFollowsXla) {
  // x % 0 = x; INT_MIN % -1 = 0; the sign follows the dividend.
  EXPECT_THAT(Binary<int32_t>(BinaryOp::kRemainder, kS32, {7, INT32_MIN, -7, 7}, {0, -1, 2, -2}),
              ElementsAre(7, 0, -1, 1));
  EXPECT_THAT(Binary<uint8_t>(BinaryOp::kRemainder, ElementType::kU8, {200}, {0}),
              ElementsAre(200));
  const auto f = Binary<float>(BinaryOp::kRemainder, kF32, {5.5f, -5.5f, 1, kInf}, {2, 2, 0, 2});
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[1], -1.5f);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_TRUE(std::isnan(f[3]));
}

TEST(BinaryOp, IntegerPowerFollowsXla) {
  EXPECT_THAT(Binary<int32_t>(BinaryOp::kPower, kS32, {2, 3, 1, -1, 0, 2, -2, 2},
                              {10, -1, -5, -1, 0, 31, 3, 32}),
              ElementsAre(1024, 0, 1, 0, 1, INT32_MIN, -8, 0));
  EXPECT_THAT(Binary<uint8_t>(BinaryOp::kPower, ElementType::kU8, {3}, {5}), ElementsAre(243));
  const auto f = Binary<float>(BinaryOp::kPower, kF32, {2, 4, -8}, {0.5f, -0.5f, 1.0f / 3});
  EXPECT_FLOAT_EQ(f[0], std::sqrt(2.0f));
  EXPECT_EQ(f[1], 0.5f);
  EXPECT_TRUE(std::isnan(f[2]));  // negative base, non-integer exponent
}

TEST(BinaryOp, FloatMaxMinPropagateNaNAndOrderZeros) {
  const auto mx = Binary<float>(BinaryOp::kMaximum, kF32, {kNaN, 1, -0.0f, 0.0f, 2},
                                {1, kNaN, 0.0f, -0.0f, -kInf});
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_FALSE(std::signbit(mx[2]));
  EXPECT_FALSE(std::signbit(mx[3]));
  EXPECT_EQ(mx[4], 2.0f);
  const auto mn = Binary<float>(BinaryOp::kMinimum, kF32, {-0.0f, 0.0f, kNaN}, {0.0f, -0.0f, 3});
  EXPECT_TRUE(std::signbit(mn[0]));
  EXPECT_TRUE(std::signbit(mn[1]));
  EXPECT_TRUE(std::isnan(mn[2]));
  EXPECT_THAT(Binary<uint32_t>(BinaryOp::kMaximum, ElementType::kU32, {0xFFFFFFFFu}, {1}),
              ElementsAre(0xFFFFFFFFu));
}

// The same semantics over long inputs, which the vectorised loops take
// (engine/CMakeLists.txt): every pair of special and ordinary values, at
// every position of a vector, bit for bit against the definition. Of two
// NaNs the first operand's payload comes out.
TEST(BinaryOp, FloatMaxMinOverLongInputsKeepEveryBit) {
  const float values[] = {
      kNaN,  std::bit_cast<float>(0x7fc00123u), -0.0f, 0.0f, 1.0f, -1.5f, kInf, -kInf, 3e38f,
      1e-45f};
  std::vector<float> a, b;
  for (int repeat = 0; repeat < 3; ++repeat)  // odd lengths: a remainder after the vectors
    for (float x : values)
      for (float y : values) a.push_back(x), b.push_back(y);
  a.push_back(2.0f), b.push_back(-0.0f);
  const auto expect = [](float x, float y, bool max) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
    if (x == y) return std::signbit(x) == max ? y : x;
    return (x > y) == max ? x : y;
  };
  const auto mx = Binary<float>(BinaryOp::kMaximum, kF32, a, b);
  const auto mn = Binary<float>(BinaryOp::kMinimum, kF32, a, b);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(mx[i]), std::bit_cast<uint32_t>(expect(a[i], b[i], true)))
        << "max(" << a[i] << ", " << b[i] << ") at " << i;
    EXPECT_EQ(std::bit_cast<uint32_t>(mn[i]), std::bit_cast<uint32_t>(expect(a[i], b[i], false)))
        << "min(" << a[i] << ", " << b[i] << ") at " << i;
  }
}

TEST(BinaryOp, ComparisonsProducePred) {
  using P = uint8_t;
  const std::vector<float> a = {1, kNaN, kNaN, -0.0f, 2};
  const std::vector<float> b = {2, kNaN, 1, 0.0f, 2};
  EXPECT_THAT((Binary<float, P>(BinaryOp::kEqual, kF32, a, b)), ElementsAre(0, 0, 0, 1, 1));
  EXPECT_THAT((Binary<float, P>(BinaryOp::kNotEqual, kF32, a, b)), ElementsAre(1, 1, 1, 0, 0));
  EXPECT_THAT((Binary<float, P>(BinaryOp::kLessThan, kF32, a, b)), ElementsAre(1, 0, 0, 0, 0));
  EXPECT_THAT((Binary<float, P>(BinaryOp::kGreaterThanEqual, kF32, a, b)),
              ElementsAre(0, 0, 0, 1, 1));
  // Unsigned compares as unsigned; signed as signed.
  EXPECT_THAT((Binary<uint32_t, P>(BinaryOp::kGreaterThan, ElementType::kU32, {0xFFFFFFFFu}, {1})),
              ElementsAre(1));
  EXPECT_THAT((Binary<int32_t, P>(BinaryOp::kLessThan, kS32, {-1}, {1})), ElementsAre(1));
  EXPECT_THAT((Binary<P, P>(BinaryOp::kLessThanEqual, ElementType::kPred, {0, 1, 1}, {1, 0, 1})),
              ElementsAre(1, 0, 1));
  auto codelet = GetBinaryOpCodelet(BinaryOp::kEqual, kF32);
  EXPECT_EQ((*codelet)->fields()[2].type, ElementType::kPred);
}

TEST(BinaryOp, ShiftsSaturateAsXlaDefines) {
  EXPECT_THAT(Binary<int32_t>(BinaryOp::kShiftLeft, kS32, {1, 1, 1, 3}, {31, 32, -1, 1}),
              ElementsAre(INT32_MIN, 0, 0, 6));
  EXPECT_THAT(Binary<int32_t>(BinaryOp::kShiftRight, kS32, {-8, -8}, {1, 32}),
              ElementsAre(0x7FFFFFFC, 0));
  EXPECT_THAT(Binary<int32_t>(BinaryOp::kShiftRightSignExtend, kS32, {-8, -8, 8}, {1, 40, 40}),
              ElementsAre(-4, -1, 0));
  EXPECT_THAT(Binary<uint8_t>(BinaryOp::kShiftRightSignExtend, ElementType::kU8, {0x80}, {1}),
              ElementsAre(0xC0));
  EXPECT_THAT(Binary<uint8_t>(BinaryOp::kShiftRight, ElementType::kU8, {0x80}, {7}),
              ElementsAre(1));
}

TEST(BinaryOp, BitwiseOnIntegersAndPred) {
  EXPECT_THAT(Binary<uint8_t>(BinaryOp::kBitwiseAnd, ElementType::kU8, {0xF0}, {0x3C}),
              ElementsAre(0x30));
  EXPECT_THAT(Binary<int16_t>(BinaryOp::kBitwiseXor, ElementType::kS16, {-1}, {0x0F0F}),
              ElementsAre(static_cast<int16_t>(0xF0F0)));
  EXPECT_THAT(Binary<uint8_t>(BinaryOp::kBitwiseOr, ElementType::kPred, {0, 0, 1}, {0, 1, 1}),
              ElementsAre(0, 1, 1));
  EXPECT_THAT(Binary<uint8_t>(BinaryOp::kBitwiseXor, ElementType::kPred, {0, 1, 1}, {1, 1, 0}),
              ElementsAre(1, 0, 1));
}

TEST(BinaryOp, HalfArithmeticRoundsToNearestEven) {
  // 1 + 2^-11: exact sum is a tie between 0x3C00 (even) and 0x3C01: 0x3C00.
  // 1 + 3 * 2^-11: a tie between 0x3C01 and 0x3C02 (even): 0x3C02.
  const uint16_t one = 0x3C00;
  const uint16_t two_m11 = 0x1000;    // 2^-11
  const uint16_t three_m11 = 0x1600;  // 1.5 * 2^-10
  EXPECT_THAT(Binary<uint16_t>(BinaryOp::kAdd, ElementType::kF16, {one, one}, {two_m11, three_m11}),
              ElementsAre(0x3C00, 0x3C02));
  // 65504 + 65504 overflows to +inf; 65504 * -2 to -inf.
  EXPECT_THAT(Binary<uint16_t>(BinaryOp::kAdd, ElementType::kF16, {0x7BFF}, {0x7BFF}),
              ElementsAre(0x7C00));
  EXPECT_THAT(Binary<uint16_t>(BinaryOp::kMultiply, ElementType::kF16, {0x7BFF}, {0xC000}),
              ElementsAre(0xFC00));
  // 1 / 3 = 0x3555 (0.33325...).
  EXPECT_THAT(Binary<uint16_t>(BinaryOp::kDivide, ElementType::kF16, {one}, {0x4200}),
              ElementsAre(0x3555));
}

TEST(BinaryOp, BFloat16Arithmetic) {
  // 3.140625 * 2 = 6.28125 exactly; 1 + 2^-8 ties to 1.
  EXPECT_THAT(Binary<uint16_t>(BinaryOp::kMultiply, ElementType::kBF16, {0x4049}, {0x4000}),
              ElementsAre(0x40C9));
  EXPECT_THAT(Binary<uint16_t>(BinaryOp::kAdd, ElementType::kBF16, {0x3F80}, {0x3B80}),
              ElementsAre(0x3F80));
}

TEST(BinaryOp, UndefinedCombinationsAreNotInTheCatalogue) {
  auto atan2 = GetBinaryOpCodelet(BinaryOp::kAtan2, kS32);
  ASSERT_FALSE(atan2);
  EXPECT_EQ(atan2.error().message(),
            "no codelet popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::ATAN2,int>: "
            "ATAN2 is not defined for s32");
  EXPECT_FALSE(GetBinaryOpCodelet(BinaryOp::kShiftLeft, kF32));
  EXPECT_FALSE(GetBinaryOpCodelet(BinaryOp::kAdd, ElementType::kPred));
  EXPECT_FALSE(GetBinaryOpCodelet(BinaryOp::kBitwiseAnd, ElementType::kF16));
}

TEST(UnaryOp, IntegerAbsNegSignWrap) {
  EXPECT_THAT(Unary<int32_t>(UnaryOp::kAbsolute, kS32, {INT32_MIN, -3, 4}),
              ElementsAre(INT32_MIN, 3, 4));
  EXPECT_THAT(Unary<int8_t>(UnaryOp::kNegate, ElementType::kS8, {-128, 5}), ElementsAre(-128, -5));
  EXPECT_THAT(Unary<uint8_t>(UnaryOp::kNegate, ElementType::kU8, {1}), ElementsAre(255));
  EXPECT_THAT(Unary<int32_t>(UnaryOp::kSignum, kS32, {-5, 0, 7}), ElementsAre(-1, 0, 1));
  EXPECT_THAT(Unary<uint32_t>(UnaryOp::kSignum, ElementType::kU32, {0, 9}), ElementsAre(0, 1));
  EXPECT_THAT(Unary<uint8_t>(UnaryOp::kBitwiseNot, ElementType::kU8, {0x0F}), ElementsAre(0xF0));
  EXPECT_THAT(Unary<uint8_t>(UnaryOp::kLogicalNot, ElementType::kPred, {0, 1}), ElementsAre(1, 0));
}

TEST(UnaryOp, FloatSignKeepsNaNAndSignedZero) {
  const auto s = Unary<float>(UnaryOp::kSignum, kF32, {-2, -0.0f, 0.0f, kNaN, 3, -kInf});
  EXPECT_EQ(s[0], -1.0f);
  EXPECT_TRUE(s[1] == 0 && std::signbit(s[1]));
  EXPECT_TRUE(s[2] == 0 && !std::signbit(s[2]));
  EXPECT_TRUE(std::isnan(s[3]));
  EXPECT_EQ(s[4], 1.0f);
  EXPECT_EQ(s[5], -1.0f);
}

TEST(UnaryOp, Rounding) {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, -1.4f};
  EXPECT_THAT(Unary<float>(UnaryOp::kRound, kF32, x), ElementsAre(1, 2, 3, -1, -3, -1));
  EXPECT_THAT(Unary<float>(UnaryOp::kRoundHalfEven, kF32, x), ElementsAre(0, 2, 2, -0.0f, -2, -1));
  EXPECT_THAT(Unary<float>(UnaryOp::kFloor, kF32, {-1.5f, 1.5f}), ElementsAre(-2, 1));
  EXPECT_THAT(Unary<float>(UnaryOp::kCeil, kF32, {-1.5f, 1.5f}), ElementsAre(-1, 2));
  EXPECT_TRUE(std::signbit(Unary<float>(UnaryOp::kRoundHalfEven, kF32, {-0.5f})[0]));
}

TEST(UnaryOp, TranscendentalsAndSpecialValues) {
  const auto e = Unary<float>(UnaryOp::kExponent, kF32, {0, 1, -kInf, kInf, kNaN, 100});
  EXPECT_EQ(e[0], 1.0f);
  EXPECT_FLOAT_EQ(e[1], 2.7182817f);
  EXPECT_EQ(e[2], 0.0f);
  EXPECT_EQ(e[3], kInf);
  EXPECT_TRUE(std::isnan(e[4]));
  EXPECT_EQ(e[5], kInf);  // e^100 overflows f32
  const auto l = Unary<float>(UnaryOp::kLogarithm, kF32, {1, 0, -1});
  EXPECT_EQ(l[0], 0.0f);
  EXPECT_EQ(l[1], -kInf);
  EXPECT_TRUE(std::isnan(l[2]));
  const auto r = Unary<float>(UnaryOp::kRsqrt, kF32, {4, 0, -1});
  EXPECT_EQ(r[0], 0.5f);
  EXPECT_EQ(r[1], kInf);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_TRUE(std::isnan(Unary<float>(UnaryOp::kSqrt, kF32, {-1})[0]));
  const auto sg = Unary<float>(UnaryOp::kSigmoid, kF32, {0, 100, -100, -kInf});
  EXPECT_EQ(sg[0], 0.5f);
  EXPECT_EQ(sg[1], 1.0f);
  EXPECT_LT(sg[2], 1e-40f);
  EXPECT_GE(sg[2], 0.0f);
  EXPECT_EQ(sg[3], 0.0f);
  EXPECT_THAT(Unary<float>(UnaryOp::kTanh, kF32, {0, 50, -50}), ElementsAre(0, 1, -1));
  EXPECT_THAT(Unary<float>(UnaryOp::kExponentMinusOne, kF32, {0}), ElementsAre(0));
  EXPECT_THAT(Unary<float>(UnaryOp::kLogarithmOnePlus, kF32, {0}), ElementsAre(0));
  EXPECT_FLOAT_EQ(Unary<float>(UnaryOp::kLogarithmOnePlus, kF32, {1e-10f})[0], 1e-10f);
  EXPECT_FLOAT_EQ(Unary<float>(UnaryOp::kCos, kF32, {0})[0], 1.0f);
}

TEST(UnaryOp, IsFiniteOutputsPred) {
  EXPECT_THAT((Unary<float, uint8_t>(UnaryOp::kIsFinite, kF32, {1, kInf, -kInf, kNaN})),
              ElementsAre(1, 0, 0, 0));
  EXPECT_THAT((Unary<uint16_t, uint8_t>(UnaryOp::kIsFinite, ElementType::kF16, {0x7BFF, 0x7C00})),
              ElementsAre(1, 0));
}

TEST(UnaryOp, HalfExpRoundsTheF32Result) {
  // e = 2.71828...; halves in [2, 4) are 2^-9 apart: 1392 * 2^-9 = 2.71875,
  // mantissa (2.71875 / 2 - 1) * 1024 = 368 = 0x170.
  EXPECT_THAT(Unary<uint16_t>(UnaryOp::kExponent, ElementType::kF16, {0x3C00}),
              ElementsAre(0x4170));
}

TEST(Codelet, RunChecksTheSpans) {
  const Codelet& add = **GetBinaryOpCodelet(BinaryOp::kAdd, kF32);
  std::vector<std::vector<std::byte>> fields = {Bytes(std::vector<float>{1, 2}),
                                                Bytes(std::vector<float>{1}),
                                                Bytes(std::vector<float>{0, 0})};
  auto status = RunOn(add, fields);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message(),
            "popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::ADD,float>: field 'in2' "
            "has 1 elements, 'out' has 2");
  fields.pop_back();
  EXPECT_FALSE(RunOn(add, fields));
  fields = {std::vector<std::byte>(6), std::vector<std::byte>(8), std::vector<std::byte>(8)};
  status = RunOn(add, fields);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message(),
            "popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::ADD,float>: field 'in1' "
            "has 6 bytes, not a whole number of f32 elements");
}

}  // namespace
}  // namespace tileprof::engine
