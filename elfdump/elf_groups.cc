// ElfProbe, third part: section groups (bfd/elf.c setup_group,
// group_signature, _bfd_elf_setup_sections) and the symbol reads they and
// `size --common` need.
//
// Groups matter to `size` in three ways: creating the first SHF_GROUP
// section creates every valid .group section at once (the hoisting of spec
// §1.4), a group whose signature symbol cannot be read rejects the file, and
// after all sections exist BFD rejects a file with a .group that no member
// joined or with SHF_LINK_ORDER pointing at a header that has no section.
#include <fmt/format.h>

#include "common/checked.h"
#include "elfdump/elf_constants.h"
#include "elfdump/elf_probe.h"

namespace tileprof::elf {
namespace {

constexpr uint32_t kGroupEntrySize = 4;

bool IsValidGroup(const ProbeShdr& h, uint64_t min_size) {
  return h.type == kShtGroup && h.size >= min_size && h.entsize == kGroupEntrySize &&
         h.size % kGroupEntrySize == 0;
}

}  // namespace

bool ElfProbe::ReadGroups() {
  int64_t count = 0;
  for (const ProbeShdr& h : shdrs_)
    if (IsValidGroup(h, 2 * kGroupEntrySize)) ++count;
  if (count == 0) {
    num_group_ = -1;
    return true;
  }
  num_group_ = count;
  group_sect_.assign(static_cast<size_t>(count), -1);
  int64_t found = 0;
  for (uint32_t j = 0; j < shdrs_.size(); ++j) {
    if (!IsValidGroup(shdrs_[j], 2 * kGroupEntrySize) || found >= count) continue;
    // The group section itself is created here: this is the hoisting.
    if (!FromShdr(j)) return false;
    group_sect_[found++] = static_cast<int32_t>(j);
    ProbeShdr& g = shdrs_[j];
    g.group_loaded = false;
    if (!CheckedMul(g.size, 2) || (nominal_size_ != 0 && g.size > nominal_size_) ||
        !Readable(g.offset, g.size)) {
      Say(fmt::format("{}: invalid size field in group section header: {}", diag_, AltHex(g.size)));
      --found;
      continue;
    }
    // Entries are translated from the last to the first, the flag word last.
    const uint64_t entries = g.size / kGroupEntrySize;
    const uint32_t first = static_cast<uint32_t>(group_entries_.size());
    group_entries_.resize(first + entries);
    for (uint64_t k = entries; k-- > 0;) {
      uint32_t idx = static_cast<uint32_t>(reader_.UncheckedWord(g.offset + 4 * k, 4));
      if (k == 0) {
        int32_t own = shdrs_[j].section;
        if (own >= 0 && (idx & kGrpComdat) != 0) sections_[own].flags |= kSecLinkOnce;
        break;
      }
      GroupEntry& entry = group_entries_[first + k];
      if (idx < shdrs_.size()) {
        // PR 23199: members of a group are SHF_GROUP even if the tool forgot.
        shdrs_[idx].flags |= kShfGroup;
        entry = {static_cast<int32_t>(idx), shdrs_[idx].generation};
      }
      if (idx >= shdrs_.size() || shdrs_[idx].type == kShtGroup) {
        Say(fmt::format("{}: invalid entry in SHT_GROUP section [{}]", diag_, j));
        entry = GroupEntry{};
      }
    }
    shdrs_[j].group_loaded = true;
    shdrs_[j].group_first = first;
  }
  if (found != count) {
    num_group_ = found;
    if (found == 0) {
      group_sect_.clear();
      num_group_ = -1;
      Say(fmt::format("{}: no valid group sections found", diag_));
    }
  }
  return true;
}

bool ElfProbe::SetupGroup(uint32_t index, int32_t section) {
  if (num_group_ == 0 && !ReadGroups()) return false;
  for (int64_t j = 0; num_group_ > 0 && j < num_group_; ++j) {
    const int64_t gi = (j + group_search_offset_) % num_group_;
    const int32_t g = group_sect_[gi];
    if (g < 0) continue;
    const ProbeShdr& gh = shdrs_[g];
    if (!gh.group_loaded || gh.size < 4) {
      Say(fmt::format("{}: group section '{}' has no contents", diag_, SectionLabel(gh.section)));
      group_sect_[gi] = -1;
      return false;
    }
    const uint64_t n_elt = gh.size / kGroupEntrySize;
    const uint32_t first = gh.group_first;
    if (first + n_elt > group_entries_.size()) continue;  // cannot happen; keeps reads in bounds
    bool member = false;
    for (uint64_t e = 1; e < n_elt && !member; ++e) {
      const GroupEntry& entry = group_entries_[first + e];
      member = entry.shndx == static_cast<int32_t>(index) &&
               entry.generation == shdrs_[index].generation;
    }
    if (!member) continue;
    // Join the circular list of a member created earlier, or start one with
    // the group's signature as its name.
    int32_t earlier = -1;
    for (uint64_t e = 1; e < n_elt && earlier < 0; ++e) {
      const GroupEntry& entry = group_entries_[first + e];
      if (entry.shndx < 0 || entry.generation != shdrs_[entry.shndx].generation) continue;
      int32_t s = shdrs_[entry.shndx].section;
      if (s >= 0 && sections_[s].next_in_group >= 0) earlier = s;
    }
    if (earlier >= 0) {
      sections_[section].has_group_name = sections_[earlier].has_group_name;
      sections_[section].group_name = sections_[earlier].group_name;
      sections_[section].next_in_group = sections_[earlier].next_in_group;
      sections_[earlier].next_in_group = section;
    } else {
      auto name = GroupSignature(static_cast<uint32_t>(g));
      if (!name) return false;
      sections_[section].has_group_name = true;
      sections_[section].group_name = *name;
      sections_[section].next_in_group = section;
    }
    if (int32_t own = shdrs_[g].section; own >= 0) sections_[own].next_in_group = section;
    group_search_offset_ = static_cast<uint32_t>(gi);
    break;
  }
  if (!sections_[section].has_group_name)
    Say(fmt::format("{}: no group info for section '{}'", diag_, SectionLabel(section)));
  return true;
}

std::optional<std::string_view> ElfProbe::GroupSignature(uint32_t group_index) {
  const ProbeShdr g = shdrs_[group_index];
  if (g.link >= shdrs_.size()) return std::nullopt;
  if (shdrs_[g.link].type != kShtSymtab || !FromShdr(g.link)) return std::nullopt;
  // BFD reads from its registered .symtab copy, whichever table sh_link named.
  const ProbeShdr symtab = symtab_hdr_;
  if (!ReadSymbols(symtab, g.info, 1, &symbols_)) return std::nullopt;
  const Symbol& sym = symbols_[0];
  uint32_t strindex = sym.name;
  uint32_t strtab = symtab.link;
  if (strindex == 0 && (sym.info & 0xf) == kSttSection && sym.shndx < shdrs_.size()) {
    strindex = shdrs_[sym.shndx].name;
    strtab = e_shstrndx_;
  }
  auto name = StringAt(strtab, strindex);
  return name ? *name : std::string_view("(null)");
}

bool ElfProbe::ReadSymbols(const ProbeShdr& symtab, uint64_t first, uint64_t count,
                           std::vector<Symbol>* out) {
  // The SHT_SYMTAB_SHNDX table BFD pairs with its .symtab copy.
  const ProbeShdr* shndx = nullptr;
  if (!shndx_list_.empty()) {
    for (const auto& entry : shndx_list_) {
      if (entry.second.link < shdrs_.size() && onesymtab_ != 0 && entry.second.link == onesymtab_) {
        shndx = &entry.second;
        break;
      }
    }
    if (shndx == nullptr) shndx = &shndx_list_.front().second;
  }
  auto bytes = CheckedMul(count, sym_size_);
  auto start = CheckedMul(first, sym_size_);
  auto pos = start ? CheckedAdd(symtab.offset, *start) : std::nullopt;
  if (!bytes || !pos || !Readable(*pos, *bytes)) return false;
  std::optional<uint64_t> shndx_pos;
  if (shndx != nullptr && shndx->size != 0) {
    auto shndx_start = CheckedMul(first, 4);
    shndx_pos = shndx_start ? CheckedAdd(shndx->offset, *shndx_start) : std::nullopt;
    if (!shndx_pos || !Readable(*shndx_pos, count * 4)) return false;
  }
  out->clear();
  out->reserve(count);
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t at = *pos + k * sym_size_;
    Symbol sym;
    sym.name = static_cast<uint32_t>(reader_.UncheckedWord(at, 4));
    if (is_64_) {
      sym.info = data_[at + 4];
      sym.shndx = static_cast<uint32_t>(reader_.UncheckedWord(at + 6, 2));
      sym.size = reader_.UncheckedWord(at + 16, 8);
    } else {
      sym.size = reader_.UncheckedWord(at + 8, 4);
      sym.info = data_[at + 12];
      sym.shndx = static_cast<uint32_t>(reader_.UncheckedWord(at + 14, 2));
    }
    if (sym.shndx == kShnXindex) {
      if (!shndx_pos) {
        Say(fmt::format("{} symbol number {} references nonexistent SHT_SYMTAB_SHNDX section",
                        diag_, first + k));
        return false;
      }
      sym.shndx = static_cast<uint32_t>(reader_.UncheckedWord(*shndx_pos + 4 * k, 4));
    }
    out->push_back(sym);
  }
  return true;
}

bool ElfProbe::SetupSections() {
  bool result = true;
  for (size_t i = 0; i < sections_.size(); ++i) {
    const ProbeSection& s = sections_[i];
    if ((s.hdr_flags & kShfLinkOrder) != 0) {
      uint32_t linked = s.hdr_link;
      if (linked != 0 && (linked >= shdrs_.size() || shdrs_[linked].section < 0)) {
        Say(fmt::format("{}: sh_link [{}] in section `{}' is incorrect", diag_, linked,
                        SectionLabel(static_cast<int32_t>(i))));
        result = false;
      }
    } else if (s.hdr_type == kShtGroup && s.next_in_group < 0) {
      Say(fmt::format("{}: SHT_GROUP section [index {}] has no SHF_GROUP sections", diag_,
                      s.shndx));
      result = false;
    }
  }
  if (num_group_ == -1) return result;
  for (int64_t i = 0; i < num_group_; ++i) {
    const int32_t g = group_sect_[i];
    if (g < 0 || shdrs_[g].section < 0 || !shdrs_[g].group_loaded) {
      Say(fmt::format("{}: section group entry number {} is corrupt", diag_, i));
      result = false;
      continue;
    }
    const ProbeShdr& gh = shdrs_[g];
    const uint64_t n_elt = gh.size / kGroupEntrySize;
    for (uint64_t e = 1; e < n_elt && gh.group_first + e < group_entries_.size(); ++e) {
      const GroupEntry& entry = group_entries_[gh.group_first + e];
      if (entry.shndx < 0) continue;
      const ProbeShdr& member = shdrs_[entry.shndx];
      bool has_section = entry.generation == member.generation && member.section >= 0;
      if (has_section || member.type == kShtRela || member.type == kShtRel) continue;
      Say(fmt::format("{}: unknown type [{}] section `{}' in group [{}]", diag_,
                      AltHex(member.type), NameOrNull(e_shstrndx_, member.name),
                      SectionLabel(gh.section)));
      result = false;
    }
  }
  return result;
}

Expected<uint64_t> ElfProbe::CommonSize(std::vector<std::string>* messages) {
  // calculate_common_size: only for objects that are neither executables
  // nor shared libraries and have a symbol table.
  if (!has_syms_ || e_type_ == kEtExec || e_type_ == kEtDyn) return uint64_t{0};
  recognising_ = false;
  messages_.clear();
  const ProbeShdr symtab = symtab_hdr_;
  const uint64_t count = symtab.size / sym_size_;
  // _bfd_elf_get_symtab_upper_bound: one pointer per symbol must not
  // exceed the file size.
  if (count != 0 && nominal_size_ != 0 && count * 8 > nominal_size_)
    return MakeError("file truncated");
  if (count == 0) return uint64_t{0};
  if (!ReadSymbols(symtab, 0, count, &symbols_)) {
    messages->insert(messages->end(), messages_.begin(), messages_.end());
    // The error BFD last recorded: a read starting past a member's end is
    // an "invalid operation", a short read "file truncated"; a symbol that
    // needs a missing SHT_SYMTAB_SHNDX leaves the error of the format probe.
    if (!messages_.empty())
      return Error(target_.x86_64 && is_64_ ? "file format not recognized"
                                            : "file in wrong format");
    if (element_size_ && symtab.offset >= *element_size_) return MakeError("invalid operation");
    return MakeError("file truncated");
  }
  uint64_t total = 0;
  for (size_t k = 1; k < symbols_.size(); ++k) {
    const Symbol& sym = symbols_[k];
    // elf_slurp_symbol_table names every symbol (bfd_elf_sym_name), which
    // is where bad string offsets are reported.
    uint32_t strindex = sym.name;
    uint32_t strtab = symtab.link;
    if (strindex == 0 && (sym.info & 0xf) == kSttSection && sym.shndx < shdrs_.size()) {
      strindex = shdrs_[sym.shndx].name;
      strtab = e_shstrndx_;
    }
    (void)StringAt(strtab, strindex);
    if ((sym.info & 0xf) == kSttSection) continue;  // BSF_SECTION_SYM
    bool common = sym.shndx == kShnCommon || (target_.x86_64 && sym.shndx == kShnX8664Lcommon);
    if (common) total += sym.size;
  }
  messages->insert(messages->end(), messages_.begin(), messages_.end());
  return total;
}

}  // namespace tileprof::elf
