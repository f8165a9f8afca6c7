// The host side of `tileprof run` (engine/session/host_io.h): stream names
// of tuple parameters and results, input_output_alias pairs, finding an
// input by name or number, bf16 through float32 .npy arrays, seeded random
// inputs and element formatting.
#include "engine/session/host_io.h"

#include <cstring>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/hlo/parser.h"

namespace tileprof::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

hlo::Module Parse(std::string text) {
  Expected<hlo::Module> module = hlo::ParseModule(std::move(text), {.source_name = "t.hlo"});
  if (!module) {
    ADD_FAILURE() << module.error().message();
    std::abort();
  }
  return std::move(*module);
}

constexpr const char* kStep =
    R"(HloModule step, input_output_alias={ {1}: (1, {0}, may-alias), {2}: (1, {1}) }
ENTRY main {
  x = bf16[2,2] parameter(0)
  state = (f32[3], s32[]) parameter(1)
  w = f32[3] get-tuple-element(state), index=0
  n = s32[] get-tuple-element(state), index=1
  loss = f32[] constant(1)
  ROOT out = (f32[], f32[3], s32[], bf16[2,2]) tuple(loss, w, n, x)
})";

TEST(HostIo, LeavesAliasesAndNames) {
  hlo::Module module = Parse(kStep);
  Expected<HostInterface> host = DescribeHostInterface(module);
  ASSERT_TRUE(host.has_value()) << host.error().message();
  ASSERT_EQ(host->inputs.size(), 3u);
  EXPECT_EQ(host->inputs[0].stream, "x");
  EXPECT_EQ(host->inputs[1].stream, "state.0");
  EXPECT_EQ(host->inputs[2].stream, "state.1");
  EXPECT_EQ(host->inputs[2].parameter, 1);
  EXPECT_EQ(host->inputs[0].ShapeString(), "bf16[2,2]");
  ASSERT_EQ(host->outputs.size(), 4u);
  EXPECT_EQ(host->outputs[0].stream, "out.0");
  EXPECT_EQ(host->outputs[0].label, "loss");
  EXPECT_EQ(host->outputs[3].label, "x");
  EXPECT_THAT(host->aliases,
              ElementsAre(std::pair<size_t, size_t>{1, 1}, std::pair<size_t, size_t>{2, 2}));

  EXPECT_EQ(*FindInput(*host, "x"), 0u);
  EXPECT_EQ(*FindInput(*host, "0"), 0u);
  EXPECT_EQ(*FindInput(*host, "state.1"), 2u);
  Expected<size_t> tuple = FindInput(*host, "state");
  ASSERT_FALSE(tuple.has_value());
  EXPECT_THAT(tuple.error().message(),
              HasSubstr("'state' is a tuple of 2 arrays; name one of state.0, state.1"));
  Expected<size_t> missing = FindInput(*host, "y");
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message(),
              HasSubstr("the parameters are: x (0), state.0 (1), state.1 (1)"));
}

TEST(HostIo, AliasesMustMatch) {
  hlo::Module module = Parse(R"(HloModule bad, input_output_alias={ {}: (0, {}) }
ENTRY main {
  x = f32[2] parameter(0)
  ROOT y = f32[3] constant({1, 2, 3})
})");
  Expected<HostInterface> host = DescribeHostInterface(module);
  ASSERT_FALSE(host.has_value());
  EXPECT_THAT(host.error().message(), HasSubstr("out.0 is f32[3] but x is f32[2]"));
  hlo::Module no_param = Parse(R"(HloModule bad, input_output_alias={ {}: (3, {}) }
ENTRY main {
  x = f32[2] parameter(0)
  ROOT y = f32[2] negate(x)
})");
  host = DescribeHostInterface(no_param);
  ASSERT_FALSE(host.has_value());
  EXPECT_THAT(host.error().message(), HasSubstr("there is no parameter 3"));
}

TEST(HostIo, Bf16GoesThroughFloat32Arrays) {
  hlo::Module module = Parse(kStep);
  HostInterface host = *DescribeHostInterface(module);
  const HostLeaf& x = host.inputs[0];
  npy::Array array{npy::Dtype::kF4, {2, 2}, std::vector<std::byte>(16)};
  const float values[] = {1.0f, -2.5f, 3.0f, 1.00390625f};  // the last rounds to 1 in bf16
  std::memcpy(array.data.data(), values, 16);
  Expected<std::vector<std::byte>> bytes = InputFromNpy(x, array, "x.npy");
  ASSERT_TRUE(bytes.has_value()) << bytes.error().message();
  ASSERT_EQ(bytes->size(), 8u);
  Expected<npy::Array> back = OutputToNpy(host.outputs[3], *bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->dtype, npy::Dtype::kF4);
  float round_trip[4];
  std::memcpy(round_trip, back->data.data(), 16);
  EXPECT_THAT(round_trip, ElementsAre(1.0f, -2.5f, 3.0f, 1.0f));

  npy::Array halves{npy::Dtype::kF2, {2, 2}, std::vector<std::byte>(8)};
  Expected<std::vector<std::byte>> wrong = InputFromNpy(x, halves, "h.npy");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_THAT(wrong.error().message(), HasSubstr("input 'x': h.npy is float16[2,2], the parameter "
                                                 "is bf16[2,2] (bfloat16 is not a NumPy dtype"));
}

TEST(HostIo, RandomInputsAreSeededAndInRange) {
  hlo::Module module = Parse(R"(HloModule r
ENTRY main {
  f = f32[1000] parameter(0)
  i = s32[1000] parameter(1)
  p = pred[1000] parameter(2)
  ROOT t = (f32[1000], s32[1000], pred[1000]) tuple(f, i, p)
})");
  HostInterface host = *DescribeHostInterface(module);
  EXPECT_EQ(RandomInput(host.inputs[0], 5), RandomInput(host.inputs[0], 5));
  EXPECT_NE(RandomInput(host.inputs[0], 5), RandomInput(host.inputs[0], 6));
  std::vector<std::byte> f = RandomInput(host.inputs[0], 5);
  float lo = 1, hi = -1;
  for (size_t k = 0; k < 1000; ++k) {
    float v;
    std::memcpy(&v, f.data() + 4 * k, 4);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -1.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_LT(lo, -0.9f);
  EXPECT_GT(hi, 0.9f);
  std::vector<std::byte> ints = RandomInput(host.inputs[1], 5);
  std::set<int32_t> seen;
  for (size_t k = 0; k < 1000; ++k) {
    int32_t v;
    std::memcpy(&v, ints.data() + 4 * k, 4);
    seen.insert(v);
  }
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  std::vector<std::byte> preds = RandomInput(host.inputs[2], 5);
  for (std::byte b : preds) EXPECT_LE(std::to_integer<int>(b), 1);
  EXPECT_EQ(ZeroInput(host.inputs[1]), std::vector<std::byte>(4000));
}

TEST(HostIo, FormatElement) {
  const float f = 0.41234567f;
  const int64_t big = -9000000000000000001LL;
  const uint8_t yes = 1;
  EXPECT_EQ(FormatElement(ElementType::kF32, reinterpret_cast<const std::byte*>(&f)), "0.412346");
  EXPECT_EQ(FormatElement(ElementType::kS64, reinterpret_cast<const std::byte*>(&big)),
            "-9000000000000000001");
  EXPECT_EQ(FormatElement(ElementType::kPred, reinterpret_cast<const std::byte*>(&yes)), "true");
}

}  // namespace
}  // namespace tileprof::engine
