// Tests for elfdump/gnu_size.h: the SysV, Berkeley and GNU formats, radixes,
// totals and --common, and the file-level messages and exit statuses of
// spec size-sysv.md §3. Pinned outputs come from /usr/bin/size 2.40 and are
// re-checked against it where it is installed.
#include "elfdump/gnu_size.h"

#include <gtest/gtest.h>

#include <string>

#include "size_test_util.h"

namespace tileprof::elf {
namespace {

using testing::ExpectLikeGnu;
using testing::Printed;
using testing::RunInMemory;
using testing::SysV;
using testing::TestElf;

SizeOptions Berkeley(int radix = 10, bool totals = false) {
  SizeOptions o;
  o.radix = radix;
  o.totals = totals;
  return o;
}

SizeOptions Gnu(int radix = 10, bool totals = false) {
  SizeOptions o = Berkeley(radix, totals);
  o.format = SizeFormat::kGnu;
  return o;
}

// ipu_tile.o of the shared corpus, rebuilt: ELF32, EM 248.
std::string IpuTile() {
  TestElf elf;
  elf.is_64 = false;
  elf.machine = 248;
  elf.sections = {{.name = ".text", .type = 8, .flags = 6, .size = 1234},
                  {.name = ".data", .type = 8, .flags = 3, .size = 56},
                  {.name = ".bss", .type = 8, .flags = 3, .size = 7890},
                  {.name = ".rodata", .type = 8, .flags = 2, .size = 12},
                  {.name = ".tile.custom", .flags = 2, .data = "abc"}};
  return elf.Build();
}

TEST(GnuSize, SysVColumnsComeFromTheTotalAndTheLargestAddress) {
  TestElf elf;
  elf.sections = {{.name = ".text", .type = 8, .flags = 6, .addr = 4096, .size = 9000},
                  {.name = ".data", .type = 8, .flags = 3, .addr = 13312, .size = 9000}};
  ExpectLikeGnu({{"w.o", elf.Build()}}, {"w.o"}, SysV(),
                {"w.o  :\n"
                 "section    size    addr\n"
                 ".text    9000    4096\n"
                 ".data    9000   13312\n"
                 "Total   18000\n\n\n",
                 "", 0});
}

TEST(GnuSize, RadixPrefixesAndZero) {
  TestElf elf;
  elf.sections = {{.name = ".text", .type = 8, .flags = 6, .size = 0},
                  {.name = ".data", .type = 8, .flags = 3, .addr = 8, .size = 64}};
  std::string image = elf.Build();
  ExpectLikeGnu({{"r.o", image}}, {"r.o"}, SysV(16),
                {"r.o  :\nsection   size   addr\n.text    0x0    0x0\n.data   0x40    0x8\n"
                 "Total   0x40\n\n\n",
                 "", 0});
  ExpectLikeGnu({{"r.o", image}}, {"r.o"}, SysV(8),
                {"r.o  :\nsection   size   addr\n.text     00     00\n.data   0100    010\n"
                 "Total   0100\n\n\n",
                 "", 0});
}

TEST(GnuSize, TotalWrapsAroundLikeAnUnsigned64BitSum) {
  TestElf elf;
  elf.sections = {{.name = ".a", .type = 8, .flags = 3, .size = UINT64_MAX},
                  {.name = ".b", .type = 8, .flags = 3, .size = 1}};
  ExpectLikeGnu({{"x.o", elf.Build()}}, {"x.o"}, SysV(),
                {"x.o  :\nsection   size   addr\n.a   18446744073709551615      0\n"
                 ".b      1      0\nTotal      0\n\n\n",
                 "", 0});
}

TEST(GnuSize, BerkeleyPrintsItsHeaderOnceAndCountsReadOnlyAsText) {
  std::map<std::string, std::string> files = {{"ipu.o", IpuTile()}, {"again.o", IpuTile()}};
  ExpectLikeGnu(files, {"ipu.o", "again.o"}, Berkeley(),
                {"   text\t   data\t    bss\t    dec\t    hex\tfilename\n"
                 "   1249\t      0\t   7946\t   9195\t   23eb\tipu.o\n"
                 "   1249\t      0\t   7946\t   9195\t   23eb\tagain.o\n",
                 "", 0});
  ExpectLikeGnu(files, {"ipu.o", "again.o"}, Berkeley(8, true),
                {"   text\t   data\t    bss\t    oct\t    hex\tfilename\n"
                 "  02341\t     00\t 017412\t  21753\t   23eb\tipu.o\n"
                 "  02341\t     00\t 017412\t  21753\t   23eb\tagain.o\n"
                 "  04702\t     00\t 037024\t  43726\t   47d6\t(TOTALS)\n",
                 "", 0});
}

// The GNU format counts read-only data as data and a read-only NOBITS
// section (.rodata here) as bss.
TEST(GnuSize, GnuFormatCountsReadOnlyAsData) {
  ExpectLikeGnu({{"ipu.o", IpuTile()}}, {"ipu.o"}, Gnu(16, true),
                {"      text       data        bss      total filename\n"
                 "     0x4d2        0x3     0x1f16     0x23eb ipu.o\n"
                 "     0x4d2        0x3     0x1f16     0x23eb (TOTALS)\n",
                 "", 0});
}

TEST(GnuSize, CommonSymbolsAddARowAndCountAsBss) {
  // One common symbol of 40 bytes (st_shndx SHN_COMMON, st_size 40).
  std::string symbols(24, '\0');
  std::string sym;
  testing::Put(&sym, 1, 4, false);       // st_name
  sym.push_back(0x11);                   // st_info: STB_GLOBAL, STT_OBJECT
  sym.push_back(0);                      // st_other
  testing::Put(&sym, 0xfff2, 2, false);  // st_shndx: SHN_COMMON
  testing::Put(&sym, 8, 8, false);       // st_value: alignment
  testing::Put(&sym, 40, 8, false);      // st_size
  symbols += sym;
  TestElf elf;
  elf.sections = {
      {.name = ".text", .flags = 6, .data = "abcd"},
      {.name = ".symtab", .type = 2, .data = symbols, .link = 3, .info = 1, .entsize = 24},
      {.name = ".strtab", .type = 3, .data = std::string("\0c\0", 3)}};
  SizeOptions sysv = SysV();
  sysv.common = true;
  ExpectLikeGnu({{"c.o", elf.Build()}}, {"c.o"}, sysv,
                {"c.o  :\nsection   size   addr\n.text      4      0\n*COM*     40      0\n"
                 "Total     44\n\n\n",
                 "", 0});
  SizeOptions berkeley = Berkeley();
  berkeley.common = true;
  ExpectLikeGnu({{"c.o", elf.Build()}}, {"c.o"}, berkeley,
                {"   text\t   data\t    bss\t    dec\t    hex\tfilename\n"
                 "      4\t      0\t     40\t     44\t     2c\tc.o\n",
                 "", 0});
}

TEST(GnuSize, FileProblemsAndTheirExitStatuses) {
  MemoryFileProvider files;
  files.Add("ok.o", IpuTile());
  files.Add("empty.o", "");
  files.Add("text.txt", "hello\n");
  files.AddDirectory("dir");
  SizeResult r = RunSize({"missing.o", "dir", "empty.o", "text.txt", "ok.o"}, SysV(), files);
  EXPECT_EQ(r.ErrText("size: "),
            "size: 'missing.o': No such file\n"
            "size: Warning: 'dir' is a directory\n"
            "size: text.txt: file format not recognized\n");
  // The last status assigned wins, and a later good file does not reset it.
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("ok.o  :"), std::string::npos);
  EXPECT_EQ(RunSize({"text.txt", "missing.o"}, SysV(), files).exit_code, 1);
  EXPECT_EQ(RunSize({"missing.o", "text.txt"}, SysV(), files).exit_code, 3);
  EXPECT_EQ(RunSize({"empty.o"}, SysV(), files).err.size(), 0u);
  EXPECT_EQ(RunSize({"empty.o"}, SysV(), files).exit_code, 1);
  SizeResult none = RunSize({}, SysV(), files);
  EXPECT_EQ(none.ErrText("size: "), "size: 'a.out': No such file\n");
  EXPECT_EQ(none.exit_code, 1);
  ExpectLikeGnu({{"text.txt", "hello\n"}, {"empty.o", ""}}, {"empty.o", "nope", "text.txt"}, SysV(),
                {"", "'nope': No such file\ntext.txt: file format not recognized\n", 3});
}

TEST(GnuSize, DiagnosticsAreInterleavedWhereGnuPrintsThem) {
  TestElf elf;
  elf.machine = 248;
  elf.sections = {{.name = ".text", .flags = 6, .data = "abcd"}};
  elf.shstrndx = 1;
  MemoryFileProvider files;
  files.Add("a.o", IpuTile());
  files.Add("warn.o", elf.Build());
  SizeResult r = RunSize({"a.o", "warn.o"}, SysV(), files);
  std::string all = r.Interleaved("size: ");
  size_t first_table = all.find("a.o  :");
  size_t warning = all.find("size: warning: warn.o has a corrupt string table index");
  size_t second_table = all.find("warn.o  :");
  ASSERT_NE(warning, std::string::npos);
  EXPECT_LT(first_table, warning);
  EXPECT_LT(warning, second_table);  // BFD warns while recognising, before printing
}

TEST(GnuSize, ArchiveMembersAreHeadedByMemberAndArchive) {
  std::string archive = "!<arch>\n" + testing::ArMember("tile0.o/", IpuTile());
  ExpectLikeGnu({{"t.a", archive}}, {"t.a"}, Berkeley(),
                {"   text\t   data\t    bss\t    dec\t    hex\tfilename\n"
                 "   1249\t      0\t   7946\t   9195\t   23eb\ttile0.o (ex t.a)\n",
                 "", 0});
}

}  // namespace
}  // namespace tileprof::elf
