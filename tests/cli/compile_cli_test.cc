// `tileprof compile` end to end: the seed 004 calibration (scripts/calibrate
// against the published adder report) and the out-of-memory sample.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli_run.h"

namespace {

using ::testing::HasSubstr;
using tileprof::cli_test::CliRun;
using tileprof::cli_test::Tileprof;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tileprof_compile_cli_" + std::to_string(getpid()) + "_" + name))
      .string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The script is what writes docs/calibration.md; it exits 1 when any of
// issue 5's criteria fails, so a model change that breaks calibration fails
// here.
TEST(CompileCli, AdderMeetsTheSeed004Calibration) {
  const std::string output = TempPath("calibration.md");
  const std::string command = std::string(TILEPROF_SOURCE_DIR) + "/scripts/calibrate " +
                              TILEPROF_CLI + " --output " + output + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  const std::string table = ReadFile(output);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out << table;
  EXPECT_THAT(table, HasSubstr("0 criterion failure(s)."));
  EXPECT_EQ(Count(table, "| pass |"), 3u + 1 + 9 + 1 + 1)
      << table;  // graph, total, categories, max, histogram
  std::filesystem::remove(output);
}

TEST(CompileCli, OutOfMemorySampleWritesTheReportAndFails) {
  const std::string report = TempPath("oom.rep");
  CliRun run = Tileprof("compile " + std::string(TILEPROF_SOURCE_DIR) +
                        "/samples/oom/model.hlo --target ipu1 --progress=false -o " + report);
  EXPECT_EQ(run.status, 1) << run.out;
  EXPECT_THAT(run.out,
              HasSubstr("Out of memory: Cannot fit all variable data onto one or more tiles. "
                        "Profile saved to: " +
                        report));
  const std::string text = ReadFile(report);
  EXPECT_THAT(text, HasSubstr("    1 tile(s) out of memory\n"));
  // The five most-used tiles, the overflowing one first.
  EXPECT_EQ(Count(text, "\nTile # "), 5u) << text;
  const size_t first_block = text.find("\nTile # ");
  ASSERT_NE(first_block, std::string::npos);
  EXPECT_THAT(text.substr(first_block, 400), HasSubstr("Overflowed:"));
  std::filesystem::remove(report);

  CliRun allowed = Tileprof("compile " + std::string(TILEPROF_SOURCE_DIR) +
                            "/samples/oom/model.hlo --target ipu1 --progress=false "
                            "--allow-out-of-memory -o " +
                            report);
  EXPECT_EQ(allowed.status, 0) << allowed.out;
  EXPECT_THAT(ReadFile(report), HasSubstr("    1 tile(s) out of memory\n"));
  std::filesystem::remove(report);
}

}  // namespace
