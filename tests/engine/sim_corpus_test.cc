// The simulator on the shared HLO corpus: every module that compiles for
// ipu2 within memory and that the simulator accepts runs once with zero
// inputs without error; the others are refused before running. Each test
// prints one "sim-corpus:" line saying which (docs/sim-corpus.md lists
// them; regenerate with `ctest -R SimCorpus -V | grep sim-corpus:`).
#include <iostream>

#include <gtest/gtest.h>

#include "engine/compiler/compiler.h"
#include "engine/session/host_io.h"
#include "engine/sim/simulator.h"
#include "tests/hlo/test_util.h"

namespace tileprof::engine {
namespace {

// The first line of a refusal and how many instructions it names.
std::string Summary(const std::string& message) {
  std::string text;
  const size_t first = message.find('\n');
  if (first == std::string::npos) return message;
  text = message.substr(0, first);
  const size_t second = message.find('\n', first + 1);
  std::string line = message.substr(
      first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
  line.erase(0, line.find_first_not_of(' '));
  text += "; first: " + line;
  return text;
}

class SimCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(SimCorpus, RunsOrIsRefusedBeforeRunning) {
  if (hlo::testing::TooSlowUnderSanitizers(GetParam()))
    GTEST_SKIP() << "too slow under ASan; the release build runs it";
  Expected<std::vector<hlo::Module>> modules =
      hlo::ParseModules(hlo::testing::ReadCorpus(GetParam()), {.source_name = GetParam()});
  ASSERT_TRUE(modules.has_value()) << modules.error().message();
  Expected<Target> target = Target::FromPreset("ipu2");
  ASSERT_TRUE(target.has_value());
  for (const hlo::Module& module : *modules) {
    const std::string where = GetParam() + " | " + std::string(module.name());
    Expected<compiler::CompileResult> compiled = compiler::CompileModule(module, *target, {});
    ASSERT_TRUE(compiled.has_value()) << where << ": " << compiled.error().message();
    if (compiled->tiles_out_of_memory > 0) {
      std::cout << "sim-corpus: | " << where << " | out of memory | "
                << compiled->tiles_out_of_memory
                << " tile(s) over capacity on ipu2; not run, as Poplar |\n";
      continue;
    }
    auto simulator = sim::Simulator::Create(*compiled, {.threads = 2, .module = &module});
    if (!simulator) {
      const std::string& message = simulator.error().message();
      EXPECT_EQ(message.rfind("cannot run: ", 0), 0u) << where << ": " << message;
      std::cout << "sim-corpus: | " << where << " | refused | " << Summary(message) << " |\n";
      continue;
    }
    Expected<HostInterface> host = DescribeHostInterface(module);
    if (!host) {
      std::cout << "sim-corpus: | " << where << " | no host interface | " << host.error().message()
                << " |\n";
      continue;
    }
    sim::HostData inputs;
    for (const HostLeaf& leaf : host->inputs) {
      if (leaf.elements > 0) inputs[leaf.stream] = ZeroInput(leaf);
    }
    inputs["seed"] = std::vector<std::byte>(8);
    Expected<sim::RunResult> run = (*simulator)->Run(inputs);
    ASSERT_TRUE(run.has_value()) << where << ": " << run.error().message();
    EXPECT_GT(run->cycles, 0u);
    std::cout << "sim-corpus: | " << where << " | runs | " << run->cycles << " cycles |\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, SimCorpus, ::testing::ValuesIn(hlo::testing::CorpusFiles()),
                         [](const auto& info) { return hlo::testing::TestName(info.param); });

}  // namespace
}  // namespace tileprof::engine
