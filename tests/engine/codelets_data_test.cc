// Select, clamp, cast, copy, fill, scaled add, reduce, matmul and conv
// partials, set seed and the seed listing's vertices.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codelet_test_util.h"

namespace tileprof::engine {
namespace {

using testing::Bytes;
using ::testing::ElementsAre;
using testing::Get;
using ::testing::HasSubstr;
using testing::RunOn;
using testing::Values;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr auto kF32 = ElementType::kF32;
constexpr auto kF16 = ElementType::kF16;
constexpr auto kS32 = ElementType::kS32;

template <typename T>
std::vector<std::byte> Zeros(size_t n) {
  return Bytes(std::vector<T>(n));
}

void ExpectOk(const Status& status) { EXPECT_TRUE(status) << status.error().message(); }

TEST(Select, PicksByPredicate) {
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<int32_t>{1, 2, 3}),
                                           Bytes(std::vector<int32_t>{-1, -2, -3}),
                                           Bytes(std::vector<uint8_t>{1, 0, 2}), Zeros<int32_t>(3)};
  ExpectOk(RunOn(**GetSelectCodelet(kS32), f));
  EXPECT_THAT(Values<int32_t>(f[3]), ElementsAre(1, -2, 3));
}

// Long enough for the vectorised loop and its remainder; any nonzero byte of
// the predicate is true.
TEST(Select, PicksByPredicateOverLongInputs) {
  std::vector<int32_t> a, b, expect;
  std::vector<uint8_t> predicate;
  for (int32_t i = 0; i < 203; ++i) {
    a.push_back(i);
    b.push_back(-i);
    predicate.push_back(static_cast<uint8_t>(i % 3 == 0 ? 0 : i % 7));
    expect.push_back(predicate.back() != 0 ? i : -i);
  }
  std::vector<std::vector<std::byte>> f = {Bytes(a), Bytes(b), Bytes(predicate),
                                           Zeros<int32_t>(a.size())};
  ExpectOk(RunOn(**GetSelectCodelet(kS32), f));
  EXPECT_EQ(Values<int32_t>(f[3]), expect);
}

TEST(Clamp, XlaSemanticsWithNaN) {
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{-5, 5, kNaN, 0.5f}),
                                           Bytes(std::vector<float>{0, 0, 0, 0}),
                                           Bytes(std::vector<float>{1, 1, 1, 1}), Zeros<float>(4)};
  ExpectOk(RunOn(**GetClampCodelet(kF32), f));
  const auto out = Values<float>(f[3]);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 0.5f);
  EXPECT_FALSE(GetClampCodelet(ElementType::kPred));
}

TEST(Cast, UsesConvertSemantics) {
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{0.1f, 65520.0f, kNaN, -1.0f}),
                                           Zeros<uint16_t>(4)};
  ExpectOk(RunOn(**GetCastCodelet(kF32, kF16), f));
  const auto h = Values<uint16_t>(f[1]);
  EXPECT_EQ(h[0], 0x2E66);
  EXPECT_EQ(h[1], 0x7C00);
  EXPECT_EQ(h[2] & 0x7E00, 0x7E00);
  EXPECT_EQ(h[3], 0xBC00);

  f = {Bytes(std::vector<float>{3.9f, -1e10f, kNaN}), Zeros<int32_t>(3)};
  ExpectOk(RunOn(**GetCastCodelet(kF32, kS32), f));
  EXPECT_THAT(Values<int32_t>(f[1]), ElementsAre(3, INT32_MIN, 0));

  f = {Bytes(std::vector<int32_t>{300, -1}), Zeros<int8_t>(2)};
  ExpectOk(RunOn(**GetCastCodelet(kS32, ElementType::kS8), f));
  EXPECT_THAT(Values<int8_t>(f[1]), ElementsAre(44, -1));

  auto same = GetCastCodelet(kF32, kF32);
  ASSERT_FALSE(same);
  EXPECT_THAT(same.error().message(), HasSubstr("a cast needs two different types"));
}

// Casts between f32 and f16 or bf16 take a typed path: it must give
// ConvertElement's bits for every 16-bit input, and for floats of every
// kind (a sample of 2^20 spread over all 2^32 encodings, with the edges:
// the whole space was compared once by hand).
TEST(Cast, FloatAndHalvesGiveConvertElementsBits) {
  const ElementType kBF16 = ElementType::kBF16;
  std::vector<uint16_t> halves(65536);
  for (uint32_t i = 0; i < 65536; ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<uint32_t> floats;
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 4093)
    floats.push_back(static_cast<uint32_t>(i));
  for (uint32_t edge :
       {0x00000000u, 0x80000000u, 0x00000001u, 0x33800000u, 0x33800001u, 0x387fe000u, 0x38800000u,
        0x477fefffu, 0x477ff000u, 0x7f7fffffu, 0x7f800000u, 0x7f800001u, 0x7fc00000u, 0xffbfffffu,
        0x3f808000u, 0x3f818000u, 0x7f7f8000u})
    floats.push_back(edge);
  for (ElementType narrow : {kF16, kBF16}) {
    std::vector<std::vector<std::byte>> f = {Bytes(halves), Zeros<float>(halves.size())};
    ExpectOk(RunOn(**GetCastCodelet(narrow, kF32), f));
    for (size_t i = 0; i < halves.size(); ++i) {
      std::byte expected[4];
      ConvertElement(narrow, f[0].data() + 2 * i, kF32, expected);
      ASSERT_EQ(std::memcmp(expected, f[1].data() + 4 * i, 4), 0) << i;
    }
    f = {Bytes(floats), Zeros<uint16_t>(floats.size())};
    ExpectOk(RunOn(**GetCastCodelet(kF32, narrow), f));
    for (size_t i = 0; i < floats.size(); ++i) {
      std::byte expected[2];
      ConvertElement(kF32, f[0].data() + 4 * i, narrow, expected);
      ASSERT_EQ(std::memcmp(expected, f[1].data() + 2 * i, 2), 0) << std::hex << floats[i];
    }
  }
}

TEST(CopyAndFill, MoveBytes) {
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<uint16_t>{1, 2, 3}),
                                           Zeros<uint16_t>(3)};
  ExpectOk(RunOn(**GetCopyCodelet(kF16), f));
  EXPECT_THAT(Values<uint16_t>(f[1]), ElementsAre(1, 2, 3));

  f = {Bytes(std::vector<double>{2.5}), Zeros<double>(5)};
  ExpectOk(RunOn(**GetFillCodelet(ElementType::kF64), f));
  EXPECT_THAT(Values<double>(f[1]), ElementsAre(2.5, 2.5, 2.5, 2.5, 2.5));

  f = {Bytes(std::vector<double>{1, 2}), Zeros<double>(5)};  // a scalar field given 2
  auto status = RunOn(**GetFillCodelet(ElementType::kF64), f);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message(), "popops::Fill<double>: scalar field 'in' has 2 elements");
}

TEST(ScaledAdd, TensorAndConstantScale) {
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{1, 2}),
                                           Bytes(std::vector<float>{2, 4}),
                                           Bytes(std::vector<float>{0.5f})};
  ExpectOk(RunOn(**GetScaledAddCodelet(kF32, false), f));
  EXPECT_THAT(Values<float>(f[0]), ElementsAre(2, 4));

  f = {Bytes(std::vector<int32_t>{INT32_MAX}), Bytes(std::vector<int32_t>{1}),
       Bytes(std::vector<int32_t>{1})};
  ExpectOk(RunOn(**GetScaledAddCodelet(kS32, false), f));
  EXPECT_THAT(Values<int32_t>(f[0]), ElementsAre(INT32_MIN));  // wraps

  const Codelet& constant = **GetScaledAddCodelet(kF32, true);
  EXPECT_EQ(constant.name(), "popops::ScaledAddSupervisor<float,float,true>");
  f = {Bytes(std::vector<float>{1, 1}), Bytes(std::vector<float>{3, -1})};
  ExpectOk(RunOn(constant, f, {std::bit_cast<uint32_t>(2.0f)}));
  EXPECT_THAT(Values<float>(f[0]), ElementsAre(7, -1));
  EXPECT_FALSE(GetScaledAddCodelet(kS32, true));
}

TEST(ContinuousReduce, OverTheRunOfEachOutput) {
  // M = 2 outputs of P = 3 partials each: out[j] = sum_k partials[j * 3 + k].
  const Codelet& add = **GetContinuousReduceCodelet(ReduceOp::kAdd, kF32, false);
  EXPECT_EQ(add.name(), "popops::ContinuousReduce<popops::ReduceAdd,float,float,false>");
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{1, 2, 3, 4, 5, 6}),
                                           Zeros<float>(2)};
  ExpectOk(RunOn(add, f));
  EXPECT_THAT(Values<float>(f[1]), ElementsAre(6, 15));

  f[1] = Bytes(std::vector<float>{10, 20});
  ExpectOk(RunOn(**GetContinuousReduceCodelet(ReduceOp::kAdd, kF32, true), f));
  EXPECT_THAT(Values<float>(f[1]), ElementsAre(16, 35));

  f = {Bytes(std::vector<int32_t>{5, -3, 9, 4}), Zeros<int32_t>(2)};
  ExpectOk(RunOn(**GetContinuousReduceCodelet(ReduceOp::kMax, kS32, false), f));
  EXPECT_THAT(Values<int32_t>(f[1]), ElementsAre(5, 9));

  f = {Bytes(std::vector<float>{1, 2, 3}), Zeros<float>(2)};
  EXPECT_FALSE(RunOn(add, f));  // 3 partials do not split over 2 outputs
  EXPECT_FALSE(GetContinuousReduceCodelet(ReduceOp::kAnd, kF32, false));
}

// Outputs are combined eight at a time (and the rest one by one), each in
// its partials' order: values whose sum depends on the order (1e8 + 1 - 1e8
// is 0 in f32 left to right) show it, as does an update from `out`.
TEST(ContinuousReduce, ManyOutputsSumTheirPartialsInOrder) {
  constexpr int kOutputs = 19, kPartials = 5;
  std::vector<float> partials;
  for (int j = 0; j < kOutputs; ++j)
    for (float v : {1e8f, 1.0f + static_cast<float>(j), -1e8f, 0.25f, static_cast<float>(-j)})
      partials.push_back(v);
  std::vector<float> init(kOutputs);
  for (int j = 0; j < kOutputs; ++j) init[j] = 0.5f * static_cast<float>(j);
  for (bool update : {false, true}) {
    std::vector<std::vector<std::byte>> f = {Bytes(partials), Bytes(init)};
    ExpectOk(RunOn(**GetContinuousReduceCodelet(ReduceOp::kAdd, kF32, update), f));
    const std::vector<float> out = Values<float>(f[1]);
    for (int j = 0; j < kOutputs; ++j) {
      float sum = update ? init[j] : 0.0f;
      for (int k = 0; k < kPartials; ++k) sum += partials[j * kPartials + k];
      EXPECT_EQ(std::bit_cast<uint32_t>(out[j]), std::bit_cast<uint32_t>(sum)) << j;
    }
  }
}

TEST(Reduce, OverPartialsPerOutput) {
  // P = 3 partials of M = 2 outputs: out[j] = sum_k partials[k * 2 + j].
  const Codelet& add = **GetReduceCodelet(ReduceOp::kAdd, kF32, false);
  EXPECT_EQ(add.name(), "popops::Reduce<popops::ReduceAdd,float,float,false,0>");
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{1, 2, 3, 4, 5, 6}),
                                           Zeros<float>(2)};
  ExpectOk(RunOn(add, f));
  EXPECT_THAT(Values<float>(f[1]), ElementsAre(9, 12));

  // isUpdate combines the old output first: the HLO reduce init value.
  f[1] = Bytes(std::vector<float>{10, 20});
  ExpectOk(RunOn(**GetReduceCodelet(ReduceOp::kAdd, kF32, true), f));
  EXPECT_THAT(Values<float>(f[1]), ElementsAre(19, 32));

  f = {Bytes(std::vector<float>{1, kNaN, 3}), Zeros<float>(1)};
  ExpectOk(RunOn(**GetReduceCodelet(ReduceOp::kMax, kF32, false), f));
  EXPECT_TRUE(std::isnan(Values<float>(f[1])[0]));

  f = {Bytes(std::vector<int32_t>{65536, 65536, 7}), Zeros<int32_t>(1)};
  ExpectOk(RunOn(**GetReduceCodelet(ReduceOp::kMul, kS32, false), f));
  EXPECT_THAT(Values<int32_t>(f[1]), ElementsAre(0));  // 2^32 * 7 wraps to 0

  f = {Bytes(std::vector<int32_t>{5, -3, 9}), Zeros<int32_t>(1)};
  ExpectOk(RunOn(**GetReduceCodelet(ReduceOp::kMin, kS32, false), f));
  EXPECT_THAT(Values<int32_t>(f[1]), ElementsAre(-3));

  f = {Bytes(std::vector<uint8_t>{1, 1, 0, 1}), Zeros<uint8_t>(2)};
  ExpectOk(RunOn(**GetReduceCodelet(ReduceOp::kAnd, ElementType::kPred, false), f));
  EXPECT_THAT(Values<uint8_t>(f[1]), ElementsAre(0, 1));
  ExpectOk(RunOn(**GetReduceCodelet(ReduceOp::kOr, ElementType::kPred, false), f));
  EXPECT_THAT(Values<uint8_t>(f[1]), ElementsAre(1, 1));
  EXPECT_FALSE(GetReduceCodelet(ReduceOp::kAnd, kF32, false));
}

// Partials given as rows (FieldRows, e.g. each tile's partial sums of one
// block of outputs): row k read in place when it holds a partial of every
// output (Reduce) or an output's partials (ContinuousReduce), copied
// together first otherwise; the gaps between rows (NaN here) never read.
TEST(Reduce, PartialsGivenAsRows) {
  // P = 3 partials of M = 2 outputs, rows 4 floats apart.
  std::vector<std::byte> partials =
                             Bytes(std::vector<float>{1, 2, kNaN, kNaN, 3, 4, kNaN, kNaN, 5, 6}),
                         out = Zeros<float>(2);
  const std::vector<std::span<std::byte>> spans = {partials, out};
  const std::vector<FieldRows> rows = {{3, 8, 16}, {}};
  ExpectOk(
      (**GetReduceCodelet(ReduceOp::kAdd, kF32, false)).Run(VertexIo{spans, {}, nullptr, rows}));
  EXPECT_THAT(Values<float>(out), ElementsAre(9, 12));
  // The same bytes as two outputs' runs of three partials: rows of 2 do not
  // fit, so they are copied together: {1, 2, 3} and {4, 5, 6}.
  ExpectOk((**GetContinuousReduceCodelet(ReduceOp::kAdd, kF32, false))
               .Run(VertexIo{spans, {}, nullptr, rows}));
  EXPECT_THAT(Values<float>(out), ElementsAre(6, 15));
  // Rows of an output's three partials fit in place.
  std::vector<std::byte> runs = Bytes(std::vector<float>{1, 2, 3, kNaN, 4, 5, 6});
  const std::vector<std::span<std::byte>> run_spans = {runs, out};
  const std::vector<FieldRows> run_rows = {{2, 12, 16}, {}};
  ExpectOk((**GetContinuousReduceCodelet(ReduceOp::kMax, kF32, false))
               .Run(VertexIo{run_spans, {}, nullptr, run_rows}));
  EXPECT_THAT(Values<float>(out), ElementsAre(3, 6));
}

TEST(Reduce, HalfAccumulatesInF32) {
  // Summing 4096 ones in f16 arithmetic would stop at 2048 (2049 is not a
  // half); accumulating in f32 and rounding once gives 4096 exactly.
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<uint16_t>(4096, 0x3C00)),
                                           Zeros<uint16_t>(1)};
  ExpectOk(RunOn(**GetReduceCodelet(ReduceOp::kAdd, kF16, false), f));
  EXPECT_THAT(Values<uint16_t>(f[1]), ElementsAre(0x6C00));  // 4096
}

TEST(Reduce, ShapeErrors) {
  std::vector<std::vector<std::byte>> f = {Zeros<float>(5), Zeros<float>(2)};
  auto status = RunOn(**GetReduceCodelet(ReduceOp::kAdd, kF32, false), f);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(),
              HasSubstr("field 'partials' has 5 elements, not a multiple of the 2 elements "
                        "of 'out'"));
}

TEST(MatMulPartial, MultipliesRowMajorMatrices) {
  // [1 2 3; 4 5 6] . [7 8; 9 10; 11 12] = [58 64; 139 154].
  const Codelet& mm = **GetMatMulPartialCodelet(kF32, kF32);
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{1, 2, 3, 4, 5, 6}),
                                           Bytes(std::vector<float>{7, 8, 9, 10, 11, 12}),
                                           Zeros<float>(4)};
  ExpectOk(RunOn(mm, f, {2, 3, 2}));
  EXPECT_THAT(Values<float>(f[2]), ElementsAre(58, 64, 139, 154));
  auto bad = RunOn(mm, f, {2, 2, 2});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(),
            "poplin::MatMulPartial<float,float>: field 'in' has 6 elements, expected m*k = 4 "
            "(m=2, k=2, n=2)");
}

TEST(MatMulPartial, HalfInputsAccumulateInFloat) {
  // 2048 + 1 + 1 + ... : with f32 accumulation the ones are kept.
  const Codelet& mm = **GetMatMulPartialCodelet(kF16, kF32);
  std::vector<uint16_t> a = {0x6800, 0x3C00, 0x3C00, 0x3C00};  // 2048, 1, 1, 1
  std::vector<uint16_t> b = {0x3C00, 0x3C00, 0x3C00, 0x3C00};
  std::vector<std::vector<std::byte>> f = {Bytes(a), Bytes(b), Zeros<float>(1)};
  ExpectOk(RunOn(mm, f, {1, 4, 1}));
  EXPECT_THAT(Values<float>(f[2]), ElementsAre(2051));
  std::vector<std::vector<std::byte>> g = {Bytes(std::vector<int32_t>{INT32_MAX, 1}),
                                           Bytes(std::vector<int32_t>{1, 1}), Zeros<int32_t>(1)};
  ExpectOk(RunOn(**GetMatMulPartialCodelet(kS32, kS32), g, {1, 2, 1}));
  EXPECT_THAT(Values<int32_t>(g[2]), ElementsAre(INT32_MIN));
}

// An operand given as rows (FieldRows: the simulator hands a block of a
// larger matrix over where it lies) multiplies as its dense copy does, for
// every row count around the kernel's groups of four; a field that the
// codelet cannot read as rows, or a layout that does not fit its span, is
// an error, not a read outside the span.
TEST(MatMulPartial, ReadsOperandsGivenAsRows) {
  const Codelet& mm = **GetMatMulPartialCodelet(kF32, kF32);
  for (uint32_t m : {1u, 3u, 4u, 5u, 9u}) {
    const uint32_t k = 7, n = 19, pitch = 11, wpitch = 23;  // the larger matrices' row lengths
    std::vector<float> big_in(m * pitch), big_w(k * wpitch), in, w;
    for (size_t i = 0; i < big_in.size(); ++i) big_in[i] = static_cast<float>(i % 13) - 6.5f;
    for (size_t i = 0; i < big_w.size(); ++i) big_w[i] = static_cast<float>(i % 7) * 0.25f - 1;
    for (uint32_t r = 0; r < m; ++r)
      in.insert(in.end(), big_in.begin() + r * pitch + 2, big_in.begin() + r * pitch + 2 + k);
    for (uint32_t r = 0; r < k; ++r)
      w.insert(w.end(), big_w.begin() + r * wpitch + 1, big_w.begin() + r * wpitch + 1 + n);
    std::vector<std::vector<std::byte>> dense = {Bytes(in), Bytes(w), Zeros<float>(m * n)};
    ExpectOk(RunOn(mm, dense, {m, k, n}));

    std::vector<std::byte> in_bytes = Bytes(big_in), w_bytes = Bytes(big_w);
    std::vector<std::byte> out = Zeros<float>(m * n);
    const std::vector<std::span<std::byte>> spans = {
        std::span(in_bytes).subspan(8, ((m - 1) * pitch + k) * 4),
        std::span(w_bytes).subspan(4, ((k - 1) * wpitch + n) * 4), std::span(out)};
    const std::vector<FieldRows> rows = {
        m > 1 ? FieldRows{m, k * 4, pitch * 4} : FieldRows{}, {k, n * 4, wpitch * 4}, {}};
    const std::vector<uint32_t> params = {m, k, n};
    ExpectOk(mm.Run(VertexIo{spans, params, nullptr, rows}));
    EXPECT_EQ(Values<float>(out), Values<float>(dense[2])) << "m=" << m;

    // Rows of another length than the operand's (here the weights' 133
    // elements as 19 runs of 7) are copied together first: the same result.
    std::vector<float> gappy;
    for (uint32_t r = 0; r < 19; ++r) {
      gappy.insert(gappy.end(), w.begin() + r * 7, w.begin() + r * 7 + 7);
      gappy.insert(gappy.end(), {kNaN, kNaN, kNaN});
    }
    std::vector<std::byte> gappy_bytes = Bytes(gappy);
    std::fill(out.begin(), out.end(), std::byte{0});
    const std::vector<std::span<std::byte>> gappy_spans = {dense[0], gappy_bytes, out};
    const std::vector<FieldRows> gappy_rows = {{}, {19, 7 * 4, 10 * 4}, {}};
    ExpectOk(mm.Run(VertexIo{gappy_spans, params, nullptr, gappy_rows}));
    EXPECT_EQ(Values<float>(out), Values<float>(dense[2])) << "m=" << m;
  }
  // Given as rows where the codelet takes none (the output), or rows that
  // run past the span: refused.
  std::vector<std::byte> a = Zeros<float>(4), b = Zeros<float>(4), c = Zeros<float>(4);
  const std::vector<std::span<std::byte>> spans = {a, b, c};
  const std::vector<uint32_t> params = {2, 2, 2};
  const std::vector<FieldRows> on_out = {{}, {}, {2, 8, 8}};
  EXPECT_THAT(mm.Run(VertexIo{spans, params, nullptr, on_out}).error().message(),
              HasSubstr("field 'out' cannot be given as 2 rows of 8 bytes, 8 apart"));
  const std::vector<FieldRows> past = {{2, 8, 12}, {}, {}};
  EXPECT_THAT(mm.Run(VertexIo{spans, params, nullptr, past}).error().message(),
              HasSubstr("field 'in' cannot be given as 2 rows of 8 bytes, 12 apart, in 16"));
}

TEST(ConvPartial1x1Out, AccumulatesIntoPartials) {
  // 2 pixels x 3 input channels, 2 output channels; weights [co][ci].
  const Codelet& conv = **GetConvPartial1x1OutCodelet(kF32, kF32);
  EXPECT_EQ(conv.name(), "poplin::ConvPartial1x1Out<float,float,true,false>");
  EXPECT_EQ(conv.execution_kind(), ExecutionKind::kSupervisor);
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{1, 2, 3, 4, 5, 6}),
                                           Bytes(std::vector<float>{1, 0, -1, 2, 2, 2}),
                                           Bytes(std::vector<float>{100, 200, 300, 400})};
  ExpectOk(RunOn(conv, f, {3, 2}));
  // pixel 0: [1-3, 2*(1+2+3)] = [-2, 12]; pixel 1: [4-6, 2*15] = [-2, 30].
  EXPECT_THAT(Values<float>(f[2]), ElementsAre(98, 212, 298, 430));
  auto bad = RunOn(conv, f, {4, 2});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("field 'in' has 6 elements, not a multiple of "
                                               "inChans=4"));
  EXPECT_FALSE(GetConvPartial1x1OutCodelet(kS32, kS32));
}

TEST(SetSeed, SeedsTheTileDeterministically) {
  const Codelet& set_seed = Get(kSetSeedCodeletName);
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<uint32_t>{0x1234, 0x5678})};
  TileState a, b, c;
  ExpectOk(RunOn(set_seed, f, {7, 0}, &a));
  ExpectOk(RunOn(set_seed, f, {7, 0}, &b));
  ExpectOk(RunOn(set_seed, f, {7, 1}, &c));  // another tile
  EXPECT_EQ(a.prng, b.prng);
  EXPECT_NE(a.prng, c.prng);
  EXPECT_NE(a.prng[1], 0u);
  auto no_tile = RunOn(set_seed, f, {7, 0}, nullptr);
  ASSERT_FALSE(no_tile);
  EXPECT_EQ(no_tile.error().message(), "poprand::SetSeedSupervisor: no tile state to seed");
  f = {Bytes(std::vector<uint32_t>{1, 2, 3})};
  EXPECT_FALSE(RunOn(set_seed, f, {7, 0}, &a));
}

TEST(SeedListingVertices, SumAndAdd) {
  std::vector<std::vector<std::byte>> f = {Bytes(std::vector<float>{1, 1.5f, 2, 2.5f}),
                                           Zeros<float>(1)};
  ExpectOk(RunOn(Get(kSumVertexCodeletName), f));
  EXPECT_THAT(Values<float>(f[1]), ElementsAre(7));
  f = {Bytes(std::vector<float>{1.5f}), Bytes(std::vector<float>{2.25f}), Zeros<float>(1)};
  ExpectOk(RunOn(Get(kAdderVertexCodeletName), f));
  EXPECT_THAT(Values<float>(f[2]), ElementsAre(3.75f));
}

}  // namespace
}  // namespace tileprof::engine
