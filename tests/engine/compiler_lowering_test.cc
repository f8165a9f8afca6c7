// The lowering of data movement, dynamic slices, iota, reduce, dot and
// convolution to executable codelets: no opaque ops, and a graph and
// program that validate.
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/compiler/compiler.h"
#include "engine/compiler/dynamic_slice.h"
#include "tests/hlo/test_util.h"

namespace tileprof::engine::compiler {
namespace {

CompileResult MustCompile(std::string_view text,
                          std::optional<uint32_t> tiles_per_ipu = std::nullopt) {
  const hlo::Module module = hlo::testing::MustParse(std::string(text));
  Expected<Target> target = Target::FromPreset("ipu2", 1, tiles_per_ipu);
  EXPECT_TRUE(target.has_value());
  Expected<CompileResult> result = CompileModule(module, *target, {});
  if (!result) {
    ADD_FAILURE() << result.error().message();
    std::abort();
  }
  return std::move(*result);
}

bool Uses(const CompileResult& result, std::string_view prefix) {
  for (const auto& usage : result.graph_stats.by_codelet)
    if (usage.codelet->name().starts_with(prefix)) return true;
  return false;
}

void ExpectExecutable(const CompileResult& result) {
  EXPECT_EQ(result.lowering.opaque_ops, 0u)
      << (result.lowering.opaque_opcodes.empty() ? "" : result.lowering.opaque_opcodes[0]);
  const Status graph = result.graph->Validate();
  EXPECT_TRUE(graph) << graph.error().message();
  const Status program = program::ValidateProgram(*result.graph, result.program);
  EXPECT_TRUE(program) << program.error().message();
  for (const auto& usage : result.graph_stats.by_codelet)
    EXPECT_FALSE(usage.codelet->name().starts_with("tileprof::OpaqueOp")) << usage.codelet->name();
}

// A field of each vertex `select` picks, with the vertex's tile.
struct VertexField {
  std::optional<uint32_t> tile;
  const FieldView* field;
};
template <typename Select>
std::vector<VertexField> FieldsOf(const Graph& graph, Select select, std::string_view field) {
  std::vector<VertexField> found;
  for (size_t v = 0; v < graph.num_vertices(); ++v) {
    const VertexInfo& vertex = graph.vertex(static_cast<VertexId>(v));
    if (!select(vertex)) continue;
    found.push_back(
        {vertex.tile, &graph.fields(static_cast<VertexId>(v))[*vertex.codelet->FindField(field)]});
  }
  return found;
}
auto CodeletStartsWith(std::string_view prefix) {
  return [prefix](const VertexInfo& vertex) { return vertex.codelet->name().starts_with(prefix); };
}

TEST(LoweringTest, DataMovementIsExecutable) {
  const CompileResult result = MustCompile(R"(
HloModule data
ENTRY main {
  x = f32[64,96] parameter(0)
  t = f32[96,64] transpose(x), dimensions={1,0}
  r = f32[96,64] reverse(t), dimensions={0}
  z = f32[] constant(0)
  p = f32[100,70] pad(r, z), padding=2_2x1_3_0
  s = f32[50,35] slice(p), slice={[0:100:2], [0:70:2]}
  v = f32[35] parameter(1)
  b = f32[50,35] broadcast(v), dimensions={1}
  a = f32[50,35] add(s, b)
  w = f32[3] parameter(2)
  c = f32[50,3] broadcast(w), dimensions={1}
  ROOT out = (f32[50,35], f32[50,3]) tuple(a, c)
}
)");
  ExpectExecutable(result);
  EXPECT_TRUE(Uses(result, "tileprof::Rearrange<float,2,2>"));
  EXPECT_TRUE(Uses(result, "tileprof::RearrangePadded<float,2,2>"));
  // b's rows (140 B) are read in place by the add, a view of v; c's rows
  // (12 B) are too short to be worth a region each, so c is filled.
  EXPECT_TRUE(Uses(result, "tileprof::Rearrange<float,1,2>"));
}

// A backward convolution's kernel, reverse(W) over HWIO's spatial
// dimensions, is a view of W: its [I][O] blocks in reversed order, read
// where W lies. A reverse of the innermost dimension is rearranged.
TEST(LoweringTest, AReverseOfOuterDimensionsIsAView) {
  const char* kModule = R"(
HloModule rev
ENTRY main {
  k = f32[3,3,8,16] parameter(0)
  r = f32[3,3,8,16] reverse(k), dimensions={DIMS}
  ROOT n = f32[3,3,8,16] negate(r)
}
)";
  auto compile = [&](std::string_view dims) {
    std::string text = kModule;
    text.replace(text.find("DIMS"), 4, dims);
    return MustCompile(text);
  };
  const CompileResult outer = compile("0,1");
  ExpectExecutable(outer);
  EXPECT_FALSE(Uses(outer, "tileprof::Rearrange")) << "reverse of H and W";
  const CompileResult inner = compile("3");
  ExpectExecutable(inner);
  EXPECT_TRUE(Uses(inner, "tileprof::Rearrange<float,4,4>")) << "reverse of O";
}

TEST(LoweringTest, DynamicSliceUpdateAndIotaAreExecutable) {
  const CompileResult result = MustCompile(R"(
HloModule dyn
ENTRY main {
  x = f32[10,32,784] parameter(0)
  i = s32[] parameter(1)
  zero = s32[] constant(0)
  batch = f32[1,32,784] dynamic-slice(x, i, zero, zero), dynamic_slice_sizes={1,32,784}
  u = f32[10,32,784] dynamic-update-slice(x, batch, zero, zero, zero)
  io = s32[32,10] iota(), iota_dimension=1
  ROOT t = (f32[10,32,784], s32[32,10]) tuple(u, io)
}
)");
  ExpectExecutable(result);
  EXPECT_TRUE(Uses(result, "tileprof::DynamicSlice<float,int,3>"));
  EXPECT_TRUE(Uses(result, "tileprof::DynamicUpdateSlice<float,int,3>"));
  EXPECT_TRUE(Uses(result, "tileprof::Iota<int>"));
}

TEST(LoweringTest, ReduceDotAndConvolutionAreExecutable) {
  const CompileResult result = MustCompile(R"(
HloModule mix
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[32,784] parameter(0)
  w = f32[784,128] parameter(1)
  h = f32[32,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[128,32] transpose(h), dimensions={1,0}
  wt = f32[784,32] dot(w, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  one = f32[] constant(1)
  cols = f32[128] reduce(h, z), dimensions={0}, to_apply=add
  rows = f32[32] reduce(h, one), dimensions={1}, to_apply=add
  img = f32[8,28,28,1] parameter(2)
  k = f32[3,3,1,32] parameter(3)
  conv = f32[8,13,13,32] convolution(img, k), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[784,32], f32[128], f32[32], f32[8,13,13,32]) tuple(wt, cols, rows, conv)
}
)");
  ExpectExecutable(result);
  EXPECT_TRUE(Uses(result, "poplin::MatMulPartial<float,float>"));
  EXPECT_TRUE(Uses(result, "poplin::ConvPartialnx1<float,float"));  // strided conv, no patches
  EXPECT_TRUE(Uses(result, "popops::Reduce<popops::ReduceAdd,float,float,true"));  // init 1
}

TEST(LoweringTest, ReductionsOfInnermostDimensionsReadTheirInputInPlace) {
  // On 4 tiles a vertex per output stops at 256 outputs. `rows` (320
  // outputs, innermost dimension reduced) and the inner part of `mixed`
  // (the dimension-2 reduction before the dimension-0 one) are
  // ContinuousReduce vertices reading their runs in place; nothing is
  // rearranged into partial-major order.
  const CompileResult result = MustCompile(R"(
HloModule inner
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[32,20,8] parameter(0)
  z = f32[] constant(0)
  one = f32[] constant(1)
  rows = f32[32,10] reduce(x, one), dimensions={2}, to_apply=add
  mixed = f32[20] reduce(x, z), dimensions={0,2}, to_apply=add
  ROOT t = (f32[32,20], f32[20]) tuple(rows, mixed)
}
)",
                                           4);
  ExpectExecutable(result);
  EXPECT_TRUE(Uses(result, "popops::ContinuousReduce<popops::ReduceAdd,float,float,true>"));
  EXPECT_TRUE(Uses(result, "popops::ContinuousReduce<popops::ReduceAdd,float,float,false>"));
  EXPECT_TRUE(Uses(result, "popops::Reduce<popops::ReduceAdd,float,float,false,0>"));
  EXPECT_FALSE(Uses(result, "tileprof::Rearrange"));
}

TEST(LoweringTest, ReductionsOfAChannelSplitConvolutionOutputStartWhereItLives) {
  // The plan splits the convolution's output channels, so each tile holds a
  // range of channels of its pixels. Batch norm's mean over N, H and W is
  // computed where the output lives: every vertex of `mean/partials` reads
  // only its own tile's pieces of rows, and the partial rows are summed in
  // two stages (more than 32 tiles hold each channel range).
  const CompileResult result = MustCompile(R"(
HloModule bn_mean
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[4,32,32,64] parameter(0)
  w = f32[3,3,64,256] parameter(1)
  y = f32[4,32,32,256] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  ROOT mean = f32[256] reduce(y, z), dimensions={0,1,2}, to_apply=add
}
)");
  ExpectExecutable(result);
  const Graph& graph = *result.graph;
  std::set<std::string> names;
  for (size_t cs = 0; cs < graph.num_compute_sets(); ++cs)
    names.insert(graph.compute_set(static_cast<ComputeSetId>(cs)).name);
  const std::vector<VertexField> partials = FieldsOf(
      graph,
      [&](const VertexInfo& vertex) {
        return graph.compute_set(vertex.compute_set).name == "mean/partials";
      },
      "partials");
  uint64_t local_regions = 0;
  for (const auto& [tile, in] : partials) {
    ASSERT_TRUE(in->connected());
    for (const TensorRegion& region : in->regions()) {
      EXPECT_EQ(graph.TileHolding(region), tile) << "a partial reads another tile's data";
      ++local_regions;
    }
  }
  EXPECT_GT(partials.size(), 32u);
  EXPECT_GT(local_regions, partials.size());  // a region per pixel's channel range
  EXPECT_TRUE(names.contains("mean/group sum"));
  EXPECT_TRUE(names.contains("mean/sum"));
}

TEST(LoweringTest, SelectAndScatterRunsAreCutAtImageBoundaries) {
  // A max pool's gradient of a batch of 2: the run of the result holding the
  // end of the first image and the start of the second is cut there, so no
  // vertex reads a box of both whole images (102,400 elements).
  const CompileResult result = MustCompile(R"(
HloModule pool_grad
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY main {
  x = f32[2,40,40,32] parameter(0)
  g = f32[2,20,20,32] parameter(1)
  zero = f32[] constant(0)
  ROOT grad = f32[2,40,40,32] select-and-scatter(x, g, zero), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge, scatter=add
}
)");
  ExpectExecutable(result);
  const std::vector<VertexField> operands =
      FieldsOf(*result.graph, CodeletStartsWith("tileprof::SelectAndScatter"), "operand");
  for (const VertexField& operand : operands) {
    uint64_t elements = 0;
    for (const TensorRegion& region : operand.field->regions()) elements += region.size();
    EXPECT_LT(elements, 16384u);
  }
  EXPECT_GT(operands.size(), 1000u);
}

TEST(LoweringTest, ConvolutionBoxesWidenWhenRegionsCostMoreThanTheBytesAdded) {
  // A depthwise weight gradient (as in mobilenet_v2): each output position
  // reads 6 of the 7 columns and 6 of the 7 rows of each padded 7x7 plane.
  // A vertex that reads several rows of a plane reads whole rows (4 B more
  // each saves 16 B of exchange code per row), so its regions are whole rows
  // of 7; one that reads a single row (the planner may split the kernel's
  // rows) reads that row's part, never pieces of two rows.
  const CompileResult result = MustCompile(R"(
HloModule depthwise_grad
ENTRY main {
  x = f32[8,16,7,7] parameter(0)
  dy = f32[8,16,7,7] parameter(1)
  ROOT dw = f32[3,3,1,16] convolution(x, dy), window={size=7x7 pad=1_1x1_1}, dim_labels=fb01_io01->01bf, batch_group_count=16
}
)");
  ExpectExecutable(result);
  const std::vector<VertexField> inputs =
      FieldsOf(*result.graph, CodeletStartsWith("poplin::ConvPartialnx1"), "in");
  for (const VertexField& in : inputs) {
    ASSERT_TRUE(in.field->connected());
    for (const TensorRegion& region : in.field->regions()) {
      const bool one_row = region.begin / 7 == (region.end - 1) / 7;
      const bool whole_rows = region.begin % 7 == 0 && region.size() % 7 == 0;
      EXPECT_TRUE(one_row || whole_rows) << region.begin << ".." << region.end;
    }
  }
  EXPECT_GT(inputs.size(), 0u);
}

// A transpose that moves the innermost dimension is copied in blocks of
// the two swapped dimensions: each vertex reads a few rows of the source, not
// one region per element it writes (a run of the result would read a column).
TEST(LoweringTest, TransposesCopyBlocksOfRows) {
  const CompileResult result = MustCompile(R"(
HloModule blocks
ENTRY main {
  x = f32[1,1,96,80] parameter(0)
  t = f32[80,96,1,1] transpose(x), dimensions={3,2,0,1}
  y = f32[80,96,1,1] parameter(1)
  ROOT a = f32[80,96,1,1] add(t, y)
}
)");
  ExpectExecutable(result);
  size_t vertices = 0;
  uint64_t written = 0, regions_total = 0;
  for (size_t id = 0; id < result.graph->num_vertices(); ++id) {
    const VertexInfo& vertex = result.graph->vertex(static_cast<VertexId>(id));
    if (vertex.codelet->name() != "tileprof::Rearrange<float,2,2>") continue;
    ++vertices;
    const std::span<const FieldView> fields = result.graph->fields(static_cast<VertexId>(id));
    const FieldView& in = fields.front();
    const FieldView& out = fields.back();
    EXPECT_EQ(in.NumElements(), out.NumElements());
    EXPECT_LE(in.NumElements(), 36u);
    // A block of r x c elements is r rows on one side and c on the other:
    // regions at most about the square root of the elements, where a column
    // of the source would be one region per element.
    for (const FieldView* field : {&in, &out}) {
      const uint64_t regions = field->regions().size();
      EXPECT_LE(regions * regions, 4 * field->NumElements());
      regions_total += regions;
    }
    written += out.NumElements();
  }
  EXPECT_GT(vertices, 100u);
  EXPECT_EQ(written, 96u * 80);
  EXPECT_LE(regions_total * 2, written);
}

// Moving only size-1 dimensions keeps the element order: a view, no copy.
TEST(LoweringTest, TransposesThatMoveOnlySizeOneDimensionsAreViews) {
  const CompileResult result = MustCompile(R"(
HloModule views
ENTRY main {
  x = f32[3,3,1,960,1] parameter(0)
  ROOT t = f32[3,3,960,1,1] transpose(x), dimensions={0,1,3,2,4}
}
)");
  ExpectExecutable(result);
  EXPECT_FALSE(Uses(result, "tileprof::Rearrange"));
}

TEST(LoweringTest, UnsupportedOpsStayOpaque) {
  const CompileResult result = MustCompile(R"(
HloModule opaque
ENTRY main {
  x = f32[16] parameter(0)
  ROOT s = f32[16] sort(x), dimensions={0}, to_apply=cmp
}
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT le = pred[] compare(a, b), direction=LE
}
)");
  // LE is not a strict order: no sort codelet order matches it.
  EXPECT_EQ(result.lowering.opaque_opcodes, std::vector<std::string>{"sort"});
}

TEST(LoweringTest, DynamicUpdateSliceRunsAcrossRowsReadTheirShareOfTheUpdate) {
  // The result (32,768 elements) on 24 tiles: the run of the tile holding
  // element 16,384 crosses from row 0 to row 1, whose update boxes are then
  // whole (64 KiB). Split at the row boundary, each tile receives at most
  // the rows of the update its run of 1,365 elements touches (at most 3 of
  // 4 KiB) and the index, not 64 KiB.
  const CompileResult result = MustCompile(R"(
HloModule rows
ENTRY main {
  base = f32[2,16,32,32] parameter(0)
  upd = f32[1,16,32,32] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT put = f32[2,16,32,32] dynamic-update-slice(base, upd, i, z, z, z)
}
)",
                                           24);
  ExpectExecutable(result);
  uint64_t buffers = 0;
  for (const report::Variable& v : result.report.variables) {
    if (v.name != "exchange buffer of put") continue;
    ++buffers;
    EXPECT_LE(v.bytes, 12288u + 64) << "tile " << v.tile;
  }
  EXPECT_GT(buffers, 0u);
}

TEST(LoweringTest, LongSortLinesAreSpreadInBlocksNotReceivedByEach) {
  // An argsort over a 16,384-word vocabulary (128 KiB of keys and values
  // per line): spread linearly, each of the ~50 tiles holding a run of the
  // line would receive the whole line; on one tile per line, that tile
  // would hold it three times. In blocks (lower_sort_spread.cc), a tile
  // receives one block of its line at a time: the line's 128 KiB cut into
  // blocks of at most 1/16 of a tile.
  const CompileResult result = MustCompile(R"(
HloModule argsort
compare {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY main {
  logits = f32[2,16384] parameter(0)
  iota = s32[2,16384] iota(), iota_dimension=1
  ROOT s = (f32[2,16384], s32[2,16384]) sort(logits, iota), dimensions={1}, is_stable=true, to_apply=compare
}
)");
  ExpectExecutable(result);
  const uint64_t block_budget = result.graph->target().BytesPerTile() / 16;
  std::set<uint32_t> tiles;
  for (const report::Variable& v : result.report.variables) {
    if (!v.name.starts_with("exchange buffer of s/")) continue;
    tiles.insert(v.tile);
    EXPECT_LE(v.bytes, block_budget) << v.name << " on tile " << v.tile;
  }
  EXPECT_GT(tiles.size(), 2u);  // more than one per line
}

TEST(LoweringTest, ARowAtARunTimeStartIsLookedUpWhereTheTableLies) {
  // `positions[step]` of a 1 MiB table and `xs[t]` of a scan input: as
  // dynamic-slices, the one or two tiles of each small result would receive
  // every row in their columns (512 KiB a tile for the table). As lookups
  // of one row (lower_dynamic_lookup.cc), the tiles holding the rows write
  // partials, and no receive buffer holds more than a group of partials to
  // sum (38 rows of 64 for the table). A small table stays a dynamic-slice.
  const CompileResult result = MustCompile(R"(
HloModule rows
ENTRY main {
  positions = f32[4096,64] parameter(0)
  xs = f32[300,4,96] parameter(1)
  small = f32[16,8] parameter(2)
  step = s32[] parameter(3)
  zero = s32[] constant(0)
  row = f32[1,64] dynamic-slice(positions, step, zero), dynamic_slice_sizes={1,64}
  x = f32[1,4,96] dynamic-slice(xs, step, zero, zero), dynamic_slice_sizes={1,4,96}
  s = f32[1,8] dynamic-slice(small, step, zero), dynamic_slice_sizes={1,8}
  ROOT out = (f32[1,64], f32[1,4,96], f32[1,8]) tuple(row, x, s)
}
)");
  ExpectExecutable(result);
  EXPECT_TRUE(Uses(result, "tileprof::LookupPartial"));
  EXPECT_TRUE(Uses(result, "tileprof::DynamicSlice<"));  // the small one
  for (const report::Variable& v : result.report.variables) {
    if (!v.name.starts_with("exchange buffer of row") &&
        !v.name.starts_with("exchange buffer of x"))
      continue;
    EXPECT_LE(v.bytes, 16u * 1024) << v.name << " on tile " << v.tile;
  }
}

TEST(LoweringTest, ALayerOfStackedWeightsStaysADynamicSlice) {
  // `w[:, layer]` of weights stacked in the middle dimension (MaxText's
  // scanned layers): as a lookup, each block would hold a partial of all
  // 256 rows of 2,048 (2 MiB, twice), where the dynamic-slice's runs each
  // read their columns of the 64 layers.
  const CompileResult result = MustCompile(R"(
HloModule layers
ENTRY main {
  w = f32[256,64,2048] parameter(0)
  layer = s32[] parameter(1)
  zero = s32[] constant(0)
  ROOT l = f32[256,1,2048] dynamic-slice(w, zero, layer, zero), dynamic_slice_sizes={256,1,2048}
}
)");
  ExpectExecutable(result);
  EXPECT_TRUE(Uses(result, "tileprof::DynamicSlice<"));
  EXPECT_FALSE(Uses(result, "tileprof::LookupPartial"));
}

TEST(LoweringTest, ABlockOfRowsAtARunTimeOffsetIsCutIntoColumns) {
  // A partition's quarter of an all-reduced gradient (the reduce-scatter of
  // SPMD dumps: all-reduce, then a dynamic-slice at the partition's
  // offset). Mapped linearly, each tile holds part of one row and reads its
  // columns of all 3,073 rows the slice could start at (2.5 MB a tile, 3 GB
  // in all for a 4.9 MB operand); cut into blocks of a column and a
  // quarter of the rows, a tile reads its column of the 3,328 rows its
  // block can come from (13 KB), 16 MB in all.
  const CompileResult result = MustCompile(R"(
HloModule share
ENTRY main {
  grad = f32[4096,300] parameter(0)
  p = s32[] parameter(1)
  z = s32[] constant(0)
  ROOT share = f32[1024,300] dynamic-slice(grad, p, z), dynamic_slice_sizes={1024,300}
}
)");
  ExpectExecutable(result);
  uint64_t total = 0;
  for (const report::Variable& v : result.report.variables) {
    if (v.name != "exchange buffer of share") continue;
    total += v.bytes;
    EXPECT_LE(v.bytes, 16u * 1024) << "tile " << v.tile;
  }
  EXPECT_GT(total, 0u);
  EXPECT_LE(total, 4u * 4096 * 300 * 4);
}

TEST(LoweringTest, ColumnBlocksAreChosenOnlyWhereTheSlackOutweighsTheRows) {
  // The reduce-scatter's quarter: blocks of whole rows of a few columns.
  const SliceRows share{{1024}, {3072}, 14336};
  const std::optional<SliceBlocks> b = ChooseSliceBlocks(share, 2, 1472, 1024 * 14336 / 1472);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->rows_per, 1024u);
  EXPECT_LE(b->col_blocks * b->row_blocks, 1472u);
  // 4,096 rows of 10 columns, the result's 1,024 and the rows' exchange
  // code: 168 KB, where the linear mapping's 3,073 rows of 9,973 columns
  // are 61 MB.
  EXPECT_LE(SliceBlockBytes(share, b->rows_per, b->cols_per, 2), 256u * 1024);
  // A slice a few rows short of its operand: the linear mapping reads
  // little more than it holds.
  EXPECT_FALSE(ChooseSliceBlocks({{1024}, {2}, 14336}, 2, 1472, 1024 * 14336 / 1472));
  // One layer of 64 stacked in a middle dimension (w[:, layer]): a tile of
  // the linear mapping holds part of a row and reads 64 rows of it, as a
  // column block would.
  EXPECT_FALSE(ChooseSliceBlocks({{256, 1}, {0, 63}, 2048}, 4, 1216, 256 * 2048 / 1216));
  // Nothing to cut: one column.
  EXPECT_FALSE(ChooseSliceBlocks({{1024}, {3072}, 1}, 4, 1472, 1));
}

TEST(LoweringTest, EachRowsLabelIsPickedFromItsOwnRow) {
  // logits[arange(n), labels] as PyTorch/XLA writes it: index vectors
  // (i, labels[i]) with i an iota. As data, the first component could name
  // any row, so a lookup plan's blocks each held a partial of all 20,000
  // picks (or a run read every row); as a batching dimension
  // (gather_batching.cc), a run reads its own rows (32 picks: 8 KiB of
  // logits), and the gradient's scatter the updates of its own rows,
  // unstreamed.
  const CompileResult result = MustCompile(R"(
HloModule pick
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  logits = f32[20000,64] parameter(0)
  labels = s32[20000] parameter(1)
  g = f32[20000] parameter(2)
  rows = s32[20000,1] iota(), iota_dimension=0
  l = s32[20000,1] reshape(labels)
  idx = s32[20000,2] concatenate(rows, l), dimensions={1}
  picked = f32[20000] gather(logits, idx), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
  grad = f32[20000,64] scatter(logits, idx, g), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
  ROOT out = (f32[20000], f32[20000,64]) tuple(picked, grad)
}
)");
  ExpectExecutable(result);
  EXPECT_FALSE(Uses(result, "tileprof::LookupPartial"));
  for (ComputeSetId cs = 0; cs < result.graph->num_compute_sets(); ++cs)
    EXPECT_FALSE(result.graph->compute_set(cs).name.starts_with("grad/step"));
  uint64_t buffers = 0;
  for (const report::Variable& v : result.report.variables) {
    if (v.name != "exchange buffer of picked" && v.name != "exchange buffer of grad") continue;
    ++buffers;
    EXPECT_LE(v.bytes, 16u * 1024) << v.name << " on tile " << v.tile;
  }
  EXPECT_GT(buffers, 0u);
}

TEST(LoweringTest, PartsOfOneShapeAreStackedAndTransposedNotCopiedRowByRow) {
  // q, k and v of one projection joined along their last dimension: 6,144
  // rows of each part. Copied into slabs of the result, each copy listed a
  // run per row; stacked and transposed, each Rearrange vertex reads one box
  // of each part. Parts of different shapes keep the copies.
  const CompileResult result = MustCompile(R"(
HloModule qkv
ENTRY main {
  q = f32[64,96,8] parameter(0)
  k = f32[64,96,8] parameter(1)
  v = f32[64,96,8] parameter(2)
  ROOT qkv = f32[64,96,24] concatenate(q, k, v), dimensions={2}
}
)");
  ExpectExecutable(result);
  const auto rearrange = CodeletStartsWith("tileprof::Rearrange");
  uint64_t read = 0, written = 0;
  for (const VertexField& in : FieldsOf(*result.graph, rearrange, "in")) {
    // The three parts' rows of the vertex's run, each one run of a part
    // (or two where a part's mapping crosses a tile).
    EXPECT_LE(in.field->regions().size(), 6u);
    read += in.field->NumElements();
  }
  const std::vector<VertexField> outs = FieldsOf(*result.graph, rearrange, "out");
  for (const VertexField& out : outs) written += out.field->NumElements();
  EXPECT_GT(outs.size(), 100u);
  EXPECT_EQ(written, 64u * 96 * 24);
  // Whole rows of 8: a run that starts or ends inside a row reads the row.
  EXPECT_LE(read, written + 2 * 24 * outs.size());
  for (const program::Program& step : result.program.steps())
    EXPECT_NE(step.kind(), program::ProgramKind::kCopy);
}

TEST(LoweringTest, TransposesReadOnlyByDotsAreFoldedIntoThem) {
  // PyTorch's x.W^T: W stored [out, in], transposed for the dot. As a copy,
  // the transpose was a Rearrange of 32 K one-element runs in blocks, which
  // every cell of the dot then read run by run; folded, the cells read W
  // itself, a few runs each. Also read by an add, the transpose is made.
  const auto text = [](std::string_view also) {
    return fmt::format(R"(
HloModule linear
ENTRY main {{
  x = f32[32,64] parameter(0)
  w = f32[512,64] parameter(1)
  wt = f32[64,512] transpose(w), dimensions={{1,0}}
  y = f32[32,512] dot(x, wt), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  {}
}}
)",
                       also);
  };
  const CompileResult folded = MustCompile(text("ROOT r = f32[32,512] negate(y)"));
  ExpectExecutable(folded);
  EXPECT_FALSE(Uses(folded, "tileprof::Rearrange"));
  const std::vector<VertexField> weights =
      FieldsOf(*folded.graph, CodeletStartsWith("poplin::MatMul"), "weights");
  ASSERT_FALSE(weights.empty());
  for (const VertexField& field : weights) EXPECT_LE(field.field->regions().size(), 8u);
  const CompileResult made = MustCompile(
      text("s = f32[64,512] add(wt, wt)\n  ROOT r = (f32[32,512], f32[64,512]) tuple(y, s)"));
  ExpectExecutable(made);
  EXPECT_TRUE(Uses(made, "tileprof::Rearrange"));
}

TEST(LoweringTest, ElementsBeyond32BitsAreVertexParameters) {
  // A stacked-layers update as in Llama-3.1 70B's training step: 80 x 8192 x
  // 8192 (5.4 G elements), whose vertices' first elements exceed 2^32; they
  // are parameters `first` and `firstHigh`, not an error.
  const CompileResult result = MustCompile(R"(
HloModule stacked
ENTRY main {
  base = bf16[80,8192,8192] parameter(0)
  upd = bf16[1,8192,8192] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT put = bf16[80,8192,8192] dynamic-update-slice(base, upd, i, z, z)
}
)",
                                           16);
  ExpectExecutable(result);
}

}  // namespace
}  // namespace tileprof::engine::compiler

namespace tileprof::engine::compiler {
namespace {

TEST(LoweringTest, ABroadcastViewIsReceivedOncePerStep) {
  // m reads b, a view of the 1 KiB vector s, once per row: 64 rows of 256
  // on 16 tiles, 4 rows a tile. s is spread over 8 tiles (32 elements
  // each), so each row's reads cycle through 8 senders' runs; each tile
  // receives each run once, not once per row (4 KiB), so its exchange
  // buffer for m holds at most s.
  const CompileResult result = MustCompile(R"(
HloModule bias
ENTRY main {
  x = f32[64,256] parameter(0)
  s = f32[256] parameter(1)
  b = f32[64,256] broadcast(s), dimensions={1}
  ROOT m = f32[64,256] multiply(x, b)
}
)",
                                           16);
  uint64_t buffers = 0;
  for (const report::Variable& v : result.report.variables) {
    if (v.name != "exchange buffer of m") continue;
    ++buffers;
    EXPECT_LE(v.bytes, 1024u) << "tile " << v.tile;
  }
  EXPECT_GT(buffers, 0u);
}

// An all-reduce of several arrays among two replicas stays opaque (the other
// replica's data is not in the program), but each leaf of its result reads
// only its own operand: the one-element leaf's vertex read all 100,001
// elements of both operands.
TEST(LoweringTest, ACollectiveOfSeveralArraysReadsEachOperandForItsOwnLeaf) {
  const CompileResult result = MustCompile(R"(
HloModule collective, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  big = f32[100000] parameter(0)
  one = f32[1] parameter(1)
  ROOT r = (f32[100000], f32[1]) all-reduce(big, one), replica_groups={}, to_apply=add
}
)");
  EXPECT_EQ(result.lowering.opaque_opcodes, std::vector<std::string>{"all-reduce"});
  const Graph& graph = *result.graph;
  size_t vertices = 0;
  for (size_t v = 0; v < graph.num_vertices(); ++v) {
    const VertexInfo& vertex = graph.vertex(static_cast<VertexId>(v));
    if (!vertex.codelet->name().starts_with("tileprof::OpaqueOp<all-reduce")) continue;
    ++vertices;
    const auto specs = vertex.codelet->fields();
    const auto fields = graph.fields(static_cast<VertexId>(v));
    uint64_t read = 0, written = 0;
    for (size_t f = 0; f < specs.size(); ++f)
      (specs[f].name == "out" ? written : read) += fields[f].NumElements();
    EXPECT_EQ(read, written) << vertex.debug_name << " on tile " << *vertex.tile;
  }
  EXPECT_GT(vertices, 1u);
}

// Lookups along the minor dimension of a table (jnp.take(x, ids, axis=1),
// and the column plan's gather of a transposed table): each tile run of a
// table row writes a partial of that row's lookups where it lies, and the
// partials are summed row by row, instead of every run of the result
// receiving the whole row it picks from.
TEST(LoweringTest, LookupsAlongTheMinorDimensionArePartialsOfEachRowsBlocks) {
  const CompileResult result = MustCompile(R"(
HloModule minor
ENTRY main {
  t = f32[64,8192] parameter(0)
  ids = s32[512] parameter(1)
  ROOT g = f32[64,512] gather(t, ids), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={64,1}
}
)");
  ExpectExecutable(result);
  EXPECT_TRUE(Uses(result, "tileprof::LookupPartial"));
  EXPECT_FALSE(Uses(result, "tileprof::Gather"));
  const Graph& graph = *result.graph;
  for (const VertexField& found :
       FieldsOf(graph, CodeletStartsWith("tileprof::LookupPartial"), "table")) {
    // Within one row of the table, and about a tile's share of it.
    EXPECT_LE(found.field->NumElements(), 8192u);
    for (const StridedRegion& run : found.field->regions().runs()) {
      const TensorRegion hull = run.Hull();
      EXPECT_EQ(hull.begin / 8192, (hull.end - 1) / 8192) << "a block straddles two rows";
    }
  }
}

}  // namespace
}  // namespace tileprof::engine::compiler
