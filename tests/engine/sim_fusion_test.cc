// Elementwise fusion (engine/compiler/lower_fusion.cc): which ops become one
// tileprof::MapExpr vertex, the TensorFlow IPU backend's one-user rule, a
// scalar broadcast read as a scalar, and that fused expressions compute what
// the ops compute.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

using ::testing::ElementsAre;

uint64_t VerticesOf(const Compiled& compiled, std::string_view prefix) {
  uint64_t n = 0;
  for (const auto& usage : compiled.result.graph_stats.by_codelet)
    if (usage.codelet->name().starts_with(prefix)) n += usage.vertices;
  return n;
}

bool HasVariable(const Compiled& compiled, std::string_view name) {
  const Graph& graph = *compiled.result.graph;
  for (VariableId v = 0; v < graph.num_variables(); ++v)
    if (graph.variable(v).name == name) return true;
  return false;
}

TEST(Fusion, SingleUserChainIsOneExpression) {
  // m and a each have one user, so m, a and n are one expression; x, read
  // by two ops of it, is one input. The scalar broadcast is read as a
  // scalar, never filled.
  Compiled compiled = CompileText(R"(
HloModule chain
ENTRY main {
  x = f32[6] parameter(0)
  y = f32[6] parameter(1)
  m = f32[6] multiply(x, y)
  two = f32[] constant(2)
  b = f32[6] broadcast(two), dimensions={}
  a = f32[6] add(m, b)
  n = f32[6] subtract(a, x)
  ROOT out = (f32[6]) tuple(n)
})");
  EXPECT_EQ(compiled.result.lowering.fused_expressions, 1u);
  EXPECT_EQ(compiled.result.lowering.fused_ops, 3u);
  EXPECT_GT(VerticesOf(compiled, "tileprof::MapExpr<"), 0u);
  EXPECT_FALSE(HasVariable(compiled, "m"));
  EXPECT_FALSE(HasVariable(compiled, "a"));
  EXPECT_FALSE(HasVariable(compiled, "b"));
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>({1, 2, 3, -4, 0.5f, 0})},
                                           {"y", Encode<float>({2, 0.5f, 3, 1, 4, -1})}});
  // x*y + 2 - x
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(3.0f, 1.0f, 8.0f, 2.0f, 3.5f, 2.0f));
}

TEST(Fusion, ValuesReadTwiceAndTheRootAreStored) {
  // s has two users and out is the computation's root (no user): as the
  // TensorFlow IPU backend, neither joins an expression, so each add keeps
  // its own vertex (seed 004's adder is three adds in the same way).
  Compiled compiled = CompileText(R"(
HloModule twice
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  s = f32[4] add(x, y)
  p = f32[4] multiply(s, y)
  ROOT out = f32[4] add(s, p)
})");
  EXPECT_EQ(compiled.result.lowering.fused_expressions, 0u);
  EXPECT_TRUE(HasVariable(compiled, "s"));
  EXPECT_TRUE(HasVariable(compiled, "p"));
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(
      *simulator, {{"x", Encode<float>({1, 2, 3, 4})}, {"y", Encode<float>({1, 0, -1, 2})}});
  // s + s*y
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(4.0f, 2.0f, 0.0f, 18.0f));
}

TEST(Fusion, ScalarBroadcastOfTheRootIsReadAsAScalar) {
  // relu at the root: the root is stored, but the zeros it compares with
  // are a scalar operand (popops' binary op with a scalar), not a tensor.
  Compiled compiled = CompileText(R"(
HloModule relu
ENTRY main {
  x = f32[5] parameter(0)
  zero = f32[] constant(0)
  zeros = f32[5] broadcast(zero), dimensions={}
  ROOT r = f32[5] maximum(x, zeros)
})");
  EXPECT_FALSE(HasVariable(compiled, "zeros"));
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>({-1, 2, -0.5f, 0, 7})}});
  // The result stream is out.0 whatever the root's name.
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(0.0f, 2.0f, 0.0f, 0.0f, 7.0f));
}

TEST(Fusion, FeatureBroadcastIsReadAsASpreadInput) {
  // A per-feature vector over [N,C,W] (a batch norm's scale over NCHW):
  // never copied into a tensor of the result's shape; each vertex holds
  // the features its run of the result covers (on 8 tiles the runs start
  // inside the vector, so some vertices hold a slice from an offset).
  Compiled compiled = CompileText(R"(
HloModule spread
ENTRY main {
  x = f32[4,6,64] parameter(0)
  v = f32[6] parameter(1)
  s = f32[4,6,64] broadcast(v), dimensions={1}
  ROOT r = f32[4,6,64] multiply(x, s)
})");
  EXPECT_FALSE(HasVariable(compiled, "s"));
  EXPECT_GT(VerticesOf(compiled, "tileprof::MapExpr<f32,f32~;"), 1u);
  std::vector<float> x(4 * 6 * 64), v = {1, 2, 3, 4, 5, 6};
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3;
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>(x)}, {"v", Encode<float>(v)}});
  const std::vector<float> r = Decode<float>(out["out.0"]);
  ASSERT_EQ(r.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(r[i], x[i] * v[(i / 64) % 6]) << "element " << i;
}

TEST(Fusion, LongChainsAreCutIntoExpressionsTheCodeletTakes) {
  // 150 single-user adds then a tuple: one tree would have 301 nodes, past
  // the codelet's 128; the chain is cut into several expressions (each
  // subtree past a third of the limit stored as a root) and still adds up.
  std::string text =
      "HloModule chain\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  y = f32[4] parameter(1)\n  a0 = f32[4] add(x, y)\n";
  for (int i = 1; i < 150; ++i) text += fmt::format("  a{} = f32[4] add(a{}, y)\n", i, i - 1);
  text += "  ROOT out = (f32[4]) tuple(a149)\n}\n";
  Compiled compiled = CompileText(text);
  EXPECT_GT(compiled.result.lowering.fused_expressions, 3u);
  EXPECT_EQ(compiled.result.lowering.fused_ops, 150u);
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(
      *simulator, {{"x", Encode<float>({1, 2, 3, 4})}, {"y", Encode<float>({1, 0, -1, 0.5f})}});
  // x + 150 y
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(151.0f, 2.0f, -147.0f, 79.0f));
}

}  // namespace
}  // namespace tileprof::engine::sim_test
