// `tileprof run` as a library (engine/session/run_module.h): executions
// carry input_output_alias results forward and report their scalars, inputs
// come from .npy files, zeros or a seed, results go to .npy files, a graph
// that does not fit or a bad input specification is an error, and
// pre-compile mode runs nothing and writes zeros.
#include "engine/session/run_module.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/npy.h"
#include "tests/temp_path.h"

namespace tileprof::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A counter: each execution adds one to its state, which the alias carries
// into the next execution.
constexpr const char* kCounter = R"(HloModule counter, input_output_alias={ {0}: (0, {}) }
ENTRY main {
  x = f32[] parameter(0)
  one = f32[] constant(1)
  next = f32[] add(x, one)
  ROOT out = (f32[]) tuple(next)
})";

class RunModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tileprof::testing::FreshTempPath("tileprof_run_module_test_");
    std::filesystem::create_directories(dir_);
    options_.target.preset = "ipu1";
    options_.target.tiles_per_ipu = 4;
    options_.progress = ProgressMode::kOff;
    settings_.config.files.text = dir_ + "/r.rep";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // Compiles `text` and runs it; the scalars of every execution go to scalars_.
  Expected<RunOutcome> Run(const std::string& text, const RunOptions& run,
                           bool precompile = false) {
    auto events = EventSink::Open(settings_, {});
    if (!events) return events.error();
    options_.events = &*events;
    auto compiled = CompileForRun(Write("m.hlo", text), options_, precompile, log_);
    if (!compiled) return compiled.error();
    RunCallbacks callbacks;
    callbacks.executed = [this](uint64_t execution, const std::vector<ScalarResult>& scalars) {
      for (const ScalarResult& scalar : scalars)
        scalars_.push_back(
            fmt::format("{}: {} ({}) = {}", execution, scalar.stream, scalar.label, scalar.value));
    };
    callbacks.precompiled = [this] { precompiled_ = true; };
    return RunCompiled(*compiled, run, settings_, precompile, *events, log_, callbacks);
  }

  float ReadScalar(const std::string& path) {
    Expected<npy::Array> array = npy::ReadFile(path);
    EXPECT_TRUE(array) << array.error().message();
    float value = -1;
    if (array && array->data.size() == sizeof value)
      std::memcpy(&value, array->data.data(), sizeof value);
    return value;
  }

  std::string dir_;
  SessionOptions options_;
  ReportSettings settings_;
  CompileLog log_;
  std::vector<std::string> scalars_;
  bool precompiled_ = false;
};

TEST_F(RunModuleTest, ExecutionsCarryAliasedResultsAndReportScalars) {
  Expected<RunOutcome> ran = Run(kCounter, {.iterations = 3, .outputs_dir = dir_ + "/out"});
  ASSERT_TRUE(ran) << ran.error().message();
  EXPECT_TRUE(ran->ran);
  EXPECT_THAT(scalars_,
              ElementsAre("1: out.0 (next) = 1", "2: out.0 (next) = 2", "3: out.0 (next) = 3"));
  EXPECT_GT(ran->total_cycles, 0u);
  EXPECT_GE(ran->threads, 1u);
  ASSERT_NE(ran->simulator, nullptr);
  // The report is written after the run, with its Execution section.
  EXPECT_THAT(ran->files, ElementsAre(dir_ + "/r.rep"));
  std::ifstream report(dir_ + "/r.rep");
  std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("Execution"));
  // The last execution's results.
  EXPECT_EQ(ReadScalar(dir_ + "/out/out.0.npy"), 3.0f);
}

TEST_F(RunModuleTest, InputsFromNpyFilesAndSeeds) {
  npy::Array ten{npy::Dtype::kF4, {}, std::vector<std::byte>(4)};
  const float value = 10;
  std::memcpy(ten.data.data(), &value, sizeof value);
  ASSERT_TRUE(npy::WriteFile(dir_ + "/x.npy", ten));
  Expected<RunOutcome> ran = Run(kCounter, {.input_files = {"x=" + dir_ + "/x.npy"}});
  ASSERT_TRUE(ran) << ran.error().message();
  EXPECT_THAT(scalars_, ElementsAre("1: out.0 (next) = 11"));

  // Random inputs depend on the seed alone.
  auto random = [&](uint64_t seed) {
    scalars_.clear();
    Expected<RunOutcome> run = Run(kCounter, {.random_inputs = true, .seed = seed});
    EXPECT_TRUE(run) << run.error().message();
    return scalars_;
  };
  EXPECT_EQ(random(7), random(7));
  EXPECT_NE(random(7), random(8));
}

TEST_F(RunModuleTest, BadInputSpecificationsAreErrors) {
  Expected<RunOutcome> ran = Run(kCounter, {.input_files = {"x"}});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().message(), "--input 'x': expected NAME_OR_INDEX=FILE.npy");
  ran = Run(kCounter, {.input_files = {"nope=a.npy"}});
  ASSERT_FALSE(ran);
  EXPECT_THAT(ran.error().message(), HasSubstr("--input nope=a.npy: "));
  ran = Run(kCounter, {.input_files = {"x=" + dir_ + "/missing.npy"}});
  ASSERT_FALSE(ran);
  EXPECT_THAT(ran.error().message(), HasSubstr("missing.npy"));
  EXPECT_TRUE(scalars_.empty());
}

TEST_F(RunModuleTest, OutOfMemoryGraphGetsItsReportAndDoesNotRun) {
  // 4 MB of parameter on one 256 KiB tile.
  options_.target.tiles_per_ipu = 1;
  Expected<RunOutcome> ran = Run(R"(HloModule big
ENTRY main {
  x = f32[1048576] parameter(0)
  ROOT y = f32[1048576] negate(x)
})",
                                 {});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().message(), OutOfMemoryMessage(dir_ + "/r.rep"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/r.rep"));
  EXPECT_TRUE(scalars_.empty());
}

TEST_F(RunModuleTest, PrecompileRunsNothingAndWritesZeros) {
  options_.flags.executable_cache_path = dir_ + "/cache";
  Expected<RunOutcome> ran = Run(kCounter, {.iterations = 2, .outputs_dir = dir_ + "/out"},
                                 /*precompile=*/true);
  ASSERT_TRUE(ran) << ran.error().message();
  EXPECT_FALSE(ran->ran);
  EXPECT_TRUE(precompiled_);
  EXPECT_TRUE(scalars_.empty());
  EXPECT_EQ(ran->simulator, nullptr);
  EXPECT_EQ(ReadScalar(dir_ + "/out/out.0.npy"), 0.0f);
  // The compile report is written, since nothing will run.
  EXPECT_THAT(ran->files, ElementsAre(dir_ + "/r.rep"));
}

}  // namespace
}  // namespace tileprof::engine
