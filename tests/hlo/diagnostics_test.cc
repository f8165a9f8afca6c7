// Bad HLO text fails with a located diagnostic (diagnostics.h):
//
//   bad.hlo:5:19: error: unknown opcode 'ad'
//     ROOT b = f32[2] ad(a, a)
//                     ^
//
// Each case compares the whole message, so the line, the column, the echoed
// source line and the caret are all pinned; a message that drifts to the
// wrong token fails here rather than in a user's terminal.
#include <string>

#include <gtest/gtest.h>

#include "engine/hlo/parser.h"

namespace tileprof::hlo {
namespace {

std::string Diagnose(std::string text, ParseOptions options = {}) {
  options.source_name = "bad.hlo";
  Expected<std::vector<Module>> modules = ParseModules(std::move(text), options);
  EXPECT_FALSE(modules.has_value()) << "parsed, but should not have";
  return modules ? std::string() : modules.error().message();
}

// A one-computation module whose body is `body` (lines 4 onwards).
std::string InEntry(const std::string& body) {
  return "HloModule m\n\nENTRY main {\n" + body + "}\n";
}

TEST(Diagnostics, UnknownOpcode) {
  EXPECT_EQ(Diagnose(InEntry("  a = f32[2] parameter(0)\n"
                             "  ROOT b = f32[2] ad(a, a)\n")),
            "bad.hlo:5:19: error: unknown opcode 'ad'\n"
            "  ROOT b = f32[2] ad(a, a)\n"
            "                  ^");
}

TEST(Diagnostics, UnterminatedStringPointsAtItsQuote) {
  EXPECT_EQ(Diagnose(InEntry("  a = f32[2] parameter(0)\n"
                             "  ROOT b = f32[2] custom-call(a), custom_call_target=\"foo\n")),
            "bad.hlo:5:54: error: unterminated string\n"
            "  ROOT b = f32[2] custom-call(a), custom_call_target=\"foo\n"
            "                                                     ^");
}

TEST(Diagnostics, UnterminatedBlockCommentPointsAtItsOpening) {
  EXPECT_EQ(Diagnose(InEntry("  a = f32[2] parameter(0) /* the input\n"
                             "  ROOT b = f32[2] add(a, a)\n")),
            "bad.hlo:4:27: error: unterminated comment: '/*' without '*/'\n"
            "  a = f32[2] parameter(0) /* the input\n"
            "                          ^");
}

TEST(Diagnostics, MissingClosingBracePointsAtTheOpenOne) {
  EXPECT_EQ(Diagnose("HloModule m\n\nENTRY main {\n"
                     "  a = f32[2] parameter(0)\n"
                     "  ROOT b = f32[2] add(a, a)\n"),
            "bad.hlo:3:12: error: unbalanced braces: the body of computation 'main' is not closed "
            "before the end "
            "of input\n"
            "ENTRY main {\n"
            "           ^");
}

// The message does not say "unbalanced"; it is reported as a computation
// that lacks its name, which is what the grammar sees at that point.
TEST(Diagnostics, ExtraClosingBrace) {
  EXPECT_EQ(Diagnose(InEntry("  a = f32[2] parameter(0)\n"
                             "  ROOT b = f32[2] add(a, a)\n") +
                     "}\n"),
            "bad.hlo:7:1: error: expected a computation name, got '}'\n"
            "}\n"
            "^");
}

TEST(Diagnostics, OperandUsedBeforeDefinition) {
  EXPECT_EQ(Diagnose(InEntry("  a = f32[2] parameter(0)\n"
                             "  ROOT b = f32[2] add(a, c)\n"
                             "  c = f32[2] negate(a)\n")),
            "bad.hlo:5:26: error: operand 'c' is used before it is defined in this computation\n"
            "  ROOT b = f32[2] add(a, c)\n"
            "                         ^");
}

TEST(Diagnostics, OperandNeverDefined) {
  EXPECT_EQ(
      Diagnose(InEntry("  a = f32[2] parameter(0)\n"
                       "  ROOT b = f32[2] add(a, %nowhere.7)\n")),
      "bad.hlo:5:27: error: operand 'nowhere.7' is used before it is defined in this computation\n"
      "  ROOT b = f32[2] add(a, %nowhere.7)\n"
      "                          ^");
}

TEST(Diagnostics, TwoRootsNameBoth) {
  EXPECT_EQ(Diagnose(InEntry("  a = f32[2] parameter(0)\n"
                             "  ROOT b = f32[2] add(a, a)\n"
                             "  ROOT c = f32[2] negate(a)\n")),
            "bad.hlo:6:3: error: second ROOT in computation 'main': 'c' (the first is 'b' at 5:8)\n"
            "  ROOT c = f32[2] negate(a)\n"
            "  ^");
}

TEST(Diagnostics, ShapeWithUnclosedDimensions) {
  EXPECT_EQ(Diagnose(InEntry("  a = f32[2, parameter(0)\n"
                             "  ROOT b = f32[2] add(a, a)\n")),
            "bad.hlo:4:14: error: expected a dimension size, got 'parameter'\n"
            "  a = f32[2, parameter(0)\n"
            "             ^");
  EXPECT_EQ(Diagnose("HloModule m\n\nENTRY main {\n  ROOT a = f32[2,"),
            "bad.hlo:4:18: error: expected a dimension size, got end of input\n"
            "  ROOT a = f32[2,\n"
            "                 ^");
}

TEST(Diagnostics, ShapeWithUnknownElementType) {
  EXPECT_EQ(Diagnose(InEntry("  a = f99[2] parameter(0)\n"
                             "  ROOT b = f32[2] add(a, a)\n")),
            "bad.hlo:4:7: error: unknown element type 'f99'\n"
            "  a = f99[2] parameter(0)\n"
            "      ^");
}

// 10,000 levels would overflow a recursive parser's stack; the limit stops
// it at the 65th bracket. The echoed line is cut to 160 bytes.
TEST(Diagnostics, DeeplyNestedTupleShapeIsAnErrorNotACrash) {
  const std::string prefix = "  ROOT a = ";
  const std::string line =
      prefix + std::string(10000, '(') + "f32[]" + std::string(10000, ')') + " parameter(0)";
  EXPECT_EQ(Diagnose("HloModule m\n\nENTRY main {\n" + line + "\n}\n"),
            "bad.hlo:4:76: error: tuple shapes nested deeper than 64 levels\n" +
                line.substr(0, 160) + "\n" + std::string(prefix.size() + 64, ' ') + "^");
}

TEST(Diagnostics, NestingLimitIsAnOption) {
  ParseOptions options;
  options.max_nesting_depth = 3;
  EXPECT_EQ(Diagnose(InEntry("  ROOT a = ((((f32[]))))  parameter(0)\n"), options),
            "bad.hlo:4:15: error: tuple shapes nested deeper than 3 levels\n"
            "  ROOT a = ((((f32[]))))  parameter(0)\n"
            "              ^");
  options.max_nesting_depth = 8;
  EXPECT_TRUE(
      ParseModules(InEntry("  ROOT a = ((((f32[]))))  parameter(0)\n"), options).has_value());
}

// A literal is decoded against its shape, so extra braces are a type error
// at the first one too many, however deep the input goes.
TEST(Diagnostics, DeeplyNestedLiteral) {
  const std::string line =
      "  ROOT a = f32[1] constant(" + std::string(10000, '{') + "1" + std::string(10000, '}') + ")";
  EXPECT_EQ(Diagnose("HloModule m\n\nENTRY main {\n" + line + "\n}\n"),
            "bad.hlo:4:29: error: expected a number, got '{'\n" + line.substr(0, 160) + "\n" +
                std::string(28, ' ') + "^");
}

TEST(Diagnostics, DeeplyNestedAttributeValue) {
  const std::string line =
      "  ROOT a = f32[1] parameter(0), backend_config=" + std::string(10000, '{') +
      std::string(10000, '}');
  EXPECT_EQ(Diagnose("HloModule m\n\nENTRY main {\n" + line + "\n}\n"),
            "bad.hlo:4:112: error: brackets nested deeper than 64 levels\n" + line.substr(0, 160) +
                "\n" + std::string(111, ' ') + "^");
}

// Size is checked before lexing, so there is no position to point at.
TEST(Diagnostics, InputOverTheSizeLimit) {
  ParseOptions options;
  options.max_input_bytes = 16;
  EXPECT_EQ(Diagnose(InEntry("  ROOT a = f32[] parameter(0)\n"), options),
            "bad.hlo: input of 58 bytes exceeds the limit of 16 bytes");
  options.max_input_bytes = 58;
  EXPECT_TRUE(ParseModules(InEntry("  ROOT a = f32[] parameter(0)\n"), options).has_value());
}

}  // namespace
}  // namespace tileprof::hlo
