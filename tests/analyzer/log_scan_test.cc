#include "analyzer/log_scan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tileprof::analyzer {
namespace {

using ::testing::HasSubstr;

// A training run that compiles its step, is fine for two steps, then compiles
// the same module again under another hash (say the last batch was smaller).
constexpr std::string_view kRecompilingLog =
    "2023-05-01 10:00:00.000000: I tensorflow/compiler/plugin/poplar/driver/poplar_platform.cc:43] "
    "Poplar version: 3.2.0 (1513789a51) Poplar package: b82480c629\n"
    "2023-05-01 10:00:00.500000: I "
    "tensorflow/compiler/plugin/poplar/driver/poplar_executor.cc:1619] "
    "TensorFlow device /device:IPU:0 attached to 1 IPU with Poplar device ID: 0\n"
    "2023-05-01 10:00:01.000000: I poplar_compiler.cc:1201] Begin XLA compilation: "
    "cluster_1  (Hash: 0xabc123) for ordinal  0\n"
    "2023-05-01 10:00:01.100000: I poplar_executable_cache.cc:88] Couldn't find "
    "/tmp/cache/1f2e.poplar_exec in executable cache\n"
    "Compiling module cluster_1:\n"
    "\33[2K[#####     ] 10% Step: Hlo Optimizations [Elapsed: 00:00:01.0]\r"
    "\33[2K[##########] 100% Compilation Finished [Elapsed: 00:00:30.0]\n"
    "2023-05-01 10:00:31.000000: I poplar_compiler.cc:1900] End XLA compilation: cluster_1 "
    "(Hash: 0xdef456)\n"
    "step 1 loss 0.5\n"
    "step 2 loss 0.4\n"
    "2023-05-01 10:01:00.000000: I poplar_compiler.cc:1201] Begin XLA compilation: "
    "cluster_1  (Hash: 0x777777) for ordinal  0\n"
    "2023-05-01 10:01:20.500000: I poplar_compiler.cc:1900] End XLA compilation: cluster_1 "
    "(Hash: 0x888888)\n";

TEST(ParseLog, RecognisesTheLinesAndTheirFields) {
  auto events = ParseLog(kRecompilingLog, "train.log");
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[0].kind, LogEventKind::kDeviceAttached);
  EXPECT_EQ(events[1].kind, LogEventKind::kBeginCompile);
  EXPECT_EQ(events[1].module, "cluster_1");
  EXPECT_EQ(events[1].hash, "0xabc123");
  EXPECT_EQ(events[1].line, 3u);
  EXPECT_EQ(events[2].kind, LogEventKind::kCacheMiss);
  EXPECT_EQ(events[2].path, "/tmp/cache/1f2e.poplar_exec");
  EXPECT_EQ(events[3].kind, LogEventKind::kProgressStart);
  EXPECT_EQ(events[4].kind, LogEventKind::kEndCompile);
  EXPECT_EQ(events[4].hash, "0xdef456");
  ASSERT_TRUE(events[1].timestamp && events[4].timestamp);
  EXPECT_DOUBLE_EQ(*events[4].timestamp - *events[1].timestamp, 30.0);
}

TEST(ScanLogs, FlagsTheRecompilationAfterWarmupWithItsCost) {
  auto summary = ScanLogs({ParseLog(kRecompilingLog, "train.log")}, {});
  ASSERT_EQ(summary.builds.size(), 2u);
  EXPECT_EQ(summary.warmup_events, 1u);
  EXPECT_EQ(summary.builds_after_warmup, 1);
  EXPECT_NEAR(summary.seconds_after_warmup, 20.5, 1e-6);
  EXPECT_TRUE(summary.builds[0].cache_miss);
  ASSERT_EQ(summary.modules.size(), 1u);
  EXPECT_EQ(summary.modules[0].compilations, 2);
  EXPECT_THAT(summary.modules[0].hashes, ::testing::ElementsAre("0xabc123", "0x777777"));

  std::string text = FormatLogScanText(summary);
  EXPECT_THAT(text, HasSubstr("Verdict: module 'cluster_1' was compiled under 2 different hashes"));
  EXPECT_THAT(text, HasSubstr("1 build(s) after warm-up cost 20.5 s"));
  EXPECT_THAT(text, HasSubstr("train.log:10  compile of 'cluster_1' (Hash: 0x777777)  20.5 s"));
}

TEST(ScanLogs, CacheHitsAreLoadsNotCompilations) {
  constexpr std::string_view kWarmCache =
      "I0501 10:00:01.000000 42 poplar_compiler.cc:1201] Begin XLA compilation: m  (Hash: 0x1) "
      "for ordinal  0\n"
      "I0501 10:00:02.250000 42 poplar_compiler.cc:1250] Loaded m from /c/1.poplar_exec\n"
      "Ending phase: Loading executable (duration 607 ms; diff RSS: 0.586426 MB)\n"
      "I0501 10:00:03.000000 42 poplar_compiler.cc:1201] Begin XLA compilation: m  (Hash: 0x1) "
      "for ordinal  0\n"
      "I0501 10:00:04.000000 42 poplar_compiler.cc:1250] Loaded m from /c/1.poplar_exec\n"
      "Ending phase: Loading executable (duration 400 ms; diff RSS: 0.1 MB)\n"
      "Loaded 5 images from disk\n";
  auto summary = ScanLogs({ParseLog(kWarmCache, "eval.log")}, {});
  EXPECT_EQ(summary.cache_hits, 2);
  ASSERT_EQ(summary.modules.size(), 1u);
  EXPECT_EQ(summary.modules[0].loads, 2);
  EXPECT_EQ(summary.modules[0].compilations, 0);
  ASSERT_TRUE(summary.builds[0].seconds);
  EXPECT_NEAR(*summary.builds[0].seconds, 1.25, 1e-6);
  EXPECT_EQ(summary.builds_after_warmup, 1);  // the second load, of a module already built
  ASSERT_EQ(summary.phase_notes.size(), 1u);
  EXPECT_EQ(summary.phase_notes[0], "phase 'Loading executable' ended 2 times, 1007 ms in all");
}

TEST(ScanLogs, ExplicitWarmupAndNoRecompilation) {
  constexpr std::string_view kOnce =
      "Begin XLA compilation: a  (Hash: 0x1) for ordinal  0\nEnd XLA compilation: a (Hash: 0x2)\n"
      "Begin XLA compilation: b  (Hash: 0x3) for ordinal  0\nEnd XLA compilation: b (Hash: 0x4)\n"
      "End XLA compilation: c (Hash: 0x5)\n";
  auto summary = ScanLogs({ParseLog(kOnce, "x.log")}, {});
  EXPECT_EQ(summary.builds_after_warmup, 0);
  EXPECT_EQ(summary.unmatched_ends, 1);
  EXPECT_THAT(FormatLogScanText(summary), HasSubstr("Verdict: no recompilation: 2 module(s)"));

  LogScanOptions one;
  one.warmup_events = 1;
  auto strict = ScanLogs({ParseLog(kOnce, "x.log")}, one);
  EXPECT_EQ(strict.builds_after_warmup, 1);
  EXPECT_EQ(strict.builds_after_warmup_unknown_time, 1);
}

TEST(ScanLogs, JsonCarriesTheSameData) {
  auto summary = ScanLogs({ParseLog(kRecompilingLog, "train.log")}, {});
  auto doc = nlohmann::json::parse(FormatLogScanJson(summary));
  EXPECT_EQ(doc["format_version"]["major"], 1);
  EXPECT_EQ(doc["after_warmup"]["builds"], 1);
  EXPECT_EQ(doc["modules"][0]["recompiled"], true);
  EXPECT_EQ(doc["builds"][1]["line"], 10);
  EXPECT_EQ(doc["builds"][1]["after_warmup"], true);
}

TEST(ParseLog, EmptyAndBinaryInputsAreHarmless) {
  EXPECT_TRUE(ParseLog("", "e").empty());
  std::string junk(1000, '\r');
  junk += "Begin XLA compilation: \nEnding phase: x (duration \nLoaded  from .popef";
  auto events = ParseLog(junk, "j");
  auto summary = ScanLogs({events}, {});
  EXPECT_FALSE(FormatLogScanText(summary).empty());
}

}  // namespace
}  // namespace tileprof::analyzer
