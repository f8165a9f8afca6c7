// Serialised executables (engine/exec/executable.h): a loaded executable is
// the compiled one (same report text, same graph and program: re-serialising
// gives the same bytes) for every corpus module that compiles, and every
// truncation or bit flip is detected.
#include "engine/exec/executable.h"
#include "engine/exec/executable_format.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/test_util.h"

#include "common/file.h"
#include "engine/codelets/codelets.h"
#include "engine/hlo/parser.h"
#include "reports/text_writer.h"

namespace tileprof::engine::exec {
namespace {

using ::testing::HasSubstr;

std::span<const uint8_t> Bytes(const std::string& text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

struct Compiled {
  std::string name;
  compiler::CompileResult result;
  std::string text_report;
};

// A small target keeps the corpus test quick; the bench uses the full chip.
Expected<Compiled> CompileFile(const std::string& path, std::optional<uint32_t> tiles = 64) {
  TILEPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  TILEPROF_ASSIGN_OR_RETURN(hlo::Module module,
                            hlo::ParseModule(std::move(text), {.source_name = path}));
  TILEPROF_ASSIGN_OR_RETURN(Target target, Target::FromPreset("ipu2", 1, tiles));
  TILEPROF_ASSIGN_OR_RETURN(compiler::CompileResult result,
                            compiler::CompileModule(module, target, {}));
  std::string report = report::WriteTextReport(result.report, nullptr, {});
  return Compiled{std::string(module.name()), std::move(result), std::move(report)};
}

ExecutableInfo InfoFor(const std::string& module, uint32_t tiles = 64) {
  ExecutableInfo info;
  info.key = 0x277a08fe4c20b50;
  info.tool_version = "test";
  info.module_name = module;
  info.fingerprint = 42;
  info.target = {"ipu2", 1, tiles};
  info.key_text = "use_synthetic_data=false\n";
  return info;
}

std::vector<std::string> CorpusModules() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TILEPROF_SHARED_DIR) + "/corpus/hlo")) {
    const std::string name = entry.path().filename().string();
    if (name == "README.md" || name == "SOURCES.tsv") continue;
    files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Executable, EveryCorpusModuleLoadsAsCompiled) {
  int compiled = 0, skipped = 0;
  for (const std::string& path : CorpusModules()) {
    SCOPED_TRACE(path);
    if (hlo::testing::TooSlowUnderSanitizers(path)) {
      ++skipped;
      continue;
    }
    auto original = CompileFile(path);
    if (!original) continue;  // several files hold many modules or unsupported ops
    ++compiled;
    const std::string bytes = SerializeExecutable(InfoFor(original->name), original->result);
    // Two mobilenet_v2-sized graphs at once would not fit beside a parallel
    // test; what is compared below needs only the original's report.
    original->result.graph.reset();

    auto loaded = DeserializeExecutable(Bytes(bytes), "test.poplar_exec");
    ASSERT_TRUE(loaded) << loaded.error().message();
    EXPECT_EQ(loaded->info.module_name, original->name);
    EXPECT_EQ(loaded->info.key, 0x277a08fe4c20b50u);
    EXPECT_EQ(report::WriteTextReport(loaded->result.report, nullptr, {}), original->text_report);
    EXPECT_TRUE(loaded->result.report == original->result.report);
    EXPECT_EQ(loaded->result.tiles_out_of_memory, original->result.tiles_out_of_memory);
    EXPECT_EQ(loaded->result.lowering.opaque_opcodes, original->result.lowering.opaque_opcodes);
    EXPECT_EQ(loaded->result.graph_stats.num_edges, original->result.graph_stats.num_edges);
    EXPECT_EQ(loaded->result.graph_stats.by_codelet.size(),
              original->result.graph_stats.by_codelet.size());
    EXPECT_EQ(program::CountSteps(loaded->result.program).steps,
              program::CountSteps(original->result.program).steps);
    // Everything that was serialised came back: the graph, its mapping,
    // constants, streams and the program serialise to the same bytes.
    EXPECT_TRUE(SerializeExecutable(loaded->info, loaded->result) == bytes);

    auto report_only = DeserializeExecutable(Bytes(bytes), "test.poplar_exec", LoadParts::kReport);
    ASSERT_TRUE(report_only) << report_only.error().message();
    EXPECT_EQ(report_only->result.graph, nullptr);
    EXPECT_EQ(report::WriteTextReport(report_only->result.report, nullptr, {}),
              original->text_report);
    EXPECT_EQ(report_only->result.graph_stats.num_vertices,
              original->result.graph_stats.num_vertices);
  }
  EXPECT_GE(compiled + skipped, 20);
  EXPECT_GE(compiled, 15);
}

// The compiler's on-demand window, rng and expression-reduce codelets are
// rebuilt from their names when an executable loads.
TEST(Executable, WindowRngAndExpressionCodeletsLoadAsCompiled) {
  const std::string root = std::string(TILEPROF_SOURCE_DIR);
  for (const std::string& path :
       {root + "/tests/oracle/modules/reduce_window.hlo", root + "/tests/oracle/modules/reduce.hlo",
        root + "/samples/cnn/cnn.hlo"}) {
    SCOPED_TRACE(path);
    auto original = CompileFile(path);
    ASSERT_TRUE(original) << original.error().message();
    EXPECT_TRUE(original->result.lowering.opaque_opcodes.empty());
    const std::string bytes = SerializeExecutable(InfoFor(original->name), original->result);
    // Two mobilenet_v2-sized graphs at once would not fit beside a parallel
    // test; what is compared below needs only the original's report.
    original->result.graph.reset();
    auto loaded = DeserializeExecutable(Bytes(bytes), "test.poplar_exec");
    ASSERT_TRUE(loaded) << loaded.error().message();
    EXPECT_EQ(report::WriteTextReport(loaded->result.report, nullptr, {}), original->text_report);
    EXPECT_TRUE(SerializeExecutable(loaded->info, loaded->result) == bytes);
  }
}

// A compiled graph sets every parameter (read back all at once); a graph
// built by hand may leave some unset, and those stay unset on load.
TEST(Executable, PartlySetParametersLoadAsSaved) {
  auto original = CompileFile(std::string(TILEPROF_SHARED_DIR) +
                              "/corpus/hlo/module_0067.jit_train_step.26.before_optimizations.txt");
  ASSERT_TRUE(original) << original.error().message();
  Graph& graph = *original->result.graph;
  const ComputeSetId cs = graph.AddComputeSet("by hand");
  const std::string codelet = MatMulPartialCodeletName(ElementType::kF32, ElementType::kF32);
  VertexRef k_only = *graph.AddVertex(cs, codelet, "k only");
  ASSERT_TRUE(graph.SetInitialValue(k_only["k"], 7));
  VertexRef m_and_n = *graph.AddVertex(cs, codelet, "m and n");
  ASSERT_TRUE(graph.SetInitialValue(m_and_n["m"], 3));
  ASSERT_TRUE(graph.SetInitialValue(m_and_n["n"], 5));
  const std::string bytes = SerializeExecutable(InfoFor(original->name), original->result);
  auto loaded = DeserializeExecutable(Bytes(bytes), "test.poplar_exec");
  ASSERT_TRUE(loaded) << loaded.error().message();
  const Graph& back = *loaded->result.graph;
  using P = std::vector<std::optional<uint32_t>>;  // m, k, n
  EXPECT_EQ(P(back.params(k_only.id).begin(), back.params(k_only.id).end()),
            (P{std::nullopt, 7u, std::nullopt}));
  EXPECT_EQ(P(back.params(m_and_n.id).begin(), back.params(m_and_n.id).end()),
            (P{3u, std::nullopt, 5u}));
  EXPECT_EQ(back.vertex(m_and_n.id).debug_name, "m and n");
}

// Constants without values are graph variables that only the compile
// result tells apart; a loaded executable must list the same ones, or a
// cached run would read them as zeros instead of refusing (format 4 did).
TEST(Executable, ValuelessConstantsLoadAsCompiled) {
  const std::string path = ::testing::TempDir() + "/valueless_" + std::to_string(getpid()) + ".hlo";
  ASSERT_TRUE(WriteFileAtomic(path, R"(HloModule valueless
ENTRY main {
  x = f32[4] parameter(0)
  w = f32[4] constant({...})
  known = c64[2] constant({(1, 0), (2, 0)})
  unknown = c64[2] constant({...})
  counts = s32[3] constant({1, ...})
  ROOT out = (f32[4], c64[2], c64[2], s32[3]) tuple(x, known, unknown, counts)
})")
                  .has_value());
  auto original = CompileFile(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(original) << original.error().message();
  const compiler::CompileResult& compiled = original->result;
  ASSERT_EQ(compiled.valueless_constants.size(), 4u);
  // c64 constants stay unknown: the engine only stores them.
  ASSERT_EQ(compiled.elided_constants.size(), 2u);
  const Graph& graph = *compiled.graph;
  EXPECT_EQ(graph.variable(compiled.elided_constants[0]).name, "w");
  EXPECT_EQ(graph.variable(compiled.elided_constants[1]).name, "counts");

  const std::string bytes = SerializeExecutable(InfoFor(original->name), compiled);
  auto loaded = DeserializeExecutable(Bytes(bytes), "test.poplar_exec");
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_EQ(loaded->result.valueless_constants, compiled.valueless_constants);
  EXPECT_EQ(loaded->result.elided_constants, compiled.elided_constants);
  EXPECT_TRUE(SerializeExecutable(loaded->info, loaded->result) == bytes);
}

TEST(Executable, InfoListsTheStreams) {
  auto original = CompileFile(std::string(TILEPROF_SHARED_DIR) +
                              "/corpus/hlo/module_0067.jit_train_step.26.before_optimizations.txt");
  ASSERT_TRUE(original) << original.error().message();
  const std::string bytes = SerializeExecutable(InfoFor(original->name), original->result);
  auto info = ReadExecutableInfo(Bytes(bytes), "x");
  ASSERT_TRUE(info) << info.error().message();
  ASSERT_FALSE(info->input_streams.empty());
  EXPECT_EQ(info->input_streams.front(), "seed");
  EXPECT_EQ(info->output_streams.front(), "out.0");
  EXPECT_EQ(info->key_text, "use_synthetic_data=false\n");
  EXPECT_EQ(info->target.tiles_per_ipu, 64u);
}

class Corruption : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto original =
        CompileFile(std::string(TILEPROF_SHARED_DIR) +
                    "/corpus/hlo/module_0067.jit_train_step.26.before_optimizations.txt");
    ASSERT_TRUE(original);
    bytes_ = new std::string(SerializeExecutable(InfoFor(original->name), original->result));
  }
  static void TearDownTestSuite() { delete bytes_; }
  static std::string* bytes_;
};
std::string* Corruption::bytes_ = nullptr;

TEST_F(Corruption, EveryTruncationIsDetected) {
  const std::string& bytes = *bytes_;
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 128; ++n) lengths.push_back(n);
  for (size_t i = 1; i < 256; ++i) lengths.push_back(bytes.size() * i / 256);
  lengths.push_back(bytes.size() - 1);
  for (size_t length : lengths) {
    SCOPED_TRACE(length);
    auto loaded = DeserializeExecutable(Bytes(bytes.substr(0, length)), "cache/x.poplar_exec");
    ASSERT_FALSE(loaded);
    EXPECT_THAT(loaded.error().message(), HasSubstr("cache/x.poplar_exec: "));
    if (length >= kExecutableHeaderBytes) {
      EXPECT_THAT(loaded.error().message(), HasSubstr("truncated"));
    }
  }
}

// The file reader reads a report-only load's head alone (the sections
// before the graph, under their own checksum): it detects every truncation
// and every flip there, and a flip in the graph, which it does not read, does
// not change the report it returns. The full load detects them all.
TEST_F(Corruption, FileReadersDetectTheSame) {
  const std::string& bytes = *bytes_;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tileprof_exec_" + std::to_string(getpid()) + ".poplar_exec"))
                               .string();
  ASSERT_TRUE(WriteFileAtomic(path, bytes));
  Expected<Executable> intact = ReadExecutableFile(path, LoadParts::kReport);
  ASSERT_TRUE(intact) << intact.error().message();
  EXPECT_EQ(intact->info.module_name, "jit_train_step.26");
  const std::string intact_report = report::WriteTextReport(intact->result.report, nullptr, {});
  auto loaded_all = ReadExecutableFile(path, LoadParts::kAll);
  ASSERT_TRUE(loaded_all) << loaded_all.error().message();
  const Expected<size_t> head = format::HeadBytes(Bytes(bytes).subspan(kExecutableHeaderBytes));
  ASSERT_TRUE(head);
  const size_t head_end = kExecutableHeaderBytes + *head;
  ASSERT_LT(head_end, bytes.size());  // both parts are probed below

  std::vector<std::string> truncated;
  for (size_t i = 1; i < 64; ++i) truncated.push_back(bytes.substr(0, bytes.size() * i / 64));
  for (const std::string& bad : truncated) {
    ASSERT_TRUE(WriteFileAtomic(path, bad));
    for (LoadParts parts : {LoadParts::kReport, LoadParts::kAll}) {
      auto loaded = ReadExecutableFile(path, parts);
      ASSERT_FALSE(loaded);
      EXPECT_THAT(loaded.error().message(), HasSubstr(path + ": "));
    }
  }
  // 100 flips spread over each part, whatever their sizes.
  std::vector<size_t> offsets;
  for (size_t i = 0; i < 100; ++i) offsets.push_back(head_end * i / 100);
  for (size_t i = 0; i < 100; ++i)
    offsets.push_back(head_end + (bytes.size() - head_end) * i / 100);
  int graph_flips = 0;
  for (size_t offset : offsets) {
    SCOPED_TRACE(offset);
    std::string flipped = bytes;
    flipped[offset] ^= 0x10;
    ASSERT_TRUE(WriteFileAtomic(path, flipped));
    auto all = ReadExecutableFile(path, LoadParts::kAll);
    ASSERT_FALSE(all);
    EXPECT_THAT(all.error().message(), HasSubstr(path + ": "));
    auto report_only = ReadExecutableFile(path, LoadParts::kReport);
    if (offset < head_end) {
      ASSERT_FALSE(report_only);
      EXPECT_THAT(report_only.error().message(), HasSubstr(path + ": "));
    } else {
      ++graph_flips;
      ASSERT_TRUE(report_only) << report_only.error().message();
      EXPECT_EQ(report::WriteTextReport(report_only->result.report, nullptr, {}), intact_report);
      EXPECT_FALSE(DeserializeExecutable(Bytes(flipped), path));  // and `cache verify` sees it
    }
  }
  EXPECT_EQ(graph_flips, 100);
  std::filesystem::remove(path);
  EXPECT_FALSE(ReadExecutableFile(path, LoadParts::kReport));
}

TEST_F(Corruption, EveryBitFlipIsDetected) {
  const std::string& bytes = *bytes_;
  std::vector<size_t> offsets;
  for (size_t n = 0; n < 200; ++n) offsets.push_back(n);
  for (size_t i = 0; i < 1000; ++i) offsets.push_back(bytes.size() * i / 1000);
  offsets.push_back(bytes.size() - 1);
  for (size_t offset : offsets) {
    for (int bit : {0, 7}) {
      SCOPED_TRACE(testing::Message() << "offset " << offset << " bit " << bit);
      std::string flipped = bytes;
      flipped[offset] = static_cast<char>(flipped[offset] ^ (1 << bit));
      auto loaded = DeserializeExecutable(Bytes(flipped), "x.poplar_exec");
      EXPECT_FALSE(loaded);
      auto info = ReadExecutableInfo(Bytes(flipped), "x.poplar_exec");
      EXPECT_FALSE(info);
    }
  }
}

// With the checksum patched to match, a flipped byte reaches the parser: it
// must be rejected with a located message or give a consistent executable,
// never crash (the fuzz target does this at random).
TEST_F(Corruption, FlipsBehindAValidChecksumAreHandled) {
  const std::string& bytes = *bytes_;
  int rejected = 0;
  for (size_t i = 0; i < 400; ++i) {
    std::string flipped = bytes;
    const size_t offset =
        kExecutableHeaderBytes + (bytes.size() - kExecutableHeaderBytes) * i / 400;
    flipped[offset] = static_cast<char>(flipped[offset] ^ 0x5a);
    format::Seal({reinterpret_cast<uint8_t*>(flipped.data()), flipped.size()});
    auto loaded = DeserializeExecutable(Bytes(flipped), "x.poplar_exec");
    if (!loaded) {
      ++rejected;
      EXPECT_THAT(loaded.error().message(), HasSubstr("x.poplar_exec: corrupted executable: "));
    }
  }
  EXPECT_GT(rejected, 100);
}

// The fuzz target's seeds (fuzz/executable/corpus/compiled_*) must be in
// the format read now: a stale seed is rejected at the header, and the fuzzer
// would never get past it (format 2 made coverage fall from 4,000 to 550
// edges until they were compiled again).
TEST(Executable, FuzzSeedsAreCurrent) {
  int seeds = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(TILEPROF_SOURCE_DIR "/fuzz/executable/corpus")) {
    if (!entry.path().filename().string().starts_with("compiled_")) continue;
    SCOPED_TRACE(entry.path().string());
    ++seeds;
    Expected<std::string> bytes = ReadFile(entry.path().string());
    ASSERT_TRUE(bytes);
    auto loaded = DeserializeExecutable(Bytes(*bytes), entry.path().string());
    EXPECT_TRUE(loaded) << loaded.error().message();
  }
  EXPECT_GE(seeds, 5);
}

TEST(Executable, ForeignAndStaleFilesAreNamed) {
  auto not_ours = DeserializeExecutable(Bytes(std::string("HloModule m\n")), "a.poplar_exec");
  ASSERT_FALSE(not_ours);
  EXPECT_EQ(not_ours.error().message(), "a.poplar_exec: not a tileprof executable (bad magic)");
  std::string header(kExecutableMagic);
  header += std::string("\x01\0\0\0", 4) + std::string(kExecutableHeaderBytes - 12, '\0');
  auto stale = DeserializeExecutable(Bytes(header), "b.poplar_exec");
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().message(),
            "b.poplar_exec: executable format version 1, this tileprof reads version " +
                std::to_string(kExecutableFormatVersion));
}

}  // namespace
}  // namespace tileprof::engine::exec
