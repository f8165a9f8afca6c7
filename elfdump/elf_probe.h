// ElfProbe: one run of BFD's elf_object_p for one target (internal to
// elfdump/; the public interface is elf_reader.h). The state mirrors what
// BFD keeps while it creates sections, because the listing order and the
// accept/reject decision depend on it: which section headers already have a
// BFD section, which are being created (the dependency-loop guard), the
// symbol tables found so far, the section groups, and the headers BFD
// rewrites on the way (sh_info of an empty symtab, .dynamic's sh_link,
// SHF_GROUP on group members, sh_size of an unreadable string table).
//
// Split over four files: elf_reader.cc (file and section header tables),
// elf_sections.cc (bfd_section_from_shdr and section creation), elf_groups.cc
// (section groups, their consistency check, and common symbols), elf_notes.cc
// (the note parsing that can print warnings).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/byte_reader.h"
#include "elfdump/elf_reader.h"

namespace tileprof::elf {

// A BFD ELF target of the Debian x86-64 build: what differs between the
// targets that size tries on an ELF image.
struct ElfTarget {
  // elfNN-little / elfNN-big: any e_machine; its section_from_shdr hook turns
  // every unknown section type into a section.
  bool generic = true;
  // EM_386 / EM_IAMCU / EM_X86_64 backends accept sh_link SHN_BEFORE and
  // SHN_AFTER (Solaris, PR 10478).
  bool solaris_links = false;
  // bfd_arch_i386 (elf32-i386, elf64-x86-64, elf32-x86-64, not iamcu):
  // .dynamic's sh_link may also be SHN_BEFORE / SHN_AFTER.
  bool arch_i386 = false;
  // The x86-64 backend knows SHT_X86_64_UNWIND and SHN_X86_64_LCOMMON.
  bool x86_64 = false;
};

// Elf_Internal_Shdr plus the BFD bookkeeping attached to it.
struct ProbeShdr {
  uint32_t name = 0;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint32_t info = 0;
  uint64_t addralign = 0;
  uint64_t entsize = 0;
  int32_t section = -1;     // hdr->bfd_section, an index into sections_
  uint32_t generation = 0;  // bumped when BFD points elf_elfsections[i] at a copy
  bool being_created = false;
  bool strings_loaded = false;  // hdr->contents holds this string table
  bool group_loaded = false;    // hdr->contents holds parsed group entries
  uint32_t group_first = 0;     // first entry in group_entries_ (the flag word)
};

// One entry of a parsed SHT_GROUP section: the member's header, or -1.
struct GroupEntry {
  int32_t shndx = -1;
  uint32_t generation = 0;
};

// asection plus its ELF section data.
struct ProbeSection {
  uint32_t shndx = 0;
  std::string_view name;
  uint64_t size = 0;
  uint64_t vma = 0;
  uint32_t flags = 0;
  uint32_t hdr_type = 0;  // this_hdr, copied when the section was made
  uint64_t hdr_flags = 0;
  uint32_t hdr_link = 0;
  int32_t next_in_group = -1;  // elf_next_in_group
  bool has_group_name = false;
  std::string_view group_name;
  bool has_rel = false;   // esdt->rel.hdr set
  bool has_rela = false;  // esdt->rela.hdr set
};

// printf's "%#x": "0x1f", but plain "0" for zero.
inline std::string AltHex(uint64_t value) {
  return value == 0 ? std::string("0") : fmt::format("{:#x}", value);
}

class ElfProbe {
 public:
  // Runs elf_object_p for `target` on `input`; true when the target accepts
  // the file. `read_only` is BFD's per-file flag shared by all targets: set
  // once one of the "warning: ..." messages has been issued.
  bool Run(const ElfInput& input, const ElfTarget& target, bool* read_only);

  // The messages this run cached (at most 5, as BFD's per-target cache).
  const std::vector<std::string>& messages() const { return messages_; }
  const std::vector<ProbeSection>& sections() const { return sections_; }
  bool is_64() const { return is_64_; }
  bool big_endian() const { return big_endian_; }
  uint16_t type() const { return e_type_; }
  uint16_t machine() const { return e_machine_; }

  // `size --common` for the last successful run (see ElfReader::CommonSize).
  Expected<uint64_t> CommonSize(std::vector<std::string>* messages);

 private:
  // elf_reader.cc: the ELF header, the section and program header tables.
  bool ReadHeaders();
  bool ReadShdr(uint64_t offset, ProbeShdr* out);
  bool ReadProgramHeaders();

  // elf_sections.cc: bfd_section_from_shdr and friends.
  bool FromShdr(uint32_t index);
  bool FromShdrSwitch(uint32_t index, std::string_view name);
  bool FromShdrReloc(uint32_t index, std::string_view name);
  bool FromShdrStrtab(uint32_t index, std::string_view name);
  bool FromShdrSymtab(uint32_t index, std::string_view name, bool dynamic);
  bool FromShdrDefault(uint32_t index, std::string_view name);
  bool MakeSection(uint32_t index, std::string_view name);
  // bfd_elf_string_from_elf_section: nullopt is BFD's NULL.
  std::optional<std::string_view> StringAt(uint32_t shindex, uint32_t strindex);
  bool LoadStrings(uint32_t shindex);
  std::string SectionLabel(int32_t section) const;  // %pA
  std::string NameOrNull(uint32_t shindex, uint32_t strindex);

  // elf_notes.cc: the GNU property notes BFD parses (only for messages).
  void ParseNotes(uint64_t offset, uint64_t size, uint64_t align);
  bool ParseGnuProperties(uint64_t desc, uint64_t descsz);

  // elf_groups.cc: section groups and _bfd_elf_setup_sections.
  bool SetupGroup(uint32_t index, int32_t section);
  bool ReadGroups();
  std::optional<std::string_view> GroupSignature(uint32_t group_index);
  bool SetupSections();
  // Reads symbol `number` of `symtab` (Elf_Internal_Sym fields size needs).
  struct Symbol {
    uint32_t name = 0;
    uint64_t size = 0;
    uint8_t info = 0;
    uint32_t shndx = 0;
  };
  bool ReadSymbols(const ProbeShdr& symtab, uint64_t first, uint64_t count,
                   std::vector<Symbol>* out);

  void Say(std::string message);
  bool Readable(uint64_t offset, uint64_t length) const;
  uint64_t Word(uint64_t offset) const;  // an ELF-class word, unchecked

  // Input and target of the current run.
  std::span<const uint8_t> data_;
  uint64_t nominal_size_ = 0;
  std::optional<uint64_t> element_size_;
  bool recognising_ = true;
  std::string_view diag_;
  ElfTarget target_;
  bool* read_only_ = nullptr;
  ByteReader reader_{std::span<const uint8_t>()};

  // The ELF header as BFD rewrote it (extended numbering resolved).
  bool is_64_ = false;
  bool big_endian_ = false;
  uint16_t e_type_ = 0;
  uint16_t e_machine_ = 0;
  uint64_t e_phoff_ = 0;
  uint64_t e_shoff_ = 0;
  uint32_t e_phnum_ = 0;
  uint32_t e_shnum_ = 0;
  uint32_t e_shstrndx_ = 0;
  uint16_t e_shentsize_ = 0;
  uint32_t ehdr_size_ = 0;
  uint32_t shdr_size_ = 0;
  uint32_t sym_size_ = 0;

  // BFD's elf_obj_tdata.
  std::vector<ProbeShdr> shdrs_;
  std::vector<ProbeSection> sections_;
  uint32_t onesymtab_ = 0;
  uint32_t dynsymtab_ = 0;
  ProbeShdr symtab_hdr_;  // elf_symtab_hdr: a copy of the registered .symtab
  // elf_symtab_shndx_list, newest first: (section index, header copy).
  std::vector<std::pair<uint32_t, ProbeShdr>> shndx_list_;
  bool has_syms_ = false;
  // Section groups: num_group is 0 before they are read, -1 when none.
  int64_t num_group_ = 0;
  std::vector<int32_t> group_sect_;  // group_sect_ptr: shdr index or -1
  std::vector<GroupEntry> group_entries_;
  uint32_t group_search_offset_ = 0;

  std::vector<std::string> messages_;
  std::vector<Symbol> symbols_;  // CommonSize scratch
};

}  // namespace tileprof::elf
