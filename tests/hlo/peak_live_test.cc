// The peak-live bound (engine/hlo/peak_live.h) on modules small enough to
// add up by hand.
#include "engine/hlo/peak_live.h"

#include <gtest/gtest.h>

#include "tests/hlo/test_util.h"

namespace tileprof::hlo {
namespace {

TEST(PeakLive, ValuesLiveFromDefinitionToLastUse) {
  // p (400 B) is live throughout. a (400) dies at c; b (400) at d; the
  // peak is at c: p + a + b + c = 1,600. At d: p + c + d = 1,200 (b dead
  // after d is defined, but live at its step).
  const Module module = testing::MustParse(R"(
HloModule chain
ENTRY main {
  p = f32[100] parameter(0)
  a = f32[100] negate(p)
  b = f32[100] exponential(p)
  c = f32[100] add(a, b)
  ROOT d = f32[100] multiply(c, b)
}
)");
  const PeakLive live = ComputePeakLive(module);
  EXPECT_EQ(live.parameter_bytes, 400);
  EXPECT_EQ(live.bytes, 1600);
  EXPECT_EQ(live.at, "c");
}

TEST(PeakLive, ViewsAddNothingAndKeepWhatTheyViewAlive) {
  // r views a (no bytes); a stays live until r's last use by s. At s:
  // p 64 + a 64 + s 64 = 192; the tuple adds nothing.
  const Module module = testing::MustParse(R"(
HloModule views
ENTRY main {
  p = f32[16] parameter(0)
  a = f32[16] negate(p)
  r = f32[4,4] reshape(a)
  t = f32[16] exponential(p)
  s = f32[4,4] negate(r)
  ROOT out = (f32[4,4], f32[16]) tuple(s, t)
}
)");
  const PeakLive live = ComputePeakLive(module);
  EXPECT_EQ(live.parameter_bytes, 64);
  // At s: p, a (through r), t (a result, never freed) and s.
  EXPECT_EQ(live.bytes, 64 * 4);
  EXPECT_EQ(live.at, "s");
}

TEST(PeakLive, CalledComputationsAddTheirInternalPeak) {
  // The call's body holds x (its parameter: the caller's operand, not
  // counted again), y and z: internal peak 8 + 8 = 16 B at z. At the
  // call's step the entry holds p (8) and the call's result c (8), and the
  // body's peak is added: 32.
  const Module module = testing::MustParse(R"(
HloModule calls
body {
  x = f32[2] parameter(0)
  y = f32[2] negate(x)
  ROOT z = f32[2] add(y, x)
}
ENTRY main {
  p = f32[2] parameter(0)
  ROOT c = f32[2] call(p), to_apply=body
}
)");
  const PeakLive live = ComputePeakLive(module);
  EXPECT_EQ(live.parameter_bytes, 8);
  EXPECT_EQ(live.bytes, 8 + 8 + 16);
  EXPECT_EQ(live.at, "c");
}

const Instruction& Named(const Module& module, std::string_view name) {
  for (const Computation* computation : module.computations())
    for (const Instruction* instruction : computation->instructions())
      if (instruction->name() == name) return *instruction;
  ADD_FAILURE() << "no instruction " << name;
  return *module.entry()->root();
}

TEST(PeakLive, LiveAtEachStepAndInsideWhatItCalls) {
  // Entry steps: p 8 B throughout; at q: p + q = 16; at c: p + q + c and
  // the body's internal peak (y, z: 16) = 40; at r: p, q (a result), c, r
  // = 32. The body's instructions run inside c's step: 40.
  const Module module = testing::MustParse(R"(
HloModule steps
body {
  x = f32[2] parameter(0)
  y = f32[2] negate(x)
  ROOT z = f32[2] add(y, x)
}
ENTRY main {
  p = f32[2] parameter(0)
  q = f32[2] negate(p)
  c = f32[2] call(p), to_apply=body
  r = f32[2] add(c, q)
  ROOT t = (f32[2], f32[2]) tuple(r, q)
}
)");
  const PeakLive live = ComputePeakLive(module);
  EXPECT_EQ(live.bytes, 40);
  EXPECT_EQ(live.LiveAt(Named(module, "q")), 16);
  EXPECT_EQ(live.LiveAt(Named(module, "c")), 40);
  EXPECT_EQ(live.LiveAt(Named(module, "r")), 32);
  EXPECT_EQ(live.LiveAt(Named(module, "y")), 40);
}

TEST(PeakLive, SaturatesInsteadOfOverflowing) {
  const Module module = testing::MustParse(R"(
HloModule huge
ENTRY main {
  p = f32[4611686018427387904] parameter(0)
  ROOT n = f32[4611686018427387904] negate(p)
}
)");
  const PeakLive live = ComputePeakLive(module);
  EXPECT_EQ(live.bytes, INT64_MAX);
}

}  // namespace
}  // namespace tileprof::hlo
