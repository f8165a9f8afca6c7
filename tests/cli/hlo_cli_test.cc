// `tileprof hlo stats|fmt|fingerprint` end to end, on corpus modules.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using tileprof::cli_test::CliRun;
using tileprof::cli_test::Tileprof;

std::string Corpus(const std::string& name) {
  return std::string(TILEPROF_SHARED_DIR) + "/corpus/hlo/" + name;
}

const std::string kTrainStep = Corpus("module_0067.jit_train_step.26.before_optimizations.txt");
const std::string kMobilenet = Corpus("xla_tools_data_benchmarking_mobilenet_v2.hlo");

std::string WriteTemp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("tileprof_hlo_cli_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(HloStats, PrintsSizesOpcodesSignatureAndFlops) {
  CliRun run = Tileprof("hlo stats " + kTrainStep);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("module        jit_train_step.26\n"));
  EXPECT_THAT(run.out, HasSubstr("\nparameters    "));
  EXPECT_THAT(run.out, HasSubstr("\ndot FLOPs     "));
  EXPECT_THAT(run.out, HasSubstr("\nopcodes"));
}

TEST(HloStats, JsonAgreesWithAHandCount) {
  // One dot of [2,3] x [3,4]: 2 * 8 outputs * 3 contracted = 48 FLOPs.
  std::string path = WriteTemp("dot.hlo", R"(HloModule m
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  c = f32[] constant({...})
  ROOT d = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  CliRun run = Tileprof("hlo stats --format=json " + path);
  ASSERT_EQ(run.status, 0) << run.out;
  nlohmann::json json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["module"], "m");
  EXPECT_EQ(json[0]["instructions"], 4);
  EXPECT_EQ(json[0]["dots"], 1);
  EXPECT_EQ(json[0]["dot_flops"], 48);
  EXPECT_EQ(json[0]["elided_constants"], 1);
  EXPECT_EQ(json[0]["parameters"][1]["shape"], "f32[3,4]{1,0}");
  EXPECT_EQ(json[0]["result"], "f32[2,4]{1,0}");
  EXPECT_EQ(json[0]["opcodes"]["parameter"], 2);
  std::filesystem::remove(path);
}

TEST(HloFingerprint, OneLinePerModuleAndStableAcrossStyles) {
  CliRun a = Tileprof("hlo fingerprint " + kMobilenet);
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_THAT(a.out, MatchesRegex("0x[0-9a-f]{16}  IrToHlo\\.3979  .*\n"));
  // Printing in another style and re-reading must not move the fingerprint.
  CliRun long_style = Tileprof("hlo fmt --style=long " + kMobilenet);
  ASSERT_EQ(long_style.status, 0);
  std::string path = WriteTemp("long.hlo", long_style.out);
  CliRun b = Tileprof("hlo fingerprint --format=json " + path);
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_EQ(nlohmann::json::parse(b.out)[0]["fingerprint"], a.out.substr(0, 18));
  std::filesystem::remove(path);
}

TEST(HloFmt, LevelThreeRenamesAndLevelFiveKeepsOnlyTheSignature) {
  CliRun level3 = Tileprof("hlo fmt --level=3 " + kTrainStep);
  ASSERT_EQ(level3.status, 0);
  EXPECT_THAT(level3.out, HasSubstr("tmp_0 = "));
  EXPECT_THAT(level3.out, ::testing::Not(HasSubstr("metadata=")));
  CliRun level5 = Tileprof("hlo fmt --level=5 " + kTrainStep);
  ASSERT_EQ(level5.status, 0);
  EXPECT_LT(level5.out.size(), level3.out.size() / 10);
}

TEST(HloCli, ParseErrorsPointAtTheLine) {
  std::string path =
      WriteTemp("bad.hlo", "HloModule m\nENTRY e {\n  ROOT a = f32[2] frob(), x=1\n}\n");
  CliRun run = Tileprof("hlo stats " + path);
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr(path + ":3:19: error: unknown opcode 'frob'\n"
                                        "  ROOT a = f32[2] frob(), x=1\n"
                                        "                  ^\n"));
  std::filesystem::remove(path);
}

TEST(HloCli, MissingFileAndBadOptions) {
  CliRun missing = Tileprof("hlo fingerprint /nonexistent/x.hlo");
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent/x.hlo"));
  EXPECT_EQ(Tileprof("hlo fmt --level=9 " + kTrainStep).status, 2);
  EXPECT_EQ(Tileprof("hlo").status, 2);
}

}  // namespace
