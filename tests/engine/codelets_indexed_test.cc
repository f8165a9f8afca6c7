// The index-mapped codelets of engine/codelets/indexed.h, run directly with
// hand-checked values: transpose, reverse, pad with interior padding,
// windows, dynamic slice and update with XLA's clamping, iota.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "codelet_test_util.h"
#include "engine/codelets/indexed.h"

namespace tileprof::engine {
namespace {

using testing::Bytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Made;
using testing::RunOn;
using testing::Values;

constexpr auto kF32 = ElementType::kF32;
constexpr auto kS32 = ElementType::kS32;

uint32_t Bits(int32_t v) { return static_cast<uint32_t>(v); }

// Per source dimension: src, mul, src2, mul2, add, div, extent, boxLo, boxSize.
std::vector<uint32_t> Dim(uint32_t src, int32_t mul, uint32_t src2, int32_t mul2, int32_t add,
                          uint32_t div, uint32_t extent, uint32_t lo, uint32_t size) {
  return {src, Bits(mul), src2, Bits(mul2), Bits(add), div, extent, lo, size};
}

std::vector<uint32_t> Join(std::vector<std::vector<uint32_t>> parts) {
  std::vector<uint32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(Rearrange, TransposesA2x3) {
  auto codelet = Made(MakeRearrangeCodelet(kS32, 2, 2, false));
  EXPECT_EQ(codelet->name(), "tileprof::Rearrange<int,2,2>");
  // out[i][j] = in[j][i]: source dim 0 reads output dim 1, dim 1 output dim 0.
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<int32_t>{1, 2, 3, 4, 5, 6}),
                                           Bytes(std::vector<int32_t>(6))};
  const auto params =
      Join({{0, 3, 2}, Dim(1, 1, 1, 0, 0, 1, 2, 0, 2), Dim(0, 1, 0, 0, 0, 1, 3, 0, 3), {0}});
  ASSERT_TRUE(RunOn(*codelet, f, params));
  EXPECT_THAT(Values<int32_t>(f[1]), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(Rearrange, ReversesPartOfTheResultFromABox) {
  auto codelet = Made(MakeRearrangeCodelet(kF32, 1, 1, false));
  // reverse of [10, 20, 30, 40, 50]; this vertex computes elements 1..2
  // (40, 30) and is connected to source elements [2, 4) only.
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{30, 40}),
                                           Bytes(std::vector<float>(2))};
  const auto params = Join({{1, 5}, Dim(0, -1, 0, 0, 4, 1, 5, 2, 2), {0}});
  ASSERT_TRUE(RunOn(*codelet, f, params));
  EXPECT_THAT(Values<float>(f[1]), ElementsAre(40, 30));
  // Element 0 would read source element 4, outside the box.
  const auto bad = Join({{0, 5}, Dim(0, -1, 0, 0, 4, 1, 5, 2, 2), {0}});
  const Status status = RunOn(*codelet, f, bad);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("outside the connected box"));
}

TEST(Rearrange, PadsWithLowHighAndInteriorPadding) {
  auto codelet = Made(MakeRearrangeCodelet(kF32, 1, 1, true));
  EXPECT_EQ(codelet->name(), "tileprof::RearrangePadded<float,1,1>");
  // pad([1, 2], 9), padding=1_1_1: [9, 1, 9, 2, 9].
  std::vector<std::vector<std::byte>> f = {
      Bytes(std::vector<float>{1, 2}), Bytes(std::vector<float>{9}), Bytes(std::vector<float>(5))};
  const auto params = Join({{0, 5}, Dim(0, 1, 0, 0, -1, 2, 2, 0, 2), {0}});
  ASSERT_TRUE(RunOn(*codelet, f, params));
  EXPECT_THAT(Values<float>(f[2]), ElementsAre(9, 1, 9, 2, 9));
}

TEST(Rearrange, TakesWindowsWithStrideAndPadding) {
  auto codelet = Made(MakeRearrangeCodelet(kS32, 1, 2, true));
  // Windows of 3 with stride 2 and padding 1 on [1, 2, 3, 4]: out[p][w] =
  // in[2p + w - 1]: [[0,1,2],[2,3,4]].
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<int32_t>{1, 2, 3, 4}),
                                           Bytes(std::vector<int32_t>{0}),
                                           Bytes(std::vector<int32_t>(6))};
  const auto params = Join({{0, 2, 3}, Dim(0, 2, 1, 1, -1, 1, 4, 0, 4), {0}});
  ASSERT_TRUE(RunOn(*codelet, f, params));
  EXPECT_THAT(Values<int32_t>(f[2]), ElementsAre(0, 1, 2, 2, 3, 4));
}

TEST(Rearrange, RejectsABoxOfTheWrongSize) {
  auto codelet = Made(MakeRearrangeCodelet(kS32, 1, 1, false));
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<int32_t>{1, 2, 3}),
                                           Bytes(std::vector<int32_t>(2))};
  const Status status = RunOn(*codelet, f, Join({{0, 2}, Dim(0, 1, 0, 0, 0, 1, 3, 0, 2), {0}}));
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("its box has 2"));
}

TEST(DynamicSlice, ClampsTheStartLikeXla) {
  auto codelet = Made(MakeDynamicSliceCodelet(kF32, kS32, 1));
  EXPECT_EQ(codelet->name(), "tileprof::DynamicSlice<float,int,1>");
  // Params: first, outSize0, inSize0, boxLo0, boxSize0, firstHigh.
  const std::vector<uint32_t> params = {0, 2, 5, 0, 5, 0};
  for (const auto& [start, a, b] : {std::tuple{1, 20.f, 30.f}, {4, 40.f, 50.f}, {-3, 10.f, 20.f}}) {
    std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{10, 20, 30, 40, 50}),
                                             Bytes(std::vector<int32_t>{start}),
                                             Bytes(std::vector<float>(2))};
    ASSERT_TRUE(RunOn(*codelet, f, params));
    EXPECT_THAT(Values<float>(f[2]), ElementsAre(a, b)) << "start " << start;
  }
}

TEST(DynamicSlice, RowOfAMatrix) {
  auto codelet = Made(MakeDynamicSliceCodelet(kS32, kS32, 2));
  // x[3][2], slice [1][2] at (2, 0): row 2.
  std::vector<std::vector<std::byte>> f = {
      Bytes(std::vector<int32_t>{1, 2, 3, 4, 5, 6}), Bytes(std::vector<int32_t>{2}),
      Bytes(std::vector<int32_t>{0}), Bytes(std::vector<int32_t>(2))};
  const std::vector<uint32_t> params = {0, 1, 2, 3, 0, 3, 2, 0, 2, 0};
  ASSERT_TRUE(RunOn(*codelet, f, params));
  EXPECT_THAT(Values<int32_t>(f[3]), ElementsAre(5, 6));
}

TEST(DynamicUpdateSlice, ClampsAndWritesTheUpdate) {
  auto codelet = Made(MakeDynamicUpdateSliceCodelet(kS32, kS32, 1));
  // operand [1,2,3,4], update [8,9] at 3 -> clamped to 2: [1,2,8,9].
  // Params: first, outSize0, updSize0, boxLo0, boxSize0, firstHigh.
  std::vector<std::vector<std::byte>> f = {
      Bytes(std::vector<int32_t>{1, 2, 3, 4}), Bytes(std::vector<int32_t>{8, 9}),
      Bytes(std::vector<int32_t>{3}), Bytes(std::vector<int32_t>(4))};
  ASSERT_TRUE(RunOn(*codelet, f, {0, 4, 2, 0, 2, 0}));
  EXPECT_THAT(Values<int32_t>(f[3]), ElementsAre(1, 2, 8, 9));
  f[2] = Bytes(std::vector<int32_t>{1});
  ASSERT_TRUE(RunOn(*codelet, f, {0, 4, 2, 0, 2, 0}));
  EXPECT_THAT(Values<int32_t>(f[3]), ElementsAre(1, 8, 9, 4));
}

// A vertex's part of the output, starting and ending mid-row, against the
// definition element by element: the codelet copies a run along the last
// dimension at a time, and a run must stop where the row, or the update,
// ends or begins.
TEST(DynamicUpdateSlice, RunsAlongRowsMatchTheDefinition) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const bool update = trial % 2 == 0;
    const uint32_t rows = 1 + rng() % 4, cols = 1 + rng() % 7;
    const uint32_t other_rows = update ? 1 + rng() % rows : rows + rng() % 3;
    const uint32_t other_cols = update ? 1 + rng() % cols : cols + rng() % 3;
    const uint32_t total = rows * cols, first = rng() % total;
    const uint32_t count = 1 + rng() % (total - first);
    const int32_t start0 = static_cast<int32_t>(rng() % 6) - 1;
    const int32_t start1 = static_cast<int32_t>(rng() % 9) - 1;
    std::vector<int32_t> other(other_rows * other_cols), operand(count);
    for (size_t i = 0; i < other.size(); ++i) other[i] = 100 + static_cast<int32_t>(i);
    for (size_t i = 0; i < operand.size(); ++i) operand[i] = -1 - static_cast<int32_t>(i);
    // Params: first, outSize0, outSize1, then size, boxLo, boxSize per
    // dimension (the whole array as the box), firstHigh.
    const std::vector<uint32_t> params = {first,      rows,       cols, other_rows, 0,
                                          other_rows, other_cols, 0,    other_cols, 0};
    std::vector<std::vector<std::byte>> f;
    if (update) f.push_back(Bytes(operand));
    f.push_back(Bytes(other));
    f.push_back(Bytes(std::vector<int32_t>{start0}));
    f.push_back(Bytes(std::vector<int32_t>{start1}));
    f.push_back(Bytes(std::vector<int32_t>(count)));
    auto codelet = Made(update ? MakeDynamicUpdateSliceCodelet(kS32, kS32, 2)
                               : MakeDynamicSliceCodelet(kS32, kS32, 2));
    ASSERT_TRUE(RunOn(*codelet, f, params));
    // XLA clamps the start so that the slice or update fits.
    const auto clamp = [](int32_t s, uint32_t sliced, uint32_t whole) {
      return std::clamp<int32_t>(s, 0, static_cast<int32_t>(whole - sliced));
    };
    const int32_t s0 = update ? clamp(start0, other_rows, rows) : clamp(start0, rows, other_rows);
    const int32_t s1 = update ? clamp(start1, other_cols, cols) : clamp(start1, cols, other_cols);
    std::vector<int32_t> expected;
    for (uint32_t q = 0; q < count; ++q) {
      const auto r = static_cast<int32_t>((first + q) / cols);
      const auto c = static_cast<int32_t>((first + q) % cols);
      if (!update) {
        expected.push_back(other[(r + s0) * other_cols + (c + s1)]);
      } else if (r >= s0 && r < s0 + static_cast<int32_t>(other_rows) && c >= s1 &&
                 c < s1 + static_cast<int32_t>(other_cols)) {
        expected.push_back(other[(r - s0) * other_cols + (c - s1)]);
      } else {
        expected.push_back(operand[q]);
      }
    }
    EXPECT_EQ(Values<int32_t>(f.back()), expected)
        << (update ? "update" : "slice") << " trial " << trial;
  }
}

TEST(Iota, CountsAlongTheIotaDimension) {
  auto s32 = Made(MakeIotaCodelet(kS32));
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<int32_t>(6))};
  ASSERT_TRUE(RunOn(*s32, f, {0, 3, 1, 0}));  // [2,3], dimension 1
  EXPECT_THAT(Values<int32_t>(f[0]), ElementsAre(0, 1, 2, 0, 1, 2));
  auto f32 = Made(MakeIotaCodelet(kF32));
  std::vector<std::vector<std::byte>> g = {Bytes(std::vector<float>(4))};
  ASSERT_TRUE(RunOn(*f32, g, {2, 2, 3, 0}));  // [2,3], dimension 0, elements 2..5
  EXPECT_THAT(Values<float>(g[0]), ElementsAre(0, 1, 1, 1));
  // Elements from 2^32 + 2 (firstHigh 1, first 2) of a dimension of 3:
  // 2^32 + 2 = 0 mod 3, so 0, 1, 2, 0 (the low word alone would give 2, 0, 1, 2).
  std::vector<std::vector<std::byte>> h = {Bytes(std::vector<int32_t>(4))};
  ASSERT_TRUE(RunOn(*s32, h, {2, 3, 1, 1}));
  EXPECT_THAT(Values<int32_t>(h[0]), ElementsAre(0, 1, 2, 0));
  EXPECT_FALSE(MakeIotaCodelet(ElementType::kPred));
}

}  // namespace
}  // namespace tileprof::engine
