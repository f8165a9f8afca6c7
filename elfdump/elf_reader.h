// ElfReader: decides, for one ELF file or archive member, what GNU size 2.40
// (Debian, x86-64 build) sees: whether BFD recognises it as an object, which
// BFD sections it creates and in which order, their BFD flags, and the
// diagnostics BFD prints. Follows ../shared/spec/size-sysv.md sections 1.3,
// 1.4 and 3, and, where the spec is silent or wrong, binutils 2.40 itself
// (bfd/format.c, bfd/elfcode.h elf_object_p, bfd/elf.c bfd_section_from_shdr):
//
//  * BFD tries the specific x86 target first (elf64-x86-64, elf32-i386,
//    elf32-iamcu, elf32-x86-64 by class and e_machine, little-endian only)
//    and then the generic elfNN-little/big target. The generic target turns
//    any unknown section type into a section, so unknown types are listed,
//    not rejected (the spec's §1.3 list of rejected types only holds for the
//    x86-64 target, whose failures the generic target then rescues).
//  * The listing order is BFD's creation order, which recursion changes:
//    group hoisting, reloc targets created early, strtab link scans.
//  * The warnings "corrupt string table index", "section extending past end
//    of file" and "program header with invalid alignment" share one flag per
//    file, so at most one of them is ever printed (bfd->read_only).
//
// Input is untrusted: every read is bounds-checked, recursion is bounded by
// the section count (BFD's being_created guard), allocation is O(e_shnum)
// and e_shnum is bounded by what fits in the image.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace tileprof::elf {

// BFD section flags (bfd/section.c SEC_*) that decide what size prints.
enum BfdSectionFlag : uint32_t {
  kSecAlloc = 1u << 0,
  kSecLoad = 1u << 1,
  kSecReadOnly = 1u << 2,
  kSecCode = 1u << 3,
  kSecData = 1u << 4,
  kSecHasContents = 1u << 5,
  kSecGroup = 1u << 6,
  kSecMerge = 1u << 7,
  kSecStrings = 1u << 8,
  kSecThreadLocal = 1u << 9,
  kSecExclude = 1u << 10,
  kSecDebugging = 1u << 11,
  kSecElfOctets = 1u << 12,
  kSecLinkOnce = 1u << 13,
  kSecReloc = 1u << 14,
};

// One BFD section, in creation order.
struct ElfSection {
  std::string_view name;  // raw bytes up to the first NUL (BFD uses C strings)
  uint64_t size = 0;      // sh_size when the section was created
  uint64_t vma = 0;       // sh_addr
  uint32_t flags = 0;     // BfdSectionFlag bits; 0 means size -A skips it
  uint32_t index = 0;     // section header index
};

// One file or archive member as BFD reads it.
struct ElfInput {
  // The bytes that can actually be read (an archive member is clipped to the
  // archive's end).
  std::span<const uint8_t> bytes;
  // bfd_get_file_size: the file size, or for an archive member
  // min(ar_size, archive file size). 0 means unknown (checks are skipped).
  uint64_t nominal_size = 0;
  // How BFD's %pB names this input in messages: "file" or "archive(member)".
  std::string_view diagnostic_name;
  // An archive member's ar_size: BFD reads starting at or beyond it fail
  // with "invalid operation" rather than "file truncated".
  std::optional<uint64_t> element_size;
};

// What bfd_check_format (abfd, bfd_object) concluded.
struct ElfObject {
  bool recognized = false;
  bool is_64 = false;
  bool big_endian = false;
  uint16_t type = 0;     // e_type
  uint16_t machine = 0;  // e_machine
  std::vector<ElfSection> sections;
  // The diagnostics GNU prints for this input, in order: one entry per
  // "size: " prefix; an entry may hold several lines joined by '\n' (BFD
  // prints a target's cached messages under one prefix). Empty when silent.
  std::vector<std::string> messages;
};

class ElfProbe;

// Reusable reader: keeps its scratch buffers between calls so an archive of
// 23,552 members does not allocate per member once warmed up.
class ElfReader {
 public:
  ElfReader();
  ~ElfReader();
  ElfReader(const ElfReader&) = delete;
  ElfReader& operator=(const ElfReader&) = delete;

  // Runs BFD's object recognition on `input`. The result (and the names in
  // it, which point into input.bytes) stays valid until the next call.
  const ElfObject& Read(const ElfInput& input);

  // `size --common`: the total st_size of the common symbols of the last
  // object Read (0 unless it is a relocatable-style object with a symbol
  // table, as GNU's calculate_common_size). Reading the symbols can print
  // messages (each with its own "size: " prefix), appended to `messages`.
  // An Error is fatal for GNU size: the message is BFD's error text ("file
  // truncated") and size exits with status 1 at once.
  Expected<uint64_t> CommonSize(std::vector<std::string>* messages);

 private:
  std::unique_ptr<ElfProbe> probe_;
  ElfObject object_;
};

// True when `bytes` starts with the ELF magic; a cheap pre-filter.
bool HasElfMagic(std::span<const uint8_t> bytes);

}  // namespace tileprof::elf
