// SkimComputations and ParseOptions::skip_bodies: the two halves of leaving
// the computations two dumps share unparsed.
#include "engine/hlo/skim.h"

#include <string>

#include <gtest/gtest.h>

#include "engine/hlo/canonical.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/printer.h"

namespace tileprof::hlo {
namespace {

constexpr const char* kModule = R"(HloModule m, entry_computation_layout={(f32[4]{0})->f32[]}

%add.1 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y)
}

// a comment between computations
ENTRY %main.2 (p: f32[4]) -> f32[] {
  %p = f32[4]{0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(f32[4]{0} %p, f32[] %zero), dimensions={0}, to_apply=%add.1
}
)";

TEST(Skim, FindsEachComputationFromHeaderToClosingBrace) {
  std::string text = kModule;
  auto spans = SkimComputations(text);
  ASSERT_TRUE(spans);
  ASSERT_EQ(spans->size(), 2u);
  EXPECT_EQ((*spans)[0].name, "add.1");
  EXPECT_EQ((*spans)[1].name, "main.2");
  EXPECT_TRUE((*spans)[0].Text(text).starts_with("%add.1 (x: f32[]"));
  EXPECT_TRUE((*spans)[1].Text(text).starts_with("ENTRY %main.2"));
  EXPECT_EQ(text[(*spans)[1].body], '{');
  EXPECT_EQ(text[(*spans)[1].end - 1], '}');
  EXPECT_EQ(text.substr((*spans)[1].end), "\n");
}

TEST(Skim, RefusesTextNotPrintedOneComputationPerBlock) {
  EXPECT_FALSE(SkimComputations("HloModule m\nENTRY e { ROOT c = f32[] constant(1) }\n"));
  EXPECT_FALSE(
      SkimComputations("HloModule m\n\nENTRY e {\n  ROOT c = f32[] constant(1)\n"));  // unclosed
  EXPECT_FALSE(SkimComputations(std::string(kModule) + "// -----\n" + kModule));      // two modules
  EXPECT_FALSE(SkimComputations("HloModule m\n\nENTRY e {\nROOT c = f32[] constant(1)\n}\n"));
  EXPECT_FALSE(SkimComputations(""));
}

TEST(Skim, ExecutionThreadAfterTheBraceEndsTheSpanAtTheBrace) {
  std::string text =
      "HloModule m\n\n%a (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}, "
      "execution_thread=\"t\"\n\n"
      "ENTRY %e (q: f32[]) -> f32[] {\n  ROOT %q = f32[] parameter(0)\n}\n";
  auto spans = SkimComputations(text);
  ASSERT_TRUE(spans);
  ASSERT_EQ(spans->size(), 2u);
  EXPECT_EQ(text.substr((*spans)[0].end, 2), ", ");
  ParseOptions options;
  options.skip_bodies = {{(*spans)[0].body, (*spans)[0].end}};
  auto module = ParseModule(text, options);
  ASSERT_TRUE(module) << module.error().message();
  EXPECT_TRUE(module->computations()[0]->body_skipped());
  EXPECT_EQ(module->computations()[0]->execution_thread(), "t");
}

TEST(SkipBodies, SkippedComputationKeepsItsNameAndTextAndCallsResolve) {
  std::string text = kModule;
  auto spans = SkimComputations(text);
  ASSERT_TRUE(spans);
  ParseOptions options;
  options.skip_bodies = {{(*spans)[0].body, (*spans)[0].end}};
  auto module = ParseModule(text, options);
  ASSERT_TRUE(module) << module.error().message();
  const Computation& add = *module->computations()[0];
  EXPECT_TRUE(add.body_skipped());
  EXPECT_EQ(add.name(), "add.1");
  EXPECT_TRUE(add.instructions().empty());
  EXPECT_EQ(add.root(), nullptr);
  EXPECT_EQ(add.skipped_text(), (*spans)[0].Text(text));
  const Computation& entry = *module->entry();
  EXPECT_FALSE(entry.body_skipped());
  ASSERT_EQ(entry.root()->called_computations().size(), 1u);
  EXPECT_EQ(entry.root()->called_computations()[0], &add);
  // Printing and canonical forms take the header for the body at every level.
  for (int level = 0; level <= kMaxLevel; ++level) {
    std::string printed = PrintModule(*module, {PrintStyle::kShort, level});
    EXPECT_FALSE(printed.empty()) << level;
  }
}

TEST(SkipBodies, TheEntryMaySkipToo) {
  std::string text = kModule;
  auto spans = SkimComputations(text);
  ASSERT_TRUE(spans);
  ParseOptions options;
  for (const ComputationSpan& span : *spans) options.skip_bodies.emplace_back(span.body, span.end);
  auto module = ParseModule(text, options);
  ASSERT_TRUE(module) << module.error().message();
  EXPECT_TRUE(module->entry()->body_skipped());
  std::string signature = PrintModule(*module, {PrintStyle::kShort, kMaxLevel});
  EXPECT_NE(signature.find("main.2 (p: f32[4]) -> f32[]"), std::string::npos) << signature;
}

TEST(SkipBodies, ARangeThatIsNotABodyIsAnError) {
  std::string text = kModule;
  auto spans = SkimComputations(text);
  ASSERT_TRUE(spans);
  ParseOptions options;
  options.skip_bodies = {{(*spans)[0].body + 3, (*spans)[0].end}};
  auto module = ParseModule(text, options);
  ASSERT_FALSE(module);
  EXPECT_NE(module.error().message().find("does not start at the '{'"), std::string::npos)
      << module.error().message();
  options.skip_bodies = {{(*spans)[0].body, (*spans)[0].end - 2}};
  module = ParseModule(text, options);
  ASSERT_FALSE(module);
  EXPECT_NE(module.error().message().find("does not end at a '}'"), std::string::npos)
      << module.error().message();
  options.skip_bodies = {
      {static_cast<uint32_t>(text.size() + 10), static_cast<uint32_t>(text.size() + 20)}};
  EXPECT_FALSE(ParseModule(text, options));
}

}  // namespace
}  // namespace tileprof::hlo
