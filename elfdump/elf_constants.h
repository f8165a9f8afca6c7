// ELF and ar constants used by the readers and writers in elfdump/ (values
// from the System V gABI and binutils include/elf/common.h).
#pragma once

#include <cstdint>

namespace tileprof::elf {

inline constexpr uint16_t kEmGraphcoreIpu = 248;  // EM_GRAPHCORE_IPU
inline constexpr uint8_t kOsAbiStandalone = 255;  // ELFOSABI_STANDALONE, as Graphcore's LLVM writes

// Writer (elfdump/tile_archive.cc): the subset of the gABI and of the GNU ar
// format that the per-tile archive writer emits.
inline constexpr uint8_t kWriterElfClass32 = 1;          // EI_CLASS: ELFCLASS32
inline constexpr uint8_t kWriterElfDataLsb = 1;          // EI_DATA: ELFDATA2LSB
inline constexpr uint8_t kWriterEvCurrent = 1;           // EI_VERSION, e_version: EV_CURRENT
inline constexpr uint16_t kWriterEtRel = 1;              // e_type: ET_REL
inline constexpr uint16_t kWriterElf32EhdrSize = 52;     // e_ehsize of ELF32
inline constexpr uint16_t kWriterElf32ShdrSize = 40;     // e_shentsize of ELF32
inline constexpr uint32_t kWriterShtProgbits = 1;        // SHT_PROGBITS
inline constexpr uint32_t kWriterShtStrtab = 3;          // SHT_STRTAB
inline constexpr uint32_t kWriterShtNobits = 8;          // SHT_NOBITS
inline constexpr uint32_t kWriterShfWrite = 0x1;         // SHF_WRITE
inline constexpr uint32_t kWriterShfAlloc = 0x2;         // SHF_ALLOC
inline constexpr uint32_t kWriterShfExecinstr = 0x4;     // SHF_EXECINSTR
inline constexpr uint32_t kWriterShnLoreserve = 0xff00;  // first reserved section index
inline constexpr char kWriterArMagic[] = "!<arch>\n";    // global archive header (8 bytes)
inline constexpr uint32_t kWriterArHeaderSize = 60;      // member header
inline constexpr char kWriterArFmag[] = "`\n";           // ar_fmag, last 2 header bytes

// Reader (elfdump/elf_reader.cc, ar_reader.cc): what GNU size's BFD looks at.
inline constexpr uint8_t kElfClass32 = 1;             // EI_CLASS: ELFCLASS32
inline constexpr uint8_t kElfClass64 = 2;             // EI_CLASS: ELFCLASS64
inline constexpr uint8_t kElfDataLsb = 1;             // EI_DATA: ELFDATA2LSB
inline constexpr uint8_t kElfDataMsb = 2;             // EI_DATA: ELFDATA2MSB
inline constexpr uint8_t kEvCurrent = 1;              // EI_VERSION: EV_CURRENT
inline constexpr uint16_t kEtRel = 1;                 // e_type: ET_REL
inline constexpr uint16_t kEtExec = 2;                // e_type: ET_EXEC
inline constexpr uint16_t kEtDyn = 3;                 // e_type: ET_DYN
inline constexpr uint16_t kEtCore = 4;                // e_type: ET_CORE
inline constexpr uint16_t kEm386 = 3;                 // EM_386
inline constexpr uint16_t kEmIamcu = 6;               // EM_IAMCU
inline constexpr uint16_t kEmX8664 = 62;              // EM_X86_64
inline constexpr uint32_t kShnUndef = 0;              // SHN_UNDEF
inline constexpr uint32_t kShnLoreserve = 0xff00;     // SHN_LORESERVE (also SHN_BEFORE)
inline constexpr uint32_t kShnAfter = 0xff01;         // SHN_AFTER (Solaris sh_link)
inline constexpr uint32_t kShnX8664Lcommon = 0xff02;  // SHN_X86_64_LCOMMON
inline constexpr uint32_t kShnCommon = 0xfff2;        // SHN_COMMON
inline constexpr uint32_t kShnXindex = 0xffff;        // SHN_XINDEX (16-bit form)
inline constexpr uint16_t kPnXnum = 0xffff;           // PN_XNUM
inline constexpr uint32_t kShtNull = 0;
inline constexpr uint32_t kShtProgbits = 1;
inline constexpr uint32_t kShtSymtab = 2;
inline constexpr uint32_t kShtStrtab = 3;
inline constexpr uint32_t kShtRela = 4;
inline constexpr uint32_t kShtHash = 5;
inline constexpr uint32_t kShtDynamic = 6;
inline constexpr uint32_t kShtNote = 7;
inline constexpr uint32_t kShtNobits = 8;
inline constexpr uint32_t kShtRel = 9;
inline constexpr uint32_t kShtShlib = 10;
inline constexpr uint32_t kShtDynsym = 11;
inline constexpr uint32_t kShtInitArray = 14;
inline constexpr uint32_t kShtFiniArray = 15;
inline constexpr uint32_t kShtPreinitArray = 16;
inline constexpr uint32_t kShtGroup = 17;
inline constexpr uint32_t kShtSymtabShndx = 18;
inline constexpr uint32_t kShtRelr = 19;
inline constexpr uint32_t kShtLoos = 0x60000000;
inline constexpr uint32_t kShtSecondaryReloc =
    0x60000004;  // BFD-internal SHT_SECONDARY_RELOC (SHT_LOOS + SHT_RELA)
inline constexpr uint32_t kShtGnuAttributes = 0x6ffffff5;
inline constexpr uint32_t kShtGnuHash = 0x6ffffff6;
inline constexpr uint32_t kShtGnuLiblist = 0x6ffffff7;
inline constexpr uint32_t kShtGnuVerdef = 0x6ffffffd;
inline constexpr uint32_t kShtGnuVerneed = 0x6ffffffe;
inline constexpr uint32_t kShtGnuVersym = 0x6fffffff;
inline constexpr uint32_t kShtHios = 0x6fffffff;
inline constexpr uint32_t kShtLoproc = 0x70000000;
inline constexpr uint32_t kShtX8664Unwind = 0x70000001;
inline constexpr uint32_t kShtHiproc = 0x7fffffff;
inline constexpr uint32_t kShtLouser = 0x80000000;
inline constexpr uint64_t kShfWrite = 0x1;
inline constexpr uint64_t kShfAlloc = 0x2;
inline constexpr uint64_t kShfExecinstr = 0x4;
inline constexpr uint64_t kShfMerge = 0x10;
inline constexpr uint64_t kShfStrings = 0x20;
inline constexpr uint64_t kShfInfoLink = 0x40;
inline constexpr uint64_t kShfLinkOrder = 0x80;
inline constexpr uint64_t kShfOsNonconforming = 0x100;
inline constexpr uint64_t kShfGroup = 0x200;
inline constexpr uint64_t kShfTls = 0x400;
inline constexpr uint64_t kShfExclude = 0x80000000;
inline constexpr uint32_t kGrpComdat = 0x1;          // GRP_COMDAT, the group flag word
inline constexpr uint8_t kSttSection = 3;            // STT_SECTION
inline constexpr char kArMagic[] = "!<arch>\n";      // ar global header
inline constexpr char kArThinMagic[] = "!<thin>\n";  // thin archive global header
inline constexpr uint64_t kArMagicSize = 8;          // SARMAG
inline constexpr uint64_t kArHeaderSize = 60;        // sizeof (struct ar_hdr)
inline constexpr uint64_t kArMaxNameLength = 15;     // ar_max_namelen of BFD's ELF targets

}  // namespace tileprof::elf
