// ElfProbe, fourth part: the SHT_NOTE parsing BFD does while it creates a
// note section (bfd/elf.c elf_parse_notes, elfobj_grok_gnu_note;
// bfd/elf-properties.c _bfd_elf_parse_gnu_properties; bfd/elfxx-x86.c
// _bfd_x86_elf_parse_gnu_properties). Nothing here changes what size lists;
// it only reproduces the warnings GNU prints about corrupt
// NT_GNU_PROPERTY_TYPE_0 notes, which reach stderr.
//
// A note (all fields in the file's byte order):
//   0  namesz   4
//   4  descsz   4
//   8  type     4
//   12 name     namesz bytes, padded to the note alignment (4 or 8)
//   .. desc     descsz bytes, padded likewise
// A GNU property note's desc is a list of (pr_type 4, pr_datasz 4, data
// padded to 8 bytes in ELF64, 4 in ELF32).
#include <cstring>

#include <fmt/format.h>

#include "elfdump/elf_probe.h"

namespace tileprof::elf {
namespace {

constexpr uint32_t kNtGnuBuildId = 3;
constexpr uint32_t kNtGnuPropertyType0 = 5;
constexpr uint32_t kPropertyStackSize = 1;
constexpr uint32_t kPropertyNoCopyOnProtected = 2;
constexpr uint32_t kPropertyUint32AndLo = 0xb0000000;
constexpr uint32_t kPropertyUint32OrHi = 0xb000ffff;
constexpr uint32_t kPropertyLoproc = 0xc0000000;
constexpr uint32_t kPropertyLouser = 0xe0000000;
constexpr uint32_t kX86CompatIsa1Used = 0xc0000000;
constexpr uint32_t kX86CompatIsa1Needed = 0xc0000001;
constexpr uint32_t kX86Uint32AndLo = 0xc0000002;
constexpr uint32_t kX86Uint32OrAndHi = 0xc0017fff;

uint64_t AlignUp(uint64_t value, uint64_t align) { return (value + align - 1) & ~(align - 1); }

}  // namespace

bool ElfProbe::ParseGnuProperties(uint64_t desc, uint64_t descsz) {
  const uint64_t align = is_64_ ? 8 : 4;
  auto bad_size = [&] {
    Say(fmt::format("warning: {}: corrupt GNU_PROPERTY_TYPE ({}) size: {}", diag_,
                    kNtGnuPropertyType0, AltHex(descsz)));
    return false;
  };
  if (descsz < 8 || descsz % align != 0) return bad_size();
  uint64_t ptr = desc;
  const uint64_t end = desc + descsz;
  while (ptr != end) {
    if (end - ptr < 8) return bad_size();
    uint32_t type = static_cast<uint32_t>(reader_.UncheckedWord(ptr, 4));
    uint32_t datasz = static_cast<uint32_t>(reader_.UncheckedWord(ptr + 4, 4));
    ptr += 8;
    if (datasz > end - ptr) {
      Say(fmt::format("warning: {}: corrupt GNU_PROPERTY_TYPE ({}) type (0x{:x}) datasz: 0x{:x}",
                      diag_, kNtGnuPropertyType0, type, datasz));
      return false;
    }
    bool known = false;
    if (type >= kPropertyLoproc) {
      if (target_.generic) {
        known = true;  // processor properties are the specific target's business
      } else if (type < kPropertyLouser) {
        // The x86 backends know their ISA and feature words.
        if (type == kX86CompatIsa1Used || type == kX86CompatIsa1Needed ||
            (type >= kX86Uint32AndLo && type <= kX86Uint32OrAndHi)) {
          if (datasz != 4) {
            Say(fmt::format("error: {}: <corrupt x86 property (0x{:x}) size: 0x{:x}>", diag_, type,
                            datasz));
            return false;
          }
          known = true;
        }
      }
    } else if (type == kPropertyStackSize) {
      if (datasz != align) {
        Say(fmt::format("warning: {}: corrupt stack size: 0x{:x}", diag_, datasz));
        return false;
      }
      known = true;
    } else if (type == kPropertyNoCopyOnProtected) {
      if (datasz != 0) {
        Say(fmt::format("warning: {}: corrupt no copy on protected size: 0x{:x}", diag_, datasz));
        return false;
      }
      known = true;
    } else if (type >= kPropertyUint32AndLo && type <= kPropertyUint32OrHi) {
      if (datasz != 4) {
        Say(fmt::format("error: {}: <corrupt property (0x{:x}) size: 0x{:x}>", diag_, type,
                        datasz));
        return false;
      }
      known = true;
    }
    if (!known) {
      Say(fmt::format("warning: {}: unsupported GNU_PROPERTY_TYPE ({}) type: 0x{:x}", diag_,
                      kNtGnuPropertyType0, type));
    }
    ptr += AlignUp(datasz, align);
  }
  return true;
}

void ElfProbe::ParseNotes(uint64_t offset, uint64_t size, uint64_t align) {
  if (align < 4) align = 4;
  if (align != 4 && align != 8) return;
  const uint64_t end = offset + size;  // the caller checked it is readable
  uint64_t p = offset;
  while (p < end) {
    const uint64_t left = end - p;
    if (left < 12) return;
    uint32_t namesz = static_cast<uint32_t>(reader_.UncheckedWord(p, 4));
    uint32_t descsz = static_cast<uint32_t>(reader_.UncheckedWord(p + 4, 4));
    uint32_t type = static_cast<uint32_t>(reader_.UncheckedWord(p + 8, 4));
    if (namesz > left - 12) return;
    const uint64_t desc = p + AlignUp(12 + uint64_t{namesz}, align);
    if (descsz != 0 && (desc >= end || descsz > end - desc)) return;
    // strcmp (namedata, "GNU") with namesz == 4: the bytes "GNU\0".
    if (namesz == 4 && std::memcmp(data_.data() + p + 12, "GNU", 4) == 0) {
      if (type == kNtGnuPropertyType0 && !ParseGnuProperties(desc, descsz)) return;
      if (type == kNtGnuBuildId && descsz == 0) return;
    }
    p += AlignUp(AlignUp(12 + uint64_t{namesz}, align) + descsz, align);
  }
}

}  // namespace tileprof::elf
