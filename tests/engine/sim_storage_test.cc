// Where the simulator keeps a variable's elements (engine/sim/storage.h):
// tile by tile, unmapped elements last; and a program over variables mapped
// out of tile order computes what it would in element order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "engine/codelets/codelets.h"
#include "engine/sim/simulator.h"
#include "engine/sim/storage.h"

namespace tileprof::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

Target TwoTiles() { return *Target::FromPreset("ipu2", 1, 2); }

// Elements [0,2) and [4,6) on tile 1, [2,4) and [6,8) on tile 0.
void MapInterleaved(Graph& graph, VariableId v) {
  for (uint64_t begin = 0; begin < 8; begin += 2)
    ASSERT_TRUE(graph.SetTileMapping(v, begin, begin + 2, begin % 4 == 0 ? 1 : 0).has_value());
}

std::vector<std::byte> Floats(std::span<const float> values) {
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(SimStorage, TileByTileThenTheUnmappedElementsInElementOrder) {
  Graph graph(TwoTiles());
  const Tensor x = *graph.AddVariable(ElementType::kF32, {10}, "x");  // [8, 10) unmapped
  MapInterleaved(graph, 0);
  const Tensor gap = *graph.AddVariable(ElementType::kF32, {6}, "gap");  // [2, 4) unmapped
  ASSERT_TRUE(graph.SetTileMapping(1, 0, 2, 0).has_value());
  ASSERT_TRUE(graph.SetTileMapping(1, 4, 6, 0).has_value());
  const Tensor ordered = *graph.AddVariable(ElementType::kF32, {4}, "ordered");
  ASSERT_TRUE(graph.SetTileMapping(2, 0, 2, 0).has_value());
  ASSERT_TRUE(graph.SetTileMapping(2, 2, 4, 1).has_value());

  const sim::StorageLayout storage(graph);
  EXPECT_FALSE(storage.InElementOrder(0));
  EXPECT_FALSE(storage.InElementOrder(1));
  EXPECT_TRUE(storage.InElementOrder(2));
  std::vector<uint64_t> at;
  for (uint64_t e = 0; e < 10; ++e) at.push_back(storage.Of(graph, 0, e));
  EXPECT_THAT(at, ElementsAre(4, 5, 0, 1, 6, 7, 2, 3, 8, 9));
  at.clear();
  for (uint64_t e = 0; e < 6; ++e) at.push_back(storage.Of(graph, 1, e));
  EXPECT_THAT(at, ElementsAre(0, 1, 4, 5, 2, 3));
  EXPECT_EQ(storage.InRun(0, 3, graph.TileMapping(0)[3], 7), 3u);  // run 3 is [6, 8) on tile 0

  const float values[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<std::byte> out(sizeof values);
  storage.ToStorage(graph, 0, Floats(values), out);
  std::vector<float> kept(10);
  std::memcpy(kept.data(), out.data(), out.size());
  EXPECT_THAT(kept, ElementsAre(2, 3, 6, 7, 0, 1, 4, 5, 8, 9));
  out.resize(6 * sizeof(float));
  storage.ToStorage(graph, 1, Floats(std::span(values, 6)), out);
  kept.resize(6);
  std::memcpy(kept.data(), out.data(), out.size());
  EXPECT_THAT(kept, ElementsAre(0, 1, 4, 5, 2, 3));
}

// y = x + c on each tile's elements of interleaved variables (each field two
// regions, one run of its tile's storage), under an If whose predicate is
// the last element of an interleaved pred constant; x comes from the host
// and y goes back to it, both in element order.
TEST(SimStorage, AProgramOverInterleavedVariablesSeesElementOrder) {
  Graph graph(TwoTiles());
  const float c_values[] = {10, 20, 30, 40, 50, 60, 70, 80};
  std::vector<std::byte> c_bytes = Floats(c_values);
  const Tensor x = *graph.AddVariable(ElementType::kF32, {8}, "x");
  const Tensor c = *graph.AddConstant(ElementType::kF32, {8}, c_bytes, "c");
  const Tensor y = *graph.AddVariable(ElementType::kF32, {8}, "y");
  for (VariableId v = 0; v < 3; ++v) MapInterleaved(graph, v);
  // Elements 0 and 1 on tile 1, 2 and 3 on tile 0; only element 3 is true.
  std::vector<std::byte> p_bytes = {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{1}};
  const Tensor p = *graph.AddConstant(ElementType::kPred, {4}, p_bytes, "p");
  ASSERT_TRUE(graph.SetTileMapping(3, 0, 2, 1).has_value());
  ASSERT_TRUE(graph.SetTileMapping(3, 2, 4, 0).has_value());

  const ComputeSetId cs = graph.AddComputeSet("add");
  const std::string add = BinaryOpCodeletName(BinaryOp::kAdd, ElementType::kF32);
  for (uint32_t tile = 0; tile < 2; ++tile) {
    // The tile's elements: [2t', 2t'+2) and [2t'+4, 2t'+6) with t' = 1 - tile.
    const uint64_t first = tile == 0 ? 2 : 0;
    const auto own = [&](const Tensor& t) {
      const Tensor parts[] = {*t.Slice(first, first + 2), *t.Slice(first + 4, first + 6)};
      return *Tensor::Concat(parts);
    };
    VertexRef vertex = *graph.AddVertex(cs, add, "add");
    ASSERT_TRUE(graph.Connect(vertex["in1"], own(x)).has_value());
    ASSERT_TRUE(graph.Connect(vertex["in2"], own(c)).has_value());
    ASSERT_TRUE(graph.Connect(vertex["out"], own(y)).has_value());
    ASSERT_TRUE(graph.SetTileMapping(vertex, tile).has_value());
  }
  DataStream in = *graph.AddHostToDeviceFifo("x", ElementType::kF32, 8);
  DataStream out = *graph.AddDeviceToHostFifo("y", ElementType::kF32, 8);
  program::Sequence program{program::Copy(in, x),
                            program::If(*p.Slice(3, 4).value().Reshape({}), program::Execute(cs)),
                            program::Copy(y, out)};
  ASSERT_TRUE(graph.Validate().has_value());

  auto simulator = sim::Simulator::Create(graph, program, {}, {.threads = 2});
  ASSERT_TRUE(simulator.has_value()) << simulator.error().message();
  const float x_values[] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto run = (*simulator)->Run({{"x", Floats(x_values)}});
  ASSERT_TRUE(run.has_value()) << run.error().message();
  std::vector<float> y_values(8);
  ASSERT_EQ(run->outputs.at("y").size(), sizeof(float) * 8);
  std::memcpy(y_values.data(), run->outputs.at("y").data(), sizeof(float) * 8);
  EXPECT_THAT(y_values, ElementsAreArray({11.f, 22.f, 33.f, 44.f, 55.f, 66.f, 77.f, 88.f}));
}

}  // namespace
}  // namespace tileprof::engine
