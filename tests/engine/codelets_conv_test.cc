// The general convolution partial (engine/codelets/conv.cc) run directly on
// a hand-computed 1-D convolution: feature-innermost outputs (runs of
// features through the panel product; f32 weights read in place, f16 ones
// packed), a feature-outermost output (one output at a time), and the
// refusal of a vertex whose kernel would read more than its weights.
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codelets/codelets.h"
#include "tests/engine/codelet_test_util.h"

namespace tileprof::engine {
namespace {

using testing::Bytes;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::RunOn;
using testing::Values;

// in [x=3][c=2], weights [k=2][c=2][f=3] (HWIO), out [x=2][f=3]:
// out[x][f] = sum over k, c of in[x + k][c] * w[k][c][f].
const std::vector<float> kIn = {1, 2, 3, -1, 0.5f, 4};
const std::vector<float> kWeights = {1, 0, 2, -1, 3, 1, 0.5f, 2, -2, 1, 1, 0};

std::vector<float> Expected(bool feature_innermost) {
  std::vector<float> out(6);
  for (int x = 0; x < 2; ++x)
    for (int f = 0; f < 3; ++f) {
      float sum = 0;
      for (int k = 0; k < 2; ++k)
        for (int c = 0; c < 2; ++c) sum += kIn[(x + k) * 2 + c] * kWeights[(k * 2 + c) * 3 + f];
      out[feature_innermost ? x * 3 + f : f * 2 + x] = sum;
    }
  return out;
}

std::vector<uint32_t> Params(bool feature_innermost) {
  std::vector<uint32_t> p(static_cast<size_t>(ConvParam::kCount), 0);
  auto set = [&](ConvParam param, uint32_t value) { p[static_cast<size_t>(param)] = value; };
  for (ConvParam one :
       {ConvParam::kOutSizeB,     ConvParam::kOutStrideB,     ConvParam::kOutSize1,
        ConvParam::kOutStride1,   ConvParam::kOutSize2,       ConvParam::kOutStride2,
        ConvParam::kInSize1,      ConvParam::kInStride1,      ConvParam::kInSize2,
        ConvParam::kInStride2,    ConvParam::kKernelSize1,    ConvParam::kWeightsStride1,
        ConvParam::kKernelSize2,  ConvParam::kWeightsStride2, ConvParam::kStride0,
        ConvParam::kStride1,      ConvParam::kStride2,        ConvParam::kLhsDilation0,
        ConvParam::kLhsDilation1, ConvParam::kLhsDilation2,   ConvParam::kRhsDilation0,
        ConvParam::kRhsDilation1, ConvParam::kRhsDilation2,   ConvParam::kKernelFull1,
        ConvParam::kKernelFull2,  ConvParam::kBatchPerGroup})
    set(one, 1);
  set(ConvParam::kOutSizeF, 3);
  set(ConvParam::kOutStrideF, feature_innermost ? 1 : 2);
  set(ConvParam::kOutSize0, 2);
  set(ConvParam::kOutStride0, feature_innermost ? 3 : 1);
  set(ConvParam::kInStrideB, 6);
  set(ConvParam::kInStrideF, 1);
  set(ConvParam::kInSize0, 3);
  set(ConvParam::kInStride0, 2);
  set(ConvParam::kWeightsStrideI, 3);
  set(ConvParam::kWeightsStrideO, 1);
  set(ConvParam::kKernelSize0, 2);
  set(ConvParam::kWeightsStride0, 6);
  set(ConvParam::kKernelFull0, 2);
  set(ConvParam::kInChansPerGroup, 2);
  set(ConvParam::kOutChansPerGroup, 3);
  set(ConvParam::kInChans, 2);
  return p;
}

TEST(ConvPartial, FeatureRunsWithWeightsInPlace) {
  const Codelet& codelet = **GetConvPartialCodelet(ElementType::kF32, ElementType::kF32);
  std::vector<std::vector<std::byte>> fields = {Bytes(kIn), Bytes(kWeights),
                                                Bytes(std::vector<float>(6))};
  const std::vector<uint64_t> elements = {6, 12, 6};
  const std::vector<uint32_t> params = Params(true);
  ASSERT_TRUE(codelet.CheckShape({elements, params}));
  ASSERT_TRUE(RunOn(codelet, fields, Params(true)));
  EXPECT_THAT(Values<float>(fields[2]), ElementsAreArray(Expected(true)));
}

TEST(ConvPartial, OneOutputAtATimeWhenFeaturesAreNotInnermost) {
  const Codelet& codelet = **GetConvPartialCodelet(ElementType::kF32, ElementType::kF32);
  std::vector<std::vector<std::byte>> fields = {Bytes(kIn), Bytes(kWeights),
                                                Bytes(std::vector<float>(6))};
  ASSERT_TRUE(RunOn(codelet, fields, Params(false)));
  EXPECT_THAT(Values<float>(fields[2]), ElementsAreArray(Expected(false)));
}

// Weights given as rows (FieldRows: a block of a larger kernel tensor, each
// position and channel's features one run): read in place when a row is
// exactly w_stride_i features, copied together first when the rows are of
// another length; the bytes between rows are never read.
TEST(ConvPartial, WeightsGivenAsRows) {
  const Codelet& codelet = **GetConvPartialCodelet(ElementType::kF32, ElementType::kF32);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (uint64_t row : {3, 6}) {  // features per row: w_stride_i, and two channels' worth
    std::vector<float> spaced;
    for (size_t at = 0; at < kWeights.size(); at += row) {
      spaced.insert(spaced.end(), kWeights.begin() + at, kWeights.begin() + at + row);
      spaced.insert(spaced.end(), {nan, nan});
    }
    std::vector<std::byte> in = Bytes(kIn), weights = Bytes(spaced), out(6 * 4);
    const uint64_t rows = kWeights.size() / row;
    const std::vector<std::span<std::byte>> spans = {
        in, std::span(weights).first(((rows - 1) * (row + 2) + row) * 4), out};
    const std::vector<FieldRows> layout = {{}, {rows, row * 4, (row + 2) * 4}, {}};
    const std::vector<uint32_t> params = Params(true);
    ASSERT_TRUE(codelet.Run(VertexIo{spans, params, nullptr, layout})) << row;
    EXPECT_THAT(Values<float>(out), ElementsAreArray(Expected(true))) << row;
  }
  // In blocks: each kernel position's two channel rows (16 bytes apart), the
  // positions' blocks 48 bytes apart; read in place.
  std::vector<float> blocks;
  for (size_t k = 0; k < 2; ++k) {
    for (size_t c = 0; c < 2; ++c) {
      const auto at = kWeights.begin() + static_cast<std::ptrdiff_t>((k * 2 + c) * 3);
      blocks.insert(blocks.end(), at, at + 3);
      blocks.push_back(nan);
    }
    blocks.insert(blocks.end(), {nan, nan, nan, nan});
  }
  std::vector<std::byte> in = Bytes(kIn), weights = Bytes(blocks), out(6 * 4);
  const std::vector<std::span<std::byte>> spans = {in, std::span(weights).first(48 + 16 + 12), out};
  const std::vector<FieldRows> layout = {{}, {4, 12, 16, 2, 48}, {}};
  const std::vector<uint32_t> params = Params(true);
  ASSERT_TRUE(codelet.Run(VertexIo{spans, params, nullptr, layout}));
  EXPECT_THAT(Values<float>(out), ElementsAreArray(Expected(true)));
  // Blocks that overlap are refused.
  const std::vector<FieldRows> overlapping = {{}, {4, 12, 16, 2, 20}, {}};
  EXPECT_THAT(codelet.Run(VertexIo{spans, params, nullptr, overlapping}).error().message(),
              HasSubstr("cannot be given as 4 rows"));
}

TEST(ConvPartial, HalfWeightsArePackedIntoAFloatPanel) {
  const Codelet& codelet = **GetConvPartialCodelet(ElementType::kF16, ElementType::kF32);
  auto halves = [](const std::vector<float>& v) {
    std::vector<uint16_t> h;
    for (float x : v) h.push_back(HalfFromFloat(x));  // every value here is exact in f16
    return h;
  };
  std::vector<std::vector<std::byte>> fields = {Bytes(halves(kIn)), Bytes(halves(kWeights)),
                                                Bytes(std::vector<float>(6))};
  ASSERT_TRUE(RunOn(codelet, fields, Params(true)));
  EXPECT_THAT(Values<float>(fields[2]), ElementsAreArray(Expected(true)));
}

TEST(ConvPartial, RefusesAKernelLargerThanItsWeights) {
  const Codelet& codelet = **GetConvPartialCodelet(ElementType::kF32, ElementType::kF32);
  std::vector<uint32_t> params = Params(true);
  // 2^21 x 2^21 kernel positions over 12 weights: refused before anything
  // is allocated for them.
  params[static_cast<size_t>(ConvParam::kKernelSize0)] = 1u << 21;
  params[static_cast<size_t>(ConvParam::kKernelFull0)] = 1u << 21;
  params[static_cast<size_t>(ConvParam::kKernelSize1)] = 1u << 21;
  params[static_cast<size_t>(ConvParam::kKernelFull1)] = 1u << 21;
  std::vector<std::vector<std::byte>> fields = {Bytes(kIn), Bytes(kWeights),
                                                Bytes(std::vector<float>(6))};
  Status status = RunOn(codelet, fields, params);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("read more than the 12 weights"));
}

// Padding: the outputs at the edges read some kernel positions from the
// padding (those positions are skipped), the inner ones read every position
// inside the input (worked out once per output, not per position); both
// must give the definition's sums.
TEST(ConvPartial, PaddedEdgesAndInnerOutputsGiveTheDefinition) {
  const Codelet& codelet = **GetConvPartialCodelet(ElementType::kF32, ElementType::kF32);
  std::vector<uint32_t> params = Params(true);
  params[static_cast<size_t>(ConvParam::kOutSize0)] = 4;  // 3 + 1 + 1 - 2 + 1
  params[static_cast<size_t>(ConvParam::kPadLow0)] = 1;
  std::vector<float> expected(12);
  for (int x = 0; x < 4; ++x)
    for (int f = 0; f < 3; ++f) {
      float sum = 0;
      for (int k = 0; k < 2; ++k) {
        const int at = x - 1 + k;
        if (at < 0 || at >= 3) continue;
        for (int c = 0; c < 2; ++c) sum += kIn[at * 2 + c] * kWeights[(k * 2 + c) * 3 + f];
      }
      expected[x * 3 + f] = sum;
    }
  std::vector<std::vector<std::byte>> fields = {Bytes(kIn), Bytes(kWeights),
                                                Bytes(std::vector<float>(12))};
  const std::vector<uint64_t> elements = {6, 12, 12};
  ASSERT_TRUE(codelet.CheckShape({elements, params}));
  ASSERT_TRUE(RunOn(codelet, fields, params));
  EXPECT_THAT(Values<float>(fields[2]), ElementsAreArray(expected));

  // An input field one element short: the last inner output reads past it.
  fields[0] = Bytes(std::vector<float>(kIn.begin(), kIn.end() - 1));
  Status status = RunOn(codelet, fields, params);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message(), HasSubstr("reads outside the 'in' (5 elements)"));
}

TEST(ConvPartial, RefusesAnOutputStrideOfZero) {
  const Codelet& codelet = **GetConvPartialCodelet(ElementType::kF32, ElementType::kF32);
  for (ConvParam stride : {ConvParam::kOutStrideF, ConvParam::kOutStride0}) {
    std::vector<uint32_t> params = Params(true);
    params[static_cast<size_t>(stride)] = 0;
    const std::vector<uint64_t> elements = {6, 12, 6};
    Status status = codelet.CheckShape({elements, params});
    ASSERT_FALSE(status);
    EXPECT_THAT(status.error().message(), HasSubstr("an output stride is 0"));
  }
}

}  // namespace
}  // namespace tileprof::engine
