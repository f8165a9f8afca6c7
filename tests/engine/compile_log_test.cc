// The compiler's log lines and progress bar print what the original prints,
// and tileprof's own logscan reads them back.
#include "engine/compiler/compile_log.h"
#include "engine/compiler/progress_bar.h"

#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyzer/log_scan.h"
#include "tests/engine/capture.h"

namespace tileprof::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

// Everything written to a FILE*, read back.
using tileprof::testing::Capture;

TEST(CompileLog, PrintsTensorFlowLinesAtOrAboveTheLevel) {
  Capture capture;
  CompileLog log(capture.file(), LogLevel::kInfo);
  log.Info("poplar_compiler", "Begin Poplar graph construction.");
  log.Verbose("poplar_compiler", "not shown at INFO");
  EXPECT_THAT(capture.Text(),
              MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}: I "
                           "tileprof/poplar_compiler\\] Begin Poplar graph construction\\.\n"));
}

TEST(CompileLog, NullSinkAndLevels) {
  CompileLog quiet;
  EXPECT_FALSE(quiet.Enabled(LogLevel::kError));
  quiet.Info("x", "nothing happens");
  LogLevel level;
  EXPECT_TRUE(ParseLogLevel("verbose", &level));
  EXPECT_EQ(level, LogLevel::kVerbose);
  EXPECT_TRUE(ParseLogLevel("2", &level));
  EXPECT_EQ(level, LogLevel::kWarning);
  EXPECT_FALSE(ParseLogLevel("loud", &level));
}

TEST(PhaseScope, EndLineHasTheTechNotesShape) {
  EXPECT_EQ(PhaseEndText("Loading executable", 607, 614912),
            "Ending phase: Loading executable (duration 607 ms; diff RSS: 0.586426 MB)");
  EXPECT_EQ(PhaseEndText("graphConstruction", 0, -1048576),
            "Ending phase: graphConstruction (duration 0 ms; diff RSS: -1 MB)");
}

TEST(PhaseScope, LogscanReadsOurOwnLog) {
  Capture capture;
  {
    CompileLog log(capture.file(), LogLevel::kVerbose);
    log.Verbose("poplar_compiler",
                "Begin XLA compilation: m  (Hash: 0x00000000000001f0) for ordinal  0");
    { PhaseScope phase(log, "graphConstruction"); }
    log.Verbose("poplar_compiler", "End XLA compilation: m (Hash: 0x00000000000001f0)");
  }
  const std::string text = capture.Text();  // the events view it
  analyzer::ParsedLog parsed = analyzer::ParseLog(text);
  const std::vector<analyzer::LogEvent>& events = parsed.events;
  ASSERT_EQ(events.size(), 4u) << capture.Text();
  EXPECT_EQ(events[0].kind, analyzer::LogEventKind::kBeginCompile);
  EXPECT_EQ(events[0].module, "m");
  EXPECT_EQ(events[0].hash, "0x00000000000001f0");
  EXPECT_EQ(events[1].kind, analyzer::LogEventKind::kPhaseStart);
  EXPECT_EQ(events[2].kind, analyzer::LogEventKind::kPhaseEnd);
  EXPECT_EQ(events[2].phase, "graphConstruction");
  ASSERT_TRUE(events[2].seconds.has_value());
  EXPECT_TRUE(events[0].timestamp.has_value());
  EXPECT_EQ(events[3].kind, analyzer::LogEventKind::kEndCompile);
}

TEST(ProgressBar, FramesMatchTheOriginal) {
  EXPECT_EQ(
      ProgressFrame(50, "Step: Graph Construction", std::chrono::milliseconds(12'345)),
      "\33[2K[#########################                         ] 50% Step: Graph Construction "
      "[Elapsed: 00:00:12.3]\r");
  EXPECT_EQ(ProgressFrame(100, "Compilation Finished", std::chrono::milliseconds(3'723'456)),
            "\33[2K[##################################################] 100% Compilation Finished "
            "[Elapsed: 01:02:03.4]\r");
  EXPECT_EQ(ProgressFrame(3, "x", std::chrono::milliseconds(0)).substr(4, 3), "[# ");
}

TEST(ProgressBar, StageWeightsSumToAHundred) {
  EXPECT_EQ(CompileProgressPercent(CompileStage::kHloOptimizations, 0, 0), 0);
  EXPECT_EQ(CompileProgressPercent(CompileStage::kPrePlanning, 1, 1), 4);
  EXPECT_EQ(CompileProgressPercent(CompileStage::kGraphConstruction, 1, 2), 22);
  EXPECT_EQ(CompileProgressPercent(CompileStage::kGraphCompilation, 10, 10), 100);
  EXPECT_EQ(CompileProgressPercent(CompileStage::kGraphCompilation, 20, 10), 100);
  EXPECT_EQ(CompileProgressPercent(CompileStage::kFinished, 0, 0), 100);
}

TEST(ProgressBar, HeaderRedrawsAndFinalNewline) {
  Capture capture;
  {
    ProgressBar bar(capture.file(), "jit_f", std::chrono::milliseconds(1));
    bar.Set(CompileStage::kGraphConstruction, 5, 10);
  }
  std::string text = capture.Text();
  EXPECT_THAT(text, ::testing::StartsWith("Compiling module jit_f:\n\33[2K["));
  EXPECT_THAT(text.substr(text.rfind("\33[2K")),
              MatchesRegex("\33\\[2K\\[#{50}\\] 100% Compilation Finished \\[Elapsed: "
                           "00:00:[0-9]{2}\\.[0-9]\\]\r\n"));
  analyzer::ParsedLog parsed = analyzer::ParseLog(text);
  const std::vector<analyzer::LogEvent>& events = parsed.events;
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].kind, analyzer::LogEventKind::kProgressStart);
  EXPECT_EQ(events[0].module, "jit_f");
}

TEST(ProgressBar, ModesAndTheAutoRule) {
  ProgressMode mode;
  ASSERT_TRUE(ParseProgressMode("auto", &mode));
  EXPECT_EQ(mode, ProgressMode::kAuto);
  EXPECT_FALSE(ParseProgressMode("sometimes", &mode));
  Capture capture;  // a file, not a terminal
  EXPECT_FALSE(ShouldShowProgress(ProgressMode::kAuto, capture.file(), false, 100));
  EXPECT_TRUE(ShouldShowProgress(ProgressMode::kOn, capture.file(), true, 0));
  EXPECT_FALSE(ShouldShowProgress(ProgressMode::kOff, capture.file(), false, 100));
}

}  // namespace
}  // namespace tileprof::engine

namespace tileprof::engine {
namespace {

TEST(PhaseScope, BothConstructionLinesCountOnce) {
  Capture capture;
  {
    CompileLog log(capture.file(), LogLevel::kVerbose);
    PhaseScope phase(log, "graphConstruction");
    log.Verbose("poplar_compiler.cc", "Begin Poplar graph construction.");
  }
  const std::string text = capture.Text();  // the events view it
  analyzer::ParsedLog parsed = analyzer::ParseLog(text);
  auto summary = analyzer::ScanLogs({parsed.events}, {"both.log"}, {});
  EXPECT_EQ(summary.graph_constructions, 1);
}

}  // namespace
}  // namespace tileprof::engine
