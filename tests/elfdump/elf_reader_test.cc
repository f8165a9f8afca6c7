// Tests for elfdump/elf_reader.h: which sections GNU size lists and in which
// order (spec size-sysv.md §1.3, §1.4), what BFD rejects, and BFD's
// diagnostics. Expected outputs were taken from /usr/bin/size 2.40 on the
// same bytes; ExpectLikeGnu re-checks them against GNU where it is installed.
#include "elfdump/elf_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "size_test_util.h"

namespace tileprof::elf {
namespace {

using testing::ExpectLikeGnu;
using testing::Printed;
using testing::SysV;
using testing::TestElf;
using testing::TestSection;

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::vector<std::string> Names(const ElfObject& object, bool listed_only = true) {
  std::vector<std::string> names;
  for (const ElfSection& s : object.sections)
    if (!listed_only || s.flags != 0) names.emplace_back(s.name);
  return names;
}

// A complete ELF32 little-endian relocatable for the IPU (EM 248, OSABI 255),
// one field per line: .text (4 bytes), .bss (16 bytes, NOBITS), .shstrtab.
const std::string kElf32Le = std::string(
    // ELF header (52 bytes)
    "\x7f"
    "ELF"               // e_ident[EI_MAG0..3]
    "\x01"              // EI_CLASS: ELFCLASS32
    "\x01"              // EI_DATA: ELFDATA2LSB
    "\x01"              // EI_VERSION: EV_CURRENT
    "\xff"              // EI_OSABI: ELFOSABI_STANDALONE
    "\0\0\0\0\0\0\0\0"  // EI_ABIVERSION + padding
    "\x01\x00"          // e_type: ET_REL
    "\xf8\x00"          // e_machine: 248 EM_GRAPHCORE_IPU
    "\x01\x00\x00\x00"  // e_version
    "\x00\x00\x00\x00"  // e_entry
    "\x00\x00\x00\x00"  // e_phoff
    "\x50\x00\x00\x00"  // e_shoff: 80
    "\x00\x00\x00\x00"  // e_flags
    "\x34\x00"          // e_ehsize: 52
    "\x00\x00"          // e_phentsize
    "\x00\x00"          // e_phnum
    "\x28\x00"          // e_shentsize: 40
    "\x04\x00"          // e_shnum: 4
    "\x03\x00"          // e_shstrndx: 3
    // .text contents at 52
    "\x01\x02\x03\x04"
    // .shstrtab contents at 56 (22 bytes), then 2 bytes of padding
    "\0.text\0.bss\0.shstrtab\0"
    "\0\0"
    // [0] the null section header at 80
    "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
    // [1] .text
    "\x01\x00\x00\x00"  // sh_name: 1
    "\x01\x00\x00\x00"  // sh_type: SHT_PROGBITS
    "\x06\x00\x00\x00"  // sh_flags: SHF_ALLOC | SHF_EXECINSTR
    "\x00\x01\x00\x00"  // sh_addr: 0x100
    "\x34\x00\x00\x00"  // sh_offset: 52
    "\x04\x00\x00\x00"  // sh_size: 4
    "\x00\x00\x00\x00"  // sh_link
    "\x00\x00\x00\x00"  // sh_info
    "\x04\x00\x00\x00"  // sh_addralign
    "\x00\x00\x00\x00"  // sh_entsize
    // [2] .bss
    "\x07\x00\x00\x00"  // sh_name: 7
    "\x08\x00\x00\x00"  // sh_type: SHT_NOBITS
    "\x03\x00\x00\x00"  // sh_flags: SHF_WRITE | SHF_ALLOC
    "\x00\x00\x00\x00"  // sh_addr
    "\x38\x00\x00\x00"  // sh_offset: 56
    "\x10\x00\x00\x00"  // sh_size: 16
    "\x00\x00\x00\x00"  // sh_link
    "\x00\x00\x00\x00"  // sh_info
    "\x04\x00\x00\x00"  // sh_addralign
    "\x00\x00\x00\x00"  // sh_entsize
    // [3] .shstrtab
    "\x0c\x00\x00\x00"   // sh_name: 12
    "\x03\x00\x00\x00"   // sh_type: SHT_STRTAB
    "\x00\x00\x00\x00"   // sh_flags
    "\x00\x00\x00\x00"   // sh_addr
    "\x38\x00\x00\x00"   // sh_offset: 56
    "\x16\x00\x00\x00"   // sh_size: 22
    "\x00\x00\x00\x00"   // sh_link
    "\x00\x00\x00\x00"   // sh_info
    "\x01\x00\x00\x00"   // sh_addralign
    "\x00\x00\x00\x00",  // sh_entsize
    240);

// The same object as ELF64 big-endian with an unknown e_machine (0x1234),
// accepted by the generic elf64-big target.
const std::string kElf64Be = std::string(
    "\x7f"
    "ELF"                               // e_ident[EI_MAG0..3]
    "\x02"                              // EI_CLASS: ELFCLASS64
    "\x02"                              // EI_DATA: ELFDATA2MSB
    "\x01"                              // EI_VERSION
    "\x00"                              // EI_OSABI
    "\0\0\0\0\0\0\0\0"                  // padding
    "\x00\x01"                          // e_type: ET_REL
    "\x12\x34"                          // e_machine: 0x1234
    "\x00\x00\x00\x01"                  // e_version
    "\x00\x00\x00\x00\x00\x00\x00\x00"  // e_entry
    "\x00\x00\x00\x00\x00\x00\x00\x00"  // e_phoff
    "\x00\x00\x00\x00\x00\x00\x00\x58"  // e_shoff: 88
    "\x00\x00\x00\x00"                  // e_flags
    "\x00\x40"                          // e_ehsize: 64
    "\x00\x00"                          // e_phentsize
    "\x00\x00"                          // e_phnum
    "\x00\x40"                          // e_shentsize: 64
    "\x00\x03"                          // e_shnum: 3
    "\x00\x02"                          // e_shstrndx: 2
    // .shstrtab contents at 64 (17 bytes) + 7 bytes padding
    "\0.data\0.shstrtab\0"
    "\0\0\0\0\0\0\0"
    // [0] null header at 88
    "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
    "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
    // [1] .data: NOBITS so that it needs no contents
    "\x00\x00\x00\x01"                  // sh_name: 1
    "\x00\x00\x00\x08"                  // sh_type: SHT_NOBITS
    "\x00\x00\x00\x00\x00\x00\x00\x03"  // sh_flags: WA
    "\x00\x00\x00\x01\x00\x00\x00\x00"  // sh_addr: 0x100000000
    "\x00\x00\x00\x00\x00\x00\x00\x40"  // sh_offset: 64
    "\x00\x00\x00\x00\x00\x00\x12\x34"  // sh_size: 0x1234
    "\x00\x00\x00\x00"                  // sh_link
    "\x00\x00\x00\x00"                  // sh_info
    "\x00\x00\x00\x00\x00\x00\x00\x08"  // sh_addralign
    "\x00\x00\x00\x00\x00\x00\x00\x00"  // sh_entsize
    // [2] .shstrtab
    "\x00\x00\x00\x07"                   // sh_name: 7
    "\x00\x00\x00\x03"                   // sh_type: SHT_STRTAB
    "\x00\x00\x00\x00\x00\x00\x00\x00"   // sh_flags
    "\x00\x00\x00\x00\x00\x00\x00\x00"   // sh_addr
    "\x00\x00\x00\x00\x00\x00\x00\x40"   // sh_offset: 64
    "\x00\x00\x00\x00\x00\x00\x00\x11"   // sh_size: 17
    "\x00\x00\x00\x00"                   // sh_link
    "\x00\x00\x00\x00"                   // sh_info
    "\x00\x00\x00\x00\x00\x00\x00\x01"   // sh_addralign
    "\x00\x00\x00\x00\x00\x00\x00\x00",  // sh_entsize
    280);

TEST(ElfReader, Elf32LittleEndianLiteral) {
  ElfReader reader;
  const ElfObject& o = reader.Read({Bytes(kElf32Le), kElf32Le.size(), "ipu.o"});
  ASSERT_TRUE(o.recognized);
  EXPECT_FALSE(o.is_64);
  EXPECT_FALSE(o.big_endian);
  EXPECT_EQ(o.machine, 248);
  ASSERT_EQ(Names(o), (std::vector<std::string>{".text", ".bss"}));
  EXPECT_EQ(o.sections[0].size, 4u);
  EXPECT_EQ(o.sections[0].vma, 0x100u);
  EXPECT_EQ(o.sections[0].flags & (kSecAlloc | kSecCode | kSecReadOnly | kSecHasContents),
            kSecAlloc | kSecCode | kSecReadOnly | kSecHasContents);
  EXPECT_EQ(o.sections[1].flags & (kSecAlloc | kSecHasContents), kSecAlloc);
  EXPECT_TRUE(o.messages.empty());
  ExpectLikeGnu({{"ipu.o", kElf32Le}}, {"ipu.o"}, SysV(16),
                {"ipu.o  :\n"
                 "section   size    addr\n"
                 ".text    0x4   0x100\n"
                 ".bss    0x10     0x0\n"
                 "Total   0x14\n\n\n",
                 "", 0});
}

TEST(ElfReader, Elf64BigEndianLiteral) {
  ElfReader reader;
  const ElfObject& o = reader.Read({Bytes(kElf64Be), kElf64Be.size(), "be.o"});
  ASSERT_TRUE(o.recognized);
  EXPECT_TRUE(o.is_64);
  EXPECT_TRUE(o.big_endian);
  ASSERT_EQ(Names(o), (std::vector<std::string>{".data"}));
  ExpectLikeGnu({{"be.o", kElf64Be}}, {"be.o"}, SysV(),
                {"be.o  :\n"
                 "section   size         addr\n"
                 ".data   4660   4294967296\n"
                 "Total   4660\n\n\n",
                 "", 0});
}

TEST(ElfReader, BothClassesAndByteOrdersFromTheBuilder) {
  for (bool is_64 : {false, true}) {
    for (bool big : {false, true}) {
      TestElf elf;
      elf.is_64 = is_64;
      elf.big_endian = big;
      elf.machine = 248;
      elf.sections = {{.name = ".text", .flags = 6, .data = "abcdefgh"},
                      {.name = ".rodata", .flags = 2, .data = "xy"},
                      {.name = ".bss", .type = 8, .flags = 3, .size = 100}};
      ElfReader reader;
      std::string image = elf.Build();
      const ElfObject& o = reader.Read({Bytes(image), image.size(), "t.o"});
      ASSERT_TRUE(o.recognized) << is_64 << big;
      EXPECT_EQ(o.is_64, is_64);
      EXPECT_EQ(o.big_endian, big);
      EXPECT_EQ(Names(o), (std::vector<std::string>{".text", ".rodata", ".bss"}));
    }
  }
}

// The symbol table and string table of an object, with symbols named "a"
// (index 1) and "b" (index 2).
std::vector<TestSection> SymbolTables(bool is_64, uint32_t strtab_index) {
  std::string symbols(is_64 ? 24 : 16, '\0');  // symbol 0
  for (uint32_t name : {1u, 3u}) {
    std::string sym;
    testing::Put(&sym, name, 4, false);  // st_name
    sym.append((is_64 ? 24 : 16) - 4, '\0');
    symbols += sym;
  }
  return {{.name = ".symtab",
           .type = 2,
           .data = symbols,
           .link = strtab_index,
           .info = 1,
           .entsize = static_cast<uint64_t>(is_64 ? 24 : 16)},
          {.name = ".strtab", .type = 3, .data = std::string("\0a\0b\0", 5)}};
}

// A .group section listing `members`, signed by symbol `symbol`.
TestSection Group(std::vector<uint32_t> members, uint32_t symtab, uint32_t symbol) {
  std::string data;
  testing::Put(&data, 1, 4, false);  // GRP_COMDAT
  for (uint32_t m : members) testing::Put(&data, m, 4, false);
  return {.name = ".group", .type = 17, .data = data, .link = symtab, .info = symbol, .entsize = 4};
}

TEST(ElfReader, GroupSectionsAreHoistedWhenTheFirstMemberIsCreated) {
  // LLVM's layout: a member before its group. Creating [1] reads every
  // group and creates [3] and [4] at once, ahead of [2].
  TestElf elf;
  elf.sections = {{.name = ".text.a", .flags = 6 | 0x200, .data = "aa"},   // [1]
                  {.name = ".data", .flags = 3, .data = "dd"},             // [2]
                  Group({1}, 6, 1),                                        // [3]
                  Group({5}, 6, 2),                                        // [4]
                  {.name = ".text.b", .flags = 6 | 0x200, .data = "bb"}};  // [5]
  for (TestSection& s : SymbolTables(true, 7)) elf.sections.push_back(s);  // [6] [7]
  std::string image = elf.Build();
  ElfReader reader;
  const ElfObject& o = reader.Read({Bytes(image), image.size(), "g.o"});
  ASSERT_TRUE(o.recognized);
  EXPECT_EQ(Names(o),
            (std::vector<std::string>{".text.a", ".group", ".group", ".data", ".text.b"}));
  EXPECT_TRUE(o.messages.empty());
  ExpectLikeGnu({{"g.o", image}}, {"g.o"}, SysV(),
                {"g.o  :\n"
                 "section   size   addr\n"
                 ".text.a      2      0\n"
                 ".group       8      0\n"
                 ".group       8      0\n"
                 ".data        2      0\n"
                 ".text.b      2      0\n"
                 "Total       22\n\n\n",
                 "", 0});
}

TEST(ElfReader, GroupWithoutMembersRejectsTheFile) {
  // A 4-byte group (just the flag word) is never read as a group, so no
  // member joins it and BFD rejects the file.
  TestElf elf;
  elf.machine = 248;  // only the generic target runs, so its messages show
  elf.sections = {{.name = ".group", .type = 17, .data = std::string("\1\0\0\0", 4), .entsize = 4},
                  {.name = ".text", .flags = 6, .data = "t"}};
  ExpectLikeGnu({{"g4.o", elf.Build()}}, {"g4.o"}, SysV(),
                {"",
                 "g4.o: SHT_GROUP section [index 1] has no SHF_GROUP sections\n"
                 "g4.o: file format not recognized\n",
                 3});
}

TEST(ElfReader, RelocSectionsAreHiddenAndTheirTargetsCreatedEarly) {
  TestElf elf;
  elf.sections = {{.name = ".rela.text",
                   .type = 4,
                   .data = std::string(24, '\0'),
                   .link = 4,
                   .info = 3,
                   .entsize = 24},                                         // [1]
                  {.name = ".data", .flags = 3, .data = "dd"},             // [2]
                  {.name = ".text", .flags = 6, .data = "tttt"}};          // [3]
  for (TestSection& s : SymbolTables(true, 5)) elf.sections.push_back(s);  // [4] [5]
  elf.sections.push_back({.name = ".rel.text", .type = 9, .link = 4, .info = 3, .entsize = 16});
  elf.sections.push_back(
      {.name = ".rela2.text", .type = 4, .link = 4, .info = 3, .entsize = 24});  // [7]
  std::string image = elf.Build();
  ElfReader reader;
  const ElfObject& o = reader.Read({Bytes(image), image.size(), "r.o"});
  ASSERT_TRUE(o.recognized);
  // .text first (created for .rela.text), the primary REL and RELA hidden,
  // a second RELA kept as a "secondary reloc" section, a second REL ignored
  // with a warning.
  EXPECT_EQ(Names(o), (std::vector<std::string>{".text", ".data", ".rela2.text"}));
  ExpectLikeGnu({{"r.o", image}}, {"r.o"}, SysV(),
                {"r.o  :\n"
                 "section       size   addr\n"
                 ".text            4      0\n"
                 ".data            2      0\n"
                 ".rela2.text      0      0\n"
                 "Total            6\n\n\n",
                 "", 0});
}

TEST(ElfReader, NobitsWithOnlyWriteHasNoFlagsUnlessSomethingAddsOne) {
  TestElf elf;
  elf.sections = {{.name = ".weird", .type = 8, .flags = 1, .size = 10},      // [1] flags 0
                  {.name = ".bss2", .type = 8, .size = 20},                   // [2] READONLY
                  {.name = ".debug_x", .type = 8, .flags = 1, .size = 30},    // [3] DEBUGGING
                  {.name = ".gnu.lto_x", .type = 8, .flags = 1, .size = 40},  // [4] flags 0
                  {.name = ".relocated", .type = 8, .flags = 1, .size = 50},  // [5] SEC_RELOC
                  {.name = ".rela.relocated", .type = 4, .link = 7, .info = 5, .entsize = 24}};
  for (TestSection& s : SymbolTables(true, 8)) elf.sections.push_back(s);  // [7] [8]
  std::string image = elf.Build();
  ElfReader reader;
  const ElfObject& o = reader.Read({Bytes(image), image.size(), "n.o"});
  ASSERT_TRUE(o.recognized);
  EXPECT_EQ(Names(o), (std::vector<std::string>{".bss2", ".debug_x", ".relocated"}));
  EXPECT_EQ(Names(o, false).size(), 5u);  // the flag-less ones exist but are not listed
  ExpectLikeGnu({{"n.o", image}}, {"n.o"}, SysV(),
                {"n.o  :\n"
                 "section      size   addr\n"
                 ".bss2          20      0\n"
                 ".debug_x       30      0\n"
                 ".relocated     50      0\n"
                 "Total         100\n\n\n",
                 "", 0});
}

TEST(ElfReader, StringTableRules) {
  // .strtab of .symtab hidden; .dynstr of .dynsym listed, after .dynsym:
  // meeting the string table first makes BFD create the table that links
  // to it; any other string table (.stabstr) is listed.
  TestElf elf;
  elf.type = 3;  // ET_DYN
  std::string dynsyms(48, '\0');
  elf.sections = {
      {.name = ".dynstr", .type = 3, .flags = 2, .data = std::string("\0x\0", 3)},  // [1]
      {.name = ".dynsym",
       .type = 11,
       .flags = 2,
       .data = dynsyms,
       .link = 1,
       .info = 1,
       .entsize = 24},                                                     // [2]
      {.name = ".stabstr", .type = 3, .data = std::string("\0s\0", 3)}};   // [3]
  for (TestSection& s : SymbolTables(true, 5)) elf.sections.push_back(s);  // [4] [5]
  std::string image = elf.Build();
  ElfReader reader;
  const ElfObject& o = reader.Read({Bytes(image), image.size(), "s.so"});
  ASSERT_TRUE(o.recognized);
  EXPECT_EQ(Names(o), (std::vector<std::string>{".dynsym", ".dynstr", ".stabstr"}));
  ExpectLikeGnu({{"s.so", image}}, {"s.so"}, SysV(),
                {"s.so  :\n"
                 "section    size   addr\n"
                 ".dynsym      48      0\n"
                 ".dynstr       3      0\n"
                 ".stabstr      3      0\n"
                 "Total        54\n\n\n",
                 "", 0});
}

TEST(ElfReader, UnknownSectionTypesAreListedByTheGenericTarget) {
  // The x86-64 target rejects types it does not know, the generic
  // elf64-little target accepts them, and its (empty) message list wins.
  TestElf elf;
  elf.sections = {{.name = ".text", .flags = 6, .data = "abcd"},
                  {.name = ".weird", .type = 0x20, .data = "xx"},
                  {.name = ".proc", .type = 0x70000003, .data = "yy"}};
  ExpectLikeGnu({{"u.o", elf.Build()}}, {"u.o"}, SysV(),
                {"u.o  :\n"
                 "section   size   addr\n"
                 ".text       4      0\n"
                 ".weird      2      0\n"
                 ".proc       2      0\n"
                 "Total       8\n\n\n",
                 "", 0});
}

TEST(ElfReader, CorruptStringTableIndexWarnsAndListsNothing) {
  TestElf elf;
  elf.machine = 248;
  elf.sections = {{.name = ".text", .flags = 6, .data = "abcd"}};
  elf.shstrndx = 1;  // a PROGBITS section, not a string table
  ExpectLikeGnu({{"c.o", elf.Build()}}, {"c.o"}, SysV(),
                {"c.o  :\nsection   size   addr\nTotal      0\n\n\n",
                 "warning: c.o has a corrupt string table index\n", 0});
}

TEST(ElfReader, SectionPastEndOfFileWarnsOnceAndStillLists) {
  TestElf elf;
  elf.machine = 248;
  elf.sections = {{.name = ".text", .flags = 6, .data = "abcd", .size = 4096},
                  {.name = ".data", .flags = 3, .data = "d", .offset = 1u << 20}};
  ExpectLikeGnu({{"p.o", elf.Build()}}, {"p.o"}, SysV(),
                {"p.o  :\n"
                 "section   size   addr\n"
                 ".text   4096      0\n"
                 ".data      1      0\n"
                 "Total   4097\n\n\n",
                 "warning: p.o has a section extending past end of file\n", 0});
}

TEST(ElfReader, ProgramHeaderWithBadAlignmentWarns) {
  TestElf elf;
  elf.machine = 248;
  elf.type = 2;  // ET_EXEC
  elf.phdr_aligns = {3};
  elf.sections = {{.name = ".text", .flags = 6, .data = "abcd"}};
  ExpectLikeGnu({{"e", elf.Build()}}, {"e"}, SysV(),
                {"e  :\nsection   size   addr\n.text      4      0\nTotal      4\n\n\n",
                 "warning: e has a program header with invalid alignment\n", 0});
}

TEST(ElfReader, DependencyLoopIsDetectedNotFollowed) {
  // Two string tables linked to each other: each one's scan for "who links
  // to me" reaches the other (PR 17512).
  TestElf elf;
  elf.machine = 248;
  elf.sections = {{.name = ".s1", .type = 3, .data = std::string("\0", 1), .link = 2},
                  {.name = ".s2", .type = 3, .data = std::string("\0", 1), .link = 1}};
  ExpectLikeGnu({{"l.o", elf.Build()}}, {"l.o"}, SysV(),
                {"",
                 "l.o: warning: loop in section dependencies detected\n"
                 "l.o: file format not recognized\n",
                 3});
}

TEST(ElfReader, AtMostFiveMessagesPerTarget) {
  // A group whose ten entries are all out of range: BFD caches five
  // messages, then rejects the file (the group has no members).
  TestElf elf;
  elf.machine = 248;
  std::string group;
  testing::Put(&group, 1, 4, false);
  for (int i = 0; i < 10; ++i) testing::Put(&group, 1000 + i, 4, false);
  elf.sections = {{.name = ".group", .type = 17, .data = group, .entsize = 4},
                  {.name = ".text", .flags = 6 | 0x200, .data = "t"}};
  std::string image = elf.Build();
  ElfReader reader;
  const ElfObject& o = reader.Read({Bytes(image), image.size(), "m.o"});
  EXPECT_FALSE(o.recognized);
  ASSERT_EQ(o.messages.size(), 1u);
  EXPECT_EQ(o.messages[0],
            "m.o: invalid entry in SHT_GROUP section [1]\n"
            "m.o: invalid entry in SHT_GROUP section [1]\n"
            "m.o: invalid entry in SHT_GROUP section [1]\n"
            "m.o: invalid entry in SHT_GROUP section [1]\n"
            "m.o: invalid entry in SHT_GROUP section [1]");
  ExpectLikeGnu({{"m.o", image}}, {"m.o"}, SysV(),
                {"", o.messages[0] + "\nm.o: file format not recognized\n", 3});
}

TEST(ElfReader, MalformedHeadersAreRejectedWithoutReadingPastTheEnd) {
  TestElf base;
  base.sections = {{.name = ".text", .flags = 6, .data = "abcd"}};
  const std::string good = base.Build();
  ElfReader reader;
  auto recognized = [&](const std::string& image) {
    return reader.Read({Bytes(image), image.size(), "x"}).recognized;
  };
  ASSERT_TRUE(recognized(good));
  EXPECT_FALSE(recognized(good.substr(0, 30)));  // truncated ELF header
  EXPECT_FALSE(recognized(good.substr(0, 64)));  // header only: table missing
  EXPECT_FALSE(
      recognized(std::string("\x7f"
                             "ELF",
                             4)));
  TestElf absurd = base;
  absurd.shnum = 0xffff;  // 65535 headers claimed in a tiny file
  EXPECT_FALSE(recognized(absurd.Build()));
  TestElf wrap = base;
  wrap.shoff = 0xffffffffffffffc0ull;  // e_shoff + table wraps around
  EXPECT_FALSE(recognized(wrap.Build()));
  TestElf core = base;
  core.type = 4;  // ET_CORE without program headers
  EXPECT_FALSE(recognized(core.Build()));
  TestElf bad_name = base;
  bad_name.sections[0].name_offset = 5000;  // sh_name beyond .shstrtab
  EXPECT_FALSE(recognized(bad_name.Build()));
  TestElf bad_link = base;
  bad_link.sections[0].link = 77;  // sh_link >= e_shnum
  EXPECT_FALSE(recognized(bad_link.Build()));
}

TEST(ElfReader, ExtendedSectionNumbering) {
  // e_shnum 0 and e_shstrndx SHN_XINDEX: the real values live in section
  // header 0's sh_size and sh_link.
  TestElf elf;
  elf.sections = {{.name = ".text", .flags = 6, .data = "abcd"}};
  elf.shnum = 0;
  elf.shstrndx = 0xffff;
  std::string image = elf.Build();
  uint64_t shoff = 0;
  for (int i = 0; i < 8; ++i) shoff |= uint64_t{static_cast<uint8_t>(image[40 + i])} << (8 * i);
  image[shoff + 32] = 3;  // section 0 sh_size: 3 headers
  image[shoff + 40] = 2;  // section 0 sh_link: .shstrtab is [2]
  ElfReader reader;
  const ElfObject& o = reader.Read({Bytes(image), image.size(), "x.o"});
  ASSERT_TRUE(o.recognized);
  EXPECT_EQ(Names(o), (std::vector<std::string>{".text"}));
}

TEST(ElfReader, ReusedReaderForgetsThePreviousObject) {
  ElfReader reader;
  ASSERT_TRUE(reader.Read({Bytes(kElf32Le), kElf32Le.size(), "a"}).recognized);
  const std::string junk = "not an object";
  const ElfObject& o = reader.Read({Bytes(junk), junk.size(), "b"});
  EXPECT_FALSE(o.recognized);
  EXPECT_TRUE(o.sections.empty());
}

}  // namespace
}  // namespace tileprof::elf
