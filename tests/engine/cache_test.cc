// The executable cache through the session (LoadOrCompile): hit and miss
// with the original's log lines, key stability, corrupt files recompiled,
// modules that cannot be cached or pre-compiled, pre-compile mode.
#include "engine/exec/cache.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file.h"
#include "engine/hlo/parser.h"
#include "engine/session/precompile.h"
#include "engine/session/session.h"
#include "reports/text_writer.h"
#include "tests/engine/capture.h"
#include "tests/temp_path.h"

namespace tileprof::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kModel = std::string(TILEPROF_SHARED_DIR) +
                           "/corpus/hlo/module_0067.jit_train_step.26.before_optimizations.txt";

using tileprof::testing::Capture;

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tileprof::testing::FreshTempPath("tileprof_cache_test_");
    options_.target.tiles_per_ipu = 32;
    options_.progress = ProgressMode::kOff;
    options_.flags.executable_cache_path = dir_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories(dir_ + "_src");
    const std::string path = dir_ + "_src/" + name;
    std::ofstream(path) << text;
    return path;
  }
  uint64_t KeyOf(const std::string& text, const SessionOptions& options) {
    auto module = hlo::ParseModule(text, {.source_name = "m.hlo"});
    EXPECT_TRUE(module) << module.error().message();
    auto target = ResolveTarget(options);
    return ExecutableCacheKey(*module, *target, options);
  }

  std::string dir_;
  SessionOptions options_;
};

TEST_F(CacheTest, MissCompilesAndSavesThenHitLoadsWithoutCompiling) {
  Capture first_log;
  CompileLog log1(first_log.file(), LogLevel::kVerbose);
  auto first = LoadOrCompile(kModel, options_, log1);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->cache.outcome, CacheOutcome::kMiss);
  const std::string path = first->cache.path;
  EXPECT_EQ(path, dir_ + "/" + exec::ExecutableFileName(first->cache.key));
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/" + fmt::format("{:x}.hlo", first->cache.key)));
  EXPECT_THAT(first_log.Text(), HasSubstr("] Couldn't find " + path + " in executable cache\n"));
  EXPECT_THAT(first_log.Text(), HasSubstr("Begin Poplar graph construction."));

  Capture second_log;
  CompileLog log2(second_log.file(), LogLevel::kVerbose);
  auto second = LoadOrCompile(kModel, options_, log2);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(second->cache.outcome, CacheOutcome::kHit);
  const std::string text = second_log.Text();
  EXPECT_THAT(text, HasSubstr("] Loaded jit_train_step.26 from " + path + "\n"));
  EXPECT_THAT(text, HasSubstr("Begin XLA compilation: jit_train_step.26  (Hash: 0x"));
  EXPECT_THAT(text, Not(HasSubstr("graph construction")));
  EXPECT_THAT(text, Not(HasSubstr("graphConstruction")));
  EXPECT_THAT(text, Not(HasSubstr("Couldn't find")));
  EXPECT_EQ(report::WriteTextReport(second->result.report, nullptr, {}),
            report::WriteTextReport(first->result.report, nullptr, {}));
  ASSERT_NE(second->result.graph, nullptr);
  EXPECT_EQ(second->result.graph->num_vertices(), first->result.graph->num_vertices());

  // The report-only load that `tileprof compile` uses.
  CompileLog quiet;
  auto report_only = LoadOrCompile(kModel, options_, quiet, exec::LoadParts::kReport);
  ASSERT_TRUE(report_only);
  EXPECT_EQ(report_only->cache.outcome, CacheOutcome::kHit);
  EXPECT_EQ(report_only->result.graph, nullptr);
  EXPECT_EQ(report::WriteTextReport(report_only->result.report, nullptr, {}),
            report::WriteTextReport(first->result.report, nullptr, {}));

  // What `tileprof run` asks for: a graph that fits is rebuilt to run.
  auto runnable = LoadOrCompile(kModel, options_, quiet, exec::LoadParts::kRunnable);
  ASSERT_TRUE(runnable);
  EXPECT_EQ(runnable->cache.outcome, CacheOutcome::kHit);
  ASSERT_NE(runnable->result.graph, nullptr);
  EXPECT_EQ(runnable->result.graph->num_vertices(), first->result.graph->num_vertices());
}

TEST_F(CacheTest, AnOutOfMemoryExecutableLoadsForRunWithoutItsGraph) {
  // It will not run (as Poplar), so `tileprof run` needs only its report.
  // 400 MB of f32 and their negation overflow every tile of an ipu1.
  // (samples/oom's custom call keeps it out of the cache.)
  const std::string model = Write("too_big.hlo", R"(HloModule too_big

ENTRY main {
  p = f32[100000000] parameter(0)
  ROOT n = f32[100000000] negate(p)
}
)");
  options_.target.preset = "ipu1";
  CompileLog quiet;
  auto first = LoadOrCompile(model, options_, quiet, exec::LoadParts::kRunnable);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->cache.outcome, CacheOutcome::kMiss);
  ASSERT_GT(first->result.tiles_out_of_memory, 0u);
  auto second = LoadOrCompile(model, options_, quiet, exec::LoadParts::kRunnable);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(second->cache.outcome, CacheOutcome::kHit);
  EXPECT_EQ(second->result.graph, nullptr);
  EXPECT_EQ(second->result.tiles_out_of_memory, first->result.tiles_out_of_memory);
  EXPECT_EQ(report::WriteTextReport(second->result.report, nullptr, {}),
            report::WriteTextReport(first->result.report, nullptr, {}));
  auto full = LoadOrCompile(model, options_, quiet, exec::LoadParts::kAll);
  ASSERT_TRUE(full);
  EXPECT_NE(full->result.graph, nullptr);
}

TEST_F(CacheTest, FileNameIsTheKeyInHexWithoutPadding) {
  EXPECT_EQ(exec::ExecutableFileName(0x277a08fe4c20b50), "277a08fe4c20b50.poplar_exec");
  EXPECT_EQ(exec::ExecutableFileName(0), "0.poplar_exec");
  EXPECT_EQ(exec::KeyFromFileName("277a08fe4c20b50.poplar_exec"), 0x277a08fe4c20b50u);
  EXPECT_FALSE(exec::KeyFromFileName("0277a08fe4c20b50.poplar_exec"));
  EXPECT_FALSE(exec::KeyFromFileName("277A08FE4C20B50.poplar_exec"));
  EXPECT_FALSE(exec::KeyFromFileName("277a08fe4c20b50.poplar_exec.tmp.x"));
}

const char* kSmall = R"(HloModule small.1

ENTRY main.5 {
  x.1 = f32[32,16]{1,0} parameter(0), metadata={op_name="x"}
  c.2 = f32[] constant(2)
  b.3 = f32[32,16]{1,0} broadcast(c.2), dimensions={}
  ROOT m.4 = f32[32,16]{1,0} multiply(x.1, b.3)
}
)";

TEST_F(CacheTest, KeyIgnoresNamesAndProfilingButNotTheProgram) {
  const uint64_t base = KeyOf(kSmall, options_);
  // Renamed module, instructions, computations; metadata gone.
  EXPECT_EQ(KeyOf(R"(HloModule renamed

ENTRY entry {
  input = f32[32,16]{1,0} parameter(0)
  two = f32[] constant(2)
  twos = f32[32,16]{1,0} broadcast(two), dimensions={}
  ROOT out = f32[32,16]{1,0} multiply(input, twos)
}
)",
                  options_),
            base);
  // Profiling and report options.
  SessionOptions profiling = options_;
  auto engine = ParseEngineOptions(
      R"({"autoReport.all":"true","autoReport.directory":"./report","debug.instrument":"true",
          "debug.retainDebugInformation":"true","profiler.format":"v3"})");
  ASSERT_TRUE(engine) << engine.error().message();
  profiling.engine = *engine;
  profiling.flags.show_progress_bar = "true";
  profiling.flags.tensor_map_file_path = "/tmp/maps";
  profiling.progress = ProgressMode::kOn;
  EXPECT_EQ(KeyOf(kSmall, profiling), base);
  // Another cache directory is the same executable.
  SessionOptions other_dir = options_;
  other_dir.flags.executable_cache_path = "/elsewhere";
  EXPECT_EQ(KeyOf(kSmall, other_dir), base);

  std::string batch = kSmall;
  batch = std::regex_replace(batch, std::regex("32,16"), "64,16");
  EXPECT_NE(KeyOf(batch, options_), base);
  std::string constant =
      std::regex_replace(std::string(kSmall), std::regex("constant\\(2\\)"), "constant(3)");
  EXPECT_NE(KeyOf(constant, options_), base);
  SessionOptions target = options_;
  target.target.preset = "ipu21";
  EXPECT_NE(KeyOf(kSmall, target), base);
  SessionOptions tiles = options_;
  tiles.target.tiles_per_ipu = 16;
  EXPECT_NE(KeyOf(kSmall, tiles), base);
  SessionOptions synthetic = options_;
  synthetic.flags.use_synthetic_data = true;
  EXPECT_NE(KeyOf(kSmall, synthetic), base);
  SessionOptions compile = options_;
  compile.compile.grain_bytes = 16;
  EXPECT_NE(KeyOf(kSmall, compile), base);
}

TEST_F(CacheTest, CorruptFileIsReportedWithItsPathAndRecompiled) {
  CompileLog quiet;
  auto first = LoadOrCompile(kModel, options_, quiet);
  ASSERT_TRUE(first);
  const std::string path = first->cache.path;
  const auto size = std::filesystem::file_size(path);
  for (int round = 0; round < 2; ++round) {
    if (round == 0) {
      std::filesystem::resize_file(path, size / 2);
    } else {
      std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(static_cast<std::streamoff>(size / 3));
      file.put('\x7f');
    }
    Capture capture;
    CompileLog log(capture.file(), LogLevel::kWarning);
    auto again = LoadOrCompile(kModel, options_, log);
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(again->cache.outcome, CacheOutcome::kReplaced);
    EXPECT_THAT(capture.Text(), HasSubstr(path + ": "));
    EXPECT_THAT(capture.Text(), HasSubstr(round == 0 ? "truncated" : "checksum mismatch"));
    EXPECT_EQ(report::WriteTextReport(again->result.report, nullptr, {}),
              report::WriteTextReport(first->result.report, nullptr, {}));
    auto third = LoadOrCompile(kModel, options_, quiet);
    ASSERT_TRUE(third);
    EXPECT_EQ(third->cache.outcome, CacheOutcome::kHit);
  }
}

// An executable saved under another module's key (a collision, or a file
// copied by hand) is not loaded for it.
TEST_F(CacheTest, AnExecutableForOtherInputsIsNotLoaded) {
  CompileLog quiet;
  const std::string small = Write("small.hlo", kSmall);
  auto a = LoadOrCompile(kModel, options_, quiet);
  auto b = LoadOrCompile(small, options_, quiet);
  ASSERT_TRUE(a && b);
  auto executable = exec::ReadExecutableFile(a->cache.path);
  ASSERT_TRUE(executable) << executable.error().message();
  executable->info.key = b->cache.key;
  ASSERT_TRUE(WriteFileAtomic(b->cache.path,
                              exec::SerializeExecutable(executable->info, executable->result)));
  Capture capture;
  CompileLog log(capture.file(), LogLevel::kWarning);
  auto again = LoadOrCompile(small, options_, log);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->cache.outcome, CacheOutcome::kReplaced);
  EXPECT_THAT(capture.Text(), HasSubstr(b->cache.path + ": holds module jit_train_step.26"));
  EXPECT_EQ(report::WriteTextReport(again->result.report, nullptr, {}),
            report::WriteTextReport(b->result.report, nullptr, {}));
}

const char* kCustomCall = R"(HloModule user_op

ENTRY main {
  p = f32[8]{0} parameter(0)
  ROOT c = f32[8]{0} custom-call(p), custom_call_target="MyUserOp"%s
}
)";

std::string WithConfig(const std::string& config) {
  std::string text = kCustomCall;
  return text.replace(text.find("%s"), 2, config);
}

TEST_F(CacheTest, UserOpsNotMarkedHashableAreCompiledButNotCached) {
  const std::string path = Write("user_op.hlo", WithConfig(""));
  Capture capture;
  CompileLog log(capture.file(), LogLevel::kInfo);
  auto compiled = LoadOrCompile(path, options_, log);
  ASSERT_TRUE(compiled) << compiled.error().message();
  EXPECT_EQ(compiled->cache.outcome, CacheOutcome::kNotCacheable);
  EXPECT_THAT(capture.Text(), HasSubstr(std::string(kNotCacheableMessage)));
  EXPECT_FALSE(std::filesystem::exists(compiled->cache.path));

  const std::string hashable =
      Write("hashable.hlo", WithConfig(R"(, backend_config="{\"is_hashable\": true}")"));
  CompileLog quiet;
  auto cached = LoadOrCompile(hashable, options_, quiet);
  ASSERT_TRUE(cached) << cached.error().message();
  EXPECT_EQ(cached->cache.outcome, CacheOutcome::kMiss);
}

TEST(Precompile, RefusesWhatTheOriginalRefuses) {
  auto parse = [](const std::string& text) {
    auto module = hlo::ParseModule(text, {.source_name = "m.hlo"});
    EXPECT_TRUE(module) << module.error().message();
    return std::move(*module);
  };
  Status user_op = CheckPrecompilable(parse(WithConfig("")));
  ASSERT_FALSE(user_op);
  EXPECT_THAT(user_op.error().message(),
              HasSubstr("IPU devices have been configured for pre-compilation, however the program "
                        "contains custom "
                        "user operation c which cannot be safely pre-compiled."));
  EXPECT_TRUE(
      CheckPrecompilable(parse(WithConfig(R"(, backend_config="{\"is_hashable\": true}")"))));
  EXPECT_TRUE(
      CheckPrecompilable(parse(WithConfig(R"(, frontend_attributes={is_hashable="true"})"))));
  EXPECT_FALSE(
      CheckPrecompilable(parse(WithConfig(R"(, frontend_attributes={is_hashable="false"})"))));
  // XLA's own custom calls are not user operations.
  std::string sharding = WithConfig("");
  sharding.replace(sharding.find("MyUserOp"), 8, "Sharding");
  EXPECT_TRUE(CheckPrecompilable(parse(sharding)));

  Status host = CheckPrecompilable(parse(R"(HloModule outside

ENTRY main {
  p = f32[8]{0} parameter(0)
  t = token[] after-all()
  s = (f32[8]{0}, u32[], token[]) send(p, t), channel_id=1, is_host_transfer=true
  ROOT d = token[] send-done(s), channel_id=1, is_host_transfer=true
}
)"));
  ASSERT_FALSE(host);
  EXPECT_EQ(host.error().message(),
            "IPU devices have been configured for pre-compilation, however the program contains "
            "`outside_compilation_scope` operations which cannot be safely pre-compiled.");
  EXPECT_TRUE(CheckPrecompilable(parse(kSmall)));

  Status no_path = CheckPrecompileCachePath("");
  ASSERT_FALSE(no_path);
  EXPECT_EQ(
      no_path.error().message(),
      "IPU devices have been configured for pre-compilation, however 'executable_cache_path' in "
      "'TF_POPLAR_FLAGS' has not been set. Please set the path to a directory where the compiled "
      "binaries "
      "should be stored using the 'TF_POPLAR_FLAGS' environment variable, for example "
      "'TF_POPLAR_FLAGS=--executable_cache_path=/path/to/storage'.");
  EXPECT_EQ(PrecompiledSavedMessage("/tmp/executables/277a08fe4c20b50.poplar_exec"),
            "A pre-compiled Poplar program has been saved to "
            "/tmp/executables/277a08fe4c20b50.poplar_exec");
}

TEST_F(CacheTest, PrecompileSavesThenANormalRunLoads) {
  SessionOptions no_path = options_;
  no_path.flags.executable_cache_path.clear();
  CompileLog quiet;
  auto refused = PrecompileHloFile(kModel, no_path, quiet);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(), std::string(kPrecompileWithoutCachePathMessage));

  Capture capture;
  CompileLog log(capture.file(), LogLevel::kInfo);
  auto precompiled = PrecompileHloFile(kModel, options_, log);
  ASSERT_TRUE(precompiled) << precompiled.error().message();
  EXPECT_THAT(capture.Text(), HasSubstr("] A pre-compiled Poplar program has been saved to " +
                                        precompiled->cache.path + "\n"));
  auto run = LoadOrCompile(kModel, options_, quiet);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->cache.outcome, CacheOutcome::kHit);

  const std::string user_op = Write("user_op.hlo", WithConfig(""));
  auto refused_op = PrecompileHloFile(user_op, options_, quiet);
  ASSERT_FALSE(refused_op);
  EXPECT_THAT(refused_op.error().message(),
              HasSubstr("custom user operation c which cannot be safely pre-compiled"));
}

TEST(Precompile, DeviceConnectionFromConfig) {
  SessionOptions options;
  auto config =
      ParseReportConfig(R"({"device_connection": "pre-compile", "ipu_version": "ipu21"})");
  ASSERT_TRUE(config) << config.error().message();
  auto precompile = ApplyDeviceConnection(*config, options);
  ASSERT_TRUE(precompile);
  EXPECT_TRUE(*precompile);
  EXPECT_EQ(options.target.preset, "ipu21");
  config->ipu_version.clear();
  auto missing = ApplyDeviceConnection(*config, options);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), std::string(kPrecompileNeedsIpuVersionMessage));
  auto normal = ApplyDeviceConnection(ReportConfig{}, options);
  ASSERT_TRUE(normal);
  EXPECT_FALSE(*normal);
}

TEST_F(CacheTest, VerifyNamesBadFiles) {
  CompileLog quiet;
  auto first = LoadOrCompile(kModel, options_, quiet);
  ASSERT_TRUE(first);
  std::ofstream(dir_ + "/abc.poplar_exec") << "not an executable";
  auto entries = exec::ListCache(dir_, /*verify=*/true);
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 2u);  // sorted by name; the key decides where the good one sorts
  const bool bad_first = (*entries)[0].file_name == "abc.poplar_exec";
  const exec::CacheEntry& bad = (*entries)[bad_first ? 0 : 1];
  EXPECT_EQ(bad.file_name, "abc.poplar_exec");
  EXPECT_THAT(bad.problem, HasSubstr("abc.poplar_exec: not a tileprof executable"));
  const exec::CacheEntry& good = (*entries)[bad_first ? 1 : 0];
  EXPECT_LT((*entries)[0].file_name, (*entries)[1].file_name);
  EXPECT_TRUE(good.problem.empty()) << good.problem;
  ASSERT_TRUE(good.info);
  EXPECT_EQ(good.info->module_name, "jit_train_step.26");
  EXPECT_TRUE(good.has_module_text);
  // A good file under another key's name is bad too.
  std::filesystem::copy_file(good.path, dir_ + "/123.poplar_exec");
  auto renamed = exec::ListCache(dir_, /*verify=*/false);
  ASSERT_TRUE(renamed);
  EXPECT_THAT((*renamed)[0].problem, HasSubstr("its name says 123"));
}

}  // namespace
}  // namespace tileprof::engine
