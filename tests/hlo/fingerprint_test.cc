// The fingerprint (fingerprint.h) on a real dump: edits that a re-run of the
// same program makes (names, numbering, metadata, computation order, print
// style) leave it unchanged; edits that change what the program computes
// (a shape, an opcode, an attribute, a constant, an edge) change it.
//
// Every edit is a plain string edit of the dump text, and each one checks
// that it matched, so a test cannot pass because an edit silently did
// nothing.
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "engine/hlo/canonical.h"
#include "engine/hlo/fingerprint.h"
#include "engine/hlo/printer.h"
#include "tests/hlo/test_util.h"

namespace tileprof::hlo {
namespace {

using testing::MustParse;
using testing::ReadCorpus;

// Legacy long style, no metadata, 9 computations (8 called by the entry).
const char kTrainStep[] = "module_0067.jit_train_step.26.before_optimizations.txt";
// Legacy long style with metadata= on most instructions.
const char kWithMetadata[] = "tf_legacy_mlir_translate_import.hlotxt";

uint64_t FingerprintOf(const std::string& text) { return Fingerprint(MustParse(text)); }

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++count;
  return count;
}

// `from` must occur exactly once: the edit is then unambiguous.
std::string ReplaceOnce(const std::string& text, const std::string& from, const std::string& to) {
  EXPECT_EQ(Count(text, from), 1u) << from;
  std::string result = text;
  size_t at = result.find(from);
  if (at != std::string::npos) result.replace(at, from.size(), to);
  EXPECT_NE(result, text);
  return result;
}

std::string ReplaceAll(const std::string& text, const std::string& from, const std::string& to) {
  EXPECT_GT(Count(text, from), 0u) << from;
  std::string result;
  size_t begin = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, begin)) {
    result.append(text, begin, at - begin).append(to);
    begin = at + from.size();
  }
  result.append(text, begin);
  EXPECT_NE(result, text);
  return result;
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// The module name and every name written after '%' (instructions and
// computations; in this style every reference carries the sigil).
std::set<std::string> DefinedNames(const std::string& text) {
  std::set<std::string> names;
  size_t start = text.find("HloModule ") + 10;
  size_t end = start;
  while (end < text.size() && IsNameChar(text[end])) ++end;
  names.insert(text.substr(start, end - start));
  for (size_t at = text.find('%'); at != std::string::npos; at = text.find('%', at + 1)) {
    end = at + 1;
    while (end < text.size() && IsNameChar(text[end])) ++end;
    if (end > at + 1) names.insert(text.substr(at + 1, end - at - 1));
  }
  return names;
}

// Replaces every whole word that is a key of `renames`, wherever it is
// (definitions, operands, to_apply=, program-shape parameter names).
std::string RenameWords(const std::string& text,
                        const std::map<std::string, std::string>& renames) {
  std::string result;
  size_t i = 0;
  while (i < text.size()) {
    if (!IsNameChar(text[i])) {
      result.push_back(text[i++]);
      continue;
    }
    size_t end = i;
    while (end < text.size() && IsNameChar(text[end])) ++end;
    std::string word = text.substr(i, end - i);
    auto found = renames.find(word);
    result += found == renames.end() ? word : found->second;
    i = end;
  }
  EXPECT_NE(result, text);
  return result;
}

// The block of computation `name`: from its header line to its closing '}'
// line, newline included.
std::pair<size_t, size_t> BlockOf(const std::string& text, const std::string& name) {
  size_t begin = text.find("\n%" + name + " (");
  EXPECT_NE(begin, std::string::npos) << name;
  if (begin == std::string::npos) return {0, 0};
  ++begin;
  size_t end = text.find("\n}\n", begin) + 3;
  return {begin, end};
}

// Moves computation `name` to just before the line starting with `anchor`
// (or to the end when `anchor` is empty).
std::string MoveComputation(const std::string& text, const std::string& name,
                            const std::string& anchor) {
  auto [begin, end] = BlockOf(text, name);
  std::string block = text.substr(begin, end - begin) + "\n";
  std::string rest = text.substr(0, begin) + text.substr(end);
  if (anchor.empty()) return rest + "\n" + block;
  size_t at = rest.find("\n" + anchor);
  EXPECT_NE(at, std::string::npos) << anchor;
  return rest.insert(at + 1, block);
}

// Removes every `, metadata={...}` (braces balanced, strings skipped).
std::string StripMetadata(const std::string& text) {
  const std::string key = ", metadata={";
  std::string result;
  size_t begin = 0;
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, begin)) {
    result.append(text, begin, at - begin);
    size_t i = at + key.size();
    int depth = 1;
    char quote = 0;
    for (; i < text.size() && depth > 0; ++i) {
      char c = text[i];
      if (quote != 0) {
        if (c == '\\')
          ++i;
        else if (c == quote)
          quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      }
    }
    begin = i;
  }
  result.append(text, begin);
  EXPECT_NE(result, text);
  return result;
}

// Appends metadata to every instruction line (they all end the line here).
std::string AddMetadata(const std::string& text) {
  std::istringstream lines(text);
  std::string line, result;
  int n = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("  ", 0) == 0 && line.find(" = ") != std::string::npos) {
      line += ", metadata={op_type=\"Op\" op_name=\"jit(train_step)/op_" + std::to_string(n) +
              "\" source_file=\"/tmp/train.py\" source_line=" + std::to_string(10 + n) + "}";
      ++n;
    }
    result += line + "\n";
  }
  EXPECT_GT(n, 100);
  return result;
}

// Drops the program shape from every computation header:
// `%comp (a: f32[2]) -> f32[2] {` -> `%comp {`.
std::string DropProgramShapes(const std::string& text) {
  std::istringstream lines(text);
  std::string line, result;
  while (std::getline(lines, line)) {
    bool header = (line.rfind("%", 0) == 0 || line.rfind("ENTRY ", 0) == 0) &&
                  line.find(") -> ") != std::string::npos && line.size() > 2 &&
                  line.substr(line.size() - 2) == " {";
    if (header) line = line.substr(0, line.find(" (")) + " {";
    result += line + "\n";
  }
  EXPECT_NE(result, text);
  return result;
}

class FingerprintTest : public ::testing::Test {
 protected:
  std::string text_ = ReadCorpus(kTrainStep);
  uint64_t original_ = FingerprintOf(text_);

  void ExpectSame(const std::string& edited) {
    ASSERT_NE(edited, text_);
    EXPECT_EQ(FingerprintToString(FingerprintOf(edited)), FingerprintToString(original_));
  }
  void ExpectDifferent(const std::string& edited) {
    ASSERT_NE(edited, text_);
    EXPECT_NE(FingerprintToString(FingerprintOf(edited)), FingerprintToString(original_));
  }
};

// ---- unchanged --------------------------------------------------------------

TEST_F(FingerprintTest, IgnoresRenamingEveryInstructionAndComputation) {
  std::set<std::string> names = DefinedNames(text_);
  ASSERT_GT(names.size(), 150u);
  ASSERT_TRUE(names.count("main.156") && names.count("region_0.78") && names.count("Arg_0.1"));
  // Reverse numbering, so the new names sort in another order as well.
  std::map<std::string, std::string> renames;
  size_t n = names.size();
  for (const std::string& name : names) renames[name] = "v" + std::to_string(n--) + "_renamed";
  std::string renamed = RenameWords(text_, renames);
  EXPECT_EQ(Count(renamed, "region_0.78"), 0u);
  EXPECT_EQ(Count(renamed, "HloModule v"), 1u);
  ExpectSame(renamed);
}

TEST_F(FingerprintTest, IgnoresSuffixAndModuleNumbers) {
  std::map<std::string, std::string> renames;
  for (const std::string& name : DefinedNames(text_)) {
    size_t dot = name.rfind('.');
    if (dot == std::string::npos) continue;
    renames[name] =
        name.substr(0, dot + 1) + std::to_string(std::stoll(name.substr(dot + 1)) + 1000);
  }
  std::string renumbered = RenameWords(text_, renames);
  EXPECT_EQ(Count(renumbered, "HloModule jit_train_step.1026\n"), 1u);
  EXPECT_EQ(Count(renumbered, "%add.1154 = s32[] add("), 1u);
  ExpectSame(renumbered);
}

TEST_F(FingerprintTest, IgnoresMetadata) {
  ExpectSame(AddMetadata(text_));
  std::string with_metadata = ReadCorpus(kWithMetadata);
  std::string stripped = StripMetadata(with_metadata);
  EXPECT_EQ(Count(stripped, "metadata="), 0u);
  EXPECT_EQ(Fingerprint(MustParse(stripped)), Fingerprint(MustParse(with_metadata)));
}

TEST_F(FingerprintTest, IgnoresTheOrderOfComputations) {
  std::string moved = MoveComputation(text_, "region_0.78", "ENTRY ");
  moved = MoveComputation(moved, "jit_relu.49", "");  // after the entry
  EXPECT_LT(moved.find("%region_1.86 ("), moved.find("%region_0.78 ("));
  EXPECT_LT(moved.find("ENTRY "), moved.find("%jit_relu.49 ("));
  ExpectSame(moved);
}

TEST_F(FingerprintTest, IgnoresPrintStyle) {
  Module module = MustParse(text_);
  for (PrintStyle style : {PrintStyle::kShort, PrintStyle::kLong, PrintStyle::kLegacy}) {
    SCOPED_TRACE(static_cast<int>(style));
    std::string printed = PrintModule(module, {.style = style});
    if (style == PrintStyle::kShort) {
      EXPECT_EQ(Count(printed, "%"), 0u);
    } else {
      EXPECT_GT(Count(printed, "%"), 100u);
    }
    EXPECT_EQ(FingerprintOf(printed), original_);
  }
  // The same by hand: drop the sigils and the program shapes, keep the
  // operand shapes (a mix no printer produces).
  ExpectSame(DropProgramShapes(ReplaceAll(text_, "%", "")));
}

// ---- changed ----------------------------------------------------------------

TEST_F(FingerprintTest, ChangesWithOneDimension) {
  // The parameter, every operand declaration of it and the header.
  std::string edited =
      ReplaceOnce(text_, "%Arg_13.14 = f32[200,1]{1,0}", "%Arg_13.14 = f32[201,1]{1,0}");
  edited = ReplaceAll(edited, "f32[200,1]{1,0} %Arg_13.14", "f32[201,1]{1,0} %Arg_13.14");
  edited = ReplaceOnce(edited, "Arg_13.14: f32[200,1]", "Arg_13.14: f32[201,1]");
  ExpectDifferent(edited);
}

TEST_F(FingerprintTest, ChangesWithOpcode) {
  ExpectDifferent(
      ReplaceOnce(text_, "%add.74 = f32[200,1]{1,0} add(", "%add.74 = f32[200,1]{1,0} multiply("));
}

TEST_F(FingerprintTest, ChangesWithAttributeValue) {
  ExpectDifferent(ReplaceOnce(text_, "%constant.35), dimensions={0}, to_apply=%region_5.117",
                              "%constant.35), dimensions={1}, to_apply=%region_5.117"));
  ExpectDifferent(ReplaceOnce(text_, "%add.48, f32[200,32]{1,0} %broadcast.37), direction=GT",
                              "%add.48, f32[200,32]{1,0} %broadcast.37), direction=GE"));
  ExpectDifferent(ReplaceOnce(text_, "%dot.113), dimensions={1,0}", "%dot.113), dimensions={0,1}"));
}

TEST_F(FingerprintTest, ChangesWithConstantValue) {
  ExpectDifferent(ReplaceOnce(text_, "%constant.40 = f32[] constant(200)",
                              "%constant.40 = f32[] constant(100)"));
  ExpectDifferent(
      ReplaceOnce(text_, "%constant.16 = s32[] constant(1)", "%constant.16 = s32[] constant(2)"));
  ExpectDifferent(ReplaceOnce(text_, "%constant.22 = f32[1]{0} constant({0.9})",
                              "%constant.22 = f32[1]{0} constant({0.8})"));
}

TEST_F(FingerprintTest, ChangesWithOperandEdges) {
  // subtract is not commutative.
  ExpectDifferent(ReplaceOnce(text_,
                              "subtract(f32[200,1]{1,0} %Arg_14.15, f32[200,1]{1,0} %add.74)",
                              "subtract(f32[200,1]{1,0} %add.74, f32[200,1]{1,0} %Arg_14.15)"));
  // Another instruction of the same shape, defined earlier.
  ExpectDifferent(
      ReplaceOnce(text_, "multiply(f32[200,1]{1,0} %multiply.77, f32[200,1]{1,0} %broadcast.39)",
                  "multiply(f32[200,1]{1,0} %subtract.75, f32[200,1]{1,0} %broadcast.39)"));
}

// The two families above must not collide with each other either: a
// rename plus a real change is still a change.
TEST_F(FingerprintTest, RenameDoesNotMaskARealChange) {
  std::map<std::string, std::string> renames;
  for (const std::string& name : DefinedNames(text_)) renames[name] = "x_" + name;
  std::string edited = ReplaceOnce(RenameWords(text_, renames), "%x_add.74 = f32[200,1]{1,0} add(",
                                   "%x_add.74 = f32[200,1]{1,0} subtract(");
  ExpectDifferent(edited);
}

// Found by fuzz/hlo: the canonical text re-spells unknown attribute values
// token by token, and joining "% %p" or "/ /" made tokens that lex
// differently (a sigil that then vanished; a comment that swallowed the
// rest of the line), so the canonical text did not hash like its source.
TEST(FingerprintCanonicalText, ReparsesToTheSameFingerprint) {
  Module module = MustParse(
      "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), y=f(%a b%c, % %p, % 5), z=a / / b, "
      "w=c / * d\n}\n");
  std::string canonical = PrintModule(module, {.level = kLevelStructure});
  EXPECT_EQ(Fingerprint(MustParse(canonical)), Fingerprint(module)) << canonical;
  EXPECT_EQ(PrintModule(MustParse(canonical), {.level = kLevelStructure}), canonical);
}

}  // namespace
}  // namespace tileprof::hlo
