// The FLOPs of the report's operations (hlo::EstimateOperationFlops) on
// instructions small enough to count by hand.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "engine/hlo/stats.h"
#include "tests/hlo/test_util.h"

namespace tileprof::hlo {
namespace {

// Each entry instruction's estimate, by name.
std::map<std::string, std::optional<int64_t>> EntryFlops(const Module& module) {
  std::map<std::string, std::optional<int64_t>> out;
  for (const Instruction* instruction : module.entry()->instructions())
    out[std::string(instruction->name())] = EstimateOperationFlops(*instruction);
  return out;
}

TEST(OperationFlops, ArithmeticCountsOnePerElementAndMovesCountNone) {
  const Module module = testing::MustParse(R"(
HloModule elementwise
ENTRY main {
  a = f32[8,4] parameter(0)
  b = f32[8,4] parameter(1)
  i = s32[8,4] parameter(2)
  sum = f32[8,4] add(a, b)
  e = f32[8,4] exponential(sum)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  c = f32[8,4] clamp(lo, e, hi)
  n = s32[8,4] add(i, i)
  less = pred[8,4] compare(a, b), direction=LT
  t = f32[4,8] transpose(c), dimensions={1,0}
  ROOT s = f32[8,4] select(less, a, b)
}
)");
  auto flops = EntryFlops(module);
  EXPECT_EQ(flops["sum"], 32);
  EXPECT_EQ(flops["e"], 32);     // a transcendental counts one
  EXPECT_EQ(flops["c"], 64);     // clamp: a max and a min
  EXPECT_EQ(flops["n"], 0);      // integer arithmetic is not floating point
  EXPECT_EQ(flops["less"], 32);  // a compare of floats, as XLA counts it
  EXPECT_EQ(flops["t"], 0);      // data movement
  EXPECT_EQ(flops["s"], 0);
  EXPECT_EQ(flops["a"], 0);
}

TEST(OperationFlops, ReductionsCombineEachElementBeyondTheFirstOfAnOutput) {
  const Module module = testing::MustParse(R"(
HloModule reductions
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY main {
  p = f32[16,10] parameter(0)
  zero = f32[] constant(0)
  r = f32[16] reduce(p, zero), dimensions={1}, to_apply=add
  w = f32[16,8] reduce-window(p, zero), window={size=1x3}, to_apply=add
  ROOT m = f32[16,10] map(p, p), dimensions={0,1}, to_apply=add
}
)");
  auto flops = EntryFlops(module);
  EXPECT_EQ(flops["r"], 16 * 9);      // 9 additions per row of 10
  EXPECT_EQ(flops["w"], 16 * 8 * 2);  // a window of 3: 2 additions per output
  EXPECT_EQ(flops["m"], 160);
}

TEST(OperationFlops, AFusionIsItsBodyAndALoopIsNotEstimated) {
  const Module module = testing::MustParse(R"(
HloModule fused
body {
  a = f32[64,32] parameter(0)
  b = f32[32,16] parameter(1)
  d = f32[64,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64,16] multiply(d, d)
}
cond {
  s = (s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}
step {
  s = (s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[]) tuple(j)
}
ENTRY main {
  a = f32[64,32] parameter(0)
  b = f32[32,16] parameter(1)
  f = f32[64,16] fusion(a, b), kind=kOutput, calls=body
  zero = s32[] constant(0)
  init = (s32[]) tuple(zero)
  ROOT loop = (s32[]) while(init), condition=cond, body=step
}
)");
  auto flops = EntryFlops(module);
  EXPECT_EQ(flops["f"], 2 * 64 * 16 * 32 + 64 * 16);  // the dot, then one multiply per element
  EXPECT_EQ(flops["loop"], std::nullopt);             // how often it runs is not known here
}

}  // namespace
}  // namespace tileprof::hlo
