// `tileprof events` end to end on the seed corpus of fuzz/trace_events,
// whose files protoc wrote from text (independent of our encoder).
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace {

using ::testing::HasSubstr;
using tileprof::cli_test::CliRun;
using tileprof::cli_test::Tileprof;

std::string Seed(const std::string& name) {
  return std::string(TILEPROF_SOURCE_DIR) + "/fuzz/trace_events/corpus/" + name;
}

TEST(EventsCli, PrintsEveryEventLikeExtractAllStrings) {
  CliRun run = Tileprof("events " + Seed("all_types.pb"));
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr(": Compile begin: cluster_1\n\n"));
  EXPECT_THAT(run.out, HasSubstr(": Compile end: cluster_1\nDuration: 1834012 us\nTarget:\n"));
  EXPECT_THAT(run.out, HasSubstr(": Host->Device\n{\"tensors\":[],\"total_size\":0}\n"));
  EXPECT_THAT(run.out, HasSubstr(": Execute: m\nx\n"));
  EXPECT_THAT(run.out, HasSubstr(": Load engine: m\n"));
}

TEST(EventsCli, ExtractsReportsAndTensorMaps) {
  CliRun reports = Tileprof("events --compile-reports " + Seed("end_and_execute.pb"));
  ASSERT_EQ(reports.status, 0);
  EXPECT_EQ(reports.out, "==> cluster_1 <==\nTarget:\n  Number of IPUs:         1\n");
  CliRun maps = Tileprof("events --tensor-maps --format=json " + Seed("end_and_execute.pb"));
  ASSERT_EQ(maps.status, 0);
  EXPECT_EQ(nlohmann::json::parse(maps.out)[0]["payload"], "{}");
  CliRun execute = Tileprof("events --execute-reports " + Seed("end_and_execute.pb"));
  EXPECT_EQ(execute.out, "==> m <==\nx\n");
}

TEST(EventsCli, JsonListsEveryField) {
  CliRun run = Tileprof("events --format=json " + Seed("all_types.pb"));
  ASSERT_EQ(run.status, 0);
  nlohmann::json json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json.size(), 5u);
  EXPECT_EQ(json[1]["type"], "COMPILE_END");
  EXPECT_EQ(json[1]["duration_us"], 1834012);
  EXPECT_EQ(json[3]["ordinal"], -1);
}

TEST(EventsCli, TruncatedFileShowsWhatItHasAndFails) {
  CliRun run = Tileprof("events " + Seed("truncated.pb"));
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr("Compile begin: cluster_1"));
  EXPECT_THAT(run.out, HasSubstr("tileprof: events: "));
  EXPECT_THAT(run.out, HasSubstr("is incomplete"));
  EXPECT_EQ(Tileprof("events /nonexistent.pb").status, 1);
}

}  // namespace
