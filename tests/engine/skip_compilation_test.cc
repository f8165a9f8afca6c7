// The original's "Skip engine compilation" cases (spec trace-events.md): such
// modules get no compile events.
#include <string>

#include <gtest/gtest.h>

#include "engine/hlo/parser.h"
#include "engine/session/session.h"

namespace tileprof::engine {
namespace {

std::string Line(const std::string& text) {
  auto module = hlo::ParseModule(text, {.source_name = "m.hlo"});
  EXPECT_TRUE(module) << module.error().message();
  return module ? SkipEngineCompilationLine(*module) : "?";
}

TEST(SkipEngineCompilation, TheOriginalsThreeCases) {
  EXPECT_EQ(Line("HloModule m\nENTRY e {\n  ROOT c = f32[4] constant({1, 2, 3, 4})\n}\n"),
            "Skip engine compilation - output is constant.");
  EXPECT_EQ(Line("HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = s32[] parameter(1)\n"
                 "  ROOT t = (f32[4], s32[]) tuple(a, b)\n}\n"),
            "Skip engine compilation - all outputs are inputs.");
  EXPECT_EQ(Line("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] constant(2)\n"
                 "  ROOT m = f32[] multiply(a, b)\n}\n"),
            "Skip engine compilation - scalar elementwise graph.");
}

TEST(SkipEngineCompilation, DeviceWorkIsCompiled) {
  EXPECT_EQ(
      Line(
          "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] constant({1, 2, 3, 4})\n"
          "  ROOT s = f32[4] add(a, b)\n}\n"),
      "");
  // Scalar, but not elementwise.
  EXPECT_EQ(Line("HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                 "  ROOT z = f32[] add(x, y)\n}\nENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] "
                 "constant(0)\n"
                 "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add\n}\n"),
            "");
  // A constant beside computed outputs.
  EXPECT_EQ(Line("HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  c = f32[] constant(1)\n"
                 "  n = f32[4] negate(a)\n  ROOT t = (f32[4], f32[]) tuple(n, c)\n}\n"),
            "");
}

}  // namespace
}  // namespace tileprof::engine
