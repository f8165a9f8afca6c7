// The text expansions are written in (engine/compiler/expansion_text.h):
// what it builds parses, and names its instructions after the expanded op.
#include "engine/compiler/expansion_text.h"

#include <string>

#include <gtest/gtest.h>

#include "engine/hlo/parser.h"

namespace tileprof::engine::compiler {
namespace {

std::vector<std::string> EntryNames(const hlo::Module& module) {
  std::vector<std::string> names;
  for (const hlo::Instruction* instruction : module.entry()->instructions())
    names.emplace_back(instruction->name());
  return names;
}

TEST(ExpansionText, NamesInstructionsAfterTheOp) {
  ExpansionText text("norm.7");
  const std::string add = text.ScalarComputation("add", "add", "f32");
  EXPECT_EQ(add, "%norm.7.add");
  const std::string x = text.Parameter("x", "f32[2,3]");
  EXPECT_EQ(x, "%norm.7.x");
  text.Add("zero", "f32[]", "constant(0)");
  const std::string sum =
      text.Add("sum", "f32[2]", "reduce(" + x + ", %norm.7.zero), dimensions={1}, to_apply=" + add);
  EXPECT_EQ(text.Ref(""), "%norm.7");
  Expected<hlo::Module> module = hlo::ParseModule(text.Finish("f32[2]", "negate(" + sum + ")"));
  ASSERT_TRUE(module) << module.error().message();
  EXPECT_EQ(EntryNames(*module),
            (std::vector<std::string>{"norm.7.x", "norm.7.zero", "norm.7.sum", "norm.7.result"}));
  EXPECT_EQ(module->entry()->name(), "norm.7.expanded");
  EXPECT_EQ(module->entry()->instructions()[0]->shape().dimensions, (std::vector<int64_t>{2, 3}));
}

TEST(ExpansionText, ParametersNumberedInOrderAndBareNamesWithoutAPrefix) {
  ExpansionText text("");
  EXPECT_EQ(text.Parameter("a", "s32[4]"), "%a");
  EXPECT_EQ(text.Parameter("b", "s32[4]"), "%b");
  text.Add("c", "s32[4] add(a, b)");
  Expected<hlo::Module> module = hlo::ParseModule(text.Finish("s32[4]", "negate(c)"));
  ASSERT_TRUE(module) << module.error().message();
  EXPECT_EQ(EntryNames(*module), (std::vector<std::string>{"a", "b", "c", "result"}));
  const hlo::Instruction* b = module->entry()->instructions()[1];
  EXPECT_EQ(b->opcode(), hlo::Opcode::kParameter);
  EXPECT_NE(text.Finish("s32[4]", "c").find("ENTRY %expanded (a: s32[4], b: s32[4])"),
            std::string::npos);
}

TEST(ExpansionText, ShapesWithoutLayoutsAndHalvesComputedInF32) {
  hlo::Shape shape;
  shape.element_type = hlo::PrimitiveType::kBF16;
  shape.dimensions = {8, 4};
  shape.has_layout = true;
  shape.layout.minor_to_major = {0, 1};
  EXPECT_EQ(ShapeText(shape), "bf16[8,4]");
  EXPECT_EQ(ShapeText(shape, hlo::PrimitiveType::kU32), "u32[8,4]");
  EXPECT_EQ(ComputingType(hlo::PrimitiveType::kBF16), hlo::PrimitiveType::kF32);
  EXPECT_EQ(ComputingType(hlo::PrimitiveType::kF16), hlo::PrimitiveType::kF32);
  EXPECT_EQ(ComputingType(hlo::PrimitiveType::kF64), hlo::PrimitiveType::kF64);
  EXPECT_EQ(ComputingType(hlo::PrimitiveType::kS32), hlo::PrimitiveType::kS32);
}

}  // namespace
}  // namespace tileprof::engine::compiler
