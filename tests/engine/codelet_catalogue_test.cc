// The catalogue: names, lookups, state and code sizes, and cycle estimates
// (hand-checked values, monotone in size for every codelet).
#include <algorithm>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codelets/codelets.h"

namespace tileprof::engine {
namespace {

using ::testing::HasSubstr;
constexpr auto kF32 = ElementType::kF32;

const Target& Mk1() {
  static const Target target = *Target::FromPreset("ipu1");
  return target;
}

TEST(Catalogue, IsSortedUniqueAndLarge) {
  const auto all = AllCodelets();
  EXPECT_GT(all.size(), 500u);
  std::set<std::string> names;
  for (const Codelet* codelet : all) names.insert(codelet->name());
  EXPECT_EQ(names.size(), all.size());
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(), [](const Codelet* a, const Codelet* b) {
    return a->name() < b->name();
  }));
  for (const Codelet* codelet : all) EXPECT_EQ(FindCodelet(codelet->name()), codelet);
  EXPECT_EQ(FindCodelet("popops::NoSuchVertex<float>"), nullptr);
}

TEST(Catalogue, NamesInTheStyleOfTheReport) {
  // The three types of seed 004's Mk1 report and the conv of its OOM sample.
  for (const char* name :
       {"poprand::SetSeedSupervisor", "popops::ScaledAddSupervisor<float,float,true>",
        "popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::ADD,float>",
        "popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::MULTIPLY,"
        "float>",
        "popops::Reduce<popops::ReduceAdd,float,float,false,0>",
        "poplin::ConvPartial1x1Out<float,float,true,false>",
        "popops::UnaryOp1DSupervisor<popops::expr::UnaryOpType::EXPONENT,half>",
        "popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::LESS_THAN,"
        "unsigned int>",
        "popops::Cast1D<float,half>", "popops::Select<bool>", "poplin::MatMulPartial<half,float>",
        "SumVertex", "AdderVertex"}) {
    EXPECT_NE(FindCodelet(name), nullptr) << name;
  }
  EXPECT_EQ(BinaryOpCodeletName(BinaryOp::kShiftRightSignExtend, ElementType::kS64),
            "popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::SHIFT_RIGHT_SIGN_EXTEND,"
            "long long>");
  EXPECT_EQ(ReduceCodeletName(ReduceOp::kMax, ElementType::kF16, true),
            "popops::Reduce<popops::ReduceMax,half,half,true,0>");
}

TEST(Catalogue, TypeTables) {
  EXPECT_TRUE(Supports(BinaryOp::kAdd, ElementType::kU64));
  EXPECT_FALSE(Supports(BinaryOp::kAdd, ElementType::kPred));
  EXPECT_TRUE(Supports(BinaryOp::kEqual, ElementType::kPred));
  EXPECT_TRUE(Supports(BinaryOp::kBitwiseOr, ElementType::kPred));
  EXPECT_FALSE(Supports(BinaryOp::kShiftLeft, ElementType::kPred));
  EXPECT_FALSE(Supports(UnaryOp::kExponent, ElementType::kS32));
  EXPECT_TRUE(Supports(UnaryOp::kAbsolute, ElementType::kS8));
  EXPECT_TRUE(Supports(ReduceOp::kOr, ElementType::kPred));
  EXPECT_EQ(UnaryOutputType(UnaryOp::kIsFinite, ElementType::kBF16), ElementType::kPred);
  auto exp_int = GetUnaryOpCodelet(UnaryOp::kExponent, ElementType::kS32);
  ASSERT_FALSE(exp_int);
  EXPECT_THAT(exp_int.error().message(), HasSubstr("EXPONENT is not defined for s32"));
}

TEST(Catalogue, StateBytesMatchTheMk1Calibration) {
  // Seed 004: SetSeedSupervisor takes 8 B of internal state (two modifiers)
  // and one 4-byte edge pointer.
  const Codelet& seed = *FindCodelet(kSetSeedCodeletName);
  EXPECT_EQ(seed.internal_state_bytes(), 8u);
  EXPECT_EQ(seed.edge_pointer_bytes(), 4u);
  EXPECT_EQ(seed.state_bytes(), 12u);
  EXPECT_EQ(seed.code_bytes(), 140u);  // 170,788 B of vertex code / 1,216 tiles
  EXPECT_EQ(seed.execution_kind(), ExecutionKind::kSupervisor);
  // BinaryOp1DSupervisor<ADD,float>: 16 B, as the report's By Type shows.
  const Codelet& add = **GetBinaryOpCodelet(BinaryOp::kAdd, kF32);
  EXPECT_EQ(add.state_bytes(), 16u);
  EXPECT_EQ(add.edge_pointer_bytes(), 12u);
  // ScaledAddSupervisor<float,float,true>: data (span), B, constant scale.
  EXPECT_EQ((*GetScaledAddCodelet(kF32, true))->state_bytes(), 16u);
  EXPECT_EQ((*GetScaledAddCodelet(kF32, false))->state_bytes(), 16u);
  // MatMulPartial: 3 pointers + 3 parameters.
  EXPECT_EQ((*GetMatMulPartialCodelet(kF32, kF32))->state_bytes(), 24u);
  EXPECT_EQ((*GetMatMulPartialCodelet(kF32, kF32, true, true))->state_bytes(), 24u);
  // The general conv partial: 3 pointers, 3 span lengths, 59 parameters.
  EXPECT_EQ((*GetConvPartialCodelet(kF32, kF32))->state_bytes(), 3u * 4 + 3 * 4 + 59 * 4);
  EXPECT_EQ((*GetConvPartialCodelet(ElementType::kBF16, kF32))->name(),
            "poplin::ConvPartialHorizontalMac<bfloat16,float,true>");
}

// Field sizes and parameters that satisfy CheckShape, growing with n.
struct ShapeFor {
  std::vector<uint64_t> elements;
  std::vector<uint32_t> params;
};

ShapeFor Grow(const Codelet& codelet, uint64_t n) {
  ShapeFor shape;
  const std::string& name = codelet.name();
  if (name.rfind("poplin::MatMulPartial", 0) == 0) {
    shape.params = {static_cast<uint32_t>(n), static_cast<uint32_t>(n), static_cast<uint32_t>(n)};
    shape.elements = {n * n, n * n, n * n};
  } else if (name.rfind("poplin::ConvPartial1x1Out", 0) == 0) {
    shape.params = {static_cast<uint32_t>(n), static_cast<uint32_t>(n)};
    shape.elements = {n * n, n * n, n * n};  // n pixels
  } else if (name.rfind("poplin::ConvPartialnx1", 0) == 0 ||
             name.rfind("poplin::ConvPartialHorizontalMac", 0) == 0) {
    // n outputs of a 3x3 window over 4 channels; every size, stride and
    // dilation 1 otherwise, room for 5,000 outputs.
    shape.params.assign(static_cast<size_t>(ConvParam::kCount), 1);
    shape.params[static_cast<size_t>(ConvParam::kOutStart)] = 0;
    shape.params[static_cast<size_t>(ConvParam::kOutSizeB)] = 5000;
    shape.params[static_cast<size_t>(ConvParam::kPadLow0)] = 0;
    shape.params[static_cast<size_t>(ConvParam::kPadLow1)] = 0;
    shape.params[static_cast<size_t>(ConvParam::kPadLow2)] = 0;
    shape.params[static_cast<size_t>(ConvParam::kReversal)] = 0;
    shape.params[static_cast<size_t>(ConvParam::kGroupsSplitBatch)] = 0;
    shape.params[static_cast<size_t>(ConvParam::kInChanStart)] = 0;
    shape.params[static_cast<size_t>(ConvParam::kKernelSize0)] = 3;
    shape.params[static_cast<size_t>(ConvParam::kKernelSize1)] = 3;
    shape.params[static_cast<size_t>(ConvParam::kInChansPerGroup)] = 4;
    shape.params[static_cast<size_t>(ConvParam::kInChans)] = 4;
    for (ConvParam offset :
         {ConvParam::kOutOffsetB, ConvParam::kOutOffsetF, ConvParam::kOutOffset0,
          ConvParam::kOutOffset1, ConvParam::kOutOffset2, ConvParam::kKernelOffset0,
          ConvParam::kKernelOffset1, ConvParam::kKernelOffset2})
      shape.params[static_cast<size_t>(offset)] = 0;
    shape.params[static_cast<size_t>(ConvParam::kKernelFull0)] = 3;
    shape.params[static_cast<size_t>(ConvParam::kKernelFull1)] = 3;
    shape.elements = {n, n, n};
  } else if (name.rfind("popops::Reduce", 0) == 0) {
    shape.elements = {3 * n, n};
  } else if (name == kSetSeedCodeletName) {
    shape.elements = {2};
    shape.params = {0, 0};
  } else {
    for (const FieldSpec& field : codelet.fields()) {
      shape.elements.push_back(field.kind == FieldKind::kScalar ? 1 : n);
    }
    shape.params.assign(codelet.params().size(), 0);
  }
  return shape;
}

TEST(CycleEstimates, MonotoneInSizeForEveryCodelet) {
  for (const Target& target : {Mk1(), *Target::FromPreset("ipu2")}) {
    for (const Codelet* codelet : AllCodelets()) {
      uint64_t previous = 0;
      for (uint64_t n : {1, 2, 3, 4, 5, 7, 8, 12, 13, 24, 25, 100, 1000, 4097}) {
        const ShapeFor shape = Grow(*codelet, n);
        ASSERT_TRUE(codelet->CheckShape({shape.elements, shape.params}))
            << codelet->name() << " n=" << n;
        const uint64_t cycles = codelet->EstimateCycles({shape.elements, shape.params}, target);
        EXPECT_GE(cycles, previous) << codelet->name() << " n=" << n;
        EXPECT_GT(cycles, 0u) << codelet->name();
        previous = cycles;
      }
      const bool fixed_cost =
          codelet->name() == kSetSeedCodeletName || codelet->name() == kAdderVertexCodeletName;
      if (!fixed_cost) {
        const ShapeFor small = Grow(*codelet, 1), big = Grow(*codelet, 4097);
        EXPECT_GT(codelet->EstimateCycles({big.elements, big.params}, target),
                  codelet->EstimateCycles({small.elements, small.params}, target))
            << codelet->name();
      }
    }
  }
}

TEST(CycleEstimates, HandCheckedValues) {
  const Target& t = Mk1();
  const uint64_t twelve[] = {12, 12, 12};
  // ADD f32, n = 12: 6 vectors of 2 over 6 workers -> 1 each;
  // 60 + 6 * (12 + 1 * (2 loads + 1 store + 1 op)) = 156.
  EXPECT_EQ((*GetBinaryOpCodelet(BinaryOp::kAdd, kF32))->EstimateCycles({twelve, {}}, t), 156u);
  // f16: 3 vectors of 4 -> still 1 per busy worker: the same 156.
  EXPECT_EQ(
      (*GetBinaryOpCodelet(BinaryOp::kAdd, ElementType::kF16))->EstimateCycles({twelve, {}}, t),
      156u);
  // s32 divide: 12 vectors of 1 -> 2 per worker, 3 + 32 cycles each:
  // 60 + 6 * (12 + 2 * 35) = 552.
  EXPECT_EQ(
      (*GetBinaryOpCodelet(BinaryOp::kDivide, ElementType::kS32))->EstimateCycles({twelve, {}}, t),
      552u);
  // SumVertex over 4 elements: 12 + 4 * (1 + 1) + 1 = 21.
  const uint64_t sum_shape[] = {4, 1};
  EXPECT_EQ(FindCodelet(kSumVertexCodeletName)->EstimateCycles({sum_shape, {}}, t), 21u);
  // SetSeed: 60 + 72, whatever the input.
  const uint64_t seed_shape[] = {2};
  const uint32_t seed_params[] = {0, 0};
  EXPECT_EQ(FindCodelet(kSetSeedCodeletName)->EstimateCycles({seed_shape, seed_params}, t), 132u);
  // ConvPartial1x1Out<half,float> on Mk1, 6 pixels x 16 x 16:
  // 60 + 6 * (12 + 1 * 6) + ceil(1536 / 32) + ceil(256 * 2 / 8) = 60 + 108 + 48 + 64.
  const uint64_t conv_shape[] = {6 * 16, 16 * 16, 6 * 16};
  const uint32_t conv_params[] = {16, 16};
  EXPECT_EQ((*GetConvPartial1x1OutCodelet(ElementType::kF16, kF32))
                ->EstimateCycles({conv_shape, conv_params}, t),
            280u);
}

TEST(CycleEstimates, WiderVectorsAndCheaperTypesAreFaster) {
  const Target& t = Mk1();
  const uint64_t big[] = {6000, 6000, 6000};
  auto cycles = [&](ElementType type) {
    return (*GetBinaryOpCodelet(BinaryOp::kMultiply, type))->EstimateCycles({big, {}}, t);
  };
  EXPECT_LT(cycles(ElementType::kF16), cycles(kF32));
  EXPECT_LT(cycles(kF32), cycles(ElementType::kBF16));
  EXPECT_LT(cycles(ElementType::kS32), cycles(ElementType::kS64));
  EXPECT_LT(cycles(ElementType::kS64), cycles(ElementType::kF64));
  // The AMP is faster on Mk2 per cycle than on Mk1.
  const uint64_t conv_shape[] = {64 * 64, 64 * 64, 64 * 64};
  const uint32_t conv_params[] = {64, 64};
  const Codelet& conv = **GetConvPartial1x1OutCodelet(ElementType::kF16, kF32);
  EXPECT_LT(conv.EstimateCycles({conv_shape, conv_params}, *Target::FromPreset("ipu2")),
            conv.EstimateCycles({conv_shape, conv_params}, t));
}

}  // namespace
}  // namespace tileprof::engine
