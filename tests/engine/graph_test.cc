// Graph building, edge checks, tile mapping, validation and statistics.
#include "engine/graph/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codelets/codelets.h"

namespace tileprof::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
constexpr ElementType kF32 = ElementType::kF32;

Target SmallTarget(uint32_t ipus = 1, uint32_t tiles = 4) {
  return *Target::FromPreset("ipu1", ipus, tiles);
}

template <typename T>
T Ok(Expected<T> value) {
  EXPECT_TRUE(value) << value.error().message();
  return std::move(value).value();
}

void Ok(Status status) { EXPECT_TRUE(status) << status.error().message(); }

std::string Message(const Status& status) {
  return status ? std::string("ok") : status.error().message();
}

// The seed's listing 4.2: v1, v2 of 4 floats, one SumVertex per tile summing
// v1[i..4) into v2[i], each element of v1 and v2 on tile i.
struct SeedGraph {
  Graph graph{SmallTarget()};
  Tensor v1, v2, c1;
  ComputeSetId cs = 0;
  std::vector<VertexRef> vertices;

  SeedGraph() {
    v1 = Ok(graph.AddVariable(kF32, {4}, "v1"));
    v2 = Ok(graph.AddVariable(kF32, {4}, "v2"));
    const double values[] = {1.0, 1.5, 2.0, 2.5};
    c1 = Ok(graph.AddConstantFromDoubles(kF32, {4}, values, "c1"));
    Ok(graph.SetTileMapping(c1, 0));
    cs = graph.AddComputeSet("computeSet");
    for (uint32_t i = 0; i < 4; ++i) {
      Ok(graph.SetTileMapping(Ok(v1.Index(i)), i));
      Ok(graph.SetTileMapping(Ok(v2.Index(i)), i));
      VertexRef vtx = Ok(graph.AddVertex(cs, "SumVertex"));
      Ok(graph.Connect(vtx["in"], Ok(v1.Slice(i, 4))));
      Ok(graph.Connect(vtx["out"], Ok(v2.Index(i))));
      Ok(graph.SetTileMapping(vtx, i));
      Ok(graph.SetPerfEstimate(vtx, 20));
      vertices.push_back(vtx);
    }
  }
};

TEST(Graph, SeedListingValidates) {
  SeedGraph seed;
  const Graph& g = seed.graph;
  EXPECT_TRUE(g.Validate()) << Message(g.Validate());
  EXPECT_EQ(g.num_vertices(), 4u);
  EXPECT_EQ(g.compute_set(seed.cs).name, "computeSet");
  EXPECT_THAT(g.compute_set(seed.cs).vertices, ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_EQ(g.vertex(2).NumEdges(), 2u);
  EXPECT_EQ(g.FieldElements(2), (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(g.VertexCycles(2), 20u);  // setPerfEstimate(vtx, 20)
  EXPECT_THAT(g.TileMapping(0),
              ElementsAre(TileRun{0, 1, 0}, TileRun{1, 2, 1}, TileRun{2, 3, 2}, TileRun{3, 4, 3}));
  const auto& c1 = g.variable(2);
  EXPECT_TRUE(c1.is_constant);
  ASSERT_EQ(c1.constant_data.size(), 16u);
  EXPECT_EQ(LoadAsDouble(kF32, c1.constant_data.data() + 12), 2.5);
}

TEST(Graph, SeedListingStatistics) {
  SeedGraph seed;
  const GraphStats stats = seed.graph.Stats();
  EXPECT_EQ(stats.num_variables, 2u);
  EXPECT_EQ(stats.num_constants, 1u);
  EXPECT_EQ(stats.variable_bytes, 32u);
  EXPECT_EQ(stats.constant_bytes, 16u);
  EXPECT_EQ(stats.num_compute_sets, 1u);
  EXPECT_EQ(stats.num_vertices, 4u);
  EXPECT_EQ(stats.num_edges, 8u);
  EXPECT_EQ(stats.tiles_used, 4u);
  // SumVertex: in (span: pointer + length), out (pointer).
  EXPECT_EQ(stats.edge_pointer_bytes, 4u * 8u);
  EXPECT_EQ(stats.internal_state_bytes, 4u * 4u);
  ASSERT_EQ(stats.by_codelet.size(), 1u);
  EXPECT_EQ(stats.by_codelet[0].codelet->name(), "SumVertex");
  EXPECT_EQ(stats.by_codelet[0].vertices, 4u);
  EXPECT_EQ(stats.by_codelet[0].tiles, 4u);
  EXPECT_EQ(stats.vertex_code_bytes, 4u * stats.by_codelet[0].codelet->code_bytes());

  const auto tiles = seed.graph.TileUsages();
  ASSERT_EQ(tiles.size(), 4u);
  EXPECT_EQ(tiles[0].tile, 0u);
  EXPECT_EQ(tiles[0].data_bytes, 4u + 4u + 16u);  // v1[0], v2[0], c1
  EXPECT_EQ(tiles[1].data_bytes, 8u);
  EXPECT_EQ(tiles[3].vertices, 1u);
  EXPECT_EQ(tiles[3].edges, 2u);
  EXPECT_EQ(tiles[3].vertex_state_bytes, 12u);
}

TEST(Graph, ConnectErrorsNameVertexAndField) {
  Graph g(SmallTarget());
  Tensor f = Ok(g.AddVariable(kF32, {4}, "f"));
  Tensor h = Ok(g.AddVariable(ElementType::kF16, {4}, "h"));
  Tensor c = Ok(g.AddConstantFromDoubles(kF32, {1}, std::vector<double>{1.0}, "k"));
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef sum = Ok(g.AddVertex(cs, "SumVertex", "sum0"));

  EXPECT_EQ(Message(g.Connect(sum["inn"], f)),
            "vertex 0 'sum0' (SumVertex): no field 'inn' (fields: in, out)");
  EXPECT_EQ(Message(g.Connect(sum["in"], h)),
            "vertex 0 'sum0' (SumVertex): field 'in' is float (f32), the tensor is f16[4]");
  EXPECT_EQ(Message(g.Connect(sum["out"], f)),
            "vertex 0 'sum0' (SumVertex): field 'out' is a scalar, the tensor f32[4] has 4 "
            "elements");
  EXPECT_EQ(Message(g.Connect(sum["out"], c)),
            "vertex 0 'sum0' (SumVertex): field 'out' is output but the tensor includes "
            "constant 2 'k' (f32[1])");
  EXPECT_EQ(Message(g.Connect(sum["in"], Ok(f.Slice(1, 1)))),
            "vertex 0 'sum0' (SumVertex): field 'in': the tensor f32[0] is empty");
  EXPECT_EQ(Message(g.Connect(sum["in"], Tensor())),
            "vertex 0 'sum0' (SumVertex): field 'in': invalid tensor");
  Ok(g.Connect(sum["in"], f));
  EXPECT_EQ(Message(g.Connect(sum["in"], f)),
            "vertex 0 'sum0' (SumVertex): field 'in' is already connected");
  EXPECT_EQ(Message(g.Connect(VertexRef{7}["in"], f)),
            "connect field 'in': no vertex 7 (graph has 1)");
  // A tensor naming a variable this graph does not have.
  EXPECT_THAT(Message(g.Connect(sum["out"], Tensor::OfVariable(9, kF32, {}))),
              HasSubstr("tensor refers to variable 9, which this graph does not have"));
}

TEST(Graph, WrittenFieldsRejectRepeatedElements) {
  Graph g(SmallTarget());
  Tensor a = Ok(g.AddVariable(kF32, {2}, "a"));
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef add = Ok(g.AddVertex(cs, BinaryOpCodeletName(BinaryOp::kAdd, kF32)));
  const Tensor twice[] = {a, a};
  const Tensor repeated = Ok(Tensor::Concat(twice));
  Ok(g.Connect(add["in1"], repeated));  // reading twice is fine
  EXPECT_THAT(Message(g.Connect(add["out"], repeated)),
              HasSubstr("field 'out' is output but the tensor repeats elements"));
}

TEST(Graph, ParametersAndFieldsAreDistinct) {
  Graph g(SmallTarget());
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef mm = Ok(g.AddVertex(cs, MatMulPartialCodeletName(kF32, kF32), "dot"));
  Tensor t = Ok(g.AddVariable(kF32, {1}, "t"));
  EXPECT_THAT(Message(g.Connect(mm["m"], t)),
              HasSubstr("'m' is a parameter, not a field; use SetInitialValue"));
  EXPECT_THAT(Message(g.SetInitialValue(mm["in"], 3)),
              HasSubstr("no parameter 'in' (it is a field; use Connect)"));
  Ok(g.SetInitialValue(mm["m"], 3));
  EXPECT_EQ(g.params(mm.id)[0], 3u);
}

TEST(Graph, SetInitialValuesTakesEveryParameterInOrder) {
  Graph g(SmallTarget());
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef mm = Ok(g.AddVertex(cs, MatMulPartialCodeletName(kF32, kF32), "dot"));
  const uint32_t values[] = {4, 5, 6};  // m, k, n
  Ok(g.SetInitialValues(mm, values));
  const VertexInfo& vertex = g.vertex(mm.id);
  EXPECT_EQ(g.params(mm.id)[*vertex.codelet->FindParam("m")], 4u);
  EXPECT_EQ(g.params(mm.id)[*vertex.codelet->FindParam("k")], 5u);
  EXPECT_EQ(g.params(mm.id)[*vertex.codelet->FindParam("n")], 6u);
  EXPECT_THAT(Message(g.SetInitialValues(mm, std::span(values).first(2))),
              HasSubstr("2 initial values for 3 parameters"));
  EXPECT_THAT(Message(g.SetInitialValues(VertexRef{7}, values)), HasSubstr("no vertex 7"));
}

TEST(Graph, VerticesOfOneNameShareItAndKeepItAfterAMove) {
  Graph g(SmallTarget());
  ComputeSetId cs = g.AddComputeSet("cs");
  const std::string name = "a-name-longer-than-a-short-string";
  VertexRef a = Ok(g.AddVertex(cs, MatMulPartialCodeletName(kF32, kF32), name));
  VertexRef b = Ok(g.AddVertex(cs, MatMulPartialCodeletName(kF32, kF32), "other"));
  VertexRef c = Ok(g.AddVertex(cs, MatMulPartialCodeletName(kF32, kF32), name));
  EXPECT_EQ(g.vertex(a.id).debug_name.data(), g.vertex(c.id).debug_name.data());
  Graph moved = std::move(g);
  EXPECT_EQ(moved.vertex(a.id).debug_name, name);
  EXPECT_EQ(moved.vertex(b.id).debug_name, "other");
  EXPECT_EQ(moved.vertex(c.id).debug_name, name);
}

TEST(Graph, AddVertexErrors) {
  Graph g(SmallTarget());
  ComputeSetId cs = g.AddComputeSet("cs");
  auto unknown = g.AddVertex(cs, "NoSuchVertex", "x");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message(), "add vertex 'x': unknown codelet 'NoSuchVertex'");
  auto bad_cs = g.AddVertex(5, "SumVertex", "y");
  ASSERT_FALSE(bad_cs);
  EXPECT_EQ(bad_cs.error().message(), "add vertex 'y' (SumVertex): no compute set 5 (graph has 1)");
}

TEST(Graph, TileMappingChecksTheTarget) {
  Graph g(SmallTarget(2, 4));  // tiles 0..7
  Tensor t = Ok(g.AddVariable(kF32, {8}, "t"));
  Ok(g.SetTileMapping(t, 7));
  EXPECT_EQ(Message(g.SetTileMapping(t, 8)),
            "set tile mapping of f32[8]: tile 8 out of range (target has 8 tiles: 2 IPU(s) x 4)");
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef v = Ok(g.AddVertex(cs, "SumVertex"));
  EXPECT_EQ(Message(g.SetTileMapping(v, 9)),
            "vertex 0 (SumVertex): tile 9 out of range (target has 8 tiles: 2 IPU(s) x 4)");
  Ok(g.SetTileMapping(v, 5));
  EXPECT_EQ(g.target().IpuOfTile(*g.vertex(0).tile), 1u);
}

TEST(Graph, LaterMappingsOverrideAndUnmappedRangesAreReported) {
  Graph g(SmallTarget());
  Tensor t = Ok(g.AddVariable(kF32, {10}, "t"));
  Ok(g.SetTileMapping(Ok(t.Slice(0, 6)), 1));
  Ok(g.SetTileMapping(Ok(t.Slice(2, 4)), 2));  // overrides part of the first
  EXPECT_THAT(g.TileMapping(0), ElementsAre(TileRun{0, 2, 1}, TileRun{2, 4, 2}, TileRun{4, 6, 1}));
  EXPECT_EQ(Message(g.Validate()),
            "variable 0 't' (f32[10]): elements [6, 10) are not mapped to a tile");
  Ok(g.SetTileMapping(Ok(t.Slice(6, 10)), 1));
  EXPECT_TRUE(g.Validate());
  Ok(g.SetTileMapping(Ok(t.Slice(2, 4)), 1));  // merges back into one run
  EXPECT_THAT(g.TileMapping(0), ElementsAre(TileRun{0, 10, 1}));
}

TEST(Graph, ManyUnmappedRangesAreSummarised) {
  Graph g(SmallTarget());
  Tensor t = Ok(g.AddVariable(kF32, {10}, "t"));
  for (uint64_t i = 0; i < 10; i += 2) Ok(g.SetTileMapping(Ok(t.Slice(i, i + 1)), 0));
  EXPECT_EQ(Message(g.Validate()),
            "variable 0 't' (f32[10]): elements [1, 2), [3, 4), [5, 6) and 2 more ranges "
            "are not mapped to a tile");
}

TEST(Graph, MapRegionsSplitsAtTileBoundaries) {
  Graph g(SmallTarget());
  Tensor t = Ok(g.AddVariable(kF32, {6}, "t"));
  Ok(g.SetTileMapping(Ok(t.Slice(0, 3)), 0));
  Ok(g.SetTileMapping(Ok(t.Slice(3, 5)), 3));
  const auto pieces = g.MapRegions(Ok(t.Slice(1, 6)));
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].region, (TensorRegion{0, 1, 3}));
  EXPECT_EQ(pieces[0].tile, 0u);
  EXPECT_EQ(pieces[1].region, (TensorRegion{0, 3, 5}));
  EXPECT_EQ(pieces[1].tile, 3u);
  EXPECT_EQ(pieces[2].region, (TensorRegion{0, 5, 6}));
  EXPECT_FALSE(pieces[2].tile);
}

TEST(Graph, ValidationFindsIncompleteVertices) {
  Graph g(SmallTarget());
  Tensor a = Ok(g.AddVariable(kF32, {4}, "a"));
  Tensor b = Ok(g.AddVariable(kF32, {3}, "b"));
  Ok(g.SetTileMapping(a, 0));
  Ok(g.SetTileMapping(b, 0));
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef unmapped = Ok(g.AddVertex(cs, "SumVertex", "unmapped"));
  VertexRef half = Ok(g.AddVertex(cs, "SumVertex", "half"));
  Ok(g.SetTileMapping(half, 1));
  Ok(g.Connect(half["in"], a));
  VertexRef add = Ok(g.AddVertex(cs, BinaryOpCodeletName(BinaryOp::kAdd, kF32), "add"));
  Ok(g.SetTileMapping(add, 0));
  Ok(g.Connect(add["in1"], a));
  Ok(g.Connect(add["in2"], b));
  Tensor out = Ok(g.AddVariable(kF32, {4}, "out"));
  Ok(g.SetTileMapping(out, 0));
  Ok(g.Connect(add["out"], out));
  VertexRef mm = Ok(g.AddVertex(cs, MatMulPartialCodeletName(kF32, kF32), "mm"));
  Ok(g.SetTileMapping(mm, 2));
  (void)unmapped;

  const std::vector<Error> problems = g.Check();
  std::vector<std::string> messages;
  for (const Error& e : problems) messages.push_back(e.message());
  EXPECT_THAT(messages,
              ElementsAre("vertex 0 'unmapped' (SumVertex): not mapped to a tile",
                          "vertex 1 'half' (SumVertex): field 'out' is not connected",
                          "vertex 2 'add' (popops::BinaryOp1DSupervisor<popops::expr::"
                          "BinaryOpType::ADD,float>): field 'in2' has 3 elements, 'out' has 4",
                          "vertex 3 'mm' (poplin::MatMulPartial<float,float>): field 'in' is "
                          "not connected"));
  EXPECT_THAT(Message(g.Validate()), HasSubstr("(and 3 more problems)"));
}

TEST(Graph, UnsetParametersAreReported) {
  Graph g(SmallTarget());
  Tensor a = Ok(g.AddVariable(kF32, {4}, "a"));
  Tensor o = Ok(g.AddVariable(kF32, {4}, "o"));
  Ok(g.SetTileMapping(a, 0));
  Ok(g.SetTileMapping(o, 0));
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef mm = Ok(g.AddVertex(cs, MatMulPartialCodeletName(kF32, kF32)));
  Ok(g.SetTileMapping(mm, 0));
  Ok(g.Connect(mm["in"], a));
  Ok(g.Connect(mm["weights"], a));
  Ok(g.Connect(mm["out"], o));
  Ok(g.SetInitialValue(mm["m"], 2));
  Ok(g.SetInitialValue(mm["k"], 2));
  EXPECT_EQ(Message(g.Validate()),
            "vertex 0 (poplin::MatMulPartial<float,float>): parameter 'n' is not set");
  Ok(g.SetInitialValue(mm["n"], 2));
  EXPECT_TRUE(g.Validate()) << Message(g.Validate());
  // m = k = n = 2 on the vector unit (ipu1, f32 width 2): overhead 12, and
  // per output 4 + ceil(2 / 2) * (2 loads + 1 MAC).
  EXPECT_EQ(g.VertexCycles(0), 12u + 4u * (4u + 3u));
}

TEST(Graph, ConflictingWritesInOneComputeSet) {
  Graph g(SmallTarget());
  Tensor in = Ok(g.AddVariable(kF32, {4}, "in"));
  Tensor out = Ok(g.AddVariable(kF32, {2}, "out"));
  Ok(g.SetTileMapping(in, 0));
  Ok(g.SetTileMapping(out, 0));
  ComputeSetId cs = g.AddComputeSet("sums");
  for (int i = 0; i < 2; ++i) {
    VertexRef v = Ok(g.AddVertex(cs, "SumVertex", fmt::format("s{}", i)));
    Ok(g.Connect(v["in"], in));
    Ok(g.Connect(v["out"], Ok(out.Index(1))));  // both write out[1]
    Ok(g.SetTileMapping(v, 0));
  }
  EXPECT_EQ(Message(g.Validate()),
            "compute set 'sums': vertex 0 's0' (SumVertex) field 'out' and vertex 1 's1' "
            "(SumVertex) field 'out' both write element 1 of variable 1 'out' (f32[2])");
  // The same two vertices in different compute sets do not conflict.
  Graph g2(SmallTarget());
  Tensor in2 = Ok(g2.AddVariable(kF32, {4}, "in"));
  Tensor out2 = Ok(g2.AddVariable(kF32, {1}, "out"));
  Ok(g2.SetTileMapping(in2, 0));
  Ok(g2.SetTileMapping(out2, 0));
  for (int i = 0; i < 2; ++i) {
    VertexRef v = Ok(g2.AddVertex(g2.AddComputeSet(fmt::format("cs{}", i)), "SumVertex"));
    Ok(g2.Connect(v["in"], in2));
    Ok(g2.Connect(v["out"], out2));
    Ok(g2.SetTileMapping(v, 0));
  }
  EXPECT_TRUE(g2.Validate()) << Message(g2.Validate());
}

TEST(Graph, AVertexMustNotReadWhatItWrites) {
  Graph g(SmallTarget());
  Tensor a = Ok(g.AddVariable(kF32, {4}, "a"));
  Tensor b = Ok(g.AddVariable(kF32, {4}, "b"));
  Ok(g.SetTileMapping(a, 0));
  Ok(g.SetTileMapping(b, 0));
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef v = Ok(g.AddVertex(cs, BinaryOpCodeletName(BinaryOp::kAdd, kF32), "inplace"));
  Ok(g.SetTileMapping(v, 0));
  Ok(g.Connect(v["in1"], a));
  Ok(g.Connect(v["in2"], b));
  Ok(g.Connect(v["out"], a));
  EXPECT_THAT(Message(g.Validate()),
              HasSubstr("vertex 0 'inplace' (popops::BinaryOp1DSupervisor<popops::expr::"
                        "BinaryOpType::ADD,float>): fields 'in1' and 'out' overlap at element "
                        "0 of variable 0 'a' (f32[4]), and one is written"));
}

TEST(Graph, ConstantsAndStreams) {
  Graph g(SmallTarget());
  auto bad = g.AddConstant(kF32, {2}, std::vector<std::byte>(7), "c");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "constant 'c' (f32[2]): 7 bytes of data, expected 8 (2 x 4)");
  Tensor h =
      Ok(g.AddConstantFromDoubles(ElementType::kF16, {2}, std::vector<double>{1.0, 65520.0}, "h"));
  const auto& data = g.variable(0).constant_data;
  EXPECT_EQ(static_cast<int>(data[1]), 0x3C);  // 1.0 = 0x3C00, little-endian
  EXPECT_EQ(static_cast<int>(data[3]), 0x7C);  // 65520 rounds to inf = 0x7C00
  Tensor s = Ok(g.AddConstantFromInts(ElementType::kS8, {1}, std::vector<int64_t>{300}, "s"));
  EXPECT_EQ(static_cast<int>(g.variable(1).constant_data[0]), 44);  // wraps
  (void)h;
  (void)s;

  DataStream in = Ok(g.AddHostToDeviceFifo("in", kF32, 4));
  EXPECT_EQ(g.stream(in.id).direction, StreamDirection::kHostToDevice);
  auto dup = g.AddDeviceToHostFifo("in", kF32, 4);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().message(), "stream 'in' already exists");
  EXPECT_FALSE(g.AddDeviceToHostFifo("zero", kF32, 0));
}

class DoubleIt final : public Codelet {
 public:
  DoubleIt()
      : Codelet("DoubleIt", ExecutionKind::kWorker,
                {{"x", FieldDirection::kInOut, FieldKind::kVector, kF32, VectorLayout::kSpan}}, {},
                16) {}
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return 5 + shape.field_elements[0];
  }

 protected:
  Status Compute(const VertexIo&) const override { return {}; }
};

TEST(Graph, CustomCodelets) {
  Graph g(SmallTarget());
  Ok(g.AddCodelet(std::make_shared<DoubleIt>()));
  EXPECT_EQ(Message(g.AddCodelet(std::make_shared<DoubleIt>())),
            "add codelet: a codelet named 'DoubleIt' already exists");
  Tensor x = Ok(g.AddVariable(kF32, {7}, "x"));
  Ok(g.SetTileMapping(x, 0));
  VertexRef v = Ok(g.AddVertex(g.AddComputeSet("cs"), "DoubleIt"));
  Ok(g.Connect(v["x"], x));
  Ok(g.SetTileMapping(v, 0));
  EXPECT_TRUE(g.Validate());
  EXPECT_EQ(g.VertexCycles(v.id), 12u);
  EXPECT_EQ(g.vertex(v.id).codelet->state_bytes(), 8u);
}

// How a graph read from a file is rebuilt: runs and a shape, no Tensor.
TEST(Graph, ConnectRegionsChecksTheRunsAgainstTheShapeAndTheGraph) {
  Graph g(SmallTarget());
  Ok(g.AddVariable(kF32, {6}, "v"));
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef vtx = Ok(g.AddVertex(cs, "SumVertex"));
  const uint64_t shape[] = {2, 2};
  const TensorRegion runs[] = {{0, 4, 6}, {0, 0, 2}};
  EXPECT_THAT(Message(g.ConnectRegions(vtx, 0, kF32, shape, std::span(runs).first(1))),
              HasSubstr("runs hold 2 elements, its shape 4"));
  const TensorRegion reversed[] = {{0, 5, 3}, {0, 0, 2}};
  EXPECT_THAT(Message(g.ConnectRegions(vtx, 0, kF32, shape, reversed)),
              HasSubstr("elements [5, 3) of variable 0 'v'"));
  const TensorRegion outside[] = {{0, 4, 8}};
  const uint64_t four[] = {4};
  EXPECT_THAT(Message(g.ConnectRegions(vtx, 0, kF32, four, outside)), HasSubstr("do not match it"));
  const TensorRegion unknown[] = {{3, 0, 4}};
  EXPECT_THAT(Message(g.ConnectRegions(vtx, 0, kF32, four, unknown)),
              HasSubstr("variable 3, which this graph does not have"));
  EXPECT_THAT(Message(g.ConnectRegions(vtx, 2, kF32, shape, runs)), HasSubstr("no field 2"));
  EXPECT_EQ(g.vertex(vtx.id).NumEdges(), 0u);  // nothing connected by a failed call

  Ok(g.ConnectRegions(vtx, 0, kF32, shape, runs));
  const FieldView& in = g.fields(vtx.id)[0];
  ASSERT_TRUE(in.connected());
  EXPECT_EQ(in.ShapeString(), "f32[2,2]");
  EXPECT_THAT(in.regions(), ElementsAre(TensorRegion{0, 4, 6}, TensorRegion{0, 0, 2}));
  EXPECT_EQ(g.vertex(vtx.id).NumEdges(), 1u);
  EXPECT_FALSE(g.fields(vtx.id)[1].connected());
  EXPECT_THAT(Message(g.ConnectRegions(vtx, 0, kF32, shape, runs)), HasSubstr("already connected"));
}

// How an executable file's fields are rebuilt: runs as the graph keeps them,
// each checked whole (its hull in the variable; for a written field, no
// element twice), never listed region by region.
TEST(Graph, ConnectRunsChecksWholeRuns) {
  Graph g(SmallTarget());
  Ok(g.AddVariable(kF32, {64}, "v"));
  Ok(g.AddConstantFromDoubles(kF32, {8}, std::vector<double>(8, 1.0), "c"));
  ComputeSetId cs = g.AddComputeSet("cs");
  const auto add = [&] { return Ok(g.AddVertex(cs, BinaryOpCodeletName(BinaryOp::kAdd, kF32))); };
  const size_t out = *g.vertex(add().id).codelet->FindField("out");
  const uint64_t eight[] = {8};
  const auto connect = [&](VertexRef vertex, size_t field, std::vector<StridedRegion> runs) {
    return g.ConnectRuns(vertex, field, kF32, eight, runs);
  };
  // Four rows of two, read backwards from element 30.
  const VertexRef backwards = add();
  Ok(connect(backwards, 0, {{30, 2, -10, 0, 4}}));
  EXPECT_THAT(g.fields(backwards.id)[0].regions(),
              ElementsAre(TensorRegion{0, 30, 32}, TensorRegion{0, 20, 22}, TensorRegion{0, 10, 12},
                          TensorRegion{0, 0, 2}));
  EXPECT_EQ(g.vertex(backwards.id).NumEdges(), 1u);

  const VertexRef v = add();
  EXPECT_THAT(Message(connect(v, 0, {{40, 2, 10, 0, 4}})), HasSubstr("do not match it"));   // to 72
  EXPECT_THAT(Message(connect(v, 0, {{10, 2, -10, 0, 4}})), HasSubstr("do not match it"));  // < 0
  // A stride whose product with the count wraps a 64-bit address into range.
  EXPECT_THAT(Message(connect(v, 0, {{0, 2, INT64_MIN / 2, 0, 4}})), HasSubstr("do not match it"));
  EXPECT_THAT(Message(connect(v, 0, {{0, 8, 0, 0, 0}})), HasSubstr("do not match it"));  // no rows
  EXPECT_THAT(Message(connect(v, 0, {{0, 2, 2, 0, 3}})), HasSubstr("runs hold 6 elements"));
  EXPECT_THAT(Message(connect(v, 0, {{0, 2, 2, 2, 4}})), HasSubstr("variable 2, which this graph"));
  EXPECT_EQ(g.vertex(v.id).NumEdges(), 0u);
  Ok(connect(v, 0, {{0, 4, 2, 0, 2}}));  // reading an element twice is fine

  // Written: overlapping rows, interleaved runs that meet, a constant.
  EXPECT_THAT(Message(connect(v, out, {{0, 4, 2, 0, 2}})), HasSubstr("repeats elements"));
  EXPECT_THAT(Message(connect(v, out, {{0, 2, 4, 0, 2}, {4, 2, 4, 0, 2}})),
              HasSubstr("repeats elements"));
  EXPECT_THAT(Message(connect(v, out, {{0, 8, 0, 1, 1}})), HasSubstr("includes constant 1 'c'"));
  // Interleaved runs that do not meet (their hulls overlap, their rows do not).
  Ok(connect(v, out, {{0, 2, 4, 0, 2}, {2, 2, 4, 0, 2}}));
  EXPECT_THAT(g.fields(v.id)[out].regions(),
              ElementsAre(TensorRegion{0, 0, 2}, TensorRegion{0, 4, 6}, TensorRegion{0, 2, 4},
                          TensorRegion{0, 6, 8}));
}

// The aliasing test on runs agrees with the one on the regions they hold.
TEST(Graph, RunsAliasExactlyWhenTheirRegionsDo) {
  uint64_t seed = 7;
  const auto next = [&](uint64_t n) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    return (seed >> 33) % n;
  };
  int aliased = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<StridedRegion> runs;
    std::vector<TensorRegion> regions;
    for (uint64_t r = 0, n = 1 + next(3); r < n; ++r) {
      const uint32_t count = static_cast<uint32_t>(1 + next(4));
      const uint64_t length = 1 + next(3);
      const int64_t stride = static_cast<int64_t>(next(9)) - 2;
      const uint64_t begin = 16 + next(16);
      runs.push_back({begin, length, count == 1 ? 0 : stride, 0, count});
      for (uint32_t k = 0; k < count; ++k) regions.push_back(runs.back().At(k));
    }
    const bool expected = HasAliases(regions);
    aliased += expected;
    EXPECT_EQ(RunsHaveAliases(runs) == Overlap::kRepeats, expected) << trial;
  }
  EXPECT_GT(aliased, 100);
  EXPECT_LT(aliased, 1900);
}

// Fields keep their runs when the graph is moved and as more are added:
// the arena never moves what it has handed out.
TEST(Graph, FieldViewsStayValidAcrossGrowthAndMove) {
  Graph g(SmallTarget());
  const Tensor v = Ok(g.AddVariable(kF32, {200000}, "v"));
  ComputeSetId cs = g.AddComputeSet("cs");
  std::vector<VertexRef> vertices;
  for (uint64_t i = 0; i < 20000; ++i) {
    VertexRef vtx = Ok(g.AddVertex(cs, "SumVertex"));
    Ok(g.Connect(vtx["in"], Ok(v.Slice(i * 10, i * 10 + 10))));
    vertices.push_back(vtx);
  }
  // One field of many runs at no common stride: a block of its own.
  VertexRef big = Ok(g.AddVertex(cs, "SumVertex"));
  std::vector<Tensor> uneven;
  for (uint64_t i = 0; i < 40000; ++i) {
    uneven.push_back(Ok(v.Slice(i * 5 + i % 2, i * 5 + i % 2 + 1)));
  }
  Ok(g.Connect(big["in"], Ok(Tensor::Concat(uneven))));
  const Graph moved = std::move(g);
  for (uint64_t i = 0; i < vertices.size(); ++i) {
    ASSERT_THAT(moved.fields(vertices[i].id)[0].regions(),
                ElementsAre(TensorRegion{0, i * 10, i * 10 + 10}));
  }
  const auto regions = moved.fields(big.id)[0].regions();
  ASSERT_EQ(regions.size(), 40000u);
  EXPECT_GT(regions.runs().size(), 10000u);
  EXPECT_EQ(regions.back(), (TensorRegion{0, 199996, 199997}));
}

// A field cut from a transposed, reversed or broadcast view lists a region
// per row; the graph keeps rows at a constant distance as one strided run
// and gives back exactly the regions it was connected to.
TEST(Graph, FieldsKeepRowsAtOneStrideAsOneRunAndReadBackExactly) {
  Graph g(SmallTarget());
  const Tensor v = Ok(g.AddVariable(kF32, {64, 8}, "v"));
  const ComputeSetId cs = g.AddComputeSet("cs");
  const auto expect_same = [&](const Tensor& view, size_t runs) {
    VertexRef vtx = Ok(g.AddVertex(cs, "SumVertex"));
    Ok(g.Connect(vtx["in"], view.Flatten()));
    const RegionRange stored = g.fields(vtx.id)[0].regions();
    EXPECT_THAT(std::vector<TensorRegion>(stored.begin(), stored.end()),
                ElementsAreArray(view.regions()));
    EXPECT_EQ(stored.size(), view.regions().size());
    EXPECT_EQ(stored.runs().size(), runs);
  };
  // Columns 1..6 of each row: 64 regions 8 apart.
  expect_same(Ok(v.Slice(1, 7, 1)), 1);
  // The rows backwards: 64 regions -8 apart.
  std::vector<Tensor> backwards;
  for (uint64_t r = 64; r-- > 0;) backwards.push_back(Ok(Ok(v.Slice(r, r + 1, 0)).Slice(1, 7, 1)));
  expect_same(Ok(Tensor::Concat(backwards)), 1);
  // One row read 5 times (a broadcast): stride 0.
  const std::vector<Tensor> repeated(5, Ok(v.Slice(3, 4, 0)));
  expect_same(Ok(Tensor::Concat(repeated)), 1);
  // Two strides in a row: two runs.
  const std::vector<Tensor> two = {Ok(Ok(v.Slice(0, 16, 0)).Slice(0, 1, 1)).Flatten(),
                                   Ok(Ok(v.Slice(16, 32, 0)).Slice(0, 2, 1)).Flatten()};
  expect_same(Ok(Tensor::Concat(two)), 2);
}

TEST(RegionList, CountsTheRunsAppendStridedMakes) {
  const std::vector<TensorRegion> regions = {{0, 0, 2},  {0, 4, 6},  {0, 8, 10}, {1, 12, 14},
                                             {0, 3, 4},  {0, 2, 3},  {0, 1, 2},  {0, 1, 2},
                                             {0, 9, 12}, {0, 20, 23}};
  std::vector<StridedRegion> runs(regions.size());
  size_t used = 0;
  for (const TensorRegion& region : regions) AppendStrided(runs.data(), used, region);
  EXPECT_EQ(CountStridedRuns(regions), used);
  const RegionRange range({runs.data(), used}, regions.size());
  EXPECT_THAT(std::vector<TensorRegion>(range.begin(), range.end()), ElementsAreArray(regions));
  EXPECT_EQ(range.front(), regions.front());
  EXPECT_EQ(range.back(), regions.back());
  EXPECT_EQ(CountStridedRuns({}), 0u);
}

TEST(Graph, MapsARangeOfAVariableByIdWithItsChecks) {
  Graph g(SmallTarget());
  Ok(g.AddVariable(kF32, {10}, "v"));
  Ok(g.SetTileMapping(0, 0, 4, 1));
  Ok(g.SetTileMapping(0, 4, 10, 2));
  Ok(g.SetTileMapping(0, 2, 6, 3));
  EXPECT_THAT(g.TileMapping(0), ElementsAre(TileRun{0, 2, 1}, TileRun{2, 6, 3}, TileRun{6, 10, 2}));
  EXPECT_THAT(Message(g.SetTileMapping(1, 0, 1, 0)), HasSubstr("no variable 1"));
  EXPECT_THAT(Message(g.SetTileMapping(0, 8, 11, 0)),
              HasSubstr("elements [8, 11) are not in variable 0 'v'"));
  EXPECT_THAT(Message(g.SetTileMapping(0, 5, 4, 0)), HasSubstr("elements [5, 4)"));
  EXPECT_FALSE(g.SetTileMapping(0, 0, 1, 4));  // 4 tiles: 0..3
  EXPECT_THAT(g.TileMapping(0), ElementsAre(TileRun{0, 2, 1}, TileRun{2, 6, 3}, TileRun{6, 10, 2}));
}

// Fields connect by number as by name; a flat field's shape is its element
// count, held without storage of its own.
TEST(Graph, ConnectsFieldsByNumberAndKeepsFlatShapes) {
  Graph g(SmallTarget());
  const Tensor v = Ok(g.AddVariable(kF32, {2, 3}, "v"));
  ComputeSetId cs = g.AddComputeSet("cs");
  VertexRef vtx = Ok(g.AddVertex(cs, "SumVertex"));
  const Codelet& sum = *g.vertex(vtx.id).codelet;
  const size_t in = *sum.FindField("in");
  const size_t out = *sum.FindField("out");
  Ok(g.Connect(vtx, in, v));
  Ok(g.Connect(vtx, out, Ok(v.Flatten().Index(5))));
  EXPECT_THAT(g.fields(vtx.id)[in].shape(), ElementsAre(2u, 3u));
  EXPECT_EQ(g.fields(vtx.id)[in].ShapeString(), "f32[2,3]");
  VertexRef flat = Ok(g.AddVertex(cs, "SumVertex"));
  Ok(g.Connect(flat, in, Ok(v.Flatten().Slice(1, 5))));
  EXPECT_THAT(g.fields(flat.id)[in].shape(), ElementsAre(4u));
  EXPECT_EQ(g.fields(flat.id)[in].ShapeString(), "f32[4]");
  EXPECT_THAT(Message(g.Connect(flat, in, v)), HasSubstr("already connected"));
  EXPECT_THAT(Message(g.Connect(flat, 7, v)), HasSubstr("no field 7"));
  EXPECT_THAT(Message(g.Connect(flat, out, Tensor())), HasSubstr("field 'out': invalid tensor"));
  EXPECT_THAT(Message(g.Connect(VertexRef{9}, 0, Tensor())), HasSubstr("invalid tensor"));
  EXPECT_EQ(g.PerfEstimate(flat.id), std::nullopt);
  Ok(g.SetPerfEstimate(flat, 77));
  EXPECT_EQ(g.PerfEstimate(flat.id), 77u);
  EXPECT_EQ(g.VertexCycles(flat.id), 77u);
  EXPECT_EQ(g.PerfEstimate(vtx.id), std::nullopt);
}

}  // namespace
}  // namespace tileprof::engine
