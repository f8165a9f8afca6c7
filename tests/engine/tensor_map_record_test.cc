// The compiler's tensor map (CompileOptions::record_tensor_map) and the
// instruction info's ML types, on small modules with hand-checked answers.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "engine/compiler/compiler.h"
#include "engine/session/instruction_info.h"
#include "tests/hlo/test_util.h"

namespace tileprof::engine {
namespace {

constexpr const char* kModule = R"(HloModule m

fused {
  x = f32[3000] parameter(0)
  ROOT n = f32[3000] negate(x)
}

ENTRY main {
  p = f32[3000] parameter(0)
  k = f32[] constant(2)
  b = f32[3000] broadcast(k), dimensions={}
  m = f32[3000] multiply(p, b), metadata={op_type="Mul" op_name="model/mul"}
  f = f32[3000] fusion(m), kind=kLoop, calls=fused
  tok = token[] after-all()
  ROOT r = (f32[3000], token[], f32[3000]) tuple(f, tok, m)
}
)";

struct Compiled {
  hlo::Module module;
  compiler::CompileResult result;
};

Compiled MustCompile(const char* text, bool record) {
  hlo::Module module = hlo::testing::MustParse(text);
  Expected<Target> target = Target::FromPreset("ipu2");
  EXPECT_TRUE(target);
  compiler::CompileOptions options;
  options.record_tensor_map = record;
  Expected<compiler::CompileResult> result = compiler::CompileModule(module, *target, options);
  if (!result) {
    ADD_FAILURE() << result.error().message();
    std::abort();
  }
  return {std::move(module), std::move(*result)};
}

const report::MappedTensor* Find(const report::TensorMap& map, std::string_view computation,
                                 std::string_view name, uint64_t index) {
  for (const auto& c : map.computations) {
    if (c.computation != computation) continue;
    for (const auto& t : c.tensors)
      if (t.instruction == name && t.output_index == index) return &t;
  }
  return nullptr;
}

TEST(TensorMapRecording, OffByDefault) {
  Compiled compiled = MustCompile(kModule, false);
  EXPECT_TRUE(compiled.result.tensor_map.computations.empty());
}

TEST(TensorMapRecording, EveryOutputInModuleOrder) {
  Compiled compiled = MustCompile(kModule, true);
  const report::TensorMap& map = compiled.result.tensor_map;
  ASSERT_EQ(map.computations.size(), 2u);
  EXPECT_EQ(map.computations[0].computation, "fused");  // module (post-)order
  EXPECT_EQ(map.computations[1].computation, "main");
  std::vector<std::pair<std::string, uint64_t>> ids;
  for (const auto& t : map.computations[1].tensors) ids.emplace_back(t.instruction, t.output_index);
  // The token leaf takes index 1 of r and has no tensor; tok itself has none.
  // b, a scalar broadcast, is read by m as the scalar k and has no tensor
  // either (lower_fusion.cc).
  EXPECT_EQ(ids, (std::vector<std::pair<std::string, uint64_t>>{
                     {"p", 0}, {"k", 0}, {"m", 0}, {"f", 0}, {"r", 0}, {"r", 2}}));
  ASSERT_EQ(map.computations[0].tensors.size(), 2u);
  EXPECT_EQ(map.computations[0].tensors[0].instruction, "x");
  EXPECT_EQ(map.computations[0].tensors[1].instruction, "n");
}

TEST(TensorMapRecording, FieldsOfEachTensor) {
  Compiled compiled = MustCompile(kModule, true);
  const report::TensorMap& map = compiled.result.tensor_map;
  const report::MappedTensor* k = Find(map, "main", "k", 0);
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->has_constant);
  EXPECT_EQ(k->shape, std::vector<uint64_t>{});
  EXPECT_EQ(k->total_elements, 1u);
  const report::MappedTensor* m = Find(map, "main", "m", 0);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->op_name, "model/mul");
  EXPECT_EQ(m->type, "float");
  EXPECT_FALSE(m->has_constant);
  EXPECT_EQ(m->shape, std::vector<uint64_t>{3000});
  for (const auto& c : map.computations) {
    for (const auto& t : c.tensors) {
      uint64_t sum = 0;
      for (size_t i = 0; i < t.tiles.size(); ++i) {
        sum += t.tiles[i].elements;
        EXPECT_GT(t.tiles[i].elements, 0u);
        if (i > 0) {
          EXPECT_LT(t.tiles[i - 1].tile, t.tiles[i].tile) << t.instruction;
        }
        EXPECT_LT(t.tiles[i].tile, 1472u);
      }
      EXPECT_EQ(sum, t.total_elements) << t.instruction;
      EXPECT_EQ(t.total_elements, t.shape.empty() ? 1u : t.shape[0]) << t.instruction;
    }
  }
}

// The parameter is a fresh variable: its entry must match the graph's own
// tile mapping of that variable.
// Elements per tile of the variable named `name` in the final graph, and in
// the tensor map's record of instruction `name`.
std::pair<std::map<uint32_t, uint64_t>, std::map<uint32_t, uint64_t>> GraphAndMap(
    const Compiled& compiled, std::string_view name) {
  const Graph& graph = *compiled.result.graph;
  std::map<uint32_t, uint64_t> in_graph, in_map;
  for (VariableId id = 0; id < graph.num_variables(); ++id) {
    if (graph.variable(id).name != name) continue;
    for (const TileRun& run : graph.TileMapping(id)) in_graph[run.tile] += run.end - run.begin;
  }
  const report::MappedTensor* t = Find(compiled.result.tensor_map, "main", name, 0);
  EXPECT_NE(t, nullptr) << name;
  if (t != nullptr)
    for (const auto& tile : t->tiles) in_map[tile.tile] = tile.elements;
  return {in_graph, in_map};
}

TEST(TensorMapRecording, ParameterMatchesTheGraphsTileMapping) {
  Compiled compiled = MustCompile(kModule, true);
  const auto [expected, actual] = GraphAndMap(compiled, "p");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(actual, expected);
  EXPECT_GT(actual.size(), 1u);  // 12,000 bytes spread over several tiles
}

TEST(TensorMapRecording, AWeightLaidOutByItsDotIsMappedWhereItEndsUp) {
  // The planned dot lays out its weight, a parameter it is the first to
  // read, on its cells after the parameter was recorded: the map counts the
  // final mapping, not the linear one the parameter was created with.
  Compiled compiled = MustCompile(R"(HloModule d
ENTRY main {
  x = f32[8,512] parameter(0)
  w = f32[512,4096] parameter(1)
  ROOT y = f32[8,4096] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                                  true);
  const auto [expected, actual] = GraphAndMap(compiled, "w");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(actual, expected);
}

TEST(TensorMapRecording, AnAliasedViewIsFlagged) {
  // A concatenation is lowered as a view of its operands: of one tensor
  // with itself, it names every element twice, so it has aliases and each
  // tile holds twice the parameter's count (Poplar counts view positions).
  Compiled compiled = MustCompile(R"(HloModule a
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[8] concatenate(p, p), dimensions={0}
})",
                                  true);
  const report::MappedTensor* p = Find(compiled.result.tensor_map, "e", "p", 0);
  const report::MappedTensor* c = Find(compiled.result.tensor_map, "e", "c", 0);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(p->has_aliases);
  EXPECT_TRUE(c->has_aliases);
  EXPECT_EQ(c->total_elements, 8u);
  ASSERT_EQ(c->tiles.size(), p->tiles.size());
  for (size_t i = 0; i < c->tiles.size(); ++i) {
    EXPECT_EQ(c->tiles[i].tile, p->tiles[i].tile);
    EXPECT_EQ(c->tiles[i].elements, 2 * p->tiles[i].elements);
  }
}

constexpr const char* kTraining = R"(HloModule train
ENTRY step {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  t = f32[8,4] parameter(2)
  y = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="dense/MatMul"}
  dy = f32[8,4] subtract(y, t)
  dw = f32[16,4] dot(x, dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}, metadata={op_name="grad/dw"}
  wt = f32[4,16] transpose(w), dimensions={1,0}
  dx = f32[8,16] dot(dy, wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  lr = f32[] constant(0.1)
  lrb = f32[16,4] broadcast(lr), dimensions={}
  upd = f32[16,4] multiply(lrb, dw)
  w2 = f32[16,4] subtract(w, upd)
  ROOT r = (f32[16,4], f32[8,16]) tuple(w2, dx)
})";

TEST(MlTypes, TrainingRolesFromDataFlow) {
  hlo::Module module = hlo::testing::MustParse(kTraining);
  report::InstructionInfo info = ClassifyMlTypes(module);
  EXPECT_EQ(info.ml_types, (std::vector<std::pair<std::string, report::MlType>>{
                               {"dense/MatMul/y", report::MlType::kTrainingFwd},
                               {"grad/dw/dw", report::MlType::kTrainingWu},
                               {"/dx", report::MlType::kTrainingBwd}}));
}

TEST(MlTypes, InferenceWhenNoWeightIsUpdated) {
  hlo::Module module = hlo::testing::MustParse(R"(HloModule inf
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  ROOT y = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="dense/MatMul"}
})");
  report::InstructionInfo info = ClassifyMlTypes(module);
  EXPECT_EQ(info.ml_types, (std::vector<std::pair<std::string, report::MlType>>{
                               {"dense/MatMul/y", report::MlType::kInferenceFwd}}));
}

TEST(MlTypes, OnlyDotsAndConvolutionsAndNestedOnesFollowTheirCaller) {
  hlo::Module module = hlo::testing::MustParse(R"(HloModule nested
f {
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = f32[2,2] parameter(0)
  w = f32[2,2] parameter(1)
  y = f32[2,2] fusion(x, w), kind=kOutput, calls=f
  s = f32[2,2] add(x, y)
  w2 = f32[2,2] subtract(w, s)
  ROOT r = (f32[2,2]) tuple(w2)
})");
  report::InstructionInfo info = ClassifyMlTypes(module);
  // The fusion reads the weight w: its dot is a forward op of training.
  EXPECT_EQ(
      info.ml_types,
      (std::vector<std::pair<std::string, report::MlType>>{{"/d", report::MlType::kTrainingFwd}}));
}

// Every corpus module: recording changes nothing else the compiler produces,
// and the map is one the reader accepts (unique ids, per-tile counts that
// ascend and sum to the total) and reads back unchanged.
class CorpusTensorMapTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTensorMapTest, RecordsAReadableMapAndChangesNothingElse) {
  if (hlo::testing::TooSlowUnderSanitizers(GetParam()))
    GTEST_SKIP() << "too slow under ASan; the release build runs it";
  Expected<std::vector<hlo::Module>> modules =
      hlo::ParseModules(hlo::testing::ReadCorpus(GetParam()), {.source_name = GetParam()});
  ASSERT_TRUE(modules) << modules.error().message();
  Expected<Target> target = Target::FromPreset("ipu2");
  ASSERT_TRUE(target);
  for (const hlo::Module& module : *modules) {
    compiler::CompileOptions on;
    on.record_tensor_map = true;
    // Each graph is dropped once compiled: only the reports are compared, and
    // two large graphs at once (mobilenet_v2: ~5 GB each) would not fit
    // beside a parallel test.
    Expected<compiler::CompileResult> with = compiler::CompileModule(module, *target, on);
    ASSERT_TRUE(with) << module.name();
    with->graph.reset();
    Expected<compiler::CompileResult> without = compiler::CompileModule(module, *target, {});
    ASSERT_TRUE(without) << module.name();
    without->graph.reset();
    EXPECT_EQ(with->report, without->report) << module.name();
    EXPECT_EQ(with->graph_stats.num_vertices, without->graph_stats.num_vertices);
    const report::TensorMap& map = with->tensor_map;
    ASSERT_FALSE(map.computations.empty()) << module.name();
    EXPECT_EQ(map.computations.back().computation, module.entry()->name())
        << "entry is last in module order";
    Expected<report::TensorMap> read =
        report::ReadTensorMapJson(report::WriteTensorMapJson(map), "map.json");
    ASSERT_TRUE(read) << module.name() << ": " << read.error().message();
    EXPECT_EQ(*read, map);
    // The entry's parameters are all there.
    std::set<std::string> entry_names;
    for (const auto& t : map.computations.back().tensors) entry_names.insert(t.instruction);
    for (const hlo::Instruction* parameter : module.entry()->parameters()) {
      if (parameter->shape().IsArray()) {
        EXPECT_TRUE(entry_names.contains(std::string(parameter->name()))) << parameter->name();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTensorMapTest,
                         ::testing::ValuesIn(hlo::testing::CorpusFiles()),
                         [](const auto& info) { return hlo::testing::TestName(info.param); });

}  // namespace
}  // namespace tileprof::engine
