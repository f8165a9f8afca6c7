// The packed form of a compute set's plan (engine/sim/plan.h, Pack): what
// RunComputeSet reads must be exactly the TilePlans' vertices and copies;
// and every packed vertex is checked once, before the first run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codelets/codelets.h"
#include "engine/sim/plan.h"
#include "engine/sim/simulator.h"

namespace tileprof::engine::sim {
namespace {

TEST(SimPack, VerticesSpansAndCopiesKeepTheirTilesAndOrder) {
  std::vector<std::byte> memory(64), arena(64);
  std::vector<TilePlan> tiles(2);
  tiles[0].tile = 3;
  tiles[1].tile = 9;
  // Two vertices on tile 3, one on tile 9.
  for (int v = 0; v < 3; ++v) {
    VertexPlan vertex;
    vertex.id = 100 + v;
    vertex.params = {static_cast<uint32_t>(v), 7};
    vertex.spans = {std::span(memory).subspan(v, 4), std::span(arena).subspan(8 * v, 8)};
    if (v == 1) vertex.rows.resize(2);
    tiles[v < 2 ? 0 : 1].vertices.push_back(std::move(vertex));
  }
  // Tile 3 gathers three fields and writes back the second and third; the
  // first two have one arena address (a field of no bytes is gathered where
  // the next one starts), and the write-back must copy the second's runs.
  std::vector<HostRun> empty, second{{memory.data(), 4, 8, 2}},
      third{{memory.data() + 32, 8, 0, 1}};
  tiles[0].gathers = {{arena.data(), empty}, {arena.data(), second}, {arena.data() + 8, third}};
  tiles[0].write_backs = {{arena.data(), second}, {arena.data() + 8, third}};

  const PackedComputeSet packed = Pack(tiles);
  ASSERT_EQ(packed.tiles.size(), 2u);
  EXPECT_EQ(packed.tiles[0].tile, 3u);
  EXPECT_EQ(packed.tiles[1].tile, 9u);
  ASSERT_EQ(packed.tiles[0].vertices.size(), 2u);
  ASSERT_EQ(packed.tiles[1].vertices.size(), 1u);
  for (int v = 0; v < 3; ++v) {
    const PackedVertex& vertex = v < 2 ? packed.tiles[0].vertices[v] : packed.tiles[1].vertices[0];
    EXPECT_EQ(vertex.id, 100u + v);
    ASSERT_EQ(vertex.params.size(), 2u);
    EXPECT_EQ(vertex.params[0], static_cast<uint32_t>(v));
    ASSERT_EQ(vertex.spans.size(), 2u);
    EXPECT_EQ(vertex.spans[0].data(), memory.data() + v);
    EXPECT_EQ(vertex.spans[1].data(), arena.data() + 8 * v);
    EXPECT_EQ(vertex.rows.size(), v == 1 ? 2u : 0u);
  }
  const PackedTile& tile = packed.tiles[0];
  ASSERT_EQ(tile.gathers.size(), 3u);
  ASSERT_EQ(tile.write_backs.size(), 2u);
  EXPECT_TRUE(tile.gathers[0].runs.empty());
  ASSERT_EQ(tile.write_backs[0].runs.size(), 1u);
  EXPECT_EQ(tile.write_backs[0].runs[0].at, memory.data());
  EXPECT_EQ(tile.write_backs[0].runs[0].count, 2u);
  // Shared with the gather, not copied again.
  EXPECT_EQ(tile.write_backs[0].runs.data(), tile.gathers[1].runs.data());
  EXPECT_EQ(tile.write_backs[1].runs.data(), tile.gathers[2].runs.data());
  EXPECT_EQ(tile.write_backs[1].arena, arena.data() + 8);
  EXPECT_EQ(packed.host.size(), 2u);
  EXPECT_TRUE(packed.tiles[1].gathers.empty());
}

TEST(SimPack, AWriteBackWithoutItsGatherKeepsItsOwnRuns) {
  std::vector<std::byte> memory(16), arena(16);
  std::vector<TilePlan> tiles(1);
  std::vector<HostRun> runs{{memory.data() + 4, 4, 0, 1}};
  tiles[0].write_backs = {{arena.data(), runs}};
  const PackedComputeSet packed = Pack(tiles);
  ASSERT_EQ(packed.tiles[0].write_backs.size(), 1u);
  ASSERT_EQ(packed.tiles[0].write_backs[0].runs.size(), 1u);
  EXPECT_EQ(packed.tiles[0].write_backs[0].runs[0].at, memory.data() + 4);
}

// A vertex whose fields do not fit its codelet (Graph::Connect takes them;
// Validate, which a loaded executable need not have passed, would not) is
// refused when the simulator is made, naming it and its tile, not when its
// compute set first runs.
TEST(SimPack, AVertexFailingItsChecksIsRefusedBeforeAnyRun) {
  Graph graph(*Target::FromPreset("ipu2", 1, 2));
  const Tensor a = *graph.AddVariable(ElementType::kF32, {4}, "a");
  const Tensor b = *graph.AddVariable(ElementType::kF32, {3}, "b");
  const Tensor out = *graph.AddVariable(ElementType::kF32, {4}, "out");
  for (const Tensor* t : {&a, &b, &out}) ASSERT_TRUE(graph.SetTileMapping(*t, 1).has_value());
  const ComputeSetId cs = graph.AddComputeSet("add");
  VertexRef vertex =
      *graph.AddVertex(cs, BinaryOpCodeletName(BinaryOp::kAdd, ElementType::kF32), "add.7");
  ASSERT_TRUE(graph.Connect(vertex["in1"], a).has_value());
  ASSERT_TRUE(graph.Connect(vertex["in2"], b).has_value());
  ASSERT_TRUE(graph.Connect(vertex["out"], out).has_value());
  ASSERT_TRUE(graph.SetTileMapping(vertex, 1).has_value());
  // Behind a branch the run would not take: refused all the same.
  const Tensor never = *graph.AddConstantFromInts(ElementType::kPred, {}, {{0}}, "never");
  ASSERT_TRUE(graph.SetTileMapping(never, 0).has_value());
  const program::Sequence program{program::If(never, program::Execute(cs))};

  auto simulator = Simulator::Create(graph, program, {}, {.threads = 2});
  ASSERT_FALSE(simulator.has_value());
  EXPECT_THAT(simulator.error().message(), ::testing::HasSubstr("'add.7'"));
  EXPECT_THAT(simulator.error().message(), ::testing::HasSubstr("on tile 1"));
  EXPECT_THAT(simulator.error().message(), ::testing::HasSubstr("3 elements"));
}

}  // namespace
}  // namespace tileprof::engine::sim
