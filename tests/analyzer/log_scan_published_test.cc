// Every published log, with what a careful reader counts in it by hand
// (the rules are in docs/logscan.md "How compilations are counted"; the table
// there lists the same expectations). The logs are copies of what users and
// Graphcore published: ../shared/corpus/published/ (B01-B12) and
// tests/analyzer/data/published/ (L01-L07, sources in its SOURCES.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analyzer/log_scan.h"
#include "cli_run.h"
#include "common/file.h"
#include "tests/published_corpus.h"

namespace tileprof::analyzer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using ::tileprof::testing::OurPublished;
using ::tileprof::testing::SharedPublished;

LogScanSummary Scan(const std::string& path) {
  Expected<std::string> text = ReadFile(path);
  EXPECT_TRUE(text) << path;
  LogScanner scanner;
  scanner.Scan(text ? *text : std::string(), path.substr(path.rfind('/') + 1));
  return scanner.Finish();
}

std::vector<std::optional<double>> Durations(const LogScanSummary& s) {
  std::vector<std::optional<double>> out;
  for (const ModuleBuild& b : s.builds) out.push_back(b.seconds);
  return out;
}

std::vector<std::string> Modules(const LogScanSummary& s) {
  std::vector<std::string> out;
  for (const ModuleBuild& b : s.builds) out.push_back(b.module);
  return out;
}

// The verdict must not ask for more logging when the log shows compilations.
void ExpectNoLoggingAdvice(const LogScanSummary& s) {
  EXPECT_THAT(FormatLogScanText(s), ::testing::Not(HasSubstr("To see compilations")));
}

TEST(PublishedLogs, B01PoplarEngineTraceIsOneUnfinishedPoplarCompilationWithItsPhases) {
  LogScanSummary s = Scan(SharedPublished("B01_ipu-hpc-cookbook_poplar_engine_trace_phases.log"));
  ASSERT_EQ(s.builds.size(), 1u);
  const ModuleBuild& b = s.builds[0];
  EXPECT_EQ(s.compilations, 1);
  EXPECT_EQ(b.framework, "poplar");
  EXPECT_FALSE(b.complete);
  EXPECT_FALSE(b.seconds);
  std::vector<std::tuple<std::string, int, double>> phases;
  for (const PhaseTime& p : b.phases) phases.emplace_back(p.name, p.depth, p.ms.value_or(-1));
  EXPECT_THAT(phases, ElementsAre(std::tuple{"elimUnusedComputeSets", 0, 0.0},
                                  std::tuple{"findRootNodeCandidates", 1, 10.0},
                                  std::tuple{"Create adjacencies", 1, 30.0},
                                  std::tuple{"tryToReplicateSubGraphs", 1, 4.0},
                                  std::tuple{"smallSubGraphOptimisation", 0, 53.0},
                                  std::tuple{"replicateConstants", 0, 7.0}));
  EXPECT_DOUBLE_EQ(*b.phases[4].rss_diff_mb, 16.4961);
  EXPECT_DOUBLE_EQ(*b.phases[4].rss_total_mb, 2440.24);
  EXPECT_EQ(s.cache_hits, 0);
  EXPECT_TRUE(s.devices.empty());
  ExpectNoLoggingAdvice(s);
}

TEST(PublishedLogs, B02KerasFitCompilesTrainAndTestFunctionsWithElapsedTimes) {
  LogScanSummary s = Scan(SharedPublished("B02_ulhpc_tf2.6_sdk3.0_keras_fit_compile_log.txt"));
  EXPECT_EQ(s.compilations, 2);
  EXPECT_THAT(Modules(s),
              ElementsAre("a_inference_train_function_18311__XlaMustCompile_true_config_proto___n_"
                          "007_n_0...02_001_000__executor_type____.19234",
                          "a_inference_test_function_22828__XlaMustCompile_true_config_proto___n_"
                          "007_n_0...02_001_000__executor_type____.2593"));
  EXPECT_THAT(Durations(s), ElementsAre(244.2, 61.2));
  for (const ModuleBuild& b : s.builds) {
    EXPECT_EQ(b.framework, "tensorflow");
    EXPECT_TRUE(b.complete);
  }
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].device, "/device:IPU:0");
  EXPECT_EQ(s.devices[0].num_ipus, 1u);
  EXPECT_THAT(s.poplar_versions, ElementsAre("3.0.0"));
  EXPECT_EQ(s.builds_after_warmup, 0);
  ExpectNoLoggingAdvice(s);
  EXPECT_THAT(FormatLogScanText(s),
              HasSubstr("Verdict: 2 compilations (TensorFlow), 305.4 s in all"));
}

TEST(PublishedLogs, B03CompiledClusterLineIsOneCompilationOfUnknownDuration) {
  LogScanSummary s = Scan(SharedPublished("B03_eidf_tf2_sdk3.2_mnist_log.txt"));
  EXPECT_EQ(s.compilations, 1);
  ASSERT_EQ(s.builds.size(), 1u);
  EXPECT_EQ(s.builds[0].module, "");
  EXPECT_FALSE(s.builds[0].seconds);
  EXPECT_EQ(s.builds[0].line, 9u);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].num_ipus, 1u);
  EXPECT_THAT(s.poplar_versions, ElementsAre("3.2.0"));
  ExpectNoLoggingAdvice(s);
}

TEST(PublishedLogs, B04B05B06PopTorchGraphCompilationBars) {
  LogScanSummary b04 = Scan(SharedPublished("B04_eidf_poprun_poptorch_bert_pod64_log.txt"));
  ASSERT_EQ(b04.builds.size(), 1u);
  EXPECT_EQ(b04.compilations, 1);
  EXPECT_EQ(b04.builds[0].framework, "poptorch");
  EXPECT_DOUBLE_EQ(*b04.builds[0].seconds, 611);
  EXPECT_DOUBLE_EQ(*b04.builds[0].reported_seconds, 683.6591004971415);
  EXPECT_TRUE(b04.devices.empty());

  LogScanSummary b05 = Scan(SharedPublished("B05_eidf_poptorch_bert_multi_ipu_log.txt"));
  ASSERT_EQ(b05.builds.size(), 1u);
  EXPECT_DOUBLE_EQ(*b05.builds[0].seconds, 482);
  EXPECT_DOUBLE_EQ(*b05.builds[0].reported_seconds, 500.756152929971);

  LogScanSummary b06 = Scan(SharedPublished("B06_alcf_poptorch_bert_inference_log.txt"));
  ASSERT_EQ(b06.builds.size(), 1u);
  EXPECT_DOUBLE_EQ(*b06.builds[0].seconds, 1);
  EXPECT_TRUE(b06.builds[0].complete);
  for (const auto* s : {&b04, &b05, &b06}) ExpectNoLoggingAdvice(*s);
}

TEST(PublishedLogs, B07CompilerInfoLinesAreTwoCompilations) {
  LogScanSummary s = Scan(SharedPublished("B07_tutorials_tf2_keras_sdk2.0_2020-11_log.txt"));
  EXPECT_EQ(s.compilations, 2);
  ASSERT_EQ(s.builds.size(), 2u);
  EXPECT_EQ(s.builds[0].line, 29u);
  EXPECT_EQ(s.builds[1].line, 37u);
  EXPECT_THAT(Durations(s), ElementsAre(std::nullopt, std::nullopt));
  ExpectNoLoggingAdvice(s);
}

TEST(PublishedLogs, B08LoadingExecutableIsALoadNotACompilation) {
  LogScanSummary s = Scan(SharedPublished("B08_tutorials_recompilation_ending_phase_line.txt"));
  EXPECT_EQ(s.compilations, 0);
  EXPECT_TRUE(s.builds.empty());
  EXPECT_EQ(s.executable_loads, 1);
  EXPECT_DOUBLE_EQ(s.executable_load_ms, 607);
  EXPECT_THAT(FormatLogScanText(s), HasSubstr("1 executable load (607 ms)"));
  ExpectNoLoggingAdvice(s);
}

TEST(PublishedLogs, B09B10B11AttachedToInItsThreeForms) {
  LogScanSummary b09 = Scan(SharedPublished("B09_tfdocs_sdk1.2_attached_to_ipu_0.txt"));
  LogScanSummary b10 = Scan(SharedPublished("B10_tfdocs_sdk1.2_attached_to_ipus_24_sharded.txt"));
  LogScanSummary b11 = Scan(SharedPublished("B11_tfdocs_0.9.115_attached_to_ipus_list.txt"));
  for (const auto* s : {&b09, &b10, &b11}) {
    EXPECT_EQ(s->compilations, 0);
    ASSERT_EQ(s->devices.size(), 1u);
    EXPECT_EQ(s->devices[0].device, "/device:IPU:0");
    EXPECT_EQ(s->devices[0].line, 2u);
  }
  EXPECT_EQ(b09.devices[0].num_ipus, 1u);
  EXPECT_EQ(b10.devices[0].ipus, "IPUs: 24");
  EXPECT_FALSE(b10.devices[0].num_ipus);  // device 24 is a multi-IPU device of unstated size
  EXPECT_EQ(b11.devices[0].num_ipus, 4u);
  // Nothing compiled and nothing says how to see it: here more logging helps.
  EXPECT_THAT(FormatLogScanText(b09), HasSubstr("To see compilations"));
}

TEST(PublishedLogs, B12PrecompiledProgramIsOnePrecompilation) {
  LogScanSummary s =
      Scan(SharedPublished("B12_tfdocs_sdk2.0_precompiled_poplar_program_saved.txt"));
  EXPECT_EQ(s.compilations, 1);
  EXPECT_EQ(s.precompiled, 1);
  ASSERT_EQ(s.builds.size(), 1u);
  EXPECT_EQ(s.builds[0].kind, BuildKind::kPrecompile);
  EXPECT_EQ(s.builds[0].cache_file, "/tmp/executables/277a08fe4c20b50.poplar_exec");
}

TEST(PublishedLogs, L01TqdmFramesWithAnsiCodesAreOneCompilation) {
  LogScanSummary s =
      Scan(OurPublished("L01_tutorials_poptorch_tut1_walkthrough_graph_compilation_ansi.log"));
  ASSERT_EQ(s.builds.size(), 1u);  // the epochs and batches bars are not compilations
  EXPECT_EQ(s.builds[0].framework, "poptorch");
  EXPECT_TRUE(s.builds[0].complete);
  EXPECT_DOUBLE_EQ(*s.builds[0].seconds, 39);
  EXPECT_EQ(s.builds[0].line, 4u);
}

TEST(PublishedLogs, L02L03CompilingModelThenBarThenCompiledLoaded) {
  LogScanSummary l02 =
      Scan(OurPublished("L02_tutorials_poptorch_vit_training_compiled_loaded.log"));
  ASSERT_EQ(l02.builds.size(), 1u);
  EXPECT_DOUBLE_EQ(*l02.builds[0].seconds, 14);
  EXPECT_DOUBLE_EQ(*l02.builds[0].reported_seconds, 31.030112855136395);
  EXPECT_EQ(l02.builds[0].line, 1u);
  LogScanSummary l03 =
      Scan(OurPublished("L03_tutorials_poptorch_vit_evaluation_compiled_loaded.log"));
  ASSERT_EQ(l03.builds.size(), 1u);
  EXPECT_DOUBLE_EQ(*l03.builds[0].seconds, 5);
  EXPECT_DOUBLE_EQ(*l03.builds[0].reported_seconds, 18.375397488474846);
}

TEST(PublishedLogs, L04JaxLibcintCompilesEightModulesOfTwoFunctions) {
  LogScanSummary s = Scan(OurPublished("L04_pyscf-ipu_jax_libcint_eight_compilations.log"));
  EXPECT_EQ(s.compilations, 8);
  EXPECT_THAT(Modules(s), ElementsAre("jit_ipu_intor1e.0", "jit_ipu_intor1e.1", "jit_ipu_intor1e.2",
                                      "jit_ipu_intor1e.3", "jit_ipu_intor1e.4", "jit_ipu_intor1e.5",
                                      "jit_ipu_getints4c.6", "jit_ipu_getints4c.7"));
  EXPECT_THAT(Durations(s), ElementsAre(15.6, 15.9, 16.0, 15.8, 15.8, 15.5, 15.8, 15.6));
  for (const ModuleBuild& b : s.builds) EXPECT_EQ(b.framework, "jax");
  EXPECT_EQ(s.builds_after_warmup, 0);
  EXPECT_THAT(s.notes, ElementsAre(HasSubstr("6 compilations of 'jit_ipu_intor1e'"),
                                   HasSubstr("2 compilations of 'jit_ipu_getints4c'")));
}

TEST(PublishedLogs, L05JaxDftOneCompilationAndATqdmBarThatIsNot) {
  LogScanSummary s = Scan(OurPublished("L05_pyscf-ipu_jax_dft_one_compilation.log"));
  EXPECT_EQ(s.compilations, 1);
  EXPECT_THAT(Modules(s), ElementsAre("jit_do_compute.2"));
  EXPECT_THAT(Durations(s), ElementsAre(100.6));
}

TEST(PublishedLogs, L06PopartLinesWithoutCompilationAskForLogging) {
  LogScanSummary s = Scan(OurPublished("L06_popart_docs_sdk3_log_format_no_compile.log"));
  EXPECT_EQ(s.compilations, 0);
  EXPECT_THAT(FormatLogScanText(s), HasSubstr("To see compilations"));
}

TEST(PublishedLogs, L07HungCompilationIsNotFinished) {
  LogScanSummary s =
      Scan(OurPublished("L07_poptorch_issue8_sdk3.0_graph_compilation_hangs_at_84.log"));
  ASSERT_EQ(s.builds.size(), 1u);
  EXPECT_FALSE(s.builds[0].complete);
  EXPECT_DOUBLE_EQ(*s.builds[0].progress, 84);
  EXPECT_DOUBLE_EQ(*s.builds[0].seconds, 4199);
  EXPECT_THAT(FormatLogScanText(s), HasSubstr("1 not finished in the log"));
  EXPECT_THAT(s.notes, ElementsAre(HasSubstr("(last shown at 84%)")));
}

TEST(PublishedLogs, JsonCarriesCompilationsDurationsLoadsAndDevices) {
  LogScanSummary s = Scan(SharedPublished("B02_ulhpc_tf2.6_sdk3.0_keras_fit_compile_log.txt"));
  auto doc = nlohmann::json::parse(FormatLogScanJson(s));
  EXPECT_EQ(doc["format_version"]["major"], 2);
  EXPECT_EQ(doc["compilations"], 2);
  EXPECT_EQ(doc["cache_hits"], 0);
  EXPECT_EQ(doc["devices"].size(), 1u);
  EXPECT_EQ(doc["devices"][0]["ipus"], 1);
  EXPECT_DOUBLE_EQ(doc["builds"][0]["seconds"].get<double>(), 244.2);
  EXPECT_EQ(doc["builds"][0]["seconds_from"], "progress bar");
  EXPECT_EQ(doc["builds"][1]["framework"], "tensorflow");
}

TEST(LogscanCli, EveryPublishedLogAtOnceAndBinaryInput) {
  std::string all;
  for (const char* name : {"B01_ipu-hpc-cookbook_poplar_engine_trace_phases.log",
                           "B02_ulhpc_tf2.6_sdk3.0_keras_fit_compile_log.txt"})
    all += " '" + SharedPublished(name) + "'";
  all += " '" + OurPublished("L04_pyscf-ipu_jax_libcint_eight_compilations.log") + "'";
  auto run = cli_test::Tileprof("logscan --format=json" + all);
  ASSERT_EQ(run.status, 0) << run.out;
  auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["compilations"], 1 + 2 + 8);
  EXPECT_EQ(doc["files"].size(), 3u);

  std::string binary = ::testing::TempDir() + "/core.log";
  std::FILE* f = std::fopen(binary.c_str(), "wb");
  ASSERT_TRUE(f);
  std::fwrite("Begin\0\x1b[2J\xff", 1, 11, f);
  std::fclose(f);
  auto bad = cli_test::Tileprof("logscan '" + binary + "'");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out,
            "tileprof: logscan: " + binary +
                ": not a text log: a NUL byte at byte offset 5 (\"\\x00\\x1b[2J\\xff\")\n");
  auto missing = cli_test::Tileprof("logscan /nonexistent/x.log");
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent/x.log: No such file or directory"));
}

}  // namespace
}  // namespace tileprof::analyzer
