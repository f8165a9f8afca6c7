#include "analyzer/dump_pairing.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace tileprof::analyzer {
namespace {

TEST(DumpName, DropsTheRunSpecificParts) {
  auto n =
      ParseDumpName("1649161872771469.module_1959.jit_searchsorted.120.before_optimizations.txt");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->module_id, 1959);
  EXPECT_EQ(n->module, "jit_searchsorted.120");
  EXPECT_EQ(n->function, "jit_searchsorted");
  EXPECT_EQ(n->stage, "before_optimizations");
}

TEST(DumpName, StagesOfEveryBackend) {
  EXPECT_EQ(ParseDumpName("module_0004.jit_f.12.sm_8.0_gpu_after_optimizations.txt")->stage,
            "sm_8.0_gpu_after_optimizations");
  EXPECT_EQ(ParseDumpName("module_0004.jit_f.12.sm_8.0_gpu_after_optimizations.txt")->function,
            "jit_f");
  EXPECT_EQ(ParseDumpName("module_0001.jit_g.cpu_after_optimizations.txt")->stage,
            "cpu_after_optimizations");
  auto pass = ParseDumpName("module_0004.jit_top.0004.simplification.after_dce.before_cse.txt");
  ASSERT_TRUE(pass);
  EXPECT_EQ(pass->function, "jit_top");
  EXPECT_EQ(pass->stage, "0004.simplification.after_dce.before_cse");
  auto plain = ParseDumpName("model.hlo");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->function, "model");
  EXPECT_EQ(plain->module_id, -1);
}

TEST(DumpName, TensorFlowFunctionUidsAreRunSpecific) {
  auto n = ParseDumpName("module_0016.a_inference_run_step_1981__.1083.before_optimizations.txt");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->function, "a_inference_run_step");
}

TEST(DumpName, NonHloFilesAreSkipped) {
  for (const char* f : {"module_0001.jit_f.sm_8.0_gpu_after_optimizations-buffer-assignment.txt",
                        "module_0001.jit_f.before_optimizations.dot", "module_0001.jit_f.hlo.pb",
                        "module_0001.jit_f.ir-with-opt.ll",
                        "module_0001.jit_f.gpu_after_optimizations-memory-usage-report.txt"}) {
    EXPECT_FALSE(ParseDumpName(f)) << f;
  }
}

std::vector<DumpFile> Files(std::initializer_list<const char*> names) {
  std::vector<DumpFile> out;
  for (const char* n : names) out.push_back({n, *ParseDumpName(n), 0});
  return out;
}

TEST(PairDumps, MatchesFunctionsAndOrdersVariantsById) {
  auto pairing = PairDumps(Files({"module_0196.jit__uniform.21.before_optimizations.txt",
                                  "module_0215.jit__uniform.30.before_optimizations.txt",
                                  "module_0007.jit_train_step.before_optimizations.txt",
                                  "module_0008.jit_eval.before_optimizations.txt"}),
                           Files({"module_0301.jit__uniform.40.before_optimizations.txt",
                                  "module_0011.jit_train_step.3.before_optimizations.txt",
                                  "module_0012.jit_predict.before_optimizations.txt"}));
  ASSERT_EQ(pairing.pairs.size(), 5u);
  EXPECT_EQ(pairing.pairs[0].key, "jit__uniform before_optimizations");
  EXPECT_EQ(pairing.pairs[0].a->name.module, "jit__uniform.21");
  EXPECT_EQ(pairing.pairs[0].b->name.module, "jit__uniform.40");
  EXPECT_EQ(pairing.pairs[1].a->name.module, "jit__uniform.30");
  EXPECT_FALSE(pairing.pairs[1].b);
  EXPECT_EQ(pairing.pairs[2].key, "jit_eval before_optimizations");
  EXPECT_FALSE(pairing.pairs[2].b);
  EXPECT_EQ(pairing.pairs[3].key, "jit_predict before_optimizations");
  EXPECT_FALSE(pairing.pairs[3].a);
  EXPECT_TRUE(pairing.pairs[4].a && pairing.pairs[4].b);
}

TEST(ListDump, ReadsADirectoryAndReportsWhatItSkipped) {
  auto dir = std::filesystem::temp_directory_path() / ("tileprof_dump_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "module_0001.jit_f.before_optimizations.txt") << "HloModule f\n";
  std::ofstream(dir / "module_0002.jit_big.before_optimizations.txt") << std::string(100, 'x');
  std::ofstream(dir / "module_0001.jit_f.before_optimizations.dot") << "digraph {}";
  std::vector<std::string> skipped;
  auto files = ListDump(dir.string(), &skipped);
  ASSERT_TRUE(files);
  EXPECT_EQ(files->size(), 2u);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(LargestModule(*files)->name.function, "jit_big");
  EXPECT_FALSE(ListDump((dir / "missing").string()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tileprof::analyzer
