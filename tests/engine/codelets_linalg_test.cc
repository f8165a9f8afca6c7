// The linear-algebra codelets of engine/codelets/linalg.h, run directly on
// hand-computed cases: LU with pivoting (a zero column too), Cholesky in
// both triangles and a failing one, triangular solves on every side and
// triangle, Householder QR and its Q, pivots to a permutation; the shape
// checks and the costs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codelet_test_util.h"
#include "engine/codelets/linalg.h"
#include "engine/compiler/opaque.h"
#include "engine/graph/graph.h"

namespace tileprof::engine {
namespace {

using testing::Bytes;
using ::testing::DoubleEq;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using testing::Made;
using testing::RunOn;
using testing::Values;

constexpr ElementType kF32 = ElementType::kF32, kF64 = ElementType::kF64;

TEST(Getrf, PivotsOnTheLargestAndCountsZeroPivots) {
  auto codelet = Made(MakeGetrfCodelet(kF64));
  EXPECT_EQ(codelet->name(), "tileprof::Getrf<double>");
  // [[1, 2], [3, 4]]: row 2 is the pivot; l = 1/3, u22 = 2 - 4/3. Then a
  // matrix whose first column is zero: info 1, no swap, the rest factored.
  std::vector<std::vector<std::byte>> f = {
      Bytes(std::vector<double>{1, 2, 3, 4, 0, 5, 0, 7}), Bytes(std::vector<double>(8)),
      Bytes(std::vector<int32_t>(4)), Bytes(std::vector<int32_t>(2))};
  ASSERT_TRUE(RunOn(*codelet, f, {2, 2}));
  EXPECT_THAT(Values<double>(f[1]),
              ElementsAre(3, 4, DoubleEq(1.0 / 3), DoubleEq(2.0 / 3), 0, 5, 0, 7));
  EXPECT_THAT(Values<int32_t>(f[2]), ElementsAre(2, 2, 1, 2));
  EXPECT_THAT(Values<int32_t>(f[3]), ElementsAre(0, 1));
}

TEST(Getrf, FactorsTallMatrices) {
  auto codelet = Made(MakeGetrfCodelet(kF32));
  // 3x2 [[1, 1], [2, 1], [4, 2]]: pivot row 3 (swap 1 and 3), l = 1/2, 1/4;
  // column 2 below: 1 - 1, 1 - 1/2 = 0.5 -> pivot row 3 again.
  std::vector<std::vector<std::byte>> f = {
      Bytes(std::vector<float>{1, 1, 2, 1, 4, 2}), Bytes(std::vector<float>(6)),
      Bytes(std::vector<int32_t>(2)), Bytes(std::vector<int32_t>(1))};
  ASSERT_TRUE(RunOn(*codelet, f, {3, 2}));
  EXPECT_THAT(Values<float>(f[1]), ElementsAre(4, 2, 0.25f, 0.5f, 0.5f, 0));
  EXPECT_THAT(Values<int32_t>(f[2]), ElementsAre(3, 3));
  f[2] = Bytes(std::vector<int32_t>(3));
  Status status = RunOn(*codelet, f, {3, 2});
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(),
              HasSubstr("field 'ipiv' has 3 elements, not 1 matrices of 2"));
}

TEST(Potrf, FactorsEitherTriangleAndStopsAtANonPositivePivot) {
  auto codelet = Made(MakePotrfCodelet(kF32));
  EXPECT_EQ(codelet->name(), "tileprof::Potrf<float>");
  // [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]]; the other triangle
  // keeps the input (9 marks it). [[1, 2], [2, 1]] fails at step 2 with the
  // pivot 1 - 4 = -3 left on the diagonal.
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{4, 9, 2, 5, 1, 2, 2, 1}),
                                           Bytes(std::vector<float>(8)),
                                           Bytes(std::vector<int32_t>(2))};
  ASSERT_TRUE(RunOn(*codelet, f, {2, 1}));
  EXPECT_THAT(Values<float>(f[1]), ElementsAre(2, 9, 1, 2, 1, 2, 2, -3));
  EXPECT_THAT(Values<int32_t>(f[2]), ElementsAre(0, 2));
  // Upper: A = U^T U, U = [[2, 1], [0, 2]], read from the upper triangle.
  f[0] = Bytes(std::vector<float>{4, 2, 9, 5, 1, 2, 2, 1});
  ASSERT_TRUE(RunOn(*codelet, f, {2, 0}));
  EXPECT_THAT(Values<float>(f[1]), ElementsAre(2, 1, 9, 2, 1, 2, 2, -3));
}

TEST(Trsm, SolvesOnEitherSideWithEitherTriangle) {
  auto codelet = Made(MakeTrsmCodelet(kF64));
  EXPECT_EQ(codelet->name(), "tileprof::Trsm<double>");
  // A = [[2, 7], [1, 4]] (7 is outside the lower triangle, never read).
  const std::vector<double> a = {2, 7, 1, 4};
  auto solve = [&](std::vector<double> b, uint32_t m, uint32_t n, std::vector<uint32_t> flags,
                   double alpha = 1) {
    std::vector<std::vector<std::byte>> f = {Bytes(a), Bytes(b), Bytes(std::vector<double>{alpha}),
                                             Bytes(std::vector<double>(b.size()))};
    std::vector<uint32_t> params = {m, n};
    params.insert(params.end(), flags.begin(), flags.end());
    EXPECT_TRUE(RunOn(*codelet, f, params));
    return Values<double>(f[3]);
  };
  // left lower: [[2, 0], [1, 4]] x = [2, 9] -> x = [1, 2].
  EXPECT_THAT(solve({2, 9}, 2, 1, {1, 1, 0, 0}), ElementsAre(1, 2));
  // left lower transposed: [[2, 1], [0, 4]] x = [4, 8] -> [1, 2]; alpha 2.
  EXPECT_THAT(solve({2, 4}, 2, 1, {1, 1, 1, 0}, 2), ElementsAre(1, 2));
  // left upper unit: [[1, 7], [0, 1]] x = [15, 2] -> [1, 2].
  EXPECT_THAT(solve({15, 2}, 2, 1, {1, 0, 0, 1}), ElementsAre(1, 2));
  // right lower: x [[2, 0], [1, 4]] = [4, 8] -> [1, 2].
  EXPECT_THAT(solve({4, 8}, 1, 2, {0, 1, 0, 0}), ElementsAre(1, 2));
  // right upper transposed: x [[2, 0], [7, 4]] = [16, 8] -> [1, 2].
  EXPECT_THAT(solve({16, 8}, 1, 2, {0, 0, 1, 0}), ElementsAre(1, 2));
  // alpha 0: zeros, whatever A holds.
  EXPECT_THAT(solve({16, 8}, 1, 2, {0, 0, 1, 0}, 0), ElementsAre(0, 0));
}

TEST(Qr, HouseholderReflectorsAsLapackAndTheirProduct) {
  auto geqrf = Made(MakeGeqrfCodelet(kF64));
  auto orgqr = Made(MakeOrgqrCodelet(kF64));
  EXPECT_EQ(geqrf->name(), "tileprof::Geqrf<double>");
  EXPECT_EQ(orgqr->name(), "tileprof::Orgqr<double>");
  // A = [[3, 1], [4, 2]]: column 1's reflector has beta = -5, tau = 1.6,
  // v = [1, 0.5]; it takes column 2 to [-2.2, 0.4], whose reflector of one
  // element is the identity (tau 0).
  std::vector<std::vector<std::byte>> f = {
      Bytes(std::vector<double>{3, 1, 4, 2}), Bytes(std::vector<double>(4)),
      Bytes(std::vector<double>(2)), Bytes(std::vector<int32_t>{7})};
  ASSERT_TRUE(RunOn(*geqrf, f, {2, 2}));
  const auto near = [](double v) { return DoubleNear(v, 1e-12); };
  EXPECT_THAT(Values<double>(f[1]), ElementsAre(near(-5), near(-2.2), near(0.5), near(0.4)));
  EXPECT_THAT(Values<double>(f[2]), ElementsAre(near(1.6), 0));
  EXPECT_THAT(Values<int32_t>(f[3]), ElementsAre(0));
  // Q = I - 1.6 v v^T = [[-0.6, -0.8], [-0.8, 0.6]]; Q R = A.
  std::vector<std::vector<std::byte>> g = {f[1], f[2], Bytes(std::vector<double>(4)),
                                           Bytes(std::vector<int32_t>(1))};
  ASSERT_TRUE(RunOn(*orgqr, g, {2, 2, 2}));
  EXPECT_THAT(Values<double>(g[2]), ElementsAre(near(-0.6), near(-0.8), near(-0.8), near(0.6)));
  // Its first column alone (n = k = 1).
  g = {Bytes(std::vector<double>{-5, 0.5}), Bytes(std::vector<double>{1.6}),
       Bytes(std::vector<double>(2)), Bytes(std::vector<int32_t>(1))};
  ASSERT_TRUE(RunOn(*orgqr, g, {2, 1, 1}));
  EXPECT_THAT(Values<double>(g[2]), ElementsAre(near(-0.6), near(-0.8)));
  Status status = RunOn(*orgqr, g, {1, 2, 1});
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("orgqr needs m >= n >= k"));
}

TEST(LuPivotsToPermutation, SwapsInOrderAndSkipsPivotsOutOfRange) {
  auto codelet = Made(MakeLuPivotsToPermutationCodelet());
  EXPECT_EQ(codelet->name(), "tileprof::LuPivotsToPermutation<int>");
  // [0 1 2 3] -swap(0,2)-> [2 1 0 3] -swap(1,2)-> [2 0 1 3] -(2,2)-> same;
  // then -1 and 9 are skipped, 0 swaps entry 2 with entry 0.
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<int32_t>{2, 2, 2, -1, 9, 0}),
                                           Bytes(std::vector<int32_t>(8))};
  ASSERT_TRUE(RunOn(*codelet, f, {3, 4}));
  EXPECT_THAT(Values<int32_t>(f[1]), ElementsAre(2, 0, 1, 3, 2, 1, 0, 3));
  Status status = RunOn(*codelet, f, {5, 4});
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("5 pivots for a permutation of 4"));
}

TEST(Linalg, TakesRealTypesAndCostsGrowWithTheMatrices) {
  EXPECT_FALSE(MakeGetrfCodelet(ElementType::kS32));
  EXPECT_FALSE(MakeTrsmCodelet(ElementType::kF16));
  Expected<Target> target = Target::FromPreset("ipu2", 1, 4);
  ASSERT_TRUE(target);
  auto f32 = Made(MakeGetrfCodelet(kF32));
  auto f64 = Made(MakeGetrfCodelet(kF64));
  auto cycles = [&](const Codelet& c, uint32_t n, uint64_t count) {
    const std::vector<uint64_t> elements = {count * n * n, count * n * n, count * n, count};
    const std::vector<uint32_t> params = {n, n};
    return c.EstimateCycles({elements, params}, *target);
  };
  EXPECT_LT(cycles(*f32, 4, 1), cycles(*f32, 8, 1));
  EXPECT_LT(cycles(*f32, 8, 1), cycles(*f32, 8, 2));
  EXPECT_LT(cycles(*f32, 8, 1), cycles(*f64, 8, 1));  // soft-float f64
}

TEST(CompilerCodelets, LinalgKindsRoundTripByName) {
  Expected<Target> target = Target::FromPreset("ipu2", 1, 4);
  ASSERT_TRUE(target);
  Graph graph(*target);
  compiler::CompilerCodelets codelets(graph);
  for (std::string name : {GetrfCodeletName(kF32), GetrfCodeletName(kF64), PotrfCodeletName(kF32),
                           TrsmCodeletName(kF64), GeqrfCodeletName(kF32), OrgqrCodeletName(kF64),
                           LuPivotsToPermutationCodeletName()}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(compiler::CompilerCodelets::IsCompilerCodeletName(name));
    Expected<const Codelet*> codelet = codelets.FromName(name);
    ASSERT_TRUE(codelet) << codelet.error().message();
    EXPECT_EQ((*codelet)->name(), name);
  }
  EXPECT_FALSE(codelets.FromName("tileprof::Getrf<int>"));
  EXPECT_FALSE(codelets.FromName("tileprof::Trsm<float,float>"));
  EXPECT_FALSE(codelets.FromName("tileprof::LuPivotsToPermutation<float>"));
}

}  // namespace
}  // namespace tileprof::engine
