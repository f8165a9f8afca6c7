// Scatters of whole rows into a table planned in column blocks
// (engine/compiler/lower_scatter.cc, PlanColumnBlocks): what each vertex
// receives, and the values the simulator computes against ones worked out
// here.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

// The largest element count of the scatter vertices' updates field, and how
// many vertices there are.
std::pair<uint64_t, uint64_t> LargestUpdates(const Compiled& compiled) {
  const Graph& graph = *compiled.result.graph;
  uint64_t vertices = 0, largest = 0;
  for (VertexId v = 0; v < graph.num_vertices(); ++v) {
    const VertexInfo& vertex = graph.vertex(v);
    if (!vertex.codelet->name().starts_with("tileprof::Scatter<")) continue;
    ++vertices;
    largest =
        std::max(largest, graph.fields(v)[*vertex.codelet->FindField("updates")].NumElements());
  }
  return {vertices, largest};
}

constexpr const char* kEmbeddingGradient = R"(
HloModule s
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  o = f32[2000,32] parameter(0)
  i = s32[500,1] parameter(1)
  u = f32[500,32] parameter(2)
  ROOT s = f32[2000,32] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";

TEST(SimScatterColumns, EachTileReceivesItsColumnsOfEveryUpdate) {
  // 500 rows of 32 into 2,000 on 64 tiles: row-major, each tile's run of
  // about 31 rows would receive all 16,000 update elements (in steps);
  // in blocks of 4 columns, a tile holds rows of one block and receives
  // that block of every update (two blocks where its run crosses one).
  const Compiled compiled = CompileText(kEmbeddingGradient, "ipu2", 64);
  const auto [vertices, largest] = LargestUpdates(compiled);
  EXPECT_GT(vertices, 8u);
  EXPECT_LE(largest, 500u * 4 * 2);
  std::vector<float> table(2000 * 32), updates(500 * 32);
  std::vector<int32_t> ids(500);
  for (size_t k = 0; k < table.size(); ++k) table[k] = static_cast<float>(k % 97);
  for (size_t k = 0; k < updates.size(); ++k) updates[k] = static_cast<float>(k % 13) - 6.0f;
  std::vector<float> want = table;
  for (size_t l = 0; l < ids.size(); ++l) {
    ids[l] = static_cast<int32_t>((l * 37) % 2010) - 5;  // duplicates, and some out of range
    if (ids[l] < 0 || ids[l] >= 2000) continue;
    for (size_t c = 0; c < 32; ++c)
      want[static_cast<size_t>(ids[l]) * 32 + c] += updates[l * 32 + c];
  }
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"o", Encode(std::span<const float>(table))},
                                           {"i", Encode(std::span<const int32_t>(ids))},
                                           {"u", Encode(std::span<const float>(updates))}});
  EXPECT_EQ(Decode<float>(out["out.0"]), want);
}

TEST(SimScatterColumns, AFewRowsStayRowMajor) {
  // 4 rows of 32 (528 bytes with their ids): a tile receives little as it
  // is, and column blocks would only cost the result's readers its runs.
  std::string text = kEmbeddingGradient;
  for (const char* size : {"500,1", "500,32"}) text.replace(text.find(size), 3, "4");
  const Compiled compiled = CompileText(text, "ipu2", 64);
  const Graph& graph = *compiled.result.graph;
  bool row_major = false;
  for (VariableId v = 0; v < graph.num_variables(); ++v) {
    if (graph.variable(v).name == "s")
      row_major = graph.variable(v).shape == std::vector<uint64_t>{2000, 32};
  }
  EXPECT_TRUE(row_major);
}

TEST(SimScatterColumns, MillionsOfLookupsStayRowMajor) {
  // 1.1 M lookups in blocks would be staged through a view of 8.8 M runs
  // (lookups x blocks), past the bound the result's view is held to: the
  // rows are kept whole, and no staged copy of the updates is made.
  std::string text = kEmbeddingGradient;
  for (const char* size : {"500,1", "500,32"}) text.replace(text.find(size), 3, "1100000");
  const Compiled compiled = CompileText(text, "ipu2", 64);
  const Graph& graph = *compiled.result.graph;
  bool staged = false, row_major = false;
  for (VariableId v = 0; v < graph.num_variables(); ++v) {
    staged = staged || graph.variable(v).name == "s/updates";
    if (graph.variable(v).name == "s")
      row_major = graph.variable(v).shape == std::vector<uint64_t>{2000, 32};
  }
  EXPECT_FALSE(staged);
  EXPECT_TRUE(row_major);
}

}  // namespace
}  // namespace tileprof::engine::sim_test
