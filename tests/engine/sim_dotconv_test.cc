// Dots with any dimension numbers and convolutions in every form XLA prints,
// compiled and run by the simulator, against hand-checked values (small
// cases) or a direct loop over the definition (cases big enough to take the
// rearranging copy or to split the contraction over tiles).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codelets/codelets.h"
#include "engine/sim/plan.h"
#include "engine/sim/tile_table.h"
#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

uint64_t VerticesOf(const Compiled& compiled, const std::string& codelet) {
  for (const auto& usage : compiled.result.graph_stats.by_codelet)
    if (usage.codelet->name() == codelet) return usage.vertices;
  return 0;
}

TEST(SimDot, ContractingEitherDimensionOfEitherOperand) {
  Compiled compiled = CompileText(R"(
HloModule transposed
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[2,4] parameter(1)
  w = f32[4,3] parameter(2)
  c = f32[4,2] parameter(3)
  at_b = f32[3,4] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  a_wt = f32[2,4] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  at_ct = f32[3,4] dot(a, c), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  ROOT out = (f32[3,4], f32[2,4], f32[3,4]) tuple(at_b, a_wt, at_ct)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out =
      MustRun(*simulator, {{"a", Encode<float>({1, 2, 3, 4, 5, 6})},
                           {"b", Encode<float>({1, 0, 2, 1, 0, 1, 1, 3})},
                           {"w", Encode<float>({1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1})},
                           {"c", Encode<float>({1, 0, 0, 1, 1, 1, 2, -1})}});
  // a^T = [[1,4],[2,5],[3,6]]; a^T.b (a.reshape(3,2).b would start 1,2,4,7).
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(1, 4, 6, 13, 2, 5, 9, 17, 3, 6, 12, 21));
  // a.w^T: columns are a's three columns and their sum.
  EXPECT_THAT(Decode<float>(out["out.1"]), ElementsAre(1, 2, 3, 6, 4, 5, 6, 15));
  // a^T.c^T: row i is (a[0][i], a[1][i]) against each row of c.
  EXPECT_THAT(Decode<float>(out["out.2"]), ElementsAre(1, 4, 5, -2, 2, 5, 7, -1, 3, 6, 9, 0));
  EXPECT_GT(VerticesOf(compiled, MatMulPartialTransposedCodeletName(
                                     ElementType::kF32, ElementType::kF32, true, false)),
            0u);
  EXPECT_GT(VerticesOf(compiled, MatMulPartialTransposedCodeletName(
                                     ElementType::kF32, ElementType::kF32, false, true)),
            0u);
}

TEST(SimDot, BatchDimensionsAnywhere) {
  Compiled compiled = CompileText(R"(
HloModule batched
ENTRY main {
  l = f32[2,2,2] parameter(0)
  r = f32[2,2] parameter(1)
  ROOT d = f32[2,2] dot(l, r), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"l", Encode<float>({0, 1, 2, 3, 4, 5, 6, 7})},
                                           {"r", Encode<float>({1, 2, 3, 4})}});
  // out[b][m] = sum_k l[m][b][k] * r[k][b]: b=0: 0*1+1*3, 4*1+5*3; b=1: 2*2+3*4, 6*2+7*4.
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(3, 19, 16, 40));
}

// A batch dimension last makes the lhs view one run per element, past the
// view limit: the lhs is copied into [batch, rows, k] first.
TEST(SimDot, FragmentedOperandIsRearrangedFirst) {
  Compiled compiled = CompileText(R"(
HloModule rearranged
ENTRY main {
  l = f32[64,8,10] parameter(0)
  r = f32[10,8] parameter(1)
  ROOT d = f32[10,64] dot(l, r), lhs_batch_dims={2}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  std::vector<float> l(64 * 8 * 10), r(10 * 8);
  for (size_t i = 0; i < l.size(); ++i) l[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  std::vector<float> expected(10 * 64, 0.0f);
  for (size_t b = 0; b < 10; ++b)
    for (size_t m = 0; m < 64; ++m)
      for (size_t k = 0; k < 8; ++k) expected[b * 64 + m] += l[(m * 8 + k) * 10 + b] * r[b * 8 + k];
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"l", Encode<float>(l)}, {"r", Encode<float>(r)}});
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAreArray(expected));
  EXPECT_GT(VerticesOf(compiled, CopyCodeletName(ElementType::kF32)), 0u);
}

// 6 outputs of 4,096 products: the contraction is split over tiles into
// partial sums and reduced; both operands are read transposed.
TEST(SimDot, SplitContractionOfTransposedOperands) {
  Compiled compiled = CompileText(R"(
HloModule split
ENTRY main {
  x = f32[4096,3] parameter(0)
  w = f32[2,4096] parameter(1)
  ROOT d = f32[3,2] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})");
  std::vector<float> x(4096 * 3), w(2 * 4096);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 3 == i / 4096 ? 1 : 0);
  std::vector<float> expected(6, 0.0f);
  for (size_t m = 0; m < 3; ++m)
    for (size_t n = 0; n < 2; ++n)
      for (size_t k = 0; k < 4096; ++k) expected[m * 2 + n] += x[k * 3 + m] * w[n * 4096 + k];
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>(x)}, {"w", Encode<float>(w)}});
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAreArray(expected));
  EXPECT_GT(VerticesOf(compiled, MatMulPartialTransposedCodeletName(ElementType::kF32,
                                                                    ElementType::kF32, true, true)),
            1u);
  EXPECT_GT(VerticesOf(compiled, ReduceCodeletName(ReduceOp::kAdd, ElementType::kF32, false)), 0u);
}

TEST(SimConv, OneDimensionalWindowForms) {
  Compiled compiled = CompileText(R"(
HloModule conv1d
ENTRY main {
  x = f32[1,5,1] parameter(0)
  k = f32[3,1,1] parameter(1)
  k2 = f32[2,1,1] parameter(2)
  one = f32[3,1,1] parameter(3)
  padded = f32[1,5,1] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f
  strided = f32[1,3,1] convolution(x, k), window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f
  reversed = f32[1,5,1] convolution(x, k), window={size=3 pad=1_1 rhs_reversal=1}, dim_labels=b0f_0io->b0f
  transposed = f32[1,7,1] convolution(x, one), window={size=3 lhs_dilate=2}, dim_labels=b0f_0io->b0f
  dilated = f32[1,3,1] convolution(x, k2), window={size=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f
  cropped = f32[1,2,1] convolution(x, k2), window={size=2 pad=-1_-1}, dim_labels=b0f_0io->b0f
  ROOT out = (f32[1,5,1], f32[1,3,1], f32[1,5,1], f32[1,7,1], f32[1,3,1], f32[1,2,1]) tuple(padded, strided, reversed, transposed, dilated, cropped)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>({1, 2, 3, 4, 5})},
                                           {"k", Encode<float>({1, 0, -1})},
                                           {"k2", Encode<float>({1, 10})},
                                           {"one", Encode<float>({1, 1, 1})}});
  // Cross-correlation (no flip): out[i] = x[i-1] - x[i+1], zeros outside.
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(-2, -2, -2, -2, 4));
  EXPECT_THAT(Decode<float>(out["out.1"]), ElementsAre(-2, -2, 4));
  // rhs_reversal flips the kernel: -x[i-1] + x[i+1].
  EXPECT_THAT(Decode<float>(out["out.2"]), ElementsAre(2, 2, 2, 2, -4));
  // lhs_dilate=2: windows of 3 over 1,0,2,0,3,0,4,0,5.
  EXPECT_THAT(Decode<float>(out["out.3"]), ElementsAre(3, 2, 5, 3, 7, 4, 9));
  // rhs_dilate=2: x[i] + 10 x[i+2].
  EXPECT_THAT(Decode<float>(out["out.4"]), ElementsAre(31, 42, 53));
  // Negative padding drops x[0] and x[4]: windows (2,3), (3,4).
  EXPECT_THAT(Decode<float>(out["out.5"]), ElementsAre(32, 43));
}

TEST(SimConv, GroupsAndLayouts) {
  Compiled compiled = CompileText(R"(
HloModule groups
ENTRY main {
  x = f32[1,2,2] parameter(0)
  dw = f32[1,1,2] parameter(1)
  y = f32[2,1,1] parameter(2)
  bk = f32[1,1,2] parameter(3)
  n = f32[1,2,2,2] parameter(4)
  nk = f32[1,2,1,1] parameter(5)
  depthwise = f32[1,2,2] convolution(x, dw), window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2
  batched = f32[1,1,2] convolution(y, bk), window={size=1}, dim_labels=b0f_0io->b0f, batch_group_count=2
  nchw = f32[2,2,1,1] convolution(n, nk), window={size=1x1}, dim_labels=bf01_oi01->01bf
  ROOT out = (f32[1,2,2], f32[1,1,2], f32[2,2,1,1]) tuple(depthwise, batched, nchw)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>({1, 2, 3, 4})},
                                           {"dw", Encode<float>({10, 100})},
                                           {"y", Encode<float>({3, 5})},
                                           {"bk", Encode<float>({2, 7})},
                                           {"n", Encode<float>({1, 2, 3, 4, 5, 6, 7, 8})},
                                           {"nk", Encode<float>({2, 1})}});
  // Each feature with its own kernel value.
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(10, 200, 30, 400));
  // Output feature f sees batch entry f.
  EXPECT_THAT(Decode<float>(out["out.1"]), ElementsAre(6, 35));
  // 2 * channel 0 + channel 1, written spatial-major.
  EXPECT_THAT(Decode<float>(out["out.2"]), ElementsAre(7, 10, 13, 16));
}

// 4 outputs of 4,096 input channels: partial sums over channel slices on
// several tiles, then a reduction.
TEST(SimConv, SplitInputChannels) {
  Compiled compiled = CompileText(R"(
HloModule split
ENTRY main {
  x = f32[1,2,2,4096] parameter(0)
  k = f32[1,1,4096,1] parameter(1)
  ROOT c = f32[1,2,2,1] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f
})");
  std::vector<float> x(4 * 4096), k(4096, 1.0f);
  for (size_t p = 0; p < 4; ++p)
    for (size_t c = 0; c < 4096; ++c)
      x[p * 4096 + c] = static_cast<float>(static_cast<int>(c % 3) - 1 + static_cast<int>(p));
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", Encode<float>(x)}, {"k", Encode<float>(k)}});
  // Channels c % 3 = 0, 1, 2 number 1366, 1365, 1365: -1 + 4096 p.
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(-1, 4095, 8191, 12287));
  EXPECT_GT(VerticesOf(compiled, ConvPartialCodeletName(ElementType::kF32, ElementType::kF32)), 1u);
  EXPECT_GT(VerticesOf(compiled, ReduceCodeletName(ReduceOp::kAdd, ElementType::kF32, false)), 0u);
}

Expected<compiler::CompileResult> TryCompile(const std::string& text) {
  Expected<hlo::Module> module = hlo::ParseModule(text, {.source_name = "test.hlo"});
  if (!module) return module.error();
  Expected<Target> target = Target::FromPreset("ipu2", 1, 8);
  if (!target) return target.error();
  return compiler::CompileModule(*module, *target, {});
}

TEST(SimConv, ShapesXlaWouldRejectAreCompileErrors) {
  Expected<compiler::CompileResult> result = TryCompile(R"(
HloModule bad
ENTRY main {
  x = f32[1,5,1] parameter(0)
  k = f32[3,1,1] parameter(1)
  ROOT c = f32[1,5,1] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
})");
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("c (convolution)"));
  EXPECT_THAT(result.error().message(), HasSubstr("[1,1,3]"));

  result = TryCompile(R"(
HloModule bad
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[2,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("d (dot)"));
  EXPECT_THAT(result.error().message(), HasSubstr("[3,4]"));
}

// Types without a dot product are costed but never run.
TEST(SimDot, UnsupportedTypesAreRefusedNotGuessed) {
  Compiled compiled = CompileText(R"(
HloModule preds
ENTRY main {
  a = pred[2,3] parameter(0)
  b = pred[3,2] parameter(1)
  ROOT d = pred[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  auto simulator = TryCreate(compiled);
  ASSERT_FALSE(simulator);
  EXPECT_THAT(simulator.error().message(), HasSubstr("d (dot)"));
}

std::vector<std::byte> BFloat16s(const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(BFloat16FromFloat(v));
  return Encode<uint16_t>(bits);
}

// XLA's integer rules: s8 operands widened to the s32 result as they are
// read; an s8 result wraps; an s8 x s32 operand pair converted to s32 first.
TEST(SimDot, IntegerDotsWidenAndWrap) {
  Compiled compiled = CompileText(R"(
HloModule ints
ENTRY main {
  a = s8[2,2] parameter(0)
  b = s8[2,2] parameter(1)
  w = s32[2,2] parameter(2)
  wide = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  wrap = s8[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  mixed = s32[2,2] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (s32[2,2], s8[2,2], s32[2,2]) tuple(wide, wrap, mixed)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"a", Encode<int8_t>({-128, 127, 100, -3})},
                                           {"b", Encode<int8_t>({-128, 2, 127, -1})},
                                           {"w", Encode<int32_t>({100000, 1, -7, 2})}});
  // Row 0: -128 * -128 + 127 * 127 = 32513, -128 * 2 + 127 * -1 = -383;
  // row 1: 100 * -128 + -3 * 127 = -13181, 100 * 2 + -3 * -1 = 203.
  EXPECT_THAT(Decode<int32_t>(out["out.0"]), ElementsAre(32513, -383, -13181, 203));
  // The same modulo 2^8, as signed bytes.
  EXPECT_THAT(Decode<int8_t>(out["out.1"]), ElementsAre(1, -127, -125, -53));
  // -128 * 100000 + 127 * -7, -128 + 254; 100 * 100000 + 21, 100 - 6.
  EXPECT_THAT(Decode<int32_t>(out["out.2"]), ElementsAre(-12800889, 126, 10000021, 94));
  EXPECT_GT(VerticesOf(compiled, MatMulPartialCodeletName(ElementType::kS8, ElementType::kS32)),
            0u);
  EXPECT_GT(VerticesOf(compiled, CastCodeletName(ElementType::kS8, ElementType::kS32)), 0u);
}

// A bf16 dot whose K is split over tiles: the cells write f32 partial sums
// (MatMulPartial<bfloat16,float>) and the reduction adds them and rounds
// once to bf16 (Reduce<ReduceAdd,float,bfloat16>). The products are
// multiples of 0.5, so the f32 sums are exact, 4095 and 4095 + 2 * 4096 =
// 12287, which round to the bf16 values 4096 and 12288.
TEST(SimDot, SplitBf16ContractionKeepsF32Partials) {
  Compiled compiled = CompileText(R"(
HloModule split
ENTRY main {
  x = bf16[2,4096] parameter(0)
  w = bf16[4096,1] parameter(1)
  ROOT d = bf16[2,1] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  std::vector<float> x(2 * 4096), w(4096, 1.0f);
  for (size_t i = 0; i < 4096; ++i) {
    x[i] = i % 3 == 0 ? 0.0f : 1.5f;  // 2730 of 1.5: 4095
    x[4096 + i] = x[i] + 2.0f;
  }
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"x", BFloat16s(x)}, {"w", BFloat16s(w)}});
  EXPECT_THAT(Decode<uint16_t>(out["out.0"]),
              ElementsAre(BFloat16FromFloat(4096.0f), BFloat16FromFloat(12288.0f)));
  EXPECT_GT(VerticesOf(compiled, MatMulPartialCodeletName(ElementType::kBF16, ElementType::kF32)),
            1u);
  EXPECT_GT(VerticesOf(compiled, ReduceCodeletName(ReduceOp::kAdd, ElementType::kF32,
                                                   ElementType::kBF16, false)),
            0u);
}

// How the simulator decides that a field's runs are rows a codelet can read
// in place: one variable, one length, evenly spaced rows or evenly spaced
// blocks of them; anything else is gathered.
TEST(SimEvenRows, RowsAndBlocksOfRowsAreFoundAndIrregularRunsAreNot) {
  using sim::ByteRun;
  const auto rows = [](std::vector<ByteRun> runs) { return sim::EvenRows(runs); };
  const FieldRows even = rows({{0, 8, 16}, {0, 40, 48}, {0, 72, 80}});
  EXPECT_EQ(even.rows, 3u);
  EXPECT_EQ(even.row_bytes, 8u);
  EXPECT_EQ(even.stride, 32u);
  EXPECT_EQ(even.block_rows, 0u);
  EXPECT_EQ(even.extent(), 72u);
  // Two blocks of two rows 16 bytes apart, the blocks 100 bytes apart.
  const FieldRows blocks = rows({{1, 0, 4}, {1, 16, 20}, {1, 100, 104}, {1, 116, 120}});
  EXPECT_EQ(blocks.rows, 4u);
  EXPECT_EQ(blocks.stride, 16u);
  EXPECT_EQ(blocks.block_rows, 2u);
  EXPECT_EQ(blocks.block_stride, 100u);
  EXPECT_EQ(blocks.Offset(3), 116u);
  EXPECT_EQ(blocks.extent(), 120u);
  EXPECT_FALSE(rows({{0, 0, 8}}).strided());                            // one run
  EXPECT_FALSE(rows({{0, 0, 8}, {0, 4, 12}}).strided());                // rows overlap
  EXPECT_FALSE(rows({{0, 0, 8}, {1, 16, 24}}).strided());               // two variables
  EXPECT_FALSE(rows({{0, 0, 8}, {0, 16, 20}}).strided());               // two lengths
  EXPECT_FALSE(rows({{0, 0, 4}, {0, 16, 20}, {0, 40, 44}}).strided());  // uneven, 3 in no blocks
  // The second block would start inside the first.
  EXPECT_FALSE(rows({{0, 0, 4}, {0, 16, 20}, {0, 10, 14}, {0, 26, 30}}).strided());
  // Blocks of unequal size.
  EXPECT_FALSE(
      rows({{0, 0, 4}, {0, 16, 20}, {0, 100, 104}, {0, 116, 120}, {0, 132, 136}, {0, 200, 204}})
          .strided());
}

// A field's runs kept as rows: a run joins the last when it continues its
// stride (backwards too) with the same variable and length.
TEST(SimEvenRows, RunsAreKeptAsRowsOfOneStride) {
  using sim::ByteRun;
  const std::vector<ByteRun> runs = {{0, 8, 16},   {0, 40, 48}, {0, 72, 80},  // 3 rows, 32 apart
                                     {0, 90, 94},                             // another length
                                     {1, 50, 54},  {1, 30, 34}, {1, 10, 14},  // backwards
                                     {1, 100, 104}};
  std::vector<StridedRegion> rows;
  sim::CompressRuns(runs, rows);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].count, 3u);
  EXPECT_EQ(rows[0].stride, 32);
  EXPECT_EQ(rows[1].count, 1u);
  EXPECT_EQ(rows[2].count, 3u);
  EXPECT_EQ(rows[2].stride, -20);
  EXPECT_EQ(rows[3].begin, 100u);
  std::vector<ByteRun> back;
  for (const StridedRegion& row : rows)
    for (uint32_t k = 0; k < row.count; ++k) {
      const TensorRegion region = row.At(k);
      back.push_back({region.variable, region.begin, region.end});
    }
  ASSERT_EQ(back.size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(back[i].variable, runs[i].variable) << i;
    EXPECT_EQ(back[i].begin, runs[i].begin) << i;
    EXPECT_EQ(back[i].end, runs[i].end) << i;
  }
}

// The planner's per-tile table behaves as the std::map it replaced: values
// start value-initialised, and a walk visits the tiles used in tile order.
TEST(SimTileTable, ActsAsAMapOfTheTilesUsed) {
  sim::TileTable<uint64_t> table(1472);
  EXPECT_TRUE(table.empty());
  table[900] += 5;
  table[3] += 1;
  table[900] += 2;
  table[1471];  // used, left at zero
  std::vector<std::pair<uint32_t, uint64_t>> seen;
  table.ForEach([&](uint32_t tile, uint64_t value) { seen.emplace_back(tile, value); });
  EXPECT_THAT(
      seen, ElementsAre(std::pair<uint32_t, uint64_t>{3, 1}, std::pair<uint32_t, uint64_t>{900, 7},
                        std::pair<uint32_t, uint64_t>{1471, 0}));
  EXPECT_FALSE(table.empty());
}

}  // namespace
}  // namespace tileprof::engine::sim_test
