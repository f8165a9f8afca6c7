// Every file of ../shared/corpus/hlo parses, prints in every style, and
// round-trips: Print(Parse(Print(Parse(x)))) == Print(Parse(x)), and the
// modules compare equal. Canonical levels are fixed points and the
// fingerprint does not depend on the print style.
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/hlo/canonical.h"
#include "engine/hlo/fingerprint.h"
#include "engine/hlo/printer.h"
#include "tests/hlo/test_util.h"

namespace tileprof::hlo {
namespace {

using testing::CorpusFiles;
using testing::ReadCorpus;

std::vector<Module> MustParseAll(std::string text, const std::string& name) {
  Expected<std::vector<Module>> modules = ParseModules(std::move(text), {.source_name = name});
  EXPECT_TRUE(modules.has_value()) << (modules ? "" : modules.error().message());
  return modules ? std::move(*modules) : std::vector<Module>{};
}

// Lines that start an instruction ("  ROOT %x.1 = ..."), counted
// independently of the parser. FileCheck lines start with "//" and never
// match.
int64_t CountInstructionLines(const std::string& text) {
  static const std::regex kInstruction(
      R"(^\s*(ROOT\s+)?%?[A-Za-z_][A-Za-z0-9_.\-]*\s*=\s*(\(|[a-z][a-z0-9]*\[))");
  std::istringstream lines(text);
  std::string line;
  int64_t count = 0;
  while (std::getline(lines, line))
    if (std::regex_search(line, kInstruction) && line.find("HloModule") == std::string::npos)
      ++count;
  return count;
}

// modules=N from SOURCES.tsv.
int ExpectedModules(const std::string& file) {
  std::ifstream tsv(testing::CorpusDir() / "SOURCES.tsv");
  std::string line;
  while (std::getline(tsv, line)) {
    if (line.rfind(file + "\t", 0) != 0) continue;
    std::smatch match;
    if (std::regex_search(line, match, std::regex(R"(modules=(\d+))"))) return std::stoi(match[1]);
  }
  return -1;
}

class CorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTest, ParsesEveryModuleAndInstruction) {
  std::string text = ReadCorpus(GetParam());
  int64_t lines = CountInstructionLines(text);
  std::vector<Module> modules = MustParseAll(text, GetParam());
  EXPECT_EQ(static_cast<int>(modules.size()), ExpectedModules(GetParam()));
  int64_t instructions = 0;
  for (const Module& module : modules) {
    instructions += module.instruction_count();
    ASSERT_NE(module.entry(), nullptr);
    for (const Computation* computation : module.computations())
      ASSERT_NE(computation->root(), nullptr);
  }
  EXPECT_EQ(instructions, lines);
}

TEST_P(CorpusTest, RoundTripsInEveryStyle) {
  std::vector<Module> original = MustParseAll(ReadCorpus(GetParam()), GetParam());
  for (PrintStyle style : {PrintStyle::kShort, PrintStyle::kLong, PrintStyle::kLegacy}) {
    SCOPED_TRACE(static_cast<int>(style));
    std::string once = PrintModules(original, {.style = style});
    std::vector<Module> reparsed = MustParseAll(once, "printed.hlo");
    ASSERT_EQ(reparsed.size(), original.size());
    for (size_t i = 0; i < original.size(); ++i) {
      std::optional<std::string> difference = FindDifference(original[i], reparsed[i]);
      EXPECT_FALSE(difference.has_value()) << *difference;
      EXPECT_TRUE(original[i] == reparsed[i]);
    }
    EXPECT_EQ(PrintModules(reparsed, {.style = style}), once);
  }
}

TEST_P(CorpusTest, CanonicalLevelsAreFixedPoints) {
  std::vector<Module> original = MustParseAll(ReadCorpus(GetParam()), GetParam());
  for (int level = kLevelCosmetic; level <= kLevelConfig; ++level) {
    SCOPED_TRACE(level);
    std::string once = PrintModules(original, {.level = level});
    std::vector<Module> reparsed = MustParseAll(once, "canonical.hlo");
    EXPECT_EQ(PrintModules(reparsed, {.level = level}), once);
  }
}

TEST_P(CorpusTest, FingerprintIgnoresPrintStyle) {
  std::vector<Module> original = MustParseAll(ReadCorpus(GetParam()), GetParam());
  std::vector<Module> long_form =
      MustParseAll(PrintModules(original, {.style = PrintStyle::kLegacy}), "long.hlo");
  std::vector<Module> canonical =
      MustParseAll(PrintModules(original, {.level = kLevelStructure}), "l3.hlo");
  for (size_t i = 0; i < original.size(); ++i) {
    EXPECT_EQ(Fingerprint(original[i]), Fingerprint(long_form[i]));
    EXPECT_EQ(Fingerprint(original[i]), Fingerprint(canonical[i]));
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(CorpusFiles()),
                         [](const auto& info) { return testing::TestName(info.param); });

TEST(Corpus, HasAllFortyFiles) { EXPECT_EQ(CorpusFiles().size(), 40u); }

}  // namespace
}  // namespace tileprof::hlo
