// End-to-end: `tileprof dumpdiff` and `tileprof logscan` on the samples in
// samples/recompile/, whose README promises these explanations.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace {

using ::testing::HasSubstr;

using tileprof::cli_test::CliRun;
using tileprof::cli_test::Tileprof;

std::string Sample(const std::string& name) {
  return std::string(TILEPROF_SOURCE_DIR) + "/samples/recompile/" + name;
}

CliRun DumpDiff(const std::string& name, const std::string& extra = "") {
  return Tileprof("dumpdiff " + extra + " " + Sample(name) + "/run1 " + Sample(name) + "/run2");
}

TEST(DumpDiffSamples, BatchSize) {
  CliRun r = DumpDiff("batch_size");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("parameter 0 'Arg_0.1': f32[32,784]{1,0} -> f32[16,784]{1,0} (batch "
                               "dimension 32 -> 16)"));
  EXPECT_THAT(r.out, HasSubstr("look at: /home/user/mnist/train.py:24"));
  EXPECT_THAT(r.out, HasSubstr("Note: the batch size changed"));
}

TEST(DumpDiffSamples, ConstantParameter) {
  CliRun r = DumpDiff("constant_param");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("1 root cause(s); first: constant 'constant.14': 0.01 -> 0.001"));
  EXPECT_THAT(r.out, HasSubstr("level 4"));
}

TEST(DumpDiffSamples, FrozenWeights) {
  CliRun r = DumpDiff("frozen_weights");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("first at [1,1]: 0.4 -> 0.45"));
  EXPECT_THAT(r.out, HasSubstr("look at: /home/user/serve.py:12"));
}

TEST(DumpDiffSamples, ConcatInALoop) {
  CliRun r = DumpDiff("concat_loop");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("parameter 2 'Arg_2.3' added"));
  EXPECT_THAT(r.out, HasSubstr("concatenate 'concatenate.10' has 2 -> 3 operands"));
}

TEST(DumpDiffSamples, JsonAndExitCodes) {
  CliRun json = DumpDiff("batch_size", "--format=json");
  EXPECT_EQ(json.status, 1);
  auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["changed"], 1);
  EXPECT_EQ(doc["pairs"][0]["causes"][0]["kind"], "parameter");
  EXPECT_EQ(doc["pairs"][0]["causes"][0]["detail"], "batch dimension 32 -> 16");

  std::string same = Sample("batch_size") + "/run1";
  CliRun equal = Tileprof("dumpdiff " + same + " " + same);
  EXPECT_EQ(equal.status, 0) << equal.out;
  EXPECT_THAT(equal.out, HasSubstr("Verdict: no recompilation"));

  CliRun missing = Tileprof("dumpdiff " + same + " /nonexistent/dir");
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.out,
              HasSubstr("tileprof: dumpdiff: '/nonexistent/dir': No such file or directory"));

  CliRun mixed = Tileprof("dumpdiff " + same + " " + same +
                          "/module_0007.jit_train_step.before_optimizations.txt");
  EXPECT_EQ(mixed.status, 2);
  EXPECT_THAT(mixed.out, HasSubstr("give two files or two dump directories"));
}

TEST(DumpDiffSamples, LargestAndUnparsableModules) {
  CliRun largest = DumpDiff("frozen_weights", "--largest");
  EXPECT_EQ(largest.status, 1);
  EXPECT_THAT(largest.out, HasSubstr("constant 'constant.2'"));

  char dir[] = "/tmp/tileprof_dumpdiff_XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string bad = std::string(dir) + "/bad.hlo";
  FILE* f = fopen(bad.c_str(), "w");
  fputs("HloModule m\nENTRY e {\n  ROOT x = f32[] frobnicate()\n}\n", f);
  fclose(f);
  CliRun r = Tileprof("dumpdiff " + bad + " " + bad);
  EXPECT_EQ(r.status, 0);  // identical bytes need no parse
  CliRun r2 = Tileprof("dumpdiff " + bad + " " + Sample("constant_param") +
                       "/run1/module_0007.jit_train_step.before_optimizations.txt");
  EXPECT_EQ(r2.status, 2);
  EXPECT_THAT(r2.out, HasSubstr("bad.hlo:3:"));
  EXPECT_THAT(r2.out, HasSubstr("frobnicate"));
  std::remove(bad.c_str());
  rmdir(dir);
}

TEST(LogScanSamples, BatchSizeLogShowsTheRecompilation) {
  CliRun r = Tileprof("logscan " + Sample("batch_size") + "/train.log");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("module 'jit_train_step' was compiled under 2 different hashes"));
  EXPECT_THAT(r.out, HasSubstr("3 build(s) after warm-up cost 41.1 s"));
}

}  // namespace
