// The executable cache end to end: `tileprof compile --executable-cache-path`
// and TF_POPLAR_FLAGS, four processes racing on one directory, pre-compile
// mode, `tileprof cache ls|verify|explain` and `tileprof info`.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli_run.h"
#include "tests/temp_path.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tileprof::cli_test::CliRun;
using tileprof::cli_test::Tileprof;

const std::string kModel = std::string(TILEPROF_SHARED_DIR) +
                           "/corpus/hlo/module_0067.jit_train_step.26.before_optimizations.txt";

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

std::vector<std::string> Executables(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".poplar_exec")) names.push_back(name);
  }
  return names;
}

class CacheCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tileprof::testing::FreshTempPath("tileprof_cache_cli_");
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  CliRun Compile(const std::string& model, const std::string& report,
                 const std::string& extra = "") {
    return Tileprof("compile " + model + " -o " + report + " --tiles-per-ipu 64 --progress false " +
                    extra);
  }

  std::string dir_;
};

TEST_F(CacheCli, SecondCompileLoadsAndWritesTheSameReport) {
  const std::string cache = Path("cache");
  CliRun first =
      Tileprof("compile " + kModel + " -o " + Path("a.rep") +
               " --tiles-per-ipu 64 --progress false " + "--executable-cache-path " + cache);
  ASSERT_EQ(first.status, 0) << first.out;
  EXPECT_THAT(first.out, HasSubstr("Compiled jit_train_step.26"));
  EXPECT_THAT(first.out, HasSubstr("Cache:    miss"));
  ASSERT_EQ(Executables(cache).size(), 1u);
  const std::string file = cache + "/" + Executables(cache)[0];

  // TF_POPLAR_FLAGS enables the same cache; VLOG 1 shows the original's line.
  CliRun second = Tileprof("compile " + kModel + " -o " + Path("b.rep") +
                           " --tiles-per-ipu 64 --progress true");
  ASSERT_EQ(second.status, 0);
  EXPECT_THAT(second.out, HasSubstr("Compiled"));  // no cache without the flag
  const std::string env =
      "env TF_POPLAR_FLAGS=--executable_cache_path=" + cache + " TF_POPLAR_VLOG_LEVEL=1 ";
  CliRun third = CliRun();
  {
    std::string command = env + TILEPROF_CLI + std::string(" compile ") + kModel + " -o " +
                          Path("c.rep") + " --tiles-per-ipu 64 --progress true 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) third.out.append(buffer, n);
    third.status = WEXITSTATUS(pclose(pipe));
  }
  ASSERT_EQ(third.status, 0) << third.out;
  EXPECT_THAT(third.out, HasSubstr("] Loaded jit_train_step.26 from " + file + "\n"));
  EXPECT_THAT(third.out, HasSubstr("Loaded jit_train_step.26 for ipu2"));
  // A hit shows no progress bar and no compile milestones, even when asked.
  EXPECT_THAT(third.out, Not(HasSubstr("Compiling module")));
  EXPECT_THAT(third.out, Not(HasSubstr("graph construction")));
  EXPECT_EQ(ReadFile(Path("a.rep")), ReadFile(Path("c.rep")));
  EXPECT_EQ(ReadFile(Path("a.rep")), ReadFile(Path("b.rep")));
}

// Four processes compile the same module into the same directory, round
// after round from an empty directory: every process succeeds with the same
// report, the module is compiled once per round (the others wait on the
// compile lock and load), and the directory always verifies.
TEST_F(CacheCli, FourProcessesShareOneDirectory) {
  const std::string cache = Path("race");
  CliRun reference = Compile(kModel, Path("ref.rep"));
  ASSERT_EQ(reference.status, 0) << reference.out;
  const std::string expected = ReadFile(Path("ref.rep"));
  constexpr int kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(round);
    std::filesystem::remove_all(cache);
    std::string script = "(";
    for (int p = 0; p < 4; ++p) {
      script += std::string(TILEPROF_CLI) + " compile " + kModel + " -o " +
                Path("r" + std::to_string(p) + ".rep") +
                " --tiles-per-ipu 64 --progress false --executable-cache-path " + cache + " > " +
                Path("out" + std::to_string(p)) + " 2>&1 & ";
    }
    script += "wait)";
    ASSERT_EQ(std::system(script.c_str()), 0);
    int compiled = 0, loaded = 0;
    for (int p = 0; p < 4; ++p) {
      const std::string out = ReadFile(Path("out" + std::to_string(p)));
      EXPECT_THAT(out, Not(HasSubstr("error")));
      compiled += out.starts_with("Compiled") ? 1 : 0;
      loaded += out.starts_with("Loaded") ? 1 : 0;
      EXPECT_EQ(ReadFile(Path("r" + std::to_string(p) + ".rep")), expected);
    }
    EXPECT_EQ(compiled, 1);
    EXPECT_EQ(loaded, 3);
    CliRun verify = Tileprof("cache verify " + cache);
    EXPECT_EQ(verify.status, 0) << verify.out;
    EXPECT_THAT(verify.out, HasSubstr("1 executable checked, 0 bad"));
  }
}

TEST_F(CacheCli, CorruptFileIsNamedRecompiledAndVerified) {
  const std::string cache = Path("cache");
  ASSERT_EQ(Compile(kModel, Path("a.rep"), "--executable-cache-path " + cache).status, 0);
  const std::string file = cache + "/" + Executables(cache)[0];
  std::filesystem::resize_file(file, std::filesystem::file_size(file) - 100);

  CliRun verify = Tileprof("cache verify " + cache);
  EXPECT_EQ(verify.status, 1);
  EXPECT_THAT(verify.out, HasSubstr("BAD   " + file + ": truncated executable"));
  EXPECT_THAT(verify.out, HasSubstr("1 executable checked, 1 bad"));

  CliRun again = Compile(kModel, Path("b.rep"), "--executable-cache-path " + cache);
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_THAT(again.out, HasSubstr(file + ": truncated executable"));
  EXPECT_THAT(again.out, HasSubstr("Cache:    replaced"));
  EXPECT_EQ(ReadFile(Path("a.rep")), ReadFile(Path("b.rep")));
  EXPECT_EQ(Tileprof("cache verify " + cache).status, 0);
}

TEST_F(CacheCli, LsAndExplain) {
  const std::string cache = Path("cache");
  ASSERT_EQ(Compile(kModel, Path("a.rep"), "--executable-cache-path " + cache).status, 0);
  const std::string hex = Executables(cache)[0].substr(0, Executables(cache)[0].find('.'));
  CliRun ls = Tileprof("cache ls " + cache);
  ASSERT_EQ(ls.status, 0) << ls.out;
  EXPECT_THAT(ls.out, HasSubstr("KEY"));
  EXPECT_THAT(ls.out,
              ::testing::ContainsRegex(
                  hex + " +jit_train_step\\.26 +ipu2 x1 \\(64 tiles\\) +[0-9,]+ +20[0-9-]+ "));
  EXPECT_THAT(ls.out, HasSubstr("1 executable\n"));

  CliRun hit = Tileprof("cache explain " + cache + " " + kModel + " --tiles-per-ipu 64");
  EXPECT_EQ(hit.status, 0) << hit.out;
  EXPECT_THAT(hit.out, HasSubstr("Hit: jit_train_step.26 would load jit_train_step.26 from " +
                                 cache + "/" + hex));

  CliRun target = Tileprof("cache explain " + cache + " " + kModel + " --tiles-per-ipu 32");
  EXPECT_EQ(target.status, 1) << target.out;
  EXPECT_THAT(
      target.out,
      HasSubstr("target: ipu2 ipus=1 tiles_per_ipu=64 (cached) -> ipu2 ipus=1 tiles_per_ipu=32"));
  EXPECT_THAT(target.out, HasSubstr("the module itself is the same"));

  // Half the batch: the dumpdiff engine names the parameter.
  std::string text = ReadFile(kModel);
  text = std::regex_replace(text, std::regex("\\[200,"), "[100,");
  text = std::regex_replace(text, std::regex("\\[200\\]"), "[100]");
  std::ofstream(Path("half.hlo")) << text;
  CliRun batch =
      Tileprof("cache explain " + cache + " " + Path("half.hlo") + " --tiles-per-ipu 64");
  EXPECT_EQ(batch.status, 1) << batch.out;
  EXPECT_THAT(batch.out, HasSubstr("Miss: jit_train_step.26 would compile"));
  EXPECT_THAT(batch.out,
              HasSubstr("Closest cached executable: " + cache + "/" + hex + ".poplar_exec"));
  EXPECT_THAT(batch.out, HasSubstr("(batch dimension 200 -> 100)"));

  CliRun missing = Tileprof("cache ls " + Path("nope"));
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.out, HasSubstr("tileprof: cache: cannot list"));
}

TEST_F(CacheCli, PrecompileThenNormalCompileLoads) {
  const std::string cache = Path("pre");
  CliRun no_version = Compile(kModel, Path("a.rep"), "--device-connection=pre-compile");
  EXPECT_EQ(no_version.status, 2);
  EXPECT_THAT(no_version.out,
              HasSubstr("Expected the `ipu_version` to be set when the `device_connection_type` is "
                        "set to `IpuDeviceConnectionType.PRE_COMPILE`"));
  CliRun no_path =
      Compile(kModel, Path("a.rep"), "--device-connection=pre-compile --ipu-version=ipu2");
  EXPECT_EQ(no_path.status, 1);
  EXPECT_THAT(no_path.out,
              HasSubstr("'executable_cache_path' in 'TF_POPLAR_FLAGS' has not been set."));

  CliRun pre = Compile(
      kModel, Path("a.rep"),
      "--device-connection=pre-compile --ipu-version=ipu2 --executable-cache-path " + cache);
  ASSERT_EQ(pre.status, 0) << pre.out;
  ASSERT_EQ(Executables(cache).size(), 1u);
  EXPECT_THAT(pre.out, HasSubstr("A pre-compiled Poplar program has been saved to " + cache + "/" +
                                 Executables(cache)[0]));
  CliRun run = Compile(kModel, Path("b.rep"), "--target ipu2 --executable-cache-path " + cache);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("Loaded jit_train_step.26"));
  EXPECT_EQ(ReadFile(Path("a.rep")), ReadFile(Path("b.rep")));
}

TEST(InfoCli, DescribesTheSimulatedDeviceLikeGcInfo) {
  CliRun info = Tileprof("info");
  ASSERT_EQ(info.status, 0) << info.out;
  EXPECT_THAT(info.out, HasSubstr("  ipu architecture: ipu2\n"));
  EXPECT_EQ(Count(info.out, "remote buffers supported: 1\n"), 1u);
  CliRun mk1 = Tileprof("info --ipu-version ipu1 --target-details");
  ASSERT_EQ(mk1.status, 0);
  EXPECT_THAT(mk1.out, HasSubstr("  tiles per ipu: 1216\n"));
  EXPECT_THAT(mk1.out, HasSubstr("  clock: 1600MHz\n"));
  EXPECT_EQ(Tileprof("info --ipu-version ipu9").status, 2);
}

}  // namespace
