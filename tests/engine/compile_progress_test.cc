// What a compile shows while it runs: the two phases, the VLOG(1)
// milestones, and progress that ticks once per HLO instruction visited and
// then runs compileGraph's (done, total) up to its total.
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/compiler/compiler.h"
#include "engine/compiler/lower.h"
#include "tests/engine/capture.h"
#include "tests/hlo/test_util.h"

namespace tileprof::engine::compiler {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tileprof::testing::Capture;

// add_one: 4 instructions; cond: 4; body: 7 plus a call of add_one (4);
// the entry: 6 plus cond and body of the while (15) and a call (4): 25.
constexpr const char* kLoopAndCalls = R"(
HloModule progress

add_one {
  p = f32[4] parameter(0)
  one = f32[] constant(1)
  b = f32[4] broadcast(one), dimensions={}
  ROOT r = f32[4] add(p, b)
}

cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[4] call(x), to_apply=add_one
  ROOT t = (s32[], f32[4]) tuple(j, y)
}

ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  last = f32[4] get-tuple-element(w), index=1
  ROOT out = f32[4] call(last), to_apply=add_one
}
)";

struct Recorded {
  std::mutex mutex;
  std::map<CompileStage, std::vector<std::pair<uint64_t, uint64_t>>> calls;
};

TEST(CompileProgress, CountsInstructionVisitsPerCallSite) {
  EXPECT_EQ(InstructionVisits(hlo::testing::MustParse(kLoopAndCalls)), 25u);
}

TEST(CompileProgress, TicksPerInstructionThenRunsCompileGraphToItsTotal) {
  const hlo::Module module = hlo::testing::MustParse(kLoopAndCalls);
  Expected<Target> target = Target::FromPreset("ipu2");
  ASSERT_TRUE(target.has_value());
  Recorded recorded;
  Capture capture;
  ASSERT_NE(capture.file(), nullptr);
  CompileLog log(capture.file(), LogLevel::kVerbose);
  CompileMonitor monitor{.log = &log,
                         .progress = [&](CompileStage stage, uint64_t done, uint64_t total) {
                           std::lock_guard lock(recorded.mutex);
                           recorded.calls[stage].emplace_back(done, total);
                         }};
  Expected<CompileResult> result = CompileModule(module, *target, CompileOptions{}, monitor);
  ASSERT_TRUE(result.has_value()) << result.error().message();

  const auto& construction = recorded.calls[CompileStage::kGraphConstruction];
  ASSERT_EQ(construction.size(), 25u);
  for (size_t i = 0; i < construction.size(); ++i) {
    EXPECT_EQ(construction[i], std::make_pair(uint64_t{i + 1}, uint64_t{25}));
  }
  const auto& compilation = recorded.calls[CompileStage::kGraphCompilation];
  ASSERT_FALSE(compilation.empty());
  uint64_t most = 0;
  for (const auto& [done, total] : compilation) {
    EXPECT_EQ(total, compilation.front().second);
    EXPECT_LE(done, total);
    most = std::max(most, done);
  }
  EXPECT_EQ(most, compilation.front().second);
  EXPECT_EQ(recorded.calls.size(), 2u);

  const std::string text = capture.Text();
  const std::vector<std::string> in_order = {
      "Starting phase: graphConstruction", "Begin Poplar graph construction.",
      "End Poplar graph construction.",    "Ending phase: graphConstruction (duration ",
      "Starting phase: compileGraph",      "Begin compiling Poplar engine progress",
      "End compiling Poplar engine.",      "Ending phase: compileGraph (duration "};
  size_t at = 0;
  for (const std::string& line : in_order) {
    const size_t found = text.find(line, at);
    ASSERT_NE(found, std::string::npos) << "missing or out of order: " << line << "\n" << text;
    at = found + line.size();
  }
}

TEST(CompileProgress, AFailedLoweringEndsItsPhaseAndStartsNoOther) {
  const hlo::Module module = hlo::testing::MustParse(R"(
HloModule broken
cond {
  s = s32[] parameter(0)
  ROOT same = s32[] copy(s)
}
body {
  s = s32[] parameter(0)
  ROOT same = s32[] copy(s)
}
ENTRY main {
  x = s32[] parameter(0)
  ROOT y = s32[] while(x), condition=cond, body=body
}
)");
  Expected<Target> target = Target::FromPreset("ipu2");
  ASSERT_TRUE(target.has_value());
  Capture capture;
  ASSERT_NE(capture.file(), nullptr);
  CompileLog log(capture.file(), LogLevel::kInfo);
  Expected<CompileResult> result = CompileModule(module, *target, CompileOptions{}, {.log = &log});
  const std::string text = capture.Text();
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message(), HasSubstr("does not give a pred scalar"));
  EXPECT_THAT(text, HasSubstr("Ending phase: graphConstruction (duration "));
  EXPECT_THAT(text, Not(HasSubstr("compileGraph")));
}

}  // namespace
}  // namespace tileprof::engine::compiler
