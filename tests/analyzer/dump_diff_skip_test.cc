// dumpdiff leaves computations whose text is the same bytes in both dumps
// unparsed. Its verdicts must be those of comparing the two modules parsed
// in full: checked here on edited copies of every corpus dump that skims,
// with edits in one computation at a time (a constant, a renamed
// instruction, a call redirected to another computation).
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analyzer/dump_diff.h"
#include "common/file.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/skim.h"

namespace tileprof::analyzer {
namespace {

namespace fs = std::filesystem;

std::string Summary(const ModuleDiff& d) {
  std::string s =
      fmt::format("level {} dependents {} elided {}\n", d.equal_level ? *d.equal_level : -1,
                  d.dependent_changes, d.has_elided_constants);
  for (const Change& c : d.causes)
    s += fmt::format("{} | {} | {} | {} | {} | {} | {} | {} | {}\n", ChangeKindName(c.kind),
                     c.computation, c.instruction, c.opcode, c.what, c.detail, c.op_name, c.source,
                     fmt::join(c.dependents, ","));
  for (const std::string& n : d.notes) s += "note: " + n + "\n";
  return s;
}

class DumpDiffSkip : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("tileprof-skip-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // Compares dumpdiff's verdict on the two texts with DiffModules on full
  // parses; returns how many computations dumpdiff left unparsed.
  int ExpectSameVerdict(const std::string& a, const std::string& b, const std::string& what) {
    std::string pa = Write("a.txt", a), pb = Write("b.txt", b);
    auto result = DiffDumps(pa, pb, {});
    EXPECT_TRUE(result) << what;
    if (!result) return 0;
    const PairResult& pair = result->pairs.at(0);
    auto full_a = hlo::ParseModule(a), full_b = hlo::ParseModule(b);
    if (!full_a || !full_b) {
      EXPECT_FALSE(pair.error.empty()) << what;
      return 0;
    }
    EXPECT_TRUE(pair.error.empty()) << what << ": " << pair.error;
    if (!pair.diff) return 0;
    EXPECT_EQ(Summary(*pair.diff), Summary(DiffModules(*full_a, *full_b))) << what;
    return pair.unparsed_same_computations;
  }

  fs::path dir_;
};

std::vector<fs::path> SkimmableCorpus() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(TILEPROF_SHARED_DIR) / "corpus" / "hlo")) {
    auto text = ReadFile(e.path().string());
    if (!text) continue;
    auto spans = hlo::SkimComputations(*text);
    if (spans && spans->size() >= 2) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// `text` with `from` replaced by `to` inside [begin, end) only, at the first
// place or (all) everywhere; nullopt when it does not occur there.
std::optional<std::string> EditWithin(const std::string& text, size_t begin, size_t end,
                                      const std::regex& from, const std::string& to, bool all) {
  std::string block = text.substr(begin, end - begin);
  std::smatch m;
  if (!std::regex_search(block, m, from)) return std::nullopt;
  std::string edited = std::regex_replace(
      block, from, to,
      all ? std::regex_constants::format_default : std::regex_constants::format_first_only);
  return text.substr(0, begin) + edited + text.substr(end);
}

TEST_F(DumpDiffSkip, EditsInOneComputationGetTheVerdictOfAFullParse) {
  std::vector<fs::path> files = SkimmableCorpus();
  ASSERT_GE(files.size(), 10u);
  int cases = 0, skipping = 0;
  const std::regex constant(R"(constant\((-?[0-9]+)\))");
  for (const fs::path& path : files) {
    std::string a = *ReadFile(path.string());
    auto spans = *hlo::SkimComputations(a);
    // Three computations per file: the first, the middle one, the entry (last).
    std::vector<size_t> picks = {0, spans.size() / 2, spans.size() - 1};
    for (size_t k : picks) {
      const hlo::ComputationSpan& span = spans[k];
      std::string where = fmt::format("{} computation {}", path.filename().string(), span.name);
      // A changed integer constant.
      if (auto b = EditWithin(a, span.body, span.end, constant, "constant(12345)", false)) {
        skipping += ExpectSameVerdict(a, *b, where + ": constant") > 0;
        ++cases;
      }
      // One instruction renamed throughout its computation: cosmetic.
      std::smatch m;
      std::string body = a.substr(span.body, span.end - span.body);
      if (std::regex_search(body, m,
                            std::regex(R"(\n  (?:ROOT )?%?([A-Za-z_][A-Za-z0-9_.\-]*) = )"))) {
        std::regex name("([^A-Za-z0-9_.\\-])" +
                        std::regex_replace(m[1].str(), std::regex(R"([.\-])"), R"(\$&)") +
                        "(?![A-Za-z0-9_.\\-])");
        if (auto b = EditWithin(a, span.body, span.end, name, "$1renamed_by_test", true)) {
          skipping += ExpectSameVerdict(a, *b, where + ": renamed " + m[1].str()) > 0;
          ++cases;
        }
      }
      // A call redirected to the first computation (a skipped body then
      // pairs with another one, and dumpdiff must parse both in full).
      if (k != 0) {
        std::regex call(R"((to_apply|calls|body|condition)=%?[A-Za-z_][A-Za-z0-9_.\-]*)");
        if (auto b = EditWithin(a, span.body, span.end, call, "$1=" + std::string(spans[0].name),
                                false)) {
          ExpectSameVerdict(a, *b, where + ": redirected call");
          ++cases;
        }
      }
    }
  }
  EXPECT_GE(cases, 40);
  EXPECT_GE(skipping, 20);  // the edits that left other computations alone skipped them
}

TEST_F(DumpDiffSkip, TheBenchmarkPairSkipsAllButOneComputation) {
  fs::path path = fs::path(TILEPROF_SHARED_DIR) / "corpus" / "hlo" /
                  "1648647409115717.module_0337.jit_loss.9581.before_optimizations.txt";
  std::string a = *ReadFile(path.string());
  size_t at = a.find("= f32[] constant(");
  ASSERT_NE(at, std::string::npos);
  size_t open = at + std::string("= f32[] constant(").size();
  std::string b = a.substr(0, open) + "7" + a.substr(a.find(')', open));
  auto spans = *hlo::SkimComputations(a);
  EXPECT_EQ(ExpectSameVerdict(a, b, "first f32 constant"), static_cast<int>(spans.size()) - 1);
}

}  // namespace
}  // namespace tileprof::analyzer
