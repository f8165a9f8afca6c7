// The golden fixtures of ../shared/corpus/elf/ (GNU size 2.40 outputs in
// expected/), run through the built `tileprof size` from that folder as
// check.sh does: stdout and exit status byte for byte, stderr after the
// program prefix ("size: " for GNU, "tileprof: size: " for us).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "size_test_util.h"

namespace tileprof::elf {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class SizeCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(SizeCorpus, MatchesGnuExpectedOutput) {
  const fs::path dir = fs::path(TILEPROF_SHARED_DIR) / "corpus" / "elf";
  const std::string input = GetParam();
  for (bool hex : {false, true}) {
    std::vector<std::string> argv = {TILEPROF_CLI, "size", "-A"};
    if (hex) argv.push_back("-x");
    argv.push_back(input);
    testing::Printed ours = testing::RunProcess(argv, dir.string(), "tileprof: size: ");
    const std::string stem = (dir / "expected" / (input + (hex ? "-A-x" : "-A"))).string();
    EXPECT_EQ(ours.out, Slurp(stem + ".stdout")) << input << (hex ? " -x" : "");
    EXPECT_EQ(ours.exit_code, std::stoi(Slurp(stem + ".rc"))) << input;
    EXPECT_EQ(ours.err, testing::StripPrefix(Slurp(stem + ".stderr"), "size: ")) << input;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SizeCorpus,
                         ::testing::Values("ET_CORE.o", "be32_unknown_machine.o",
                                           "flags0_omitted.o", "hiaddr.o", "ipu_tile.o",
                                           "no_shstrtab_index.o", "tiles4.a", "with_text_member.a",
                                           "wide_total.o"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(SizeCorpus, OptionsMayFollowFilesAndTheLastRadixWins) {
  const fs::path dir = fs::path(TILEPROF_SHARED_DIR) / "corpus" / "elf";
  testing::Printed ours =
      testing::RunProcess({TILEPROF_CLI, "size", "ipu_tile.o", "-B", "--radix=8", "-d", "-A", "-x"},
                          dir.string(), "tileprof: size: ");
  EXPECT_EQ(ours.out, Slurp(dir / "expected" / "ipu_tile.o-A-x.stdout"));
  EXPECT_EQ(ours.exit_code, 0);
}

TEST(SizeCorpus, StdoutIsFlushedBeforeEachMessage) {
  // with_text_member.a: the text member comes after the tiles, so under
  // 2>&1 its message must follow their tables, as GNU prints it.
  const fs::path dir = fs::path(TILEPROF_SHARED_DIR) / "corpus" / "elf";
  testing::Printed merged = testing::RunProcess(
      {"/bin/sh", "-c", std::string("'") + TILEPROF_CLI + "' size -A with_text_member.a 2>&1"},
      dir.string(), "tileprof: size: ");
  const std::string expected =
      Slurp(dir / "expected" / "with_text_member.a-A.stdout") +
      testing::StripPrefix(Slurp(dir / "expected" / "with_text_member.a-A.stderr"), "size: ");
  EXPECT_EQ(testing::StripPrefix(merged.out, "tileprof: size: "), expected);
  EXPECT_EQ(merged.exit_code, 3);
}

TEST(SizeCorpus, EveryFixtureIsCovered) {
  // A new fixture in the shared corpus must be added to the list above.
  const fs::path dir = fs::path(TILEPROF_SHARED_DIR) / "corpus" / "elf";
  int inputs = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".o" || ext == ".a")) ++inputs;
  }
  EXPECT_EQ(inputs, 9);
}

}  // namespace
}  // namespace tileprof::elf
