// Tests for the per-tile ELF archive writer (elfdump/tile_archive.h): exact
// bytes of small archives, rejected inputs, and round trips through GNU size,
// readelf, objdump and ar, including the users' pipeline
//   size -A archive.a | grep -e ".text" | awk '{print $2}'
// (../shared/spec/size-sysv.md sections 5.5, 6, 7 and 8 item 4).
#include "elfdump/tile_archive.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/file.h"

namespace tileprof::elf {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

uint32_t Le16(std::string_view s, size_t at) {
  return static_cast<uint8_t>(s[at]) | static_cast<uint8_t>(s[at + 1]) << 8;
}
uint32_t Le32(std::string_view s, size_t at) { return Le16(s, at) | Le16(s, at + 2) << 16; }

// One ELF32 section header, read field by field.
struct Shdr {
  uint32_t name, type, flags, addr, offset, size, link, info, addralign, entsize;
};
Shdr ReadShdr(std::string_view obj, size_t at) {
  Shdr h;
  uint32_t* fields[] = {&h.name, &h.type, &h.flags, &h.addr,      &h.offset,
                        &h.size, &h.link, &h.info,  &h.addralign, &h.entsize};
  for (int i = 0; i < 10; ++i) *fields[i] = Le32(obj, at + 4 * i);
  return h;
}

std::string ArHeader(std::string_view name, std::string_view date, std::string_view uid,
                     std::string_view gid, std::string_view mode, std::string_view size) {
  auto pad = [](std::string_view s, size_t n) {
    return std::string(s) + std::string(n - s.size(), ' ');
  };
  return pad(name, 16) + pad(date, 12) + pad(uid, 6) + pad(gid, 6) + pad(mode, 8) + pad(size, 10) +
         "`\n";
}

std::string Must(Expected<std::string> archive) {
  EXPECT_TRUE(archive) << archive.error().message();
  return archive ? *archive : std::string();
}

TEST(TileArchive, DefaultLayoutBytes) {
  std::vector<TileImage> tiles = {TotalInText(1234), TotalInText(70000)};
  std::string a = Must(BuildTileArchive(tiles));
  // Each object: ELF header 52, .text NOBITS (no bytes) at 52, .shstrtab
  // "\0.text\0.shstrtab\0" (17 bytes) at 52..69, section headers at
  // align8(69) = 72, three of 40 bytes: 192 bytes.
  ASSERT_EQ(a.size(), 8u + 2 * (60 + 192));
  EXPECT_EQ(a.substr(0, 8), "!<arch>\n");  // global header, no symbol table follows
  EXPECT_EQ(a.substr(8, 60), ArHeader("tile0.o/", "0", "0", "0", "644", "192"));
  EXPECT_EQ(a.substr(260, 60), ArHeader("tile1.o/", "0", "0", "0", "644", "192"));

  std::string_view o = std::string_view(a).substr(68, 192);
  EXPECT_EQ(o.substr(0, 4),
            "\x7f"
            "ELF");                                 // e_ident[EI_MAG0..3]
  EXPECT_EQ(o[4], 1);                               // EI_CLASS: ELFCLASS32
  EXPECT_EQ(o[5], 1);                               // EI_DATA: little-endian
  EXPECT_EQ(o[6], 1);                               // EI_VERSION
  EXPECT_EQ(static_cast<uint8_t>(o[7]), 255);       // EI_OSABI: ELFOSABI_STANDALONE
  EXPECT_EQ(o.substr(8, 8), std::string(8, '\0'));  // EI_ABIVERSION + padding
  EXPECT_EQ(Le16(o, 16), 1u);                       // e_type: ET_REL
  EXPECT_EQ(Le16(o, 18), 248u);                     // e_machine: EM_GRAPHCORE_IPU
  EXPECT_EQ(Le32(o, 20), 1u);                       // e_version
  EXPECT_EQ(Le32(o, 24), 0u);                       // e_entry
  EXPECT_EQ(Le32(o, 28), 0u);                       // e_phoff
  EXPECT_EQ(Le32(o, 32), 72u);                      // e_shoff
  EXPECT_EQ(Le32(o, 36), 0u);                       // e_flags
  EXPECT_EQ(Le16(o, 40), 52u);                      // e_ehsize
  EXPECT_EQ(Le16(o, 42), 0u);                       // e_phentsize
  EXPECT_EQ(Le16(o, 44), 0u);                       // e_phnum
  EXPECT_EQ(Le16(o, 46), 40u);                      // e_shentsize
  EXPECT_EQ(Le16(o, 48), 3u);                       // e_shnum: null, .text, .shstrtab
  EXPECT_EQ(Le16(o, 50), 2u);                       // e_shstrndx
  EXPECT_EQ(o.substr(52, 17), std::string_view("\0.text\0.shstrtab\0", 17));  // .shstrtab
  EXPECT_EQ(o.substr(69, 3), std::string(3, '\0'));    // padding to the header table
  EXPECT_EQ(o.substr(72, 40), std::string(40, '\0'));  // section 0 is all zero

  Shdr text = ReadShdr(o, 112);
  EXPECT_EQ(text.name, 1u);     // ".text" in .shstrtab
  EXPECT_EQ(text.type, 8u);     // SHT_NOBITS
  EXPECT_EQ(text.flags, 6u);    // SHF_ALLOC | SHF_EXECINSTR
  EXPECT_EQ(text.addr, 0u);     // relocatable
  EXPECT_EQ(text.offset, 52u);  // where contents would start
  EXPECT_EQ(text.size, 1234u);  // the tile's total memory
  EXPECT_EQ(text.link, 0u);
  EXPECT_EQ(text.info, 0u);
  EXPECT_EQ(text.addralign, 4u);
  EXPECT_EQ(text.entsize, 0u);
  Shdr strtab = ReadShdr(o, 152);
  EXPECT_EQ(strtab.name, 7u);  // ".shstrtab"
  EXPECT_EQ(strtab.type, 3u);  // SHT_STRTAB
  EXPECT_EQ(strtab.flags, 0u);
  EXPECT_EQ(strtab.offset, 52u);
  EXPECT_EQ(strtab.size, 17u);
  EXPECT_EQ(strtab.addralign, 1u);
  // The second member differs only in sh_size.
  EXPECT_EQ(ReadShdr(std::string_view(a).substr(320, 192), 112).size, 70000u);
}

TEST(TileArchive, ByKindZeroFilledProgbitsBytes) {
  TileImage tile{{{".text", 6, SectionKind::kCode},
                  {".data", 3, SectionKind::kData},
                  {".bss", 100, SectionKind::kZeroInit},
                  {".rodata", 2, SectionKind::kReadOnlyData}}};
  TileArchiveOptions options;
  options.layout = TileLayout::kByKind;
  options.zero_filled_progbits = true;
  std::string a = Must(BuildTileArchive(std::span(&tile, 1), options));
  // .text 52..58, .data 60..63, .bss (no bytes) at 64, .rodata 64..66,
  // .shstrtab (36 bytes) 66..102, headers at 104: 6 * 40 -> 344 bytes.
  ASSERT_EQ(a.size(), 8u + 60 + 344);
  EXPECT_EQ(a.substr(8, 60), ArHeader("tile0.o/", "0", "0", "0", "644", "344"));
  std::string_view o = std::string_view(a).substr(68);
  EXPECT_EQ(Le32(o, 32), 104u);                        // e_shoff
  EXPECT_EQ(Le16(o, 48), 6u);                          // e_shnum
  EXPECT_EQ(Le16(o, 50), 5u);                          // e_shstrndx
  EXPECT_EQ(o.substr(52, 14), std::string(14, '\0'));  // zero-filled contents and padding
  EXPECT_EQ(o.substr(66, 36), std::string_view("\0.text\0.data\0.bss\0.rodata\0.shstrtab\0", 36));
  struct Want {
    uint32_t name, type, flags, offset, size;
  };
  const Want want[] = {{1, 1, 6, 52, 6},     // .text: PROGBITS, AX
                       {7, 1, 3, 60, 3},     // .data: PROGBITS, WA
                       {13, 8, 3, 64, 100},  // .bss: NOBITS, WA
                       {18, 1, 2, 64, 2},    // .rodata: PROGBITS, A
                       {26, 3, 0, 66, 36}};  // .shstrtab: STRTAB
  for (int i = 0; i < 5; ++i) {
    Shdr h = ReadShdr(o, 104 + 40 * (i + 1));
    EXPECT_EQ(h.name, want[i].name) << i;
    EXPECT_EQ(h.type, want[i].type) << i;
    EXPECT_EQ(h.flags, want[i].flags) << i;
    EXPECT_EQ(h.offset, want[i].offset) << i;
    EXPECT_EQ(h.size, want[i].size) << i;
  }
}

TEST(TileArchive, LongNameTableBytes) {
  // "tile_of_ipu_zero0.o" is 19 bytes: too long for ar_name, so it goes into
  // `//` as "tile_of_ipu_zero0.o/\n" (21 bytes), and ar_name is "/<offset>".
  TileArchiveOptions options;
  options.member_name_pattern = "tile_of_ipu_zero{}.o";
  std::vector<TileImage> tiles = {TotalInText(5), TotalInText(6)};
  std::string a = Must(BuildTileArchive(tiles, options));
  EXPECT_EQ(a.substr(8, 60), ArHeader("//", "", "", "", "", "42"));  // ids blank, as GNU ar
  EXPECT_EQ(a.substr(68, 42), "tile_of_ipu_zero0.o/\ntile_of_ipu_zero1.o/\n");
  EXPECT_EQ(a.substr(110, 60), ArHeader("/0", "0", "0", "0", "644", "192"));
  EXPECT_EQ(a.substr(110 + 60 + 192, 60), ArHeader("/21", "0", "0", "0", "644", "192"));

  options.member_name_pattern = "tile_of_ipu_zz{}.o";  // 17 bytes: an entry of 19
  a = Must(BuildTileArchive(std::span(tiles).first(1), options));
  EXPECT_EQ(a.substr(8, 60), ArHeader("//", "", "", "", "", "19"));
  EXPECT_EQ(a.substr(68, 20), "tile_of_ipu_zz0.o/\n\n");  // padded to an even offset
  EXPECT_EQ(a.substr(88, 60), ArHeader("/0", "0", "0", "0", "644", "192"));

  // 15 bytes plus the '/' fill ar_name exactly; 16 bytes do not fit.
  options.member_name_pattern = "tile_ipu_zzz{}.o";
  a = Must(BuildTileArchive(std::span(tiles).first(1), options));
  EXPECT_EQ(a.substr(8, 60), ArHeader("tile_ipu_zzz0.o/", "0", "0", "0", "644", "192"));
  options.member_name_pattern = "tile_ipu_zzzz{}.o";
  a = Must(BuildTileArchive(std::span(tiles).first(1), options));
  EXPECT_EQ(a.substr(8, 60), ArHeader("//", "", "", "", "", "18"));
}

TEST(TileArchive, ByKindAddsAnEmptyTextWhenMissing) {
  TileImage tile{{{".bss", 7, SectionKind::kZeroInit}}};
  TileArchiveOptions options;
  options.layout = TileLayout::kByKind;
  std::string a = Must(BuildTileArchive(std::span(&tile, 1), options));
  std::string_view o = std::string_view(a).substr(68);
  EXPECT_EQ(Le16(o, 48), 4u);  // e_shnum: null, .text, .bss, .shstrtab
  Shdr text = ReadShdr(o, Le32(o, 32) + 40);
  EXPECT_EQ(text.name, 1u);
  EXPECT_EQ(text.size, 0u);
  EXPECT_EQ(ReadShdr(o, Le32(o, 32) + 80).size, 7u);
}

TEST(TileArchive, TotalInTextSumsEverySection) {
  TileImage tile{{{".text", 100, SectionKind::kCode},
                  {".data", 20, SectionKind::kData},
                  {".tile.stack", 3, SectionKind::kZeroInit}}};
  std::string a = Must(BuildTileArchive(std::span(&tile, 1)));
  std::string_view o = std::string_view(a).substr(68);
  EXPECT_EQ(Le16(o, 48), 3u);
  EXPECT_EQ(ReadShdr(o, Le32(o, 32) + 40).size, 123u);
}

TEST(TileArchive, TotalInTextWithBreakdownKeepsTheSectionsUnlisted) {
  TileImage tile{
      {{".tile.variable", 100, SectionKind::kData}, {".tile.stack", 20, SectionKind::kZeroInit}}};
  TileArchiveOptions options;
  options.layout = TileLayout::kTotalInTextWithBreakdown;
  options.zero_filled_progbits = true;  // unlisted sections stay NOBITS even so
  std::string a = Must(BuildTileArchive(std::span(&tile, 1), options));
  std::string_view o = std::string_view(a).substr(68);
  EXPECT_EQ(Le16(o, 48), 5u);  // null, .text, the two given, .shstrtab
  uint32_t shoff = Le32(o, 32);
  Shdr text = ReadShdr(o, shoff + 40);
  EXPECT_EQ(text.size, 120u);
  EXPECT_EQ(text.type, 1u);   // SHT_PROGBITS: zero-filled code
  EXPECT_EQ(text.flags, 6u);  // AX
  for (uint32_t i : {2u, 3u}) {
    Shdr given = ReadShdr(o, shoff + 40 * i);
    EXPECT_EQ(given.type, 8u);   // SHT_NOBITS
    EXPECT_EQ(given.flags, 1u);  // W only: BFD flags 0, not listed by size
  }
  EXPECT_EQ(ReadShdr(o, shoff + 80).size, 100u);
  EXPECT_EQ(ReadShdr(o, shoff + 120).size, 20u);
  // A `.text` of the caller would clash with the total.
  TileImage clash{{{".text", 1, SectionKind::kCode}}};
  auto refused = BuildTileArchive(std::span(&clash, 1), options);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("tile 0 (tile0.o): section '.text'"));
}

TEST(TileArchive, EmptyArchiveIsJustTheMagic) {
  EXPECT_EQ(Must(BuildTileArchive({})), "!<arch>\n");
}

Error MustFail(std::span<const TileImage> tiles, const TileArchiveOptions& options = {}) {
  auto a = BuildTileArchive(tiles, options);
  EXPECT_FALSE(a);
  return a ? Error("unexpected success") : a.error();
}

TEST(TileArchive, RejectsSectionNamesTheGrepWouldSelect) {
  std::vector<TileImage> tiles(5, TotalInText(1));
  tiles[3] = TileImage{{{".text", 1, SectionKind::kCode}, {".tile.text", 2, SectionKind::kData}}};
  for (TileLayout layout : {TileLayout::kTotalInText, TileLayout::kByKind}) {
    TileArchiveOptions options;
    options.layout = layout;
    EXPECT_THAT(MustFail(tiles, options).message(),
                HasSubstr("tile 3 (tile3.o): section 1 '.tile.text': name contains 'text' after "
                          "another character"));
  }
  for (const char* bad :
       {".text.hot", ".rodata.text", "xtext", ".texttext", "a text", "", "a\tb"}) {
    TileImage tile{{{bad, 1, SectionKind::kData}}};
    EXPECT_FALSE(BuildTileArchive(std::span(&tile, 1))) << '"' << bad << '"';
  }
  // `text` at position 0 has no character before it, so grep does not match.
  TileArchiveOptions by_kind;
  by_kind.layout = TileLayout::kByKind;
  for (const char* good : {".text", "text", "textures", ".tile.stack", ".bss"}) {
    TileImage tile{{{good, 1, SectionKind::kData}}};
    EXPECT_TRUE(BuildTileArchive(std::span(&tile, 1), by_kind)) << good;
  }
  TileImage dup{{{".data", 1, SectionKind::kData}, {".data", 2, SectionKind::kData}}};
  EXPECT_EQ(MustFail(std::span(&dup, 1)).message(),
            "tile 0 (tile0.o): section 1 '.data': duplicate name (also section 0)");
}

TEST(TileArchive, RejectsBadMemberNamePatterns) {
  std::vector<TileImage> tiles(2, TotalInText(1));
  auto fail = [&](const char* pattern) {
    TileArchiveOptions options;
    options.member_name_pattern = pattern;
    return MustFail(tiles, options).message();
  };
  EXPECT_THAT(fail("context{}.o"), HasSubstr("member name pattern 'context{}.o': contains 'text'"));
  EXPECT_THAT(fail("tile{}.o.text"), HasSubstr("contains 'text'"));
  EXPECT_THAT(fail("tile.o"), HasSubstr("must contain '{}' (the tile index) exactly once"));
  EXPECT_THAT(fail("t{}_{}.o"), HasSubstr("exactly once"));
  EXPECT_THAT(fail("ipu/tile{}.o"), HasSubstr("contains '/'"));
  EXPECT_THAT(fail("tile {}.o"), HasSubstr("blank or control byte"));
  // The digits always split a `text` that spans the hole.
  TileArchiveOptions options;
  options.member_name_pattern = "te{}xt.o";
  EXPECT_TRUE(BuildTileArchive(tiles, options));
}

TEST(TileArchive, RejectsWhatElf32CannotHold) {
  constexpr uint64_t kMax32 = 0xffffffffu;
  TileArchiveOptions by_kind;
  by_kind.layout = TileLayout::kByKind;
  std::vector<TileImage> tiles = {
      TotalInText(1),
      TileImage{{{".text", 1, SectionKind::kCode}, {".data", kMax32 + 1, SectionKind::kData}}}};
  EXPECT_EQ(MustFail(tiles, by_kind).message(),
            "tile 1 (tile1.o): section '.data': sh_size 4294967296 does not fit in ELF32's 32 "
            "bits");
  tiles[1].sections[1].size = kMax32;  // the largest NOBITS size is fine
  EXPECT_TRUE(BuildTileArchive(tiles, by_kind));
  // The default layout's total must fit too.
  EXPECT_EQ(MustFail(tiles).message(),
            "tile 1 (tile1.o): section '.text': sh_size 4294967296 (the tile's total) does not "
            "fit in ELF32's 32 bits");
  tiles[1].sections[0].size = UINT64_MAX;
  EXPECT_EQ(MustFail(tiles).message(),
            "tile 1 (tile1.o): the sum of the section sizes overflows 64 bits");
  // Zero-filled contents move offsets: two 3 GiB sections end past 4 GiB.
  // Rejected before anything is allocated.
  TileArchiveOptions progbits = by_kind;
  progbits.zero_filled_progbits = true;
  TileImage big{
      {{".text", 3ull << 30, SectionKind::kCode}, {".data", 3ull << 30, SectionKind::kData}}};
  EXPECT_THAT(MustFail(std::span(&big, 1), progbits).message(),
              HasSubstr("tile 0 (tile0.o): section '.data': zero-filled contents end at offset "
                        "6442450996, beyond ELF32's 32-bit offsets"));
}

TEST(TileArchive, Deterministic) {
  std::vector<TileImage> tiles;
  for (int i = 0; i < 100; ++i) tiles.push_back(TotalInText(i * 977u));
  TileArchiveOptions options;
  options.member_name_pattern = "ipu0_tile_number_{}.o";
  std::string first = Must(BuildTileArchive(tiles, options));
  std::string second = Must(BuildTileArchive(tiles, options));
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.find("tile0.o"), std::string::npos);  // the pattern was used
}

class TileArchiveFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("tileprof_tile_archive_{}_{}", ::getpid(), info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    return names;
  }
  fs::path dir_;
};

TEST_F(TileArchiveFiles, AtomicWriteLeavesNoTemporaries) {
  std::vector<TileImage> tiles(3, TotalInText(42));
  std::string path = (dir_ / "archive.a").string();
  ASSERT_TRUE(WriteTileArchive(path, tiles));
  tiles.push_back(TotalInText(43));
  ASSERT_TRUE(WriteTileArchive(path, tiles));  // replaces
  EXPECT_EQ(*ReadFile(path), Must(BuildTileArchive(tiles)));
  // A failing build writes nothing and keeps the previous archive.
  tiles[0].sections[0].name = ".text.hot";
  EXPECT_FALSE(WriteTileArchive(path, tiles));
  EXPECT_FALSE(WriteTileArchive((dir_ / "other.a").string(), tiles));
  EXPECT_EQ(Entries(), std::vector<std::string>{"archive.a"});
  auto missing = WriteTileArchive((dir_ / "no" / "such" / "a.a").string(), {});
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr((dir_ / "no" / "such" / "a.a").string()));
}

// Round trips through the GNU tools (spec section 8, item 4).

struct CommandResult {
  int rc;
  std::string out;
  std::string err;
};

// Runs `command` with /bin/sh inside `dir`, so archive paths stay relative as
// users type them ("(ex archive.a)").
CommandResult RunIn(const fs::path& dir, const std::string& command) {
  fs::path out = dir / "run.stdout";
  fs::path err = dir / "run.stderr";
  std::string full = fmt::format("cd '{}' && ( {} ) > '{}' 2> '{}'", dir.string(), command,
                                 out.string(), err.string());
  int status = std::system(full.c_str());
  CommandResult run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(out.string()).value(),
                    ReadFile(err.string()).value()};
  fs::remove(out);
  fs::remove(err);
  return run;
}

bool HaveTool(const std::string& name) {
  return std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0;
}

bool HaveGnuTools() {
  for (const char* tool : {"/usr/bin/size", "readelf", "objdump", "ar", "grep", "awk"}) {
    if (!HaveTool(tool)) return false;
  }
  return true;
}

#define SKIP_WITHOUT_GNU_TOOLS() \
  if (!HaveGnuTools()) GTEST_SKIP() << "GNU size, readelf, objdump, ar, grep or awk missing"

// The users' command, character for character.
constexpr char kUserPipeline[] = R"(size -A archive.a | grep -e ".text" | awk '{print $2}')";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The pipeline's output, line by line, against the tile sizes; names the
// first line that differs instead of dumping thousands of lines.
::testing::AssertionResult OneLinePerTile(const std::string& output,
                                          const std::vector<uint64_t>& sizes) {
  std::vector<std::string> lines = Lines(output);
  for (size_t i = 0; i < std::min(lines.size(), sizes.size()); ++i) {
    if (lines[i] != std::to_string(sizes[i])) {
      return ::testing::AssertionFailure()
             << "line " << i + 1 << " is '" << lines[i] << "', tile " << i << " has " << sizes[i];
    }
  }
  if (lines.size() != sizes.size()) {
    return ::testing::AssertionFailure()
           << lines.size() << " lines for " << sizes.size() << " tiles";
  }
  return ::testing::AssertionSuccess();
}

// Mostly ipu2-like tile totals (up to 624 KiB), some empty tiles, and some
// up to ELF32's limit, so that column widths vary from member to member.
uint64_t RandomSize(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0:
      return 0;
    case 1:
      return rng() % (uint64_t{1} << 32);
    default:
      return rng() % (624 * 1024 + 1);
  }
}

// Every GNU tool accepts the archive silently; returns `ar t`'s member list.
std::vector<std::string> ExpectGnuToolsAccept(const fs::path& dir) {
  for (const char* tool : {"/usr/bin/size -A", "readelf -S -W", "objdump -h"}) {
    CommandResult run = RunIn(dir, fmt::format("{} archive.a", tool));
    EXPECT_EQ(run.rc, 0) << tool;
    EXPECT_EQ(run.err, "") << tool;
  }
  CommandResult ar = RunIn(dir, "ar t archive.a");
  EXPECT_EQ(ar.rc, 0);
  EXPECT_EQ(ar.err, "");
  return Lines(ar.out);
}

std::vector<std::string> MemberNames(const std::string& pattern, size_t count) {
  std::vector<std::string> names;
  size_t hole = pattern.find("{}");
  for (size_t i = 0; i < count; ++i) {
    names.push_back(pattern.substr(0, hole) + std::to_string(i) + pattern.substr(hole + 2));
  }
  return names;
}

class TileArchiveGnu : public TileArchiveFiles {
 protected:
  // Writes the default-layout archive for `sizes` and checks every tool and
  // the users' pipeline against it.
  void CheckDefaultLayout(const std::vector<uint64_t>& sizes, const TileArchiveOptions& options) {
    std::vector<TileImage> tiles;
    for (uint64_t size : sizes) tiles.push_back(TotalInText(size));
    ASSERT_TRUE(WriteTileArchive((dir_ / "archive.a").string(), tiles, options));
    EXPECT_EQ(ExpectGnuToolsAccept(dir_), MemberNames(options.member_name_pattern, sizes.size()));
    CommandResult pipeline = RunIn(dir_, kUserPipeline);
    EXPECT_EQ(pipeline.rc, 0);
    EXPECT_EQ(pipeline.err, "");
    EXPECT_TRUE(OneLinePerTile(pipeline.out, sizes));
  }
};

TEST_F(TileArchiveGnu, RandomTileCountsAndSizes) {
  SKIP_WITHOUT_GNU_TOOLS();
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> sizes(1 + rng() % 3000);
    for (uint64_t& size : sizes) size = RandomSize(rng);
    CheckDefaultLayout(sizes, {});
  }
}

TEST_F(TileArchiveGnu, SixteenIpus) {
  SKIP_WITHOUT_GNU_TOOLS();
  std::mt19937_64 rng(23552);
  std::vector<uint64_t> sizes(23552);
  for (uint64_t& size : sizes) size = RandomSize(rng);
  CheckDefaultLayout(sizes, {});
}

TEST_F(TileArchiveGnu, LongMemberNamesGoThroughTheNameTable) {
  SKIP_WITHOUT_GNU_TOOLS();
  std::mt19937_64 rng(4);
  std::vector<uint64_t> sizes(1 + rng() % 500);
  for (uint64_t& size : sizes) size = RandomSize(rng);
  TileArchiveOptions options;
  options.member_name_pattern = "ipu0_tile_number_{}.o";  // 21+ bytes
  CheckDefaultLayout(sizes, options);
  std::string bytes = ReadFile((dir_ / "archive.a").string()).value();
  EXPECT_EQ(bytes.substr(8, 3), "// ");  // the table is the first member
  CommandResult size = RunIn(dir_, "/usr/bin/size -A archive.a");
  EXPECT_THAT(size.out, HasSubstr("\nipu0_tile_number_1.o   (ex archive.a):\n"));
}

TEST_F(TileArchiveGnu, ByKindLayoutWithZeroFilledProgbits) {
  SKIP_WITHOUT_GNU_TOOLS();
  const std::pair<const char*, SectionKind> kinds[] = {{".text", SectionKind::kCode},
                                                       {".data", SectionKind::kData},
                                                       {".rodata", SectionKind::kReadOnlyData},
                                                       {".bss", SectionKind::kZeroInit},
                                                       {".tile.stack", SectionKind::kZeroInit}};
  for (bool progbits : {false, true}) {
    SCOPED_TRACE(progbits ? "PROGBITS" : "NOBITS");
    std::mt19937_64 rng(progbits ? 5 : 6);
    std::vector<TileImage> tiles(1 + rng() % 300);
    std::vector<uint64_t> text_sizes, totals;
    for (TileImage& tile : tiles) {
      uint64_t text = 0, total = 0;
      for (const auto& [name, kind] : kinds) {
        if (rng() % 4 == 0) continue;  // sometimes absent, `.text` included
        uint64_t size = rng() % (progbits ? 4097 : 70001);
        tile.sections.push_back({name, size, kind});
        if (kind == SectionKind::kCode) text = size;
        total += size;
      }
      text_sizes.push_back(text);
      totals.push_back(total);
    }
    TileArchiveOptions options;
    options.layout = TileLayout::kByKind;
    options.zero_filled_progbits = progbits;
    ASSERT_TRUE(WriteTileArchive((dir_ / "archive.a").string(), tiles, options));
    EXPECT_EQ(ExpectGnuToolsAccept(dir_).size(), tiles.size());
    EXPECT_TRUE(OneLinePerTile(RunIn(dir_, kUserPipeline).out, text_sizes));
    CommandResult total =
        RunIn(dir_, R"(/usr/bin/size -A archive.a | awk '$1 == "Total" {print $2}')");
    EXPECT_TRUE(OneLinePerTile(total.out, totals));
    CommandResult objdump = RunIn(dir_, "objdump -h archive.a | grep -c CONTENTS");
    EXPECT_EQ(objdump.out == "0\n", !progbits) << objdump.out;
  }
}

// `tileprof size -A` must serve the same pipeline once it exists (cli/size.cc).
TEST_F(TileArchiveGnu, TileprofSizePipeline) {
  const std::string cli = TILEPROF_CLI;
  if (!fs::exists(cli)) GTEST_SKIP() << cli << " is not built";
  CommandResult help = RunIn(dir_, fmt::format("'{}' size --help", cli));
  if (help.rc != 0) {
    GTEST_SKIP() << "`tileprof size` is not available yet (`tileprof size --help` exited "
                 << help.rc << ")";
  }
  std::mt19937_64 rng(7);
  std::vector<uint64_t> sizes(1 + rng() % 2000);
  std::vector<TileImage> tiles;
  for (uint64_t& size : sizes) tiles.push_back(TotalInText(size = RandomSize(rng)));
  ASSERT_TRUE(WriteTileArchive((dir_ / "archive.a").string(), tiles));
  std::string pipeline = kUserPipeline;
  pipeline.replace(0, 4, fmt::format("'{}' size", cli));
  CommandResult run = RunIn(dir_, pipeline);
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(OneLinePerTile(run.out, sizes));
  if (HaveTool("/usr/bin/size")) {
    EXPECT_EQ(RunIn(dir_, fmt::format("'{}' size -A archive.a", cli)).out,
              RunIn(dir_, "/usr/bin/size -A archive.a").out);
  }
}

}  // namespace
}  // namespace tileprof::elf
