// The simulator on small compiled modules with hand-checked results:
// elementwise arithmetic (with XLA's integer rules), a scalar broadcast,
// dot, reduce, a while loop with a counter, conditionals in both forms, and
// refusals of what cannot run.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SimOps, SeedAdderSample) {
  Compiled compiled =
      CompileText(ReadText(std::string(TILEPROF_SOURCE_DIR) + "/samples/adder.hlo"));
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"a", Encode<float>({1, 2})},
                                           {"b", Encode<float>({10, 20})},
                                           {"c", Encode<float>({100, 200})}});
  // (a + b) + (a + c)
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(112.0f, 224.0f));
}

TEST(SimOps, ElementwiseWithXlaIntegerRules) {
  Compiled compiled = CompileText(R"(
HloModule elementwise
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = s32[2] parameter(2)
  b = s32[2] parameter(3)
  m = f32[4] multiply(x, y)
  s = f32[4] subtract(m, y)
  mx = f32[4] maximum(s, x)
  twice = s32[2] add(a, a)
  q = s32[2] divide(a, b)
  ROOT out = (f32[4], s32[2], s32[2]) tuple(mx, twice, q)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>({1, 2, 3, -4})},
                                           {"y", Encode<float>({2, 0.5f, 3, 1})},
                                           {"a", Encode<int32_t>({2147483647, 7})},
                                           {"b", Encode<int32_t>({0, 2})}});
  // max(x*y - y, x) = max([0, 0.5, 6, -5], x)
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(1.0f, 2.0f, 6.0f, -4.0f));
  // INT_MAX + INT_MAX wraps to -2; x / 0 is -1 in XLA.
  EXPECT_THAT(Decode<int32_t>(out["out.1"]), ElementsAre(-2, 14));
  EXPECT_THAT(Decode<int32_t>(out["out.2"]), ElementsAre(-1, 3));
}

TEST(SimOps, ScalarBroadcastCompareSelect) {
  Compiled compiled = CompileText(R"(
HloModule select
ENTRY main {
  c = f32[] constant(2.5)
  bc = f32[3] broadcast(c), dimensions={}
  p = f32[3] parameter(0)
  gt = pred[3] compare(p, bc), direction=GT
  ROOT r = f32[3] select(gt, p, bc)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"p", Encode<float>({1, 3, 2.625f})}});
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(2.5f, 3.0f, 2.625f));
}

TEST(SimOps, Dot) {
  Compiled compiled = CompileText(R"(
HloModule dot
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"a", Encode<float>({1, 2, 3, 4, 5, 6})},
                                           {"b", Encode<float>({7, 8, 9, 10, 11, 12})}});
  // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12]
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(58.0f, 64.0f, 139.0f, 154.0f));
}

TEST(SimOps, Reduce) {
  Compiled compiled = CompileText(R"(
HloModule reduce
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT m = s32[] maximum(x, y)
}
ENTRY main {
  a = f32[2,3] parameter(0)
  i = s32[4] parameter(1)
  z = f32[] constant(0)
  lowest = s32[] constant(-2147483648)
  cols = f32[3] reduce(a, z), dimensions={0}, to_apply=add
  all = f32[] reduce(a, z), dimensions={0,1}, to_apply=add
  top = s32[] reduce(i, lowest), dimensions={0}, to_apply=max
  ROOT out = (f32[3], f32[], s32[]) tuple(cols, all, top)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"a", Encode<float>({1, 2, 3, 4, 5, 6})},
                                           {"i", Encode<int32_t>({-5, 17, 3, -100})}});
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(5.0f, 7.0f, 9.0f));
  EXPECT_THAT(Decode<float>(out["out.1"]), ElementsAre(21.0f));
  EXPECT_THAT(Decode<int32_t>(out["out.2"]), ElementsAre(17));
}

TEST(SimOps, WhileLoopRunsItsRealTripCount) {
  Compiled compiled = CompileText(R"(
HloModule loop
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  two = f32[] constant(2)
  x1 = f32[] multiply(x, two)
  ROOT t = (s32[], f32[]) tuple(i1, x1)
}
ENTRY main {
  x = f32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[]) tuple(zero, x)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>({3})}});
  EXPECT_THAT(Decode<int32_t>(out["out.0"]), ElementsAre(5));
  EXPECT_THAT(Decode<float>(out["out.1"]), ElementsAre(96.0f));  // 3 x 2^5
  // The condition is tested 6 times: 5 trips and the exit.
  const report::ExecutionReport report = simulator->Report();
  size_t tests = 0;
  for (const report::ExecutionStep& step : report.steps)
    tests += step.program == "Sync (predicate)";
  EXPECT_EQ(tests, 6u);
  // A second run starts again from the parameters (the loop state is
  // overwritten from the init value).
  out = MustRun(*simulator, {{"x", Encode<float>({-1})}});
  EXPECT_THAT(Decode<float>(out["out.1"]), ElementsAre(-32.0f));
}

TEST(SimOps, PredicatedConditional) {
  Compiled compiled = CompileText(R"(
HloModule cond
on_true {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
on_false {
  p = f32[] parameter(0)
  c = f32[] constant(10)
  ROOT a = f32[] add(p, c)
}
ENTRY main {
  b = pred[] parameter(0)
  x = f32[] parameter(1)
  ROOT r = f32[] conditional(b, x, x), true_computation=on_true, false_computation=on_false
})");
  auto simulator = MustCreate(compiled);
  EXPECT_THAT(Decode<float>(MustRun(
                  *simulator, {{"b", Encode<uint8_t>({1})}, {"x", Encode<float>({4})}})["out.0"]),
              ElementsAre(-4.0f));
  EXPECT_THAT(Decode<float>(MustRun(
                  *simulator, {{"b", Encode<uint8_t>({0})}, {"x", Encode<float>({4})}})["out.0"]),
              ElementsAre(14.0f));
}

TEST(SimOps, IndexedConditionalTakesTheLastBranchWhenOutOfRange) {
  Compiled compiled = CompileText(R"(
HloModule switch
b0 {
  p = s32[] parameter(0)
  c = s32[] constant(100)
  ROOT r = s32[] add(p, c)
}
b1 {
  p = s32[] parameter(0)
  c = s32[] constant(2)
  ROOT r = s32[] multiply(p, c)
}
b2 {
  p = s32[] parameter(0)
  ROOT r = s32[] negate(p)
}
ENTRY main {
  i = s32[] parameter(0)
  x = s32[] parameter(1)
  ROOT r = s32[] conditional(i, x, x, x), branch_computations={b0, b1, b2}
})");
  auto simulator = MustCreate(compiled);
  auto run = [&](int32_t index) {
    return Decode<int32_t>(MustRun(
        *simulator, {{"i", Encode<int32_t>({index})}, {"x", Encode<int32_t>({7})}})["out.0"]);
  };
  EXPECT_THAT(run(0), ElementsAre(107));
  EXPECT_THAT(run(1), ElementsAre(14));
  EXPECT_THAT(run(2), ElementsAre(-7));
  EXPECT_THAT(run(9), ElementsAre(-7));
  EXPECT_THAT(run(-1), ElementsAre(-7));
}

TEST(SimOps, RefusesAnOpItCannotExecuteNamingTheInstruction) {
  Compiled compiled = CompileText(R"(
HloModule opaque
ENTRY main {
  x = f32[4] parameter(0)
  mystery.7 = f32[4] custom-call(x), custom_call_target="SomethingUnknown"
  ROOT y = f32[4] add(mystery.7, x)
})");
  auto simulator = TryCreate(compiled);
  ASSERT_FALSE(simulator.has_value());
  EXPECT_THAT(simulator.error().message(), HasSubstr("cannot run: 1 instruction(s)"));
  EXPECT_THAT(
      simulator.error().message(),
      HasSubstr("mystery.7 (custom-call SomethingUnknown): tileprof::OpaqueOp<custom-call"));
  // Without the module the vertex's debug name still names the instruction.
  auto unnamed = sim::Simulator::Create(compiled.result, {.threads = 1});
  ASSERT_FALSE(unnamed.has_value());
  EXPECT_THAT(unnamed.error().message(), HasSubstr("\n  mystery.7: "));
}

TEST(SimOps, RefusesConstantsWithoutValues) {
  Compiled compiled = CompileText(R"(
HloModule elided
ENTRY main {
  x = f32[4] parameter(0)
  weights = f32[4] constant({...})
  ROOT y = f32[4] add(x, weights)
})");
  auto simulator = TryCreate(compiled);
  ASSERT_FALSE(simulator.has_value());
  EXPECT_THAT(simulator.error().message(), HasSubstr("'y' reads it"));
  EXPECT_THAT(
      simulator.error().message(),
      HasSubstr("weights (constant): its values are unknown (elided as {...} in the HLO text"));
}

// A caller may give a valueless constant its contents (tileprof run
// --elided-constants); only the valueless constants it fills stop being
// refused, and only with exactly their bytes.
TEST(SimOps, FilledConstantsRunWithTheirValues) {
  Compiled compiled = CompileText(R"(
HloModule elided
ENTRY main {
  x = f32[4] parameter(0)
  weights = f32[4] constant({...})
  ROOT y = f32[4] add(x, weights)
})");
  ASSERT_EQ(compiled.result.valueless_constants.size(), 1u);
  const VariableId weights = compiled.result.valueless_constants[0];
  sim::FilledConstants filled{{weights, Encode<float>({10, 20, 30, 40})}};
  auto simulator = sim::Simulator::Create(
      compiled.result, {.threads = 1, .module = &compiled.module, .filled_constants = &filled});
  ASSERT_TRUE(simulator.has_value()) << simulator.error().message();
  filled.clear();  // read by Create only
  sim::HostData out = MustRun(**simulator, {{"x", Encode<float>({1, 2, 3, 4})}});
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(11, 22, 33, 44));

  sim::FilledConstants short_fill{{weights, Encode<float>({1})}};
  auto wrong_size = sim::Simulator::Create(compiled.result, {.filled_constants = &short_fill});
  ASSERT_FALSE(wrong_size.has_value());
  EXPECT_THAT(wrong_size.error().message(), HasSubstr("'weights' (f32[4]) is filled with 4 bytes"));
  sim::FilledConstants not_valueless{{weights + 1, Encode<float>({1})}};
  auto other = sim::Simulator::Create(compiled.result, {.filled_constants = &not_valueless});
  ASSERT_FALSE(other.has_value());
  EXPECT_THAT(other.error().message(), HasSubstr("is not a constant without values"));
}

TEST(SimOps, InputsMustMatchTheStreams) {
  Compiled compiled =
      CompileText(ReadText(std::string(TILEPROF_SOURCE_DIR) + "/samples/adder.hlo"));
  auto simulator = MustCreate(compiled);
  sim::HostData inputs{
      {"a", Encode<float>({1, 2})}, {"b", Encode<float>({1})}, {"seed", Encode<uint32_t>({0, 0})}};
  Expected<sim::RunResult> missing = simulator->Run(inputs);
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message(),
              HasSubstr("input for stream 'b' has 4 bytes, the stream takes 8"));
  inputs["b"] = Encode<float>({1, 2});
  Expected<sim::RunResult> no_c = simulator->Run(inputs);
  ASSERT_FALSE(no_c.has_value());
  EXPECT_THAT(no_c.error().message(), HasSubstr("no input for host-to-device stream 'c' (f32[2])"));
  inputs["c"] = Encode<float>({1, 2});
  inputs["d"] = Encode<float>({1, 2});
  Expected<sim::RunResult> extra = simulator->Run(inputs);
  ASSERT_FALSE(extra.has_value());
  EXPECT_THAT(extra.error().message(), HasSubstr("no host-to-device stream named 'd'"));
}

}  // namespace
}  // namespace tileprof::engine::sim_test
