// The window, random and expression-reduce codelets run directly on hand
// buffers: a select-and-scatter and a reduce-window from a box, refusals of malformed programs
// and boxes, rng without a seeded state, and name round trips through the
// compiler's codelet registry.
#include <bit>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codelets/random.h"
#include "engine/codelets/reduce_expr.h"
#include "engine/codelets/window.h"
#include "engine/compiler/opaque.h"
#include "engine/graph/graph.h"
#include "tests/engine/codelet_test_util.h"

namespace tileprof::engine {
namespace {

using testing::Bytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::RunOn;
using testing::Values;

constexpr auto kF32 = ElementType::kF32;
constexpr auto kS32 = ElementType::kS32;

std::unique_ptr<Codelet> Make(Expected<std::unique_ptr<Codelet>> made) {
  EXPECT_TRUE(made.has_value()) << made.error().message();
  return std::move(*made);
}

// 1-D select-and-scatter parameters: first, outSize, select, srcExtent,
// window, stride, padLo, opLo, opSize, srcLo, srcSize.
std::vector<uint32_t> Params1D(uint32_t first, uint32_t out, SelectDirection select, uint32_t src,
                               uint32_t window, uint32_t stride, uint32_t op_lo, uint32_t op_size,
                               uint32_t src_lo, uint32_t src_size) {
  return {first,  out,     static_cast<uint32_t>(select), src, window, stride, 0, op_lo, op_size,
          src_lo, src_size};
}

TEST(SelectAndScatter, WritesPartOfTheResultFromBoxes) {
  auto codelet = Make(MakeSelectAndScatterCodelet(kF32, 1));
  // Operand [1, 3, 3, 2, 7, 0], windows of 2 with stride 2: {1,3} {3,2} {7,0}
  // select elements 1, 2 and 4. This vertex writes elements 2..4 from the
  // operand box [2, 6) and the source box [1, 3).
  std::vector<std::vector<std::byte>> fields = {Bytes<float>({3, 2, 7, 0}), Bytes<float>({20, 30}),
                                                Bytes<float>({0.25f}), Bytes<float>({0, 0, 0})};
  ASSERT_TRUE(RunOn(*codelet, fields, Params1D(2, 6, SelectDirection::kGe, 3, 2, 2, 2, 4, 1, 2)));
  EXPECT_THAT(Values<float>(fields[3]), ElementsAre(20.25f, 0.25f, 30.25f));
}

TEST(SelectAndScatter, RefusesAReadOutsideItsBox) {
  auto codelet = Make(MakeSelectAndScatterCodelet(kF32, 1));
  // Element 2's window {3, 2} starts at 2, but the box starts at 3.
  std::vector<std::vector<std::byte>> fields = {Bytes<float>({2, 7, 0}), Bytes<float>({20, 30}),
                                                Bytes<float>({0}), Bytes<float>({0})};
  Status status =
      RunOn(*codelet, fields, Params1D(2, 6, SelectDirection::kGe, 3, 2, 2, 3, 3, 1, 2));
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("outside the connected operand box"));
}

TEST(SelectAndScatter, AWindowOutsideTheSourceBoxIsAnErrorOnlyIfItSelectsTheRun) {
  auto codelet = Make(MakeSelectAndScatterCodelet(kF32, 1));
  // Windows of 2 with stride 1 over 6 elements; this vertex writes element 2
  // from the operand box [1, 4) and the source box [2, 3): window 1 covers
  // element 2 but lies outside the source box. It selects element 1 (9 > 1),
  // so it does not matter; window 2 selects element 2.
  std::vector<std::vector<std::byte>> fields = {Bytes<float>({9, 1, 0}), Bytes<float>({40}),
                                                Bytes<float>({0.5f}), Bytes<float>({0})};
  ASSERT_TRUE(RunOn(*codelet, fields, Params1D(2, 6, SelectDirection::kGe, 5, 2, 1, 1, 3, 2, 1)));
  EXPECT_THAT(Values<float>(fields[3]), ElementsAre(40.5f));
  // Now window 1 selects element 2, whose source value is not connected.
  fields[0] = Bytes<float>({1, 9, 0});
  Status status =
      RunOn(*codelet, fields, Params1D(2, 6, SelectDirection::kGe, 5, 2, 1, 1, 3, 2, 1));
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("outside the connected source box"));
}

TEST(SelectAndScatter, RefusesABadDirectionAndBadSizes) {
  auto codelet = Make(MakeSelectAndScatterCodelet(kF32, 1));
  std::vector<std::vector<std::byte>> fields = {Bytes<float>({1, 3}), Bytes<float>({5}),
                                                Bytes<float>({0}), Bytes<float>({0, 0})};
  auto params = Params1D(0, 2, SelectDirection::kGe, 1, 2, 2, 0, 2, 0, 1);
  params[2] = 9;
  EXPECT_FALSE(RunOn(*codelet, fields, params));
  params = Params1D(0, 2, SelectDirection::kGe, 1, 2, 2, 0, 3, 0, 1);  // box beyond the operand
  EXPECT_FALSE(RunOn(*codelet, fields, params));
  EXPECT_FALSE(MakeSelectAndScatterCodelet(ElementType::kPred, 1));
  EXPECT_FALSE(MakeSelectAndScatterCodelet(kF32, 0));
}

// 1-D reduce-window parameters: first, firstHi, op, outSize, extent, window,
// stride, padLo, baseDil, winDil, opLo, opSize.
std::vector<uint32_t> WindowParams1D(uint64_t first, ReduceOp op, uint32_t out, uint32_t extent,
                                     uint32_t window, uint32_t stride, int32_t pad_lo,
                                     uint32_t base_dil, uint32_t win_dil, uint32_t op_lo,
                                     uint32_t op_size) {
  return {static_cast<uint32_t>(first),
          static_cast<uint32_t>(first >> 32),
          static_cast<uint32_t>(op),
          out,
          extent,
          window,
          stride,
          static_cast<uint32_t>(pad_lo),
          base_dil,
          win_dil,
          op_lo,
          op_size};
}

TEST(ReduceWindow, ReducesWindowsFromABoxWithPaddingAsInit) {
  auto codelet = Make(MakeReduceWindowCodelet(kF32, 1));
  // Operand [1, 2, 4, 8, 16], windows of 3, stride 2, one padding element
  // each side: windows {pad,1,2} {2,4,8} {8,16,pad}. With init 100 each sum
  // is 100 + its elements, a padding position adding 100 again. This vertex
  // writes outputs 1..2 from the box [1, 5).
  std::vector<std::vector<std::byte>> fields = {Bytes<float>({2, 4, 8, 16}), Bytes<float>({100}),
                                                Bytes<float>({0, 0})};
  ASSERT_TRUE(
      RunOn(*codelet, fields, WindowParams1D(1, ReduceOp::kAdd, 3, 5, 3, 2, 1, 1, 1, 1, 4)));
  EXPECT_THAT(Values<float>(fields[2]), ElementsAre(114.0f, 224.0f));
}

TEST(ReduceWindow, BaseAndWindowDilation) {
  auto codelet = Make(MakeReduceWindowCodelet(kS32, 1));
  // Operand [3, 5, 7] base-dilated by 2: [3, h, 5, h, 7]; windows of 2
  // positions 2 apart (dilated window 3): {3,5} {h,h} {5,7}, max with init
  // -1 (holes count as init).
  std::vector<std::vector<std::byte>> fields = {Bytes<int32_t>({3, 5, 7}), Bytes<int32_t>({-1}),
                                                Bytes<int32_t>({0, 0, 0})};
  ASSERT_TRUE(
      RunOn(*codelet, fields, WindowParams1D(0, ReduceOp::kMax, 3, 3, 2, 1, 0, 2, 2, 0, 3)));
  EXPECT_THAT(Values<int32_t>(fields[2]), ElementsAre(5, -1, 7));
}

TEST(ReduceWindow, RefusesAReadOutsideItsBoxAndBadParameters) {
  auto codelet = Make(MakeReduceWindowCodelet(kF32, 1));
  std::vector<std::vector<std::byte>> fields = {Bytes<float>({4, 8, 16}), Bytes<float>({0}),
                                                Bytes<float>({0})};
  // Output 1's window {2, 4, 8} starts at element 1; the box starts at 2.
  Status status =
      RunOn(*codelet, fields, WindowParams1D(1, ReduceOp::kAdd, 3, 5, 3, 2, 1, 1, 1, 2, 3));
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("outside the connected operand box"));
  // and/or are for pred; a box beyond the operand; a zero stride; an output
  // past the result (first's high word).
  EXPECT_FALSE(
      RunOn(*codelet, fields, WindowParams1D(1, ReduceOp::kAnd, 3, 5, 3, 2, 1, 1, 1, 2, 3)));
  EXPECT_FALSE(
      RunOn(*codelet, fields, WindowParams1D(1, ReduceOp::kAdd, 3, 5, 3, 2, 1, 1, 1, 3, 3)));
  EXPECT_FALSE(
      RunOn(*codelet, fields, WindowParams1D(1, ReduceOp::kAdd, 3, 5, 3, 0, 1, 1, 1, 2, 3)));
  EXPECT_FALSE(RunOn(*codelet, fields,
                     WindowParams1D(uint64_t{1} << 32, ReduceOp::kAdd, 3, 5, 3, 2, 1, 1, 1, 2, 3)));
  EXPECT_FALSE(MakeReduceWindowCodelet(kF32, 0));
  EXPECT_FALSE(MakeReduceWindowCodelet(kF32, 17));
}

// node words: op, type, a, b, c.
std::vector<uint32_t> Node(ExprOp op, ElementType type, uint32_t a = 0, uint32_t b = 0,
                           uint32_t c = 0) {
  return {static_cast<uint32_t>(op), static_cast<uint32_t>(type), a, b, c};
}

TEST(ReduceExpr, FoldsAnExpressionWithAConstant) {
  auto codelet = Make(MakeReduceExprCodelet({kF32}, 5));
  // acc + 2 * x over P = 3 partials of M = 2 outputs.
  std::vector<uint32_t> params;
  for (auto node : {Node(ExprOp::kParameter, kF32, 0), Node(ExprOp::kParameter, kF32, 1),
                    Node(ExprOp::kConstant, kF32, std::bit_cast<uint32_t>(2.0f)),
                    Node(ExprOp::kMultiply, kF32, 2, 1), Node(ExprOp::kAdd, kF32, 0, 3)}) {
    params.insert(params.end(), node.begin(), node.end());
  }
  params.push_back(4);
  std::vector<std::vector<std::byte>> fields = {Bytes<float>({1, 10, 2, 20, 3, 30}),
                                                Bytes<float>({0.5f}), Bytes<float>({0, 0})};
  ASSERT_TRUE(RunOn(*codelet, fields, params));
  EXPECT_THAT(Values<float>(fields[2]), ElementsAre(12.5f, 120.5f));
}

TEST(ReduceExpr, RefusesMalformedPrograms) {
  auto codelet = Make(MakeReduceExprCodelet({kS32}, 2));
  std::vector<std::vector<std::byte>> fields = {Bytes<int32_t>({1, 2}), Bytes<int32_t>({0}),
                                                Bytes<int32_t>({0})};
  auto run = [&](std::vector<uint32_t> a, std::vector<uint32_t> b, uint32_t result) {
    std::vector<uint32_t> params = a;
    params.insert(params.end(), b.begin(), b.end());
    params.push_back(result);
    return RunOn(*codelet, fields, params);
  };
  // A forward reference, an unknown op, a parameter out of range, a result
  // outside the program, a type mismatch.
  EXPECT_FALSE(run(Node(ExprOp::kAdd, kS32, 1, 1), Node(ExprOp::kParameter, kS32, 0), 0));
  EXPECT_FALSE(run(Node(ExprOp::kCount, kS32), Node(ExprOp::kParameter, kS32, 0), 1));
  EXPECT_FALSE(run(Node(ExprOp::kParameter, kS32, 2), Node(ExprOp::kParameter, kS32, 0), 1));
  EXPECT_FALSE(run(Node(ExprOp::kParameter, kS32, 0), Node(ExprOp::kParameter, kS32, 1), 2));
  EXPECT_FALSE(run(Node(ExprOp::kParameter, kS32, 0), Node(ExprOp::kAdd, kF32, 0, 0), 1));
  // And a good one (the reducer keeps the last element).
  fields[0] = Bytes<int32_t>({2147483647, 2});
  ASSERT_TRUE(run(Node(ExprOp::kParameter, kS32, 0), Node(ExprOp::kParameter, kS32, 1), 1));
  EXPECT_FALSE(MakeReduceExprCodelet({ElementType::kF16}, 2));
  EXPECT_FALSE(MakeReduceExprCodelet({kF32}, kMaxExprNodes + 1));
}

TEST(Rng, RefusesAnUnseededTile) {
  auto codelet = Make(MakeRngCodelet(kF32, false));
  std::vector<std::vector<std::byte>> fields = {Bytes<float>({0}), Bytes<float>({1}),
                                                Bytes<float>({0, 0})};
  TileState tile;
  Status status = RunOn(*codelet, fields, {}, &tile);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("never seeded"));
  tile.prng = {1, 2};
  ASSERT_TRUE(RunOn(*codelet, fields, {}, &tile));
  for (float v : Values<float>(fields[2])) EXPECT_TRUE(v >= 0 && v < 1) << v;
  EXPECT_FALSE(MakeRngCodelet(kS32, true));
}

TEST(CompilerCodelets, NewKindsRoundTripByName) {
  Expected<Target> target = Target::FromPreset("ipu2", 1, 4);
  ASSERT_TRUE(target);
  Graph graph(*target);
  compiler::CompilerCodelets codelets(graph);
  for (std::string name :
       {SelectAndScatterCodeletName(kF32, 4), ReduceWindowCodeletName(ElementType::kF16, 3),
        RngCodeletName(kF32, true), RngCodeletName(kS32, false),
        ReduceExprCodeletName(std::vector{kF32, kS32}, 11)}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(compiler::CompilerCodelets::IsCompilerCodeletName(name));
    Expected<const Codelet*> codelet = codelets.FromName(name);
    ASSERT_TRUE(codelet) << codelet.error().message();
    EXPECT_EQ((*codelet)->name(), name);
  }
  EXPECT_FALSE(codelets.FromName("tileprof::ReduceExpr<float,0>"));
  EXPECT_FALSE(codelets.FromName("tileprof::SelectAndScatter<float>"));
  EXPECT_FALSE(codelets.FromName("tileprof::RngNormal<int>"));
}

}  // namespace
}  // namespace tileprof::engine
