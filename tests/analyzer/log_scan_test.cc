// Log scanning on lines built for each rule. The lines are constructed here
// in the formats the published logs show (log_scan_published_test.cc reads
// those logs themselves); each test says which format it builds.
#include "analyzer/log_scan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analyzer/log_builds.h"
#include "analyzer/log_lines.h"

namespace tileprof::analyzer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

LogScanSummary ScanText(std::string_view text, std::string_view file = "x.log",
                        LogScanOptions options = {}) {
  LogScanner scanner(options);
  scanner.Scan(text, file);
  return scanner.Finish();
}

// A training run that compiles its step, is fine for two steps, then compiles
// the same module again under another hash (say the last batch was smaller).
// TensorFlow VLOG lines with TensorFlow's prefix (spec executable-cache.md 5).
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
  ParsedLog parsed = ParseLog(kRecompilingLog);
  const auto& events = parsed.events;
  ASSERT_EQ(events.size(), 10u);
  EXPECT_EQ(events[0].kind, LogEventKind::kPoplarVersion);
  EXPECT_EQ(events[0].module, "3.2.0");
  EXPECT_EQ(events[1].kind, LogEventKind::kDeviceAttached);
  EXPECT_EQ(events[1].ipus, "1 IPU with Poplar device ID: 0");
  EXPECT_EQ(events[2].kind, LogEventKind::kBeginCompile);
  EXPECT_EQ(events[2].module, "cluster_1");
  EXPECT_EQ(events[2].hash, "0xabc123");
  EXPECT_EQ(events[2].line, 3u);
  EXPECT_EQ(events[3].kind, LogEventKind::kCacheMiss);
  EXPECT_EQ(events[3].path, "/tmp/cache/1f2e.poplar_exec");
  EXPECT_EQ(events[4].kind, LogEventKind::kProgressStart);
  // Two frames of one physical line, the erase-line code removed.
  EXPECT_EQ(events[5].kind, LogEventKind::kProgressFrame);
  EXPECT_EQ(events[5].phase, "Step: Hlo Optimizations");
  EXPECT_DOUBLE_EQ(*events[5].percent, 10);
  EXPECT_EQ(events[6].line, 6u);
  EXPECT_DOUBLE_EQ(*events[6].seconds, 30);
  EXPECT_EQ(events[7].kind, LogEventKind::kEndCompile);
  EXPECT_EQ(events[7].hash, "0xdef456");
  ASSERT_TRUE(events[2].timestamp && events[7].timestamp);
  EXPECT_DOUBLE_EQ(*events[7].timestamp - *events[2].timestamp, 30.0);
}

TEST(ScanLogs, FlagsTheRecompilationAfterWarmupWithItsCost) {
  auto summary = ScanText(kRecompilingLog, "train.log");
  ASSERT_EQ(summary.builds.size(), 2u);
  EXPECT_EQ(summary.warmup_events, 1u);
  EXPECT_EQ(summary.builds_after_warmup, 1);
  EXPECT_NEAR(summary.seconds_after_warmup, 20.5, 1e-6);
  EXPECT_TRUE(summary.builds[0].cache_miss);
  // Begin/End timestamps give 30 s; the bar's last frame also says 30 s.
  EXPECT_DOUBLE_EQ(*summary.builds[0].seconds, 30);
  ASSERT_EQ(summary.modules.size(), 1u);
  EXPECT_EQ(summary.modules[0].compilations, 2);
  EXPECT_THAT(summary.modules[0].hashes, ElementsAre("0xabc123", "0x777777"));

  std::string text = FormatLogScanText(summary);
  EXPECT_THAT(text, HasSubstr("Verdict: 2 compilations (TensorFlow), 50.5 s in all"));
  EXPECT_THAT(text, HasSubstr("Verdict: module 'cluster_1' was compiled under 2 different hashes"));
  EXPECT_THAT(text, HasSubstr("1 build(s) after warm-up cost 20.5 s"));
  EXPECT_THAT(text, HasSubstr("train.log:10  compile of 'cluster_1' (Hash: 0x777777)  20.5 s"));
}

TEST(ScanLogs, CacheHitsAreLoadsNotCompilations) {
  // glog prefixes; the Loading executable line as the recompilation note quotes it.
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
  auto summary = ScanText(kWarmCache, "eval.log");
  EXPECT_EQ(summary.cache_hits, 2);
  EXPECT_EQ(summary.compilations, 0);
  EXPECT_EQ(summary.executable_loads, 2);
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
  auto summary = ScanText(kOnce);
  EXPECT_EQ(summary.builds_after_warmup, 0);
  EXPECT_EQ(summary.unmatched_ends, 1);
  EXPECT_THAT(FormatLogScanText(summary), HasSubstr("No recompilation: 2 named module(s)"));

  LogScanOptions one;
  one.warmup_events = 1;
  auto strict = ScanText(kOnce, "x.log", one);
  EXPECT_EQ(strict.builds_after_warmup, 1);
  EXPECT_EQ(strict.builds_after_warmup_unknown_time, 1);
}

TEST(ScanLogs, JsonCarriesTheSameData) {
  auto summary = ScanText(kRecompilingLog, "train.log");
  auto doc = nlohmann::json::parse(FormatLogScanJson(summary));
  EXPECT_EQ(doc["format_version"]["major"], 2);
  EXPECT_EQ(doc["after_warmup"]["builds"], 1);
  EXPECT_EQ(doc["modules"][0]["recompiled"], true);
  EXPECT_EQ(doc["builds"][1]["line"], 10);
  EXPECT_EQ(doc["builds"][1]["after_warmup"], true);
  EXPECT_EQ(doc["devices"][0]["device"], "/device:IPU:0");
  EXPECT_EQ(doc["poplar_versions"][0], "3.2.0");
}

TEST(ScanLogs, StreamingAndParsedEventsAgree) {
  ParsedLog parsed = ParseLog(kRecompilingLog);
  auto from_events = ScanLogs({parsed.events}, {"train.log"}, {});
  auto streamed = ScanText(kRecompilingLog, "train.log");
  EXPECT_EQ(FormatLogScanJson(from_events).size() > 0, true);
  ASSERT_EQ(from_events.builds.size(), streamed.builds.size());
  for (size_t i = 0; i < streamed.builds.size(); ++i) {
    EXPECT_EQ(from_events.builds[i].module, streamed.builds[i].module);
    EXPECT_EQ(from_events.builds[i].seconds, streamed.builds[i].seconds);
  }
}

// Poplar SDK 3 spdlog prefix ("<ISO>Z PO:ENGINE <pid>.<tid> I: ", the format
// PopART documents and shares with Poplar) with CR LF line ends, and PO:PERF
// lines completing "Ending phase" lines that carry no figures.
TEST(ScanLogs, PoplarSdk3PhasesAndPerfLines) {
  constexpr std::string_view kSdk3 =
      "2023-06-01T10:00:00.000000Z PO:ENGINE 4242.4242 I: Starting phase: graphConstruction\r\n"
      "2023-06-01T10:00:02.000000Z PO:ENGINE 4242.4242 I: Ending phase: graphConstruction\r\n"
      "2023-06-01T10:00:02.000000Z PO:PERF 4242.4242 I: graphConstruction: real 2000 ms, "
      "RSS 512.5 MiB\r\n"
      "2023-06-01T10:00:02.100000Z PO:ENGINE 4242.4242 I: Starting phase: compileGraph\r\n"
      "2023-06-01T10:00:02.200000Z PO:ENGINE 4242.4242 I:   Starting phase: layout\r\n"
      "2023-06-01T10:00:05.000000Z PO:ENGINE 4242.4242 I:   Ending phase: layout\r\n"
      "2023-06-01T10:00:05.000000Z PO:PERF 4242.4242 I: layout: real 2800 ms, RSS 900 MiB\r\n"
      "2023-06-01T10:00:09.000000Z PO:ENGINE 4242.4242 I: Ending phase: compileGraph (duration "
      "6900 ms; diff RSS: 400 MiB; total RSS: 1024 MiB)\r\n";
  auto s = ScanText(kSdk3);
  ASSERT_EQ(s.builds.size(), 1u);
  const ModuleBuild& b = s.builds[0];
  EXPECT_EQ(b.framework, "poplar");
  EXPECT_TRUE(b.complete);
  ASSERT_EQ(b.phases.size(), 3u);
  EXPECT_EQ(b.phases[0].name, "graphConstruction");
  EXPECT_DOUBLE_EQ(*b.phases[0].ms, 2000);
  EXPECT_DOUBLE_EQ(*b.phases[0].rss_total_mb, 512.5);
  EXPECT_EQ(b.phases[1].name, "layout");
  EXPECT_EQ(b.phases[1].depth, 1);
  EXPECT_DOUBLE_EQ(*b.phases[1].ms, 2800);
  EXPECT_EQ(b.phases[2].depth, 0);
  EXPECT_DOUBLE_EQ(*b.phases[2].rss_total_mb, 1024);
  EXPECT_DOUBLE_EQ(*b.seconds, 8.9);  // the outermost phases: 2,000 + 6,900 ms
  EXPECT_EQ(s.graph_constructions, 1);
}

// absl's padded thread id, mpirun's tags, ANSI colours around the level and
// Keras progress lines redrawn with '\b' and '\r' around a compilation.
TEST(ScanLogs, PrefixesColoursAndInterleavedKerasLines) {
  constexpr std::string_view kMixed =
      "[1,0]<stderr>:I0601 10:00:00.000000   77 poplar_compiler.cc:1201] \33[32mBegin XLA "
      "compilation: m  (Hash: 0x1) for ordinal  0\33[0m\n"
      "  1/100 [..............................] - ETA: 0s\b\b\b\b\r 50/100 [=====>....] - ETA: 0s\n"
      "[1,0]<stderr>:I0601 10:00:07.500000   77 poplar_compiler.cc:1900] End XLA compilation: m "
      "(Hash: 0x2)\n";
  auto s = ScanText(kMixed);
  ASSERT_EQ(s.builds.size(), 1u);
  EXPECT_EQ(s.builds[0].module, "m");
  EXPECT_DOUBLE_EQ(*s.builds[0].seconds, 7.5);
  EXPECT_TRUE(s.builds[0].complete);
}

// PopART's INFO lines (willow/src/popx/irlowering.cpp, session.cpp) in the
// older spdlog format.
TEST(ScanLogs, PopartCompileAndCacheLines) {
  constexpr std::string_view kPopart =
      "[2021-03-01 10:00:00.000] [popart:devicex] [info] Starting compilation\n"
      "[2021-03-01 10:00:42.500] [popart:devicex] [info] Graph compiled\n"
      "[2021-03-01 10:00:43.000] [popart:devicex] [info] Saving serialized Executablex to "
      "/c/a.popef\n"
      "[2021-03-01 10:05:00.000] [popart:session] [info] Loading serialized PopART executable "
      "from /c/a.popef\n";
  auto s = ScanText(kPopart);
  ASSERT_EQ(s.builds.size(), 2u);
  EXPECT_EQ(s.builds[0].framework, "popart");
  EXPECT_DOUBLE_EQ(*s.builds[0].seconds, 42.5);
  EXPECT_EQ(s.builds[0].cache_file, "/c/a.popef");
  EXPECT_EQ(s.builds[1].kind, BuildKind::kLoad);
  EXPECT_EQ(s.cache_hits, 1);
  EXPECT_EQ(s.compilations, 1);
}

TEST(ScanLogs, BarWithoutItsFirstLineAndBarGoingBackwards) {
  constexpr std::string_view kBars =
      "[####      ] 40% Step: Graph Construction [Elapsed: 00:00:04.0]\n"
      "[##########] 100% Compilation Finished [Elapsed: 00:00:10.0]\n"
      "Graph compilation: 100%|##########| 100/100 [00:12<00:00]\n"
      "Graph compilation:   0%|          | 0/100 [00:00<?]\n"
      "Graph compilation:  50%|#####     | 50/100 [01:02<01:02]\n";
  auto s = ScanText(kBars);
  ASSERT_EQ(s.builds.size(), 3u);
  EXPECT_DOUBLE_EQ(*s.builds[0].seconds, 10);
  EXPECT_DOUBLE_EQ(*s.builds[1].seconds, 12);
  EXPECT_FALSE(s.builds[2].complete);
  EXPECT_DOUBLE_EQ(*s.builds[2].seconds, 62);
  EXPECT_THAT(FormatLogScanText(s), HasSubstr("No recompilation can be told"));
}

// An application's "Compiling the model..." line opens the PopTorch build
// its bar then fills; the bar's elapsed time is the duration.
TEST(ScanLogs, CompilingTheModelThenTheBar) {
  auto s = ScanText(
      "Compiling the model...\n"
      "Graph compilation: 100%|##########| 100/100 [02:03<00:00]\n"
      "Compiled/Loaded model in 130.5 secs\n");
  ASSERT_EQ(s.builds.size(), 1u);
  EXPECT_DOUBLE_EQ(*s.builds[0].seconds, 123);
  EXPECT_DOUBLE_EQ(*s.builds[0].reported_seconds, 130.5);
  EXPECT_EQ(s.builds[0].line, 1u);
  EXPECT_EQ(s.builds[0].kind, BuildKind::kCompile);
  // Without a bar the line cannot tell a compilation from a cache load.
  auto cached = ScanText("Compiling Model...\nCompiled/Loaded model in 3.5 secs\n");
  ASSERT_EQ(cached.builds.size(), 1u);
  EXPECT_EQ(cached.builds[0].kind, BuildKind::kCompileOrLoad);
  EXPECT_EQ(cached.compilations, 0);
  EXPECT_THAT(FormatLogScanText(cached), HasSubstr("1 compiled or loaded from the cache"));
}

// An adversarial log cannot make the scanner keep more than its bounds.
TEST(ScanLogs, KeepsAtMostItsBoundsAndSaysHowManyMore) {
  std::string text;
  for (size_t i = 0; i < LogScanner::Builds::kMaxBuilds + 5; ++i) text += "Compiling module m:\n";
  for (int i = 0; i < 300; ++i) text += "Starting phase: p" + std::to_string(i) + "\n";
  auto s = ScanText(text);
  EXPECT_EQ(s.builds.size(), LogScanner::Builds::kMaxBuilds);
  EXPECT_THAT(s.notes, ::testing::Contains(HasSubstr("5 more builds than the first 100000 kept")));
}

TEST(ParseLogLine, TakesEachPrefixApart) {
  LogLine tf = ParseLogLine(
      "2022-09-06 23:59:34.180032: I tensorflow/compiler/plugin/poplar/driver/"
      "poplar_platform.cc:43] Poplar version: 2.6.0",
      1);
  EXPECT_EQ(tf.level, 'I');
  EXPECT_EQ(tf.source, "tensorflow/compiler/plugin/poplar/driver/poplar_platform.cc");
  EXPECT_EQ(tf.message, "Poplar version: 2.6.0");
  LogLine poplar = ParseLogLine("09:38:52.878 15288 PO:ENGINE   [I]     Starting phase: x", 2);
  EXPECT_EQ(poplar.logger, "PO:ENGINE");
  EXPECT_EQ(poplar.indent, 4u);
  EXPECT_EQ(poplar.message, "Starting phase: x");
  EXPECT_DOUBLE_EQ(*poplar.timestamp, 9 * 3600 + 38 * 60 + 52.878);
  LogLine torch = ParseLogLine("[18:06:02.520] [poptorch:cpp] [warning] [TRACING-2] x", 3);
  EXPECT_EQ(torch.logger, "poptorch:cpp");
  EXPECT_EQ(torch.level, 'W');
  EXPECT_EQ(torch.message, "[TRACING-2] x");
  LogLine sdk3 = ParseLogLine("2022-05-18T12:39:14.459868Z popart:devicex 90915.91186 D: m", 4);
  EXPECT_EQ(sdk3.logger, "popart:devicex");
  EXPECT_EQ(sdk3.level, 'D');
  EXPECT_EQ(sdk3.message, "m");
  LogLine plain = ParseLogLine("50/50 [======] - 2s 32ms/step - loss: 2.8860", 5);
  EXPECT_EQ(plain.message, "50/50 [======] - 2s 32ms/step - loss: 2.8860");
}

TEST(MayHoldEvent, SkipsOrdinaryLinesAndKeepsEveryPhrase) {
  EXPECT_FALSE(
      MayHoldEvent("50/50 [==============================] - 2s 32ms/step - loss: 2.8860"));
  EXPECT_FALSE(MayHoldEvent("09:38:52.923 15288 PO:ENGINE   [T] BFS ends at depth 0"));
  for (std::string_view line :
       {"Begin XLA compilation: m", "Compiling module m:", "[#] 1% x [Elapsed: 00:00:00.1]",
        "Ending phase: p", "Starting phase: p", "Graph compilation:  1%|", "x PO:PERF 1.1 I: p",
        "Poplar version: 1", "Loaded m from f.poplar_exec", "A pre-compiled Poplar program has",
        "Begin Poplar graph construction.", "device /device:IPU:0 attached to IPU: 0",
        "I0501 1 poplar_compiler.cc:12] x", "Couldn't find f in executable cache",
        "Loading serialized PopART executable from f", "Returning CachedExecutable",
        "Compiled/Loaded model in 1 secs", "Saving serialized Executablex to f"}) {
    EXPECT_TRUE(MayHoldEvent(line)) << line;
  }
}

TEST(ParseLog, EmptyAndOddInputsAreHarmless) {
  EXPECT_TRUE(ParseLog("").events.empty());
  std::string junk(1000, '\r');
  junk += "Begin XLA compilation: \nEnding phase: x (duration \nLoaded  from .popef\n\33[";
  junk += "\nGraph compilation:%|\n[Elapsed: \n2022-01-01T00:00:00Z PO:PERF 1. I: real";
  auto summary = ScanText(junk);
  EXPECT_FALSE(FormatLogScanText(summary).empty());
  EXPECT_FALSE(FormatLogScanJson(summary).empty());
}

}  // namespace
}  // namespace tileprof::analyzer
