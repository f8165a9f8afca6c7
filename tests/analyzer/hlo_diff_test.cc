#include "analyzer/hlo_diff.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/printer.h"

namespace tileprof::analyzer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

hlo::Module Parse(std::string text) {
  auto m = hlo::ParseModule(std::move(text));
  EXPECT_TRUE(m) << (m ? "" : m.error().message());
  return std::move(m).value();
}

constexpr const char* kBase =
    R"(HloModule jit_f.12, entry_computation_layout={(f32[32,8]{1,0})->f32[32,4]{1,0}}

ENTRY main.9 {
  p.1 = f32[32,8]{1,0} parameter(0), metadata={op_name="x"}
  w.2 = f32[8,4]{1,0} constant({ {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4} })
  dot.3 = f32[32,4]{1,0} dot(p.1, w.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot" source_file="m.py" source_line=7}
  c.4 = f32[] constant(0.5)
  b.5 = f32[32,4]{1,0} broadcast(c.4), dimensions={}
  ROOT add.6 = f32[32,4]{1,0} add(dot.3, b.5), metadata={op_name="jit(f)/add" source_file="m.py" source_line=8}
}
)";

std::string Replace(std::string s, std::string_view from, std::string_view to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(HloDiff, IdenticalModulesAreEqualAtLevelZero) {
  auto a = Parse(kBase), b = Parse(kBase);
  ModuleDiff d = DiffModules(a, b);
  EXPECT_EQ(d.equal_level, 0);
  EXPECT_TRUE(d.equal());
  EXPECT_TRUE(d.causes.empty());
}

TEST(HloDiff, BatchSizeIsOneParameterCauseWithDependentsFolded) {
  std::string batch16 = kBase;
  for (size_t at; (at = batch16.find("32,")) != std::string::npos;) batch16.replace(at, 3, "16,");
  auto a = Parse(kBase), b = Parse(batch16);
  ModuleDiff d = DiffModules(a, b);
  EXPECT_FALSE(d.equal_level);
  ASSERT_EQ(d.causes.size(), 1u);
  EXPECT_EQ(d.causes[0].kind, ChangeKind::kParameter);
  EXPECT_EQ(d.causes[0].detail, "batch dimension 32 -> 16");
  EXPECT_THAT(d.causes[0].dependents, ::testing::ElementsAre("dot.3", "b.5", "add.6"));
  EXPECT_EQ(d.causes[0].dependent_source, "m.py:7");
}

TEST(HloDiff, ConstantChangeNamesTheInstructionAndTheElement) {
  auto a = Parse(kBase);
  auto b = Parse(Replace(kBase, "{1, 2, 3, 4}, {1, 2, 3, 4} })", "{1, 2, 3, 4}, {1, 2, 9, 4} })"));
  ModuleDiff d = DiffModules(a, b);
  EXPECT_EQ(d.equal_level, 4);
  ASSERT_EQ(d.causes.size(), 1u);
  EXPECT_EQ(d.causes[0].kind, ChangeKind::kConstant);
  EXPECT_EQ(d.causes[0].instruction, "w.2");
  EXPECT_EQ(d.causes[0].detail, "1 of 32 element(s) differ; first at [7,2]: 3 -> 9");
}

TEST(HloDiff, AttributeOpcodeAndEdgeChanges) {
  auto a = Parse(kBase);
  ModuleDiff attr = DiffModules(
      a,
      Parse(Replace(kBase, "b.5 = f32[32,4]{1,0} broadcast(c.4), dimensions={}",
                    "b.5 = f32[32,4]{1,0} broadcast(c.4), dimensions={}, sharding={replicated}")));
  ASSERT_EQ(attr.causes.size(), 1u);
  EXPECT_EQ(attr.causes[0].kind, ChangeKind::kAttribute);
  EXPECT_THAT(attr.causes[0].what, HasSubstr("sharding: (absent) -> {replicated}"));

  ModuleDiff op = DiffModules(a, Parse(Replace(kBase, "add(dot.3, b.5)", "subtract(dot.3, b.5)")));
  ASSERT_EQ(op.causes.size(), 1u);
  EXPECT_EQ(op.causes[0].kind, ChangeKind::kOpcode);
  EXPECT_EQ(op.causes[0].what, "add -> subtract");
  EXPECT_EQ(op.causes[0].source, "m.py:8");

  ModuleDiff edge = DiffModules(a, Parse(Replace(kBase, "add(dot.3, b.5)", "add(b.5, dot.3)")));
  ASSERT_EQ(edge.causes.size(), 1u);
  EXPECT_EQ(edge.causes[0].kind, ChangeKind::kOperands);
}

TEST(HloDiff, AddedAndRemovedInstructions) {
  auto a = Parse(kBase);
  auto b = Parse(
      Replace(kBase, "  ROOT add.6 = f32[32,4]{1,0} add(dot.3, b.5)",
              "  t.7 = f32[32,4]{1,0} tanh(dot.3)\n  ROOT add.6 = f32[32,4]{1,0} add(t.7, b.5)"));
  ModuleDiff d = DiffModules(a, b);
  ASSERT_GE(d.causes.size(), 1u);
  EXPECT_EQ(d.causes[0].kind, ChangeKind::kAdded);
  EXPECT_EQ(d.causes[0].instruction, "t.7");
  ModuleDiff back = DiffModules(b, a);
  bool removed = false;
  for (const Change& c : back.causes)
    removed |= c.kind == ChangeKind::kRemoved && c.instruction == "t.7";
  EXPECT_TRUE(removed);
}

// Renames every instruction and computation of printed HLO text and drops
// its metadata: what a second trace of the same program looks like.
std::string RenameAndStrip(const hlo::Module& m) {
  std::string text = hlo::PrintModule(m, {hlo::PrintStyle::kShort, 0});
  std::map<std::string, std::string> names;
  int next = 0;
  for (const hlo::Computation* c : m.computations()) {
    names[std::string(c->name())] = "renamed_comp_" + std::to_string(next++);
    for (const hlo::Instruction* i : c->instructions())
      names[std::string(i->name())] = "v" + std::to_string(next++) + ".77";
  }
  auto ident = [](char c) {
    return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  };
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 11, ", metadata=") == 0) {  // drop the attribute, braces balanced
      size_t j = i + 11;
      int depth = 0;
      bool quoted = false;
      do {
        if (text[j] == '"' && text[j - 1] != '\\') quoted = !quoted;
        if (!quoted && text[j] == '{') ++depth;
        if (!quoted && text[j] == '}') --depth;
        ++j;
      } while (j < text.size() && depth > 0);
      i = j;
      continue;
    }
    if (text[i] == '"') {  // strings are copied as they are
      size_t j = i + 1;
      while (j < text.size() && (text[j] != '"' || text[j - 1] == '\\')) ++j;
      out.append(text, i, j + 1 - i);
      i = j + 1;
      continue;
    }
    if (ident(text[i])) {
      size_t j = i;
      while (j < text.size() && ident(text[j])) ++j;
      std::string token = text.substr(i, j - i);
      auto it = names.find(token);
      // "xor(a, b)" is an opcode and "body=" an attribute, whatever else is so named.
      bool keyword = j < text.size() && (text[j] == '(' || text[j] == '=');
      out += it != names.end() && !keyword ? it->second : token;
      i = j;
      continue;
    }
    out += text[i++];
  }
  return out;
}

std::vector<fs::path> CorpusFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(TILEPROF_SHARED_DIR) / "corpus" / "hlo"))
    if (e.path().extension() != ".md" && e.path().extension() != ".tsv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(HloDiffCorpus, RenamedCopiesWithoutMetadataAreCosmetic) {
  int compared = 0;
  for (const fs::path& path : CorpusFiles()) {
    auto text = ReadFile(path.string());
    ASSERT_TRUE(text);
    auto modules = hlo::ParseModules(*text, {.source_name = path.string()});
    ASSERT_TRUE(modules) << modules.error().message();
    for (const hlo::Module& m : *modules) {
      std::string copy = RenameAndStrip(m);
      auto renamed = hlo::ParseModule(copy, {.source_name = path.string() + " (renamed)"});
      ASSERT_TRUE(renamed) << renamed.error().message();
      ModuleDiff d = DiffModules(m, *renamed);
      ASSERT_TRUE(d.equal_level) << path;
      EXPECT_LE(*d.equal_level, 3) << path << ": " << DescribeLevel(d.equal_level);
      EXPECT_TRUE(d.causes.empty())
          << path << ": "
          << (d.causes.empty() ? ""
                               : d.causes[0].what + " " + d.causes[0].instruction + " " +
                                     std::string(ChangeKindName(d.causes[0].kind)));
      ++compared;
    }
  }
  EXPECT_GE(compared, 40);
}

TEST(HloDiffCorpus, OneChangedConstantIsNamedExactly) {
  int changed = 0;
  for (const fs::path& path : CorpusFiles()) {
    auto text = ReadFile(path.string());
    auto modules = hlo::ParseModules(*text, {.source_name = path.string()});
    ASSERT_TRUE(modules);
    for (const hlo::Module& m : *modules) {
      // The first scalar f32 constant of the entry, printed with a value.
      const hlo::Instruction* target = nullptr;
      for (const hlo::Instruction* i : m.entry()->instructions())
        if (i->opcode() == hlo::Opcode::kConstant &&
            i->shape().element_type == hlo::PrimitiveType::kF32 && i->shape().rank() == 0 &&
            i->literal() != "7") {
          target = i;
          break;
        }
      if (!target) continue;
      std::string printed = hlo::PrintModule(m, {hlo::PrintStyle::kShort, 0});
      std::string needle = std::string(target->name()) + " = f32[] constant(";
      size_t at = printed.find(needle);
      ASSERT_NE(at, std::string::npos) << path << " " << needle;
      size_t open = at + needle.size(), close = printed.find(')', open);
      std::string copy = printed.substr(0, open) + "7" + printed.substr(close);
      auto b = hlo::ParseModule(copy);
      ASSERT_TRUE(b) << b.error().message();
      auto a = hlo::ParseModule(printed);
      ModuleDiff d = DiffModules(*a, *b);
      ASSERT_EQ(d.causes.size(), 1u) << path;
      EXPECT_EQ(d.causes[0].kind, ChangeKind::kConstant) << path;
      EXPECT_EQ(d.causes[0].instruction, target->name()) << path;
      EXPECT_EQ(d.equal_level, 4) << path;
      ++changed;
    }
  }
  EXPECT_GE(changed, 10);
}

TEST(HloDiffCorpus, UniformFamilyDiffersByTheStaticResultShape) {
  fs::path dir = fs::path(TILEPROF_SHARED_DIR) / "corpus" / "hlo";
  auto a =
      Parse(*ReadFile((dir / "module_0196.jit__uniform.21.before_optimizations.txt").string()));
  auto b =
      Parse(*ReadFile((dir / "module_0215.jit__uniform.30.before_optimizations.txt").string()));
  ModuleDiff d = DiffModules(a, b);
  ASSERT_EQ(d.causes.size(), 1u);
  EXPECT_EQ(d.causes[0].kind, ChangeKind::kResult);
  EXPECT_EQ(d.causes[0].what, "entry result shape f32[87,32]{1,0} -> f32[32,32]{1,0}");
  EXPECT_GE(d.causes[0].dependents.size(), 19u);
}

}  // namespace
}  // namespace tileprof::analyzer
