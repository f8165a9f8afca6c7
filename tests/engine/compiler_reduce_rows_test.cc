// Row reductions of long rows (engine/compiler/lower_reduce.cc): reduced
// where the rows lie, not by output tiles receiving whole rows.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

// The most elements any Reduce vertex reads, and how many vertices read.
std::pair<uint64_t, uint64_t> LargestReduceInput(const Compiled& compiled) {
  const Graph& graph = *compiled.result.graph;
  uint64_t largest = 0, vertices = 0;
  for (VertexId v = 0; v < graph.num_vertices(); ++v) {
    const VertexInfo& vertex = graph.vertex(v);
    if (!vertex.codelet->name().starts_with("popops::Reduce")) continue;
    const std::optional<size_t> field = vertex.codelet->FindField("partials");
    if (!field) continue;
    ++vertices;
    largest = std::max(largest, graph.fields(v)[*field].NumElements());
  }
  return {largest, vertices};
}

constexpr const char* kSoftmaxSum = R"(
HloModule r
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[1,128,30522] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[128] reduce(x, z), dimensions={0,2}, to_apply=add
})";

TEST(ReduceRows, LongRowsAreReducedWhereTheyLie) {
  // 128 rows of 30,522 on 1,472 tiles (a softmax over a vocabulary, with
  // PyTorch/XLA's leading dimension of one): each tile reduces its pieces
  // of a row or two; no vertex reads a whole row.
  const Compiled compiled = CompileText(kSoftmaxSum, "ipu2", 1472);
  const auto [largest, vertices] = LargestReduceInput(compiled);
  EXPECT_GT(vertices, 128u);
  EXPECT_LT(largest, 30522u);
  std::vector<float> x(128 * 30522);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k % 7) - 3.0f;
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode(std::span<const float>(x))}});
  const std::vector<float> got = Decode<float>(out["out.0"]);
  ASSERT_EQ(got.size(), 128u);
  for (size_t row = 0; row < 128; ++row) {
    double want = 0;
    for (size_t k = 0; k < 30522; ++k) want += x[row * 30522 + k];
    EXPECT_NEAR(got[row], want, 1e-3) << "row " << row;
  }
}

TEST(ReduceRows, ShortRowsStayOneVertexPerOutput) {
  // 128 rows of 64: an output tile reads its rows whole, as before.
  std::string text = kSoftmaxSum;
  text.replace(text.find("1,128,30522"), 11, "1,128,64");
  const Compiled compiled = CompileText(text, "ipu2", 1472);
  const auto [largest, vertices] = LargestReduceInput(compiled);
  EXPECT_EQ(vertices, 128u);
  EXPECT_EQ(largest, 64u);
}

}  // namespace
}  // namespace tileprof::engine::sim_test
