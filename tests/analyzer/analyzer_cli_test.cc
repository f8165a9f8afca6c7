// The analyzer subcommands end to end through the built binary: hist, top,
// oom, compare, plot, html, archive, and `compile --save-archive` /
// target.saveArchive; --format table|csv|json; errors and exit statuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analyzer_fixtures.h"
#include "cli_run.h"

namespace tileprof::analyzer {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace testing;  // NOLINT: the fixtures
using cli_test::Tileprof;

std::string Q(const std::string& path) { return "'" + path + "'"; }

TEST(AnalyzerCli, HistOnThePublishedReport) {
  auto run = Tileprof("hist " + Q(SharedPath("corpus/reports/adder-mk1.rep")));
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out,
            "  By Tile (Excluding Gaps):\n"
            "    Range (KB) Histogram (Excluding Gaps)               Count (tiles)\n"
            "         4 - 5 ****************************************  1,215\n"
            "         5 - 6 *                                             1\n"
            "\n"
            "    Maximum (Including Gaps): 49,184 (48.0 K) on tile 0\n"
            "    Maximum (Excluding Gaps): 5,780 (5.6 K) on tile 0\n"
            "    0 tile(s) out of memory\n");
  auto csv = Tileprof("hist --format=csv " + Q(SharedPath("corpus/reports/adder-mk1.rep")));
  EXPECT_EQ(csv.status, 0);
  EXPECT_THAT(csv.out, StartsWith("# histogram\nlo_kb,hi_kb,tiles\n4,5,1215\n5,6,1\n\n# maxima\n"));
}

TEST(AnalyzerCli, EveryCommandSpeaksJson) {
  const CompiledSample& s = OomSample();
  std::string db = Q(s.paths.at("sqlite"));
  std::string dir = TempDir().string();
  const std::string commands[] = {
      "hist " + db,
      "top -n 3 " + db,
      "oom " + db + " --tensor-map " +
          Q(SourcePath("tests/analyzer/data/oom_ipu1_tensor_map.json")),
      "compare " + Q(s.paths.at("text")) + " " + db,
      "plot " + db + " -o " + Q(dir + "/cli.svg"),
      "html " + db + " -o " + Q(dir + "/cli.html"),
  };
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    auto run = Tileprof(command + " --format=json");
    ASSERT_EQ(run.status, 0) << run.out;
    auto j = nlohmann::json::parse(run.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << run.out;
    EXPECT_TRUE(j.is_object());
  }
  EXPECT_THAT(ReadOrEmpty(dir + "/cli.svg"), HasSubstr("<svg"));
  EXPECT_THAT(ReadOrEmpty(dir + "/cli.html"), StartsWith("<!DOCTYPE html>"));
}

// A command reads of a SQLite profile only what it shows; what it prints and
// writes must be what it does for the same report in JSON, read whole. The
// two copies have one name in two directories (the format is told by the
// content), so printed paths and column widths agree too.
TEST(AnalyzerCli, SqliteAndJsonReportsGiveByteIdenticalOutput) {
  const CompiledSample& s = OomSample();
  const std::string map = Q(SourcePath("tests/analyzer/data/oom_ipu1_tensor_map.json"));
  std::map<std::string, fs::path> dirs;
  for (const char* format : {"json", "sqlite"}) {
    dirs[format] = TempDir() / (std::string("same_name_") + format);
    fs::create_directories(dirs[format]);
    fs::copy_file(s.paths.at(format), dirs[format] / "model.report",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(s.paths.at(format), dirs[format] / "other.report",
                  fs::copy_options::overwrite_existing);
  }
  const std::string commands[] = {
      "hist model.report",
      "hist model.report --including-gaps --bucket-kb 16 --format=csv",
      "top model.report",
      "top -n 1 model.report --format=json",
      "top -n 64 model.report --format=csv",
      "oom model.report",
      "oom model.report --tiles 3 --tensor-map " + map + " --format=json",
      "oom model.report --tiles 30 --bytes-per-tile 4096 --format=csv",
      "compare model.report other.report",
      "compare model.report other.report -n 3 --format=json",
      "plot model.report -o out.svg",
      "plot model.report --kind histogram -o out.svg",
      "plot model.report --kind categories -o out.svg",
      "html model.report -o out.html",
  };
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    std::map<std::string, std::string> out, file;
    for (const auto& [format, dir] : dirs) {
      fs::remove(dir / "out.svg");
      fs::remove(dir / "out.html");
      ShellRun run =
          Shell("cd " + Q(dir.string()) + " && " + TILEPROF_CLI + " " + command + " 2>&1");
      EXPECT_EQ(run.status, 0) << run.out;
      out[format] = run.out;
      file[format] =
          ReadOrEmpty((dir / "out.svg").string()) + ReadOrEmpty((dir / "out.html").string());
    }
    EXPECT_FALSE(out["json"].empty());
    EXPECT_EQ(out["sqlite"], out["json"]);
    EXPECT_EQ(file["sqlite"], file["json"]);
  }
}

TEST(AnalyzerCli, ErrorsNameTheFileAndExitNonZero) {
  std::string missing = (TempDir() / "no_such_report.json").string();
  for (std::string command : {"hist", "top", "oom", "plot -o x.svg", "html -o x.html"}) {
    SCOPED_TRACE(command);
    auto run = Tileprof(command + " " + Q(missing));
    EXPECT_EQ(run.status, 1);
    EXPECT_THAT(run.out, StartsWith("tileprof: " + command.substr(0, command.find(' ')) + ": " +
                                    missing + ": "));
  }
  auto compare =
      Tileprof("compare " + Q(SharedPath("corpus/reports/adder-mk1.rep")) + " " + Q(missing));
  EXPECT_EQ(compare.status, 1);
  EXPECT_THAT(compare.out, HasSubstr(missing));
  auto bad_format = Tileprof("hist --format=xml " + Q(SharedPath("corpus/reports/adder-mk1.rep")));
  EXPECT_EQ(bad_format.status, 2);
  auto bad_map = Tileprof("oom " + Q(OomSample().paths.at("json")) + " --tensor-map " + Q(missing));
  EXPECT_EQ(bad_map.status, 1);
  EXPECT_THAT(bad_map.out, HasSubstr(missing));
  auto archive = Tileprof("archive " + Q(SharedPath("corpus/reports/adder-mk1.rep")));
  EXPECT_EQ(archive.status, 1);
  EXPECT_THAT(archive.out, HasSubstr("not an ar archive"));
}

TEST(AnalyzerCli, CompileSavesThePerTileArchive) {
  fs::path dir = TempDir() / "compile_archive";
  fs::create_directories(dir);
  std::string model = Q(SourcePath("samples/oom/model.hlo"));
  std::string cd = "cd " + Q(dir.string()) + " && ";
  auto flag =
      Tileprof("compile " + model + " --target ipu1 --progress false --allow-out-of-memory -o " +
               Q((dir / "oom.rep").string()) + " --save-archive " + Q((dir / "flag.a").string()));
  ASSERT_EQ(flag.status, 0) << flag.out;
  auto env = Shell(
      cd +
      "POPLAR_ENGINE_OPTIONS='{\"target.saveArchive\":\"env.a\", \"debug.allowOutOfMemory\": "
      "\"true\"}' " +
      TILEPROF_CLI + " compile " + model + " --target ipu1 --progress false -o oom2.rep 2>&1");
  ASSERT_EQ(env.status, 0) << env.out;
  auto pipeline = [&](const std::string& archive) {
    return Shell(cd + "size -A " + archive + " | grep -e \".text\" | awk '{print $2}'").out;
  };
  std::string from_flag = pipeline("flag.a");
  EXPECT_EQ(from_flag, pipeline("env.a"));
  // The same numbers as the per-tile data of the same compile.
  std::string expected;
  for (const auto& t : OomSample().report.tiles)
    expected += std::to_string(t.ExcludingGaps()) + "\n";
  EXPECT_EQ(from_flag, expected);
  // And the archive command reads it back: the histogram is the report's.
  auto archive = Tileprof("archive " + Q((dir / "flag.a").string()));
  ASSERT_EQ(archive.status, 0) << archive.out;
  auto hist = Tileprof("hist " + Q((dir / "oom.rep").string()));
  std::string archive_hist = archive.out.substr(0, archive.out.find("    Maximum"));
  EXPECT_EQ(archive_hist, hist.out.substr(0, hist.out.find("    Maximum")));
}

}  // namespace
}  // namespace tileprof::analyzer
