// TF_POPLAR_FLAGS, POPLAR_ENGINE_OPTIONS and --config as users write them.
#include "engine/session/options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tileprof::engine {
namespace {

using ::testing::HasSubstr;

TEST(PoplarFlags, ParsesTheSeedsFlags) {
  auto flags = ParsePoplarFlags(
      "  --executable_cache_path=/tmp/cachedir --use_ipu_model --ipu_model_tiles=8\t"
      "--tensor_map_file_path=./maps --show_progress_bar=false --max_compilation_threads=4 ");
  ASSERT_TRUE(flags) << flags.error().message();
  EXPECT_EQ(flags->executable_cache_path, "/tmp/cachedir");
  EXPECT_TRUE(flags->use_ipu_model);
  EXPECT_EQ(flags->ipu_model_tiles, 8);
  EXPECT_EQ(flags->tensor_map_file_path, "./maps");
  EXPECT_EQ(flags->show_progress_bar, "false");
  EXPECT_EQ(flags->max_compilation_threads, 4);
  EXPECT_EQ(flags->while_loop_brute_force_max_trip_count, 128);  // default
  EXPECT_TRUE(ParsePoplarFlags("")) << "empty is fine";
  EXPECT_TRUE(ParsePoplarFlags("--force_replicated_mode")) << "deprecated no-ops are accepted";
}

TEST(PoplarFlags, UnknownFlagsListTheValidOnes) {
  auto flags = ParsePoplarFlags("--executable_cache=/tmp/x");
  ASSERT_FALSE(flags);
  EXPECT_THAT(flags.error().message(),
              HasSubstr("unknown flag --executable_cache; valid flags: --help, "));
  EXPECT_THAT(flags.error().message(), HasSubstr("--executable_cache_path"));
}

TEST(PoplarFlags, BadValuesAreNamed) {
  EXPECT_THAT(ParsePoplarFlags("--ipu_model_tiles=many").error().message(),
              HasSubstr("--ipu_model_tiles: 'many' is not an integer"));
  EXPECT_THAT(ParsePoplarFlags("--use_ipu_model=yes").error().message(),
              HasSubstr("'yes' is not a boolean"));
  EXPECT_THAT(ParsePoplarFlags("--show_progress_bar=maybe").error().message(),
              HasSubstr("not one of true, false, auto"));
  EXPECT_THAT(ParsePoplarFlags("--use_synthetic_data --synthetic_data_categories=infeed,bogus")
                  .error()
                  .message(),
              HasSubstr("unknown category 'bogus'"));
  EXPECT_THAT(ParsePoplarFlags("--synthetic_data_initializer=random").error().message(),
              HasSubstr("only valid with --use_synthetic_data"));
  EXPECT_TRUE(ParsePoplarFlags("--use_synthetic_data --synthetic_data_initializer=-3"));
  EXPECT_THAT(ParsePoplarFlags("executable_cache_path=/x").error().message(),
              HasSubstr("is not a flag"));
  EXPECT_THAT(ParsePoplarFlags("--executable_cache_path").error().message(),
              HasSubstr("needs a value"));
}

TEST(PoplarFlags, UsageHasOneLinePerFlag) {
  std::string usage = PoplarFlagsUsage();
  EXPECT_THAT(usage, ::testing::StartsWith("Usage for TF_POPLAR_FLAGS is:\n\t--help: "));
  EXPECT_THAT(usage, HasSubstr("\n\t--executable_cache_path: "));
  EXPECT_EQ(std::count(usage.begin(), usage.end(), '\n'), 27);
}

TEST(EngineOptions, TheSeedsProfilingOptions) {
  auto options = ParseEngineOptions(
      R"({"autoReport.all":"true","autoReport.directory":"./report","debug.allowOutOfMemory":"false",
          "target.saveArchive":"archive.a","debug.computeInstrumentationLevel":"tile"})");
  ASSERT_TRUE(options) << options.error().message();
  EXPECT_TRUE(options->AutoReportAll());
  EXPECT_TRUE(options->OutputGraphProfile());
  EXPECT_TRUE(options->OutputExecutionProfile());
  EXPECT_EQ(options->AutoReportDirectory(), "./report");
  EXPECT_FALSE(options->AllowOutOfMemory());
  EXPECT_EQ(options->SaveArchive(), "archive.a");
  auto defaults = ParseEngineOptions("{}");
  ASSERT_TRUE(defaults);
  EXPECT_TRUE(defaults->AllowOutOfMemory()) << "the default since SDK 2.1";
  EXPECT_FALSE(defaults->OutputGraphProfile());
  auto typed = ParseEngineOptions(R"({"autoReport.outputGraphProfile": true})");
  ASSERT_TRUE(typed);
  EXPECT_TRUE(typed->OutputGraphProfile());
  EXPECT_FALSE(typed->OutputExecutionProfile());
}

TEST(EngineOptions, ErrorsNameTheKey) {
  EXPECT_THAT(ParseEngineOptions(R"({"autoReport.al":"true"})").error().message(),
              HasSubstr("unknown option 'autoReport.al'; valid options: "));
  EXPECT_THAT(ParseEngineOptions(R"({"autoReport.all":"yes"})").error().message(),
              HasSubstr("autoReport.all: 'yes' is not true or false"));
  EXPECT_THAT(
      ParseEngineOptions(R"({"debug.computeInstrumentationLevel":"chip"})").error().message(),
      HasSubstr("is not device, ipu, tile or vertex"));
  EXPECT_THAT(ParseEngineOptions("{'a':1}").error().message(), HasSubstr("not valid JSON"));
  EXPECT_THAT(ParseEngineOptions("[1]").error().message(), HasSubstr("expected a JSON object"));
  EXPECT_THAT(ParseEngineOptions(R"({"autoReport.directory":["x"]})").error().message(),
              HasSubstr("expected a string value"));
}

TEST(ReportConfig, TheSeedsConfiguration) {
  auto config = ParseReportConfig(R"({"profiling": true, "use_poplar_text_report": true,
      "profile_execution": "tile", "report_directory": "reports", "max_report_size": 4096,
      "device_connection": "pre-compile", "ipu_version": "ipu2"})");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_TRUE(config->CompileEvents());
  EXPECT_TRUE(config->IoEvents());
  EXPECT_TRUE(config->ExecuteEvents());
  EXPECT_EQ(config->profile_execution, ExecutionProfile::kTile);
  EXPECT_EQ(config->ReportExtension(), "txt");
  EXPECT_EQ(config->max_report_size, 4096u);
  EXPECT_EQ(config->device_connection, "pre-compile");
  ReportConfig defaults;
  EXPECT_EQ(defaults.max_report_size, 0x10000000u);
  EXPECT_EQ(defaults.ReportExtension(), "json");
  EXPECT_FALSE(defaults.CompileEvents());
  auto events_only = ParseReportConfig(R"({"enable_ipu_events": true, "profile_execution": true})");
  ASSERT_TRUE(events_only);
  EXPECT_TRUE(events_only->CompileEvents());
  EXPECT_FALSE(events_only->IoEvents());
  EXPECT_EQ(events_only->profile_execution, ExecutionProfile::kDevice);
}

TEST(ReportConfig, ErrorsNameTheOption) {
  EXPECT_THAT(ParseReportConfig(R"({"profilng": true})").error().message(),
              HasSubstr("unknown option 'profilng'; valid options: profiling, "));
  EXPECT_THAT(ParseReportConfig(R"({"profiling": "yes"})").error().message(),
              HasSubstr("profiling: expected"));
  EXPECT_THAT(ParseReportConfig(R"({"profile_execution": "cycle"})").error().message(),
              HasSubstr("profile_execution: expected"));
  EXPECT_THAT(ParseReportConfig(R"({"max_report_size": -1})").error().message(),
              HasSubstr("non-negative integer"));
  EXPECT_THAT(ParseReportConfig(R"({"ipu_version": "ipu3"})").error().message(),
              HasSubstr("'ipu3'"));
}

TEST(CompileKeyText, ProfilingAndReportsNeverChangeIt) {
  auto plain = ParsePoplarFlags("");
  auto cached = ParsePoplarFlags(
      "--executable_cache_path=/c --tensor_map_file_path=/m --show_progress_bar=true "
      "--max_compilation_threads=2");
  auto profiled = ParseEngineOptions(R"({"autoReport.all":"true","debug.instrument":"true"})");
  auto none = ParseEngineOptions("{}");
  ASSERT_TRUE(plain && cached && profiled && none);
  EXPECT_EQ(CompileKeyText(*plain, *none), CompileKeyText(*cached, *profiled));
  auto model_tiles = ParsePoplarFlags("--ipu_model_tiles=4");
  auto nans = ParsePoplarFlags("--allow_nans");
  ASSERT_TRUE(model_tiles && nans);
  EXPECT_NE(CompileKeyText(*plain, *none), CompileKeyText(*model_tiles, *none));
  EXPECT_NE(CompileKeyText(*plain, *none), CompileKeyText(*nans, *none));
  EXPECT_THAT(CompileKeyText(*plain, *none), HasSubstr("ipu_model_tiles=-1\n"));
}

}  // namespace
}  // namespace tileprof::engine
