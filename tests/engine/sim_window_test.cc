// The simulator on the window, rng and expression-reduce lowerings, with
// hand-checked values: reduce-window (max pooling, a padded and
// base-dilated sum), select-and-scatter (overlapping windows, ties, padding
// never selected), variadic and multi-op reducers (argmax with its index
// tie-break, a sum of squares), and rng (range, moments, determinism over
// thread counts, the same values for the same seed, others for another).
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

using ::testing::ElementsAre;

constexpr std::string_view kReducers = R"(
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
)";

TEST(SimWindow, ReduceWindowMaxPoolAndPaddedDilatedSum) {
  Compiled compiled = CompileText("HloModule rw\n" + std::string(kReducers) + R"(
ENTRY main {
  x = f32[4,4] parameter(0)
  ninf = f32[] constant(-inf)
  one = f32[] constant(1)
  pool = f32[2,2] reduce-window(x, ninf), window={size=2x2 stride=2x2}, to_apply=max
  v = f32[3] parameter(1)
  sum = f32[5] reduce-window(v, one), window={size=3 pad=1_1 lhs_dilate=2}, to_apply=add
  ROOT out = (f32[2,2], f32[5]) tuple(pool, sum)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>({1, 5, 2, 0,      //
                                                                3, 4, 8, 1,      //
                                                                -1, -2, -3, -4,  //
                                                                -5, -6, -7, 9})},
                                           {"v", Encode<float>({10, 20, 30})}});
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(5.0f, 8.0f, -1.0f, 9.0f));
  // Base-dilated v is [10, h, 20, h, 30] (h a hole), padded by one each
  // side: windows of 3 at 0..4 hold [p,10,h] [10,h,20] [h,20,h] [20,h,30]
  // [h,30,p]; padding and holes are the init value 1, which also starts
  // each sum (the oracle's reading of XLA's semantics).
  EXPECT_THAT(Decode<float>(out["out.1"]), ElementsAre(13.0f, 32.0f, 23.0f, 52.0f, 33.0f));
}

TEST(SimWindow, ReduceWindowOfAnEmptyOperandIsItsInit) {
  // Every window of an empty operand is padding: with init the reducer's
  // identity, each result is the init.
  Compiled compiled = CompileText("HloModule rw_empty\n" + std::string(kReducers) + R"(
ENTRY main {
  e = f32[0] constant({})
  ninf = f32[] constant(-inf)
  z = f32[3] reduce-window(e, ninf), window={size=1 pad=1_2}, to_apply=max
  ROOT out = (f32[3]) tuple(z)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {});
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(-inf, -inf, -inf));
}

TEST(SimWindow, LongWindowsSlideByDoubling) {
  // Windows as long as the operand (a cumulative sum, jnp.cumsum's form,
  // and its reverse) take lower_sliding.cc's doubling plan: 6 doublings of
  // a 127-element padded operand instead of 64 x 64 patches. The init 1 is
  // not the identity: it is every padding element and starts each sum, so
  // out[i] = 1 + (63 - i) + (1 + ... + (i + 1)).
  Compiled compiled = CompileText("HloModule scan\n" + std::string(kReducers) + R"(
ENTRY main {
  x = f32[64] parameter(0)
  one = f32[] constant(1)
  ninf = f32[] constant(-inf)
  sum = f32[64] reduce-window(x, one), window={size=64 pad=63_0}, to_apply=add
  revmax = f32[64] reduce-window(x, ninf), window={size=64 pad=0_63}, to_apply=max
  ROOT out = (f32[64], f32[64]) tuple(sum, revmax)
})");
  auto simulator = MustCreate(compiled);
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
  x[10] = 100;  // the reversed running max is 100 up to index 10, then 64
  sim::HostData out = MustRun(*simulator, {{"x", Encode(std::span<const float>(x))}});
  const std::vector<float> sum = Decode<float>(out["out.0"]);
  const std::vector<float> revmax = Decode<float>(out["out.1"]);
  ASSERT_EQ(sum.size(), 64u);
  ASSERT_EQ(revmax.size(), 64u);
  float prefix = 0;
  for (size_t i = 0; i < 64; ++i) {
    prefix += x[i];
    EXPECT_EQ(sum[i], 1 + static_cast<float>(63 - i) + prefix) << i;
    EXPECT_EQ(revmax[i], i <= 10 ? 100.0f : 64.0f) << i;
  }
}

TEST(SimWindow, SelectAndScatterTiesPaddingAndOverlaps) {
  Compiled compiled = CompileText("HloModule ss\n" + std::string(kReducers) + R"(
ENTRY main {
  x = f32[4] parameter(0)
  s3 = f32[3] parameter(1)
  s2 = f32[2] parameter(2)
  init = f32[] constant(0.5)
  ge = f32[4] select-and-scatter(x, s3, init), window={size=2}, select=ge, scatter=add
  gt = f32[4] select-and-scatter(x, s3, init), window={size=2}, select=gt, scatter=add
  pad = f32[4] select-and-scatter(x, s2, init), window={size=2 stride=2 pad=1_0}, select=ge, scatter=add
  ROOT out = (f32[4], f32[4], f32[4]) tuple(ge, gt, pad)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>({1, 3, 3, 2})},
                                           {"s3", Encode<float>({10, 20, 30})},
                                           {"s2", Encode<float>({100, 200})}});
  // Windows {1,3} {3,3} {3,2}: GE keeps the first of the tie (element 1),
  // GT moves to the later one (element 2).
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(0.5f, 30.5f, 30.5f, 0.5f));
  EXPECT_THAT(Decode<float>(out["out.1"]), ElementsAre(0.5f, 10.5f, 50.5f, 0.5f));
  // Windows {pad, x0} and {x1, x2}: padding is never selected.
  EXPECT_THAT(Decode<float>(out["out.2"]), ElementsAre(100.5f, 200.5f, 0.5f, 0.5f));
}

TEST(SimWindow, VariadicArgmaxAndSumOfSquares) {
  Compiled compiled = CompileText(R"(
HloModule re
argmax {
  va = f32[] parameter(0)
  ia = s32[] parameter(1)
  vb = f32[] parameter(2)
  ib = s32[] parameter(3)
  gt = pred[] compare(va, vb), direction=GT
  eq = pred[] compare(va, vb), direction=EQ
  lt = pred[] compare(ia, ib), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, va, vb)
  i = s32[] select(keep, ia, ib)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
sum_of_squares {
  acc = f32[] parameter(0)
  v = f32[] parameter(1)
  sq = f32[] multiply(v, v)
  ROOT s = f32[] add(acc, sq)
}
ENTRY main {
  x = f32[2,3] parameter(0)
  idx = s32[2,3] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  fzero = f32[] constant(0)
  am = (f32[2], s32[2]) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax
  v = f32[2] get-tuple-element(am), index=0
  i = s32[2] get-tuple-element(am), index=1
  ss = f32[3] reduce(x, fzero), dimensions={0}, to_apply=sum_of_squares
  ROOT out = (f32[2], s32[2], f32[3]) tuple(v, i, ss)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>({1, 5, 5, -1, -2, -3})}});
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(5.0f, -1.0f));
  EXPECT_THAT(Decode<int32_t>(out["out.1"]), ElementsAre(1, 0));  // the tie keeps index 1
  EXPECT_THAT(Decode<float>(out["out.2"]), ElementsAre(2.0f, 29.0f, 34.0f));
}

constexpr std::string_view kRng = R"(
HloModule rng
ENTRY main {
  a = f32[] constant(2)
  b = f32[] constant(3)
  mu = f32[] constant(1)
  sigma = f32[] constant(2)
  lo = s32[] constant(-3)
  hi = s32[] constant(4)
  u = f32[4096] rng(a, b), distribution=rng_uniform
  n = f32[4096] rng(mu, sigma), distribution=rng_normal
  k = s32[4096] rng(lo, hi), distribution=rng_uniform
  ROOT out = (f32[4096], f32[4096], s32[4096]) tuple(u, n, k)
})";

std::pair<double, double> Moments(const std::vector<float>& values) {
  double sum = 0, squares = 0;
  for (float v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  for (float v : values) squares += (v - mean) * (v - mean);
  return {mean, squares / static_cast<double>(values.size())};
}

TEST(SimWindow, RngRangeMomentsAndDeterminism) {
  Compiled compiled = CompileText(std::string(kRng));
  auto one = MustCreate(compiled, 1);
  auto two = MustCreate(compiled, 2);
  sim::HostData a = MustRun(*one, {});
  sim::HostData b = MustRun(*two, {});
  // Independent of the thread count.
  EXPECT_EQ(a["out.0"], b["out.0"]);
  EXPECT_EQ(a["out.1"], b["out.1"]);
  EXPECT_EQ(a["out.2"], b["out.2"]);
  const std::vector<float> u = Decode<float>(a["out.0"]);
  for (float v : u) ASSERT_TRUE(v >= 2.0f && v < 3.0f) << v;
  // Uniform [2, 3): mean 2.5, variance 1/12; over 4096 draws the standard
  // errors are 0.0045 and 0.0011, the bounds about 4 of them.
  auto [mean_u, var_u] = Moments(u);
  EXPECT_NEAR(mean_u, 2.5, 0.02);
  EXPECT_NEAR(var_u, 1.0 / 12, 0.005);
  // Normal(1, 2): standard errors 0.031 (mean) and 0.088 (variance 4).
  auto [mean_n, var_n] = Moments(Decode<float>(a["out.1"]));
  EXPECT_NEAR(mean_n, 1.0, 0.13);
  EXPECT_NEAR(var_n, 4.0, 0.36);
  std::vector<int> counts(7, 0);
  for (int32_t v : Decode<int32_t>(a["out.2"])) {
    ASSERT_TRUE(v >= -3 && v < 4) << v;
    ++counts[static_cast<size_t>(v + 3)];
  }
  for (int c : counts) EXPECT_NEAR(c, 4096.0 / 7, 100);  // sd 22
  // Each execution reseeds the tiles from the seed stream (the entry's
  // SetSeed vertices): the same seed repeats the values.
  sim::HostData again = MustRun(*one, {});
  EXPECT_EQ(again["out.0"], a["out.0"]);
}

TEST(SimWindow, RngDependsOnTheSeed) {
  Compiled compiled = CompileText(std::string(kRng));
  auto simulator = MustCreate(compiled);
  sim::HostData inputs;
  inputs["seed"] = Encode<uint32_t>({7, 0});
  auto first = simulator->Run(inputs);
  ASSERT_TRUE(first) << first.error().message();
  auto other = MustCreate(compiled);
  sim::HostData b = MustRun(*other, {});  // seed {1, 2}
  EXPECT_NE(first->outputs["out.0"], b["out.0"]);
}

}  // namespace
}  // namespace tileprof::engine::sim_test
