// The HLO compiler and memory model: every corpus module compiles for ipu2
// with a report that satisfies the invariants of reports/invariants.h, and
// small hand-made modules give hand-checked numbers, including the
// calibration against seed 004's published adder report.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codelets/codelets.h"
#include "engine/compiler/compiler.h"
#include "engine/compiler/memory_model.h"
#include "engine/compiler/memory_pool.h"
#include "reports/invariants.h"
#include "reports/text_writer.h"
#include "tests/hlo/test_util.h"

namespace tileprof::engine::compiler {
namespace {

using report::At;
using report::Category;
using ::testing::HasSubstr;

Target MustTarget(std::string_view preset) {
  Expected<Target> target = Target::FromPreset(preset);
  EXPECT_TRUE(target.has_value());
  return std::move(*target);
}

CompileResult MustCompile(const hlo::Module& module, std::string_view preset,
                          const CompileOptions& options = {}) {
  Expected<CompileResult> result = CompileModule(module, MustTarget(preset), options);
  if (!result) {
    ADD_FAILURE() << result.error().message();
    std::abort();
  }
  return std::move(*result);
}

uint64_t CategoryTotal(const report::CompilationReport& report, Category category) {
  uint64_t total = 0;
  for (const report::TileMemory& tile : report.tiles) total += At(tile.by_category, category);
  return total;
}

void ExpectInvariants(const CompileResult& result, const std::string& what) {
  const report::Violations violations = report::CheckInvariants(result.report);
  EXPECT_TRUE(violations.empty()) << what << ": " << violations.size() << " violations, first: "
                                  << (violations.empty() ? "" : violations.front());
}

// ---- Hand-made modules --------------------------------------------------------

// Seed 004's basic_graph: o1 = a + b, o2 = a + c, out = o1 + o2 on f32[2].
constexpr const char* kSeedAdder = R"(
HloModule adder
ENTRY main {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[2] parameter(2)
  o1 = f32[2] add(a, b)
  o2 = f32[2] add(a, c)
  ROOT out = f32[2] add(o1, o2)
}
)";

// The published numbers of seed 004's adder report (Mk1, 1,216 tiles).
struct Published {
  Category category;
  uint64_t bytes;
};
constexpr Published kSeedCategories[] = {
    {Category::kVariables, 39'108},
    {Category::kHostExchangePacketHeaders, 10'512},
    {Category::kStack, 3'852'288},
    {Category::kVertexInstances, 14'640},
    {Category::kControlCode, 851'272},
    {Category::kVertexCode, 170'788},
    {Category::kInternalExchangeCode, 60'792},
    {Category::kHostExchangeCode, 351'328},
    {Category::kInstrumentationResults, 4'876},
};

TEST(CompilerTest, SeedAdderOnIpu1AgainstThePublishedReport) {
  const hlo::Module module = hlo::testing::MustParse(kSeedAdder);
  const CompileResult result = MustCompile(module, "ipu1");
  ExpectInvariants(result, "adder");
  const report::CompilationReport& report = result.report;
  ASSERT_EQ(report.tiles.size(), 1216u);
  // Graph: 1,216 SetSeed vertices and three adds (published: 1,219 vertices,
  // 1,223 edges, 4 compute sets).
  EXPECT_EQ(report.graph->num_vertices, 1219u);
  EXPECT_EQ(report.graph->num_edges, 1216u + 3 * 3);
  EXPECT_EQ(report.graph->num_compute_sets, 4u);
  // Exact by construction: stack and instrumentation are calibrated on this
  // report.
  EXPECT_EQ(CategoryTotal(report, Category::kStack), 3'852'288u);
  EXPECT_EQ(CategoryTotal(report, Category::kInstrumentationResults), 4'876u);
  // A tile that only sets the seed, by hand (docs/memory-model.md):
  // vertex code 140, control 620 + 1 x 32 + 6 x 8 = 700 (a, b and c streamed in are one step),
  // internal exchange 40 + 8 (receives the seed), host exchange 3 x 96 (the seed; a, b and c; the
  // result: adjacent stream copies are one exchange), vertex state 12, instrumentation 4, stack
  // 3,168, the seed's receive buffer 8, the five host streams' positions 5 x 4 and the
  // host-exchange header 8.
  const report::TileMemory& typical = report.tiles[100];
  EXPECT_EQ(At(typical.by_category, Category::kControlCode), 700u);
  EXPECT_EQ(At(typical.by_category, Category::kInternalExchangeCode), 48u);
  EXPECT_EQ(At(typical.by_category, Category::kHostExchangeCode), 3u * 96);
  EXPECT_EQ(At(typical.by_category, Category::kVariables), 8u + 5 * 4);
  EXPECT_EQ(At(typical.by_category, Category::kHostExchangePacketHeaders), 8u);
  EXPECT_EQ(typical.ExcludingGaps(), 140u + 700 + 48 + 288 + 12 + 8 + 4 + 3168 + 20 + 8);
  // Including gaps: code and state end at 1,200; the stack starts the second
  // 16 KiB memory element (16,384 + 3,168), then the stream positions (20,
  // padded to 24 for the pool's 8-byte alignment) and the 8-byte buffer.
  EXPECT_EQ(typical.IncludingGaps(), 16'384u + 3'168 + 24 + 8);
  // Tile 0 (the inputs' and adds' tile) is the largest.
  const auto top = report::TopTiles(report.tiles, 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0]->tile, 0u);
  EXPECT_EQ(result.tiles_out_of_memory, 0u);

  // The comparison (printed for docs/calibration.md; asserted loosely here).
  const report::MemoryUsage total = report::Summarize(report.tiles, report.vertex_types);
  std::printf("%-32s %12s %12s %7s\n", "seed 004 vs tileprof", "published", "tileprof", "ratio");
  for (const Published& row : kSeedCategories) {
    const uint64_t ours = At(total.by_category, row.category);
    std::printf("%-32s %12llu %12llu %7.2f\n",
                std::string(report::CategoryLabel(row.category)).c_str(),
                static_cast<unsigned long long>(row.bytes), static_cast<unsigned long long>(ours),
                static_cast<double>(ours) / static_cast<double>(row.bytes));
  }
  const uint64_t excluding = total.ExcludingGaps();
  std::printf("%-32s %12llu %12llu %7.2f\n", "Excluding gaps", 5'355'604ull,
              static_cast<unsigned long long>(excluding),
              static_cast<double>(excluding) / 5'355'604.0);
  std::printf("%-32s %12llu %12llu %7.2f\n", "Including gaps", 23'878'396ull,
              static_cast<unsigned long long>(total.including_gaps),
              static_cast<double>(total.including_gaps) / 23'878'396.0);
  EXPECT_NEAR(static_cast<double>(excluding), 5'355'604.0, 0.15 * 5'355'604.0);
  EXPECT_NEAR(static_cast<double>(total.including_gaps), 23'878'396.0, 0.15 * 23'878'396.0);
}

// The brief's case: two f32[1216] vectors added on ipu1, one element per
// tile (grain and minimum 4 B, no rotation), so every tile holds one element
// of a, b and the sum and runs one add vertex next to its SetSeed vertex.
// The report carries the compute sets (vertices counted per type) and the
// program tree, which the Python API's libpva model reads back.
TEST(CompilerTest, ReportCarriesComputeSetsAndTheProgramTree) {
  const hlo::Module module = hlo::testing::MustParse(kSeedAdder);
  const CompileResult result = MustCompile(module, "ipu1");
  const report::CompilationReport& report = result.report;
  ASSERT_EQ(report.compute_sets.size(), result.graph->num_compute_sets());
  uint64_t vertices = 0;
  for (ComputeSetId id = 0; id < report.compute_sets.size(); ++id) {
    const report::ComputeSet& set = report.compute_sets[id];
    EXPECT_EQ(set.name, result.graph->compute_set(id).name);
    uint64_t in_set = 0;
    for (const report::ComputeSetVertices& v : set.vertices) {
      ASSERT_LT(v.type, report.vertex_types.size());
      in_set += v.count;
    }
    EXPECT_EQ(in_set, result.graph->compute_set(id).vertices.size()) << set.name;
    vertices += in_set;
  }
  EXPECT_EQ(vertices, report.graph->num_vertices);
  // 1,216 SetSeed vertices in one set, of one type.
  const auto seed = std::find_if(report.compute_sets.begin(), report.compute_sets.end(),
                                 [](const report::ComputeSet& s) {
                                   return s.vertices.size() == 1 && s.vertices[0].count == 1216;
                                 });
  EXPECT_NE(seed, report.compute_sets.end());
  // The root is the module's sequence; every compute set is executed once,
  // by a program named after it; children index the list.
  ASSERT_FALSE(report.programs.empty());
  EXPECT_EQ(report.programs[0].kind, "Sequence");
  std::set<uint32_t> executed;
  for (const report::Program& p : report.programs) {
    for (uint32_t child : p.children) EXPECT_LT(child, report.programs.size());
    if (p.kind != "Execute") continue;
    ASSERT_TRUE(p.compute_set.has_value());
    EXPECT_EQ(p.name, report.compute_sets[*p.compute_set].name);
    executed.insert(*p.compute_set);
  }
  EXPECT_EQ(executed.size(), report.compute_sets.size());
}

// Elementwise f32[1216] operands spread one element per tile of ipu1, in
// tile order, so each tile's figures can be worked out by hand.
CompileResult CompileOneElementPerTile(const hlo::Module& module) {
  CompileOptions options;
  options.grain_bytes = 4;
  options.min_bytes_per_tile = 4;
  options.rotate_start_tile = false;
  return MustCompile(module, "ipu1", options);
}

TEST(CompilerTest, VectorAddOneElementPerTileOnIpu1) {
  const hlo::Module module = hlo::testing::MustParse(R"(
HloModule vadd
ENTRY main {
  a = f32[1216] parameter(0)
  b = f32[1216] parameter(1)
  ROOT sum = f32[1216] add(a, b)
}
)");
  const CompileResult result = CompileOneElementPerTile(module);
  ExpectInvariants(result, "vadd");
  const report::CompilationReport& report = result.report;
  EXPECT_EQ(report.graph->num_vertices, 2u * 1216);
  EXPECT_EQ(report.graph->num_edges, 1216u + 3 * 1216);
  EXPECT_EQ(report.graph->num_compute_sets, 2u);
  // Steps: seed stream, setSeed, a, b, add, sum stream (6; 4 host copies).
  EXPECT_EQ(result.lowering.program_steps, 6u);
  EXPECT_EQ(result.lowering.exchanges, 1215u);  // only the seed moves between tiles
  const report::TileMemory& tile = report.tiles[7];
  EXPECT_EQ(At(tile.by_category, Category::kVertexCode), 140u + 274);
  EXPECT_EQ(At(tile.by_category, Category::kVertexInstances), 12u + 16);
  EXPECT_EQ(At(tile.by_category, Category::kInstrumentationResults), 8u);
  // Control steps: a and b streamed in are one host exchange, one step.
  EXPECT_EQ(At(tile.by_category, Category::kControlCode), 620u + 4 * 32 + 1 * 8);
  EXPECT_EQ(At(tile.by_category, Category::kInternalExchangeCode), 48u);
  // Three host exchanges (the seed; a and b; the sum), two with transfers
  // on this tile, three regions.
  EXPECT_EQ(At(tile.by_category, Category::kHostExchangeCode), 3u * 96 + 2 * 64 + 3 * 8);
  EXPECT_EQ(At(tile.by_category, Category::kHostExchangePacketHeaders), 8u + 3 * 8);
  // a, b and sum (4 B each) are live together at the add; the four host
  // streams' positions are always live.
  EXPECT_EQ(At(tile.by_category, Category::kVariables), 4u * 4 + 12);
  EXPECT_EQ(tile.ExcludingGaps(), 414u + 28 + 8 + 756 + 48 + 440 + 32 + 3168 + 16 + 12);
  EXPECT_EQ(tile.not_always_live, 12u);
  ASSERT_EQ(tile.vertex_types.size(), 2u);
}

// The liveness steps follow the schedule; always-live variables account for
// every always-live byte of every tile.
TEST(CompilerTest, LivenessStepsAndAlwaysLiveVariablesOfAVectorAdd) {
  const hlo::Module module = hlo::testing::MustParse(R"(
HloModule vadd
ENTRY main {
  a = f32[1216] parameter(0)
  b = f32[1216] parameter(1)
  c = f32[1216] constant({...})
  s = f32[1216] add(a, b)
  ROOT sum = f32[1216] multiply(s, c)
}
)");
  const CompileResult result = CompileOneElementPerTile(module);
  const report::CompilationReport& report = result.report;
  ASSERT_EQ(report.liveness.size(), result.lowering.program_steps);
  uint64_t peak = 0, tile_peaks = 0, always_live = 0, listed = 0;
  for (const report::LivenessStep& step : report.liveness) {
    ASSERT_LT(step.program, report.programs.size());
    peak = std::max(peak, step.not_always_live);
  }
  for (const report::TileMemory& tile : report.tiles) {
    tile_peaks += tile.not_always_live;
    always_live += tile.always_live;
  }
  // One element of a, b, s and sum per tile: at most a, b and s (or s and
  // sum) are live together, 12 B on each of the 1,216 tiles.
  EXPECT_EQ(tile_peaks, 1216u * 12);
  EXPECT_EQ(peak, 1216u * 12);
  const auto at_peak =
      std::find_if(report.liveness.begin(), report.liveness.end(),
                   [&](const report::LivenessStep& s) { return s.not_always_live == peak; });
  EXPECT_EQ(report.programs[at_peak->program].kind, "Execute");
  // The last step streams sum out: only sum is live then.
  EXPECT_EQ(report.liveness.back().not_always_live, 1216u * 4);
  EXPECT_EQ(report.programs[report.liveness.back().program].kind, "CopyToStream");
  // The constant by name (4 B on each tile), then the categories' rest.
  ASSERT_FALSE(report.always_live_variables.empty());
  bool constant_listed = false;
  uint64_t stack = 0;
  for (const report::NamedBytes& v : report.always_live_variables) {
    listed += v.bytes;
    if (v.bytes == 1216u * 4 && v.name.find('c') == 0) constant_listed = true;
    if (v.name == "stack") stack = v.bytes;  // Poplar's name for the category
  }
  EXPECT_TRUE(constant_listed);
  EXPECT_EQ(stack, 1216u * At(report.tiles[0].by_category, Category::kStack));
  EXPECT_EQ(listed, always_live);
  EXPECT_TRUE(std::is_sorted(
      report.always_live_variables.begin(), report.always_live_variables.end(),
      [](const report::NamedBytes& x, const report::NamedBytes& y) { return x.bytes > y.bytes; }));
  // At the peak, a, b and s are live (4 B on each tile each), or s and sum.
  std::set<std::string> live_at_peak;
  const uint64_t peak_step = static_cast<uint64_t>(at_peak - report.liveness.begin());
  for (const report::LiveVariable& v : report.not_always_live_variables) {
    if (v.first_step <= peak_step && peak_step <= v.last_step) live_at_peak.insert(v.name);
  }
  EXPECT_THAT(live_at_peak, ::testing::AnyOf(::testing::IsSupersetOf({"a", "b", "s"}),
                                             ::testing::IsSupersetOf({"s", "sum"})));
}

// Each HLO instruction that made compute sets is an operation owning them,
// with their vertices, the bytes its steps received and a dot's FLOPs.
TEST(CompilerTest, OperationsOwnTheirComputeSets) {
  const hlo::Module module = hlo::testing::MustParse(R"(
HloModule ops
ENTRY main {
  a = f32[64,32] parameter(0)
  b = f32[32,16] parameter(1)
  d = f32[64,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT e = f32[64,16] exponential(d)
}
)");
  const CompileResult result = MustCompile(module, "ipu2");
  const report::CompilationReport& report = result.report;
  std::map<std::string, const report::Operation*> by_name;
  for (const report::Operation& op : report.operations) by_name[op.name] = &op;
  ASSERT_TRUE(by_name.count("d") && by_name.count("e"));
  EXPECT_EQ(by_name["d"]->opcode, "dot");
  EXPECT_EQ(by_name["d"]->flops, uint64_t{2} * 64 * 16 * 32);
  EXPECT_EQ(by_name["e"]->opcode, "exponential");
  EXPECT_EQ(by_name["e"]->flops, uint64_t{64} * 16);  // one per element
  EXPECT_GT(by_name["d"]->exchange_bytes, 0u);        // its operands are spread over other tiles
  // The vertices of the compute sets each operation owns are its vertices.
  std::vector<uint64_t> vertices(report.operations.size(), 0);
  std::set<uint32_t> owned;
  for (const report::ComputeSetOperation& link : report.compute_set_operations) {
    ASSERT_LT(link.compute_set, report.compute_sets.size());
    ASSERT_LT(link.operation, report.operations.size());
    EXPECT_TRUE(owned.insert(link.compute_set).second) << "one operation per compute set";
    for (const report::ComputeSetVertices& type : report.compute_sets[link.compute_set].vertices)
      vertices[link.operation] += type.count;
    EXPECT_TRUE(report.compute_sets[link.compute_set].name.starts_with(
        report.operations[link.operation].name));
  }
  for (size_t op = 0; op < report.operations.size(); ++op) {
    EXPECT_EQ(report.operations[op].vertices, vertices[op]) << report.operations[op].name;
    EXPECT_GT(report.operations[op].vertex_state_bytes, 0u) << report.operations[op].name;
  }
  // The seed's compute set belongs to no instruction.
  EXPECT_LT(owned.size(), report.compute_sets.size());
  // Each operation's tiles: runs of consecutive tiles, in order, not
  // touching, whose vertices are the operation's; code at least one
  // codelet's per tile.
  std::vector<uint64_t> run_vertices(report.operations.size(), 0),
      run_tiles(report.operations.size(), 0);
  for (size_t i = 0; i < report.operation_tiles.size(); ++i) {
    const report::OperationTiles& run = report.operation_tiles[i];
    ASSERT_LT(run.operation, report.operations.size());
    ASSERT_LE(run.first_tile, run.last_tile);
    ASSERT_LT(run.last_tile, report.tiles.size());
    if (i > 0 && report.operation_tiles[i - 1].operation == run.operation) {
      EXPECT_GT(run.first_tile, report.operation_tiles[i - 1].last_tile + 1) << "runs touch";
    }
    run_vertices[run.operation] += run.vertices;
    run_tiles[run.operation] += run.last_tile - run.first_tile + 1;
  }
  for (size_t op = 0; op < report.operations.size(); ++op) {
    const report::Operation& operation = report.operations[op];
    EXPECT_EQ(run_vertices[op], operation.vertices) << operation.name;
    EXPECT_EQ(operation.tiles, run_tiles[op]) << operation.name;
    ASSERT_TRUE(operation.code_bytes) << operation.name;
    EXPECT_GE(*operation.code_bytes, run_tiles[op]) << operation.name;
  }
}

// On more than one IPU each step's live bytes are also given per IPU, and
// they add up to the step's.
TEST(CompilerTest, LivenessPerIpuSumsToTheSteps) {
  const hlo::Module module = hlo::testing::MustParse(R"(
HloModule two
ENTRY main {
  a = f32[4096] parameter(0)
  b = f32[4096] parameter(1)
  s = f32[4096] add(a, b)
  ROOT e = f32[4096] exponential(s)
}
)");
  Expected<Target> target = Target::FromPreset("ipu2", 2);
  ASSERT_TRUE(target.has_value());
  Expected<CompileResult> result = CompileModule(module, *target, {});
  ASSERT_TRUE(result) << result.error().message();
  const report::CompilationReport& report = result->report;
  ASSERT_FALSE(report.liveness.empty());
  ASSERT_EQ(report.liveness_by_ipu.size(), 2 * report.liveness.size());
  std::vector<uint64_t> summed(report.liveness.size(), 0);
  std::set<uint32_t> ipus;
  for (size_t i = 0; i < report.liveness_by_ipu.size(); ++i) {
    const report::IpuStep& entry = report.liveness_by_ipu[i];
    EXPECT_EQ(entry.step, i / 2);  // by step, then IPU
    EXPECT_EQ(entry.ipu, i % 2);
    summed[entry.step] += entry.not_always_live;
    if (entry.not_always_live > 0) ipus.insert(entry.ipu);
  }
  for (size_t i = 0; i < report.liveness.size(); ++i)
    EXPECT_EQ(summed[i], report.liveness[i].not_always_live) << "step " << i;
  EXPECT_EQ(ipus.size(), 2u) << "the work is spread over both IPUs";
  // One IPU: none (the step's own figure is its IPU's).
  EXPECT_TRUE(MustCompile(module, "ipu2").report.liveness_by_ipu.empty());
}

// The not-always-live variables with their steps account for every step's
// live bytes, on a real training step (hloenv's, in the shared corpus) with
// exchanges and receive buffers.
TEST(CompilerTest, LiveVariablesSumToEveryStepsLiveBytes) {
  const std::string file = "hloenv_hlo_test.jit_train_step.151.txt";
  Expected<std::vector<hlo::Module>> modules =
      hlo::ParseModules(hlo::testing::ReadCorpus(file), {.source_name = file});
  ASSERT_TRUE(modules && modules->size() == 1);
  const CompileResult compiled = MustCompile(modules->front(), "ipu2");
  const report::CompilationReport& report = compiled.report;
  ASSERT_GT(report.liveness.size(), 10u);
  std::vector<uint64_t> summed(report.liveness.size() + 1, 0);
  bool buffers = false;
  for (const report::LiveVariable& v : report.not_always_live_variables) {
    ASSERT_LE(v.first_step, v.last_step) << v.name;
    ASSERT_LT(v.last_step, report.liveness.size()) << v.name;
    summed[v.first_step] += v.bytes;
    summed[v.last_step + 1] -= v.bytes;
    buffers = buffers || v.name.starts_with("exchange buffer of ");
  }
  EXPECT_TRUE(buffers);
  uint64_t live = 0;
  for (size_t i = 0; i < report.liveness.size(); ++i) {
    live += summed[i];
    ASSERT_EQ(live, report.liveness[i].not_always_live) << "step " << i;
  }
  // The fullest tile of each step: never more than that tile's own peak or
  // the step's total, and the fullest of all steps is the fullest tile's peak.
  ASSERT_EQ(report.liveness_fullest_tiles.size(), report.liveness.size());
  uint64_t fullest_step = 0, fullest_tile = 0;
  for (size_t i = 0; i < report.liveness.size(); ++i) {
    const report::StepTile& f = report.liveness_fullest_tiles[i];
    ASSERT_LT(f.tile, report.tiles.size());
    EXPECT_LE(f.not_always_live, report.tiles[f.tile].not_always_live) << "step " << i;
    EXPECT_LE(f.not_always_live, report.liveness[i].not_always_live) << "step " << i;
    fullest_step = std::max(fullest_step, f.not_always_live);
  }
  for (const report::TileMemory& tile : report.tiles)
    fullest_tile = std::max(fullest_tile, tile.not_always_live);
  EXPECT_EQ(fullest_step, fullest_tile);
}

// f32[m,k] x f32[k,n] compiled for ipu2.
CompileResult CompileMatmul(uint64_t m, uint64_t k, uint64_t n) {
  const hlo::Module module = hlo::testing::MustParse(fmt::format(R"(
HloModule matmul
ENTRY main {{
  x = f32[{0},{1}] parameter(0)
  w = f32[{1},{2}] parameter(1)
  ROOT y = f32[{0},{2}] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
)",
                                                                 m, k, n));
  return MustCompile(module, "ipu2");
}

// A dot big enough to split its contraction: partial sums on several tiles
// and a reduction.
TEST(CompilerTest, DotSplitsContractionWithPartialsAndReduction) {
  const CompileResult result = CompileMatmul(16, 512, 16);
  ExpectInvariants(result, "matmul");
  // 256 outputs and 131,072 MACs: the planner (conv_plan.cc) splits the
  // 512-long contraction over tiles, one partial-sum vertex per cell of its
  // partition, and reduces the partials with a reduction on the output's
  // tiles.
  ASSERT_EQ(result.lowering.plans.size(), 1u);
  EXPECT_THAT(result.lowering.plans[0], HasSubstr(" ci"));
  size_t partial = 0, reduce = 0;
  for (const auto& usage : result.graph_stats.by_codelet) {
    if (usage.codelet->name() == MatMulPartialCodeletName(ElementType::kF32, ElementType::kF32))
      partial = usage.vertices;
    if (usage.codelet->name() == ReduceCodeletName(ReduceOp::kAdd, ElementType::kF32, false))
      reduce = usage.vertices;
  }
  EXPECT_GT(partial, 1u);
  EXPECT_GT(reduce, 0u);
}

// A contraction split 512 ways: its partial sums are added in two stages
// (ReduceStagesOf: 23 groups, 6 of 23 partials and 17 of 22), so a
// reducing tile reads from a few dozen others, not 511.
TEST(CompilerTest, ManyPartialSumsAreAddedInATree) {
  const CompileResult result = CompileMatmul(8, 65536, 16);
  ExpectInvariants(result, "matmul");
  ASSERT_EQ(result.lowering.plans.size(), 1u);
  EXPECT_THAT(result.lowering.plans[0], HasSubstr("planned as ci512:"));
  std::map<std::string, size_t> vertices;
  size_t most_regions = 0;  // of a last-stage sum: each group's sum and its output
  for (ComputeSetId id = 0; id < result.graph->num_compute_sets(); ++id) {
    const ComputeSetInfo& set = result.graph->compute_set(id);
    vertices[set.name] = set.vertices.size();
    if (set.name != "y/reduce") continue;
    for (VertexId v : set.vertices) {
      size_t regions = 0;
      for (const FieldView& field : result.graph->fields(v)) regions += field.regions().size();
      most_regions = std::max(most_regions, regions);
    }
  }
  // The first stage: each group's 128 sums cut into pieces on its cells'
  // tiles (6 a piece, ceil(128 / 23) and ceil(128 / 22) alike: 22
  // non-empty); the last: one output on each of 128 cells' tiles.
  EXPECT_EQ(vertices["y/reduce/groups"], 22u * 23);
  EXPECT_EQ(vertices["y/reduce"], 128u);
  EXPECT_EQ(most_regions, 23u + 1);
}

// MNIST's first layer in a module using 0.06% of the chip: memory is not
// scarce, so its plan spreads over the tiles for speed (every op after it
// runs where its result lies). Counting a cell's bytes per tile of the
// target regardless of pressure planned it on 200 cells, and the sample's
// training step took 2.8 times its cycles.
TEST(CompilerTest, ASmallModulesDotSpreadsOverTheTiles) {
  const CompileResult result = CompileMatmul(32, 784, 128);
  ASSERT_EQ(result.lowering.plans.size(), 1u);
  const std::string& plan = result.lowering.plans[0];
  const size_t at = plan.find(" cells");
  ASSERT_NE(at, std::string::npos) << plan;
  const size_t begin = plan.rfind(' ', at - 1) + 1;
  EXPECT_GT(std::stoul(plan.substr(begin, at - begin)), 1000u) << plan;
}

// A module that does not fit one tile: a 200 KiB parameter and its negation.
constexpr const char* kBigNegate = R"(
HloModule big
ENTRY main {
  a = f32[200000] parameter(0)
  ROOT n = f32[200000] negate(a)
}
)";

// Compiled for `tiles` tiles of an ipu1, its report checked; nullopt (and a
// failure) if it does not compile.
std::optional<CompileResult> CompileOnIpu1Tiles(const char* text, uint32_t tiles) {
  const hlo::Module module = hlo::testing::MustParse(text);
  Expected<Target> target = Target::FromPreset("ipu1", 1, tiles);
  if (!target) {
    ADD_FAILURE() << target.error().message();
    return std::nullopt;
  }
  Expected<CompileResult> result = CompileModule(module, *target, {});
  if (!result) {
    ADD_FAILURE() << result.error().message();
    return std::nullopt;
  }
  ExpectInvariants(*result, std::string(module.name()));
  return std::move(*result);
}

// A module that does not fit: a 200 KiB constant-free parameter on one tile
// target still compiles and reports the tile as out of memory.
TEST(CompilerTest, OutOfMemoryStillReports) {
  const std::optional<CompileResult> result = CompileOnIpu1Tiles(kBigNegate, 1);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->tiles_out_of_memory, 1u);
  const report::TileMemory& tile = result->report.tiles[0];
  EXPECT_GT(tile.by_region[2].excluding_gaps, 0u);  // overflowed
  // a and n, plus the positions of the seed, a and n host streams.
  EXPECT_EQ(At(tile.by_category, Category::kVariables), 2u * 800'000 + 3 * 4);
}

// The report names the largest allocations of each tile, with addresses
// inside the tile: here both whole tensors on a one-tile target.
TEST(CompilerTest, VariablesNameTheLargestAllocationsOfEachTile) {
  const std::optional<CompileResult> result = CompileOnIpu1Tiles(kBigNegate, 1);
  ASSERT_TRUE(result);
  const std::vector<report::Variable>& vars = result->report.variables;
  ASSERT_GE(vars.size(), 2u);
  EXPECT_EQ(vars[0].bytes, 800'000u);
  EXPECT_EQ(vars[1].bytes, 800'000u);
  EXPECT_EQ(std::set<std::string>({vars[0].name, vars[1].name}), std::set<std::string>({"a", "n"}));
  for (const report::Variable& v : vars) {
    EXPECT_EQ(v.tile, 0u);
    ASSERT_TRUE(v.offset.has_value()) << v.name;
  }
  // Live together (n is written while a is read), so they do not overlap.
  const auto [lo, hi] = std::minmax(*vars[0].offset, *vars[1].offset);
  EXPECT_GE(hi, lo + 800'000);
  EXPECT_EQ(vars[0].category, Category::kVariables);
  EXPECT_FALSE(vars[0].always_live);
}

// Elements read from another tile arrive in a receive buffer, named after
// the compute set that reads them; each tile lists at most
// kVariablesPerTile allocations, largest first.
TEST(CompilerTest, VariablesIncludeExchangeBuffersLargestFirst) {
  constexpr const char* module = R"(
HloModule rev
ENTRY main {
  a = f32[40000] parameter(0)
  ROOT r = f32[40000] reverse(a), dimensions={0}
}
)";
  const std::optional<CompileResult> result = CompileOnIpu1Tiles(module, 2);
  ASSERT_TRUE(result);
  std::map<uint32_t, std::vector<const report::Variable*>> by_tile;
  bool buffer = false;
  for (const report::Variable& v : result->report.variables) {
    by_tile[v.tile].push_back(&v);
    if (v.name.starts_with("exchange buffer of ")) {
      buffer = true;
      EXPECT_GT(v.bytes, 0u);
    }
  }
  EXPECT_TRUE(buffer);
  for (const auto& [tile, vars] : by_tile) {
    EXPECT_LE(vars.size(), kVariablesPerTile);
    for (size_t i = 1; i < vars.size(); ++i) EXPECT_GE(vars[i - 1]->bytes, vars[i]->bytes) << tile;
  }
}

// ---- The corpus ---------------------------------------------------------------

class CorpusCompileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusCompileTest, CompilesForIpu2WithConsistentReport) {
  if (hlo::testing::TooSlowUnderSanitizers(GetParam()))
    GTEST_SKIP() << "too slow under ASan; the release build runs it";
  Expected<std::vector<hlo::Module>> modules =
      hlo::ParseModules(hlo::testing::ReadCorpus(GetParam()), {.source_name = GetParam()});
  ASSERT_TRUE(modules.has_value()) << modules.error().message();
  const Target target = MustTarget("ipu2");
  for (const hlo::Module& module : *modules) {
    Expected<CompileResult> result = CompileModule(module, target, {});
    ASSERT_TRUE(result.has_value()) << module.name() << ": " << result.error().message();
    ExpectInvariants(*result, std::string(module.name()));
    ASSERT_EQ(result->report.tiles.size(), target.NumTiles());
    // The text writer accepts it and the total is what the tiles sum to.
    const std::string text = report::WriteTextReport(result->report, nullptr, {});
    EXPECT_NE(text.find("Memory Usage:"), std::string::npos);
    uint64_t excluding = 0;
    for (const report::TileMemory& tile : result->report.tiles) excluding += tile.ExcludingGaps();
    EXPECT_GT(excluding, 0u);
  }
}

// The schedule is walked by threads over consecutive ranges of steps and the
// parts joined in step order: the layout must not depend on how many. The
// modules chosen have loops, conditionals, copies and host streams.
TEST(CompilerTest, MemoryLayoutDoesNotDependOnTheNumberOfWalkers) {
  size_t compared = 0;
  for (const std::string& file : hlo::testing::CorpusFiles()) {
    if (compared == 6) break;
    if (hlo::testing::TooSlowUnderSanitizers(file)) continue;
    const std::string text = hlo::testing::ReadCorpus(file);
    // Modules with a loop or a conditional: the schedules with structure.
    if (text.find(" while(") == std::string::npos &&
        text.find(" conditional(") == std::string::npos)
      continue;
    Expected<std::vector<hlo::Module>> modules = hlo::ParseModules(text, {.source_name = file});
    if (!modules || modules->size() != 1) continue;
    Expected<CompileResult> compiled = CompileModule(modules->front(), MustTarget("ipu2"), {});
    if (!compiled) continue;
    const CompileResult& result = *compiled;
    std::optional<MemoryLayout> one;
    for (uint32_t walkers : {1u, 2u, 3u, 7u, 1000u}) {
      Expected<MemoryLayout> layout =
          LayOutMemory(*result.graph, result.program, result.valueless_constants,
                       MemoryOptions{.walkers = walkers});
      ASSERT_TRUE(layout.has_value()) << file << ": " << layout.error().message();
      ASSERT_GT(layout->program_steps, 2u) << file;
      if (!one) {
        one = std::move(*layout);
        continue;
      }
      EXPECT_EQ(layout->tiles, one->tiles) << file << " with " << walkers << " walkers";
      EXPECT_EQ(layout->variables, one->variables) << file << " with " << walkers << " walkers";
      EXPECT_EQ(layout->exchanges, one->exchanges) << file << " with " << walkers << " walkers";
    }
    ++compared;
  }
  EXPECT_EQ(compared, 6u);
}

// The schedule walk forgets a tile's repeated reads once the next tile's
// vertices start when each tile's vertices are listed together; listed
// interleaved, it keeps every tile's. Both give the same layout: a small
// variable spread over four tiles, read whole (and once more through a
// broadcast view) by two vertices on each tile.
TEST(CompilerTest, TheWalkDoesNotDependOnHowEachTilesVerticesAreListed) {
  auto lay_out = [](bool grouped) {
    Expected<Target> target = Target::FromPreset("ipu2", 1, 4);
    EXPECT_TRUE(target.has_value());
    Graph graph(*target);
    Tensor v = *graph.AddVariable(ElementType::kF32, {64}, "v");
    for (uint32_t t = 0; t < 4; ++t)
      EXPECT_TRUE(graph.SetTileMapping(*v.Slice(16 * t, 16 * t + 16), t).has_value());
    Tensor out = *graph.AddVariable(ElementType::kF32, {8}, "out");
    const ComputeSetId cs = graph.AddComputeSet("sum");
    const Tensor twice = *Tensor::Concat(std::vector<Tensor>{v, *v.Slice(0, 16)});
    for (uint32_t k = 0; k < 8; ++k) {
      const uint32_t tile = grouped ? k / 2 : k % 4;
      EXPECT_TRUE(graph.SetTileMapping(*out.Slice(k, k + 1), tile).has_value());
      VertexRef vertex = *graph.AddVertex(cs, kSumVertexCodeletName, "sum");
      EXPECT_TRUE(graph.Connect(vertex["in"], k % 2 == 0 ? v : twice).has_value());
      EXPECT_TRUE(graph.Connect(vertex["out"], *out.Slice(k, k + 1)).has_value());
      EXPECT_TRUE(graph.SetTileMapping(vertex, tile).has_value());
    }
    const program::Sequence program{program::Execute(cs)};
    Expected<MemoryLayout> layout = LayOutMemory(graph, program, {}, MemoryOptions{});
    EXPECT_TRUE(layout.has_value()) << layout.error().message();
    return std::move(*layout);
  };
  const MemoryLayout grouped = lay_out(true);
  const MemoryLayout interleaved = lay_out(false);
  ASSERT_EQ(grouped.tiles.size(), 4u);
  EXPECT_EQ(grouped.tiles, interleaved.tiles);
  EXPECT_EQ(grouped.exchanges, interleaved.exchanges);
  EXPECT_EQ(grouped.variables, interleaved.variables);
  // Each tile receives the 48 elements it does not hold once: 192 B, not
  // the 256 B of also receiving the broadcast view's repeat.
  size_t buffers = 0;
  for (const report::Variable& variable : grouped.variables) {
    if (!variable.name.starts_with("exchange buffer")) continue;
    ++buffers;
    EXPECT_EQ(variable.bytes, 192u) << variable.name << " on tile " << variable.tile;
  }
  EXPECT_EQ(buffers, 4u);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusCompileTest,
                         ::testing::ValuesIn(hlo::testing::CorpusFiles()),
                         [](const auto& info) { return hlo::testing::TestName(info.param); });

}  // namespace
}  // namespace tileprof::engine::compiler
