// ElfProbe, second part: which section headers become BFD sections, in which
// order, with which flags (binutils 2.40 bfd/elf.c bfd_section_from_shdr and
// _bfd_elf_make_section_from_shdr; spec size-sysv.md §1.3 and §1.4).
//
// Worked example of the creation order, an LLVM object whose .group sections
// are interleaved with their members:
//   [1] .text  [2] .group(a)  [3] .text.a (SHF_GROUP)  [4] .group(b)  [5] .text.b
// Creating [3] (the first SHF_GROUP section) reads every group and creates
// [4] at once, so the rows are .text, .group, .text.a, .group, .text.b with
// the second .group listed before .text.b although it would come anyway —
// and before [3]'s successors when GCC would have put it first.
#include <cstring>

#include <fmt/format.h>

#include "common/checked.h"
#include "elfdump/elf_constants.h"
#include "elfdump/elf_probe.h"

namespace tileprof::elf {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The section types that become plain sections (the first case of the
// switch in bfd_section_from_shdr).
bool IsPlainType(uint32_t type) {
  switch (type) {
    case kShtProgbits:
    case kShtNobits:
    case kShtHash:
    case kShtNote:
    case kShtInitArray:
    case kShtFiniArray:
    case kShtPreinitArray:
    case kShtGnuLiblist:
    case kShtGnuHash:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string ElfProbe::SectionLabel(int32_t section) const {
  if (section < 0) return "(null)";
  const ProbeSection& s = sections_[section];
  // %pA adds the group signature of a grouped, non-group section.
  if (s.next_in_group >= 0 && (s.flags & kSecGroup) == 0 && s.has_group_name)
    return fmt::format("{}[{}]", s.name, s.group_name);
  return std::string(s.name);
}

std::string ElfProbe::NameOrNull(uint32_t shindex, uint32_t strindex) {
  auto name = StringAt(shindex, strindex);
  return name ? std::string(*name) : std::string("(null)");
}

bool ElfProbe::LoadStrings(uint32_t shindex) {
  ProbeShdr& h = shdrs_[shindex];
  if (h.strings_loaded) return true;
  // bfd_elf_get_str_section: a failed read zeroes sh_size so that it is not
  // retried; that rewritten size is what later lookups see.
  if (h.size + 1 <= 1 || (nominal_size_ != 0 && h.size > nominal_size_) ||
      !Readable(h.offset, h.size)) {
    h.size = 0;
    return false;
  }
  h.strings_loaded = true;
  return true;
}

std::optional<std::string_view> ElfProbe::StringAt(uint32_t shindex, uint32_t strindex) {
  if (strindex == 0) return std::string_view();
  if (shindex >= shdrs_.size()) return std::nullopt;
  ProbeShdr& h = shdrs_[shindex];
  if (h.group_loaded) return std::nullopt;  // PR 24273: contents are not strings
  if (!h.strings_loaded) {
    if (h.type != kShtStrtab && h.type < kShtLoos) {
      Say(fmt::format("{}: attempt to load strings from a non-string section (number {})", diag_,
                      shindex));
      return std::nullopt;
    }
    if (!LoadStrings(shindex)) return std::nullopt;
  } else if (h.size == 0 || data_[h.offset + h.size - 1] != 0) {
    // PR 24273: a table loaded earlier must end in NUL to be reused.
    return std::nullopt;
  }
  if (strindex >= h.size) {
    std::string table = shindex == e_shstrndx_ && strindex == h.name
                            ? std::string(".shstrtab")
                            : NameOrNull(e_shstrndx_, h.name);
    Say(fmt::format("{}: invalid string offset {} >= {} for section `{}'", diag_, strindex, h.size,
                    table));
    return std::nullopt;
  }
  // BFD appends a NUL after the table, so the string ends at the table's end
  // at the latest.
  const uint8_t* begin = data_.data() + h.offset + strindex;
  uint64_t max = h.size - strindex;
  const void* nul = std::memchr(begin, 0, max);
  uint64_t length = nul ? static_cast<const uint8_t*>(nul) - begin : max;
  return std::string_view(reinterpret_cast<const char*>(begin), length);
}

bool ElfProbe::FromShdr(uint32_t index) {
  if (index >= shdrs_.size()) return false;
  // PR 17512: a loop of sh_link / sh_info references. This guard also bounds
  // the recursion depth by the number of section headers.
  if (shdrs_[index].being_created) {
    Say(fmt::format("{}: warning: loop in section dependencies detected", diag_));
    return false;
  }
  shdrs_[index].being_created = true;
  auto name = StringAt(e_shstrndx_, shdrs_[index].name);
  bool ok = name && FromShdrSwitch(index, *name);
  shdrs_[index].being_created = false;
  return ok;
}

bool ElfProbe::FromShdrSwitch(uint32_t index, std::string_view name) {
  const uint32_t type = shdrs_[index].type;
  if (type == kShtNull || type == kShtShlib) return true;
  if (IsPlainType(type)) return MakeSection(index, name);
  switch (type) {
    case kShtDynamic: {
      if (!MakeSection(index, name)) return false;
      ProbeShdr& h = shdrs_[index];
      if (h.link > shdrs_.size()) {
        return target_.arch_i386 && (h.link == kShnLoreserve || h.link == kShnAfter);
      }
      if (h.link == shdrs_.size()) return false;  // BFD would read past its table
      if (shdrs_[h.link].type != kShtStrtab) {
        // hpux11: take the string table of .dynsym instead.
        if (dynsymtab_ != 0) {
          h.link = shdrs_[dynsymtab_].link;
        } else {
          for (uint32_t i = 1; i < shdrs_.size(); ++i) {
            if (shdrs_[i].type == kShtDynsym) {
              h.link = shdrs_[i].link;
              break;
            }
          }
        }
      }
      return true;
    }
    case kShtSymtab:
      return FromShdrSymtab(index, name, false);
    case kShtDynsym:
      return FromShdrSymtab(index, name, true);
    case kShtSymtabShndx: {
      for (const auto& entry : shndx_list_)
        if (entry.first == index) return true;
      shndx_list_.insert(shndx_list_.begin(), {index, shdrs_[index]});
      ++shdrs_[index].generation;
      return true;
    }
    case kShtStrtab:
      return FromShdrStrtab(index, name);
    case kShtRel:
    case kShtRela:
    case kShtRelr:
      return FromShdrReloc(index, name);
    case kShtGnuVerdef:
    case kShtGnuVerneed:
      return MakeSection(index, name);
    case kShtGnuVersym:
      return shdrs_[index].entsize == 2 && MakeSection(index, name);
    case kShtGroup: {
      const ProbeShdr& h = shdrs_[index];
      if (!(h.size >= 4 && h.entsize == 4 && h.size % 4 == 0)) return false;
      return MakeSection(index, name);
    }
    default:
      return FromShdrDefault(index, name);
  }
}

bool ElfProbe::FromShdrSymtab(uint32_t index, std::string_view name, bool dynamic) {
  uint32_t& registered = dynamic ? dynsymtab_ : onesymtab_;
  if (registered == index) return true;
  ProbeShdr& h = shdrs_[index];
  if (h.entsize != sym_size_) return false;
  if (uint64_t{h.info} * h.entsize > h.size) {
    if (h.size != 0) return false;
    // "Some assemblers erroneously set sh_info to one with a zero sh_size":
    // BFD fixes the header and does not register the table this time.
    h.info = 0;
    return true;
  }
  if (registered != 0) {
    Say(
        fmt::format("{}: warning: multiple {}symbol tables detected - ignoring the table in "
                    "section {}",
                    diag_, dynamic ? "dynamic " : "", index));
    return true;
  }
  registered = index;
  ++h.generation;  // elf_elfsections[index] now points at BFD's copy
  has_syms_ = true;
  if (dynamic) return MakeSection(index, name);
  symtab_hdr_ = h;
  // An allocated .symtab of a shared object is also a section.
  if ((h.flags & kShfAlloc) != 0 && e_type_ == kEtDyn && !MakeSection(index, name)) return false;
  for (const auto& entry : shndx_list_)
    if (entry.second.link == index) return true;
  // Look for the SHT_SYMTAB_SHNDX that belongs to this table, most likely
  // the next header.
  uint32_t found = index;
  for (uint32_t i = index + 1; i < shdrs_.size() && found == index; ++i)
    if (shdrs_[i].type == kShtSymtabShndx && shdrs_[i].link == index) found = i;
  for (uint32_t i = 1; i < index && found == index; ++i)
    if (shdrs_[i].type == kShtSymtabShndx && shdrs_[i].link == index) found = i;
  if (found != index) return FromShdr(found);
  return true;
}

bool ElfProbe::FromShdrStrtab(uint32_t index, std::string_view name) {
  if (shdrs_[index].section >= 0) return true;
  if (e_shstrndx_ == index) {
    ++shdrs_[index].generation;
    return true;
  }
  // Note: with no .symtab yet, onesymtab_ is 0 and section 0's sh_link is
  // compared, exactly as BFD does.
  if (shdrs_[onesymtab_].link == index) {
    ++shdrs_[index].generation;
    return true;
  }
  if (shdrs_[dynsymtab_].link == index) {
    ++shdrs_[index].generation;
    return MakeSection(index, name);
  }
  // A string table met before its symbol table: process the headers that
  // link to it first, to learn whether it is .strtab (hidden) or .dynstr.
  if (onesymtab_ == 0 || dynsymtab_ == 0) {
    for (uint32_t i = 1; i < shdrs_.size(); ++i) {
      if (shdrs_[i].link != index) continue;
      if (i == index) return false;
      if (!FromShdr(i)) return false;
      if (onesymtab_ == i) {
        ++shdrs_[index].generation;
        return true;
      }
      if (dynsymtab_ == i) {
        ++shdrs_[index].generation;
        return MakeSection(index, name);
      }
    }
  }
  return MakeSection(index, name);
}

bool ElfProbe::FromShdrReloc(uint32_t index, std::string_view name) {
  const ProbeShdr h = shdrs_[index];
  uint64_t want = h.type == kShtRel    ? (is_64_ ? 16 : 8)
                  : h.type == kShtRela ? (is_64_ ? 24 : 12)
                                       : (is_64_ ? 8 : 4);
  if (h.entsize != want) return false;
  if (h.link >= shdrs_.size()) {
    Say(fmt::format("{}: invalid link {} for reloc section {} (index {})", diag_, h.link, name,
                    index));
    return MakeSection(index, name);
  }
  uint32_t link_type = shdrs_[h.link].type;
  if ((link_type == kShtSymtab || link_type == kShtDynsym) && !FromShdr(h.link)) return false;
  // Not a reloc section for BFD: listed as a normal section.
  bool exec_or_dyn = e_type_ == kEtExec || e_type_ == kEtDyn;
  if ((exec_or_dyn && (h.flags & kShfAlloc) != 0) || h.type == kShtRelr || h.link == 0 ||
      h.link != onesymtab_ || h.info == 0 || h.info >= shdrs_.size() ||
      shdrs_[h.info].type == kShtRel || shdrs_[h.info].type == kShtRela)
    return MakeSection(index, name);
  // The target is created first (maybe out of index order); the reloc
  // section itself never becomes a BFD section.
  if (!FromShdr(h.info)) return false;
  int32_t target = shdrs_[h.info].section;
  if (target < 0) return false;
  bool rela = h.type == kShtRela;
  bool& slot = rela ? sections_[target].has_rela : sections_[target].has_rel;
  if (slot) {
    // A second reloc section for the same target: BFD keeps a RELA one as a
    // "secondary reloc" section (listed) and ignores a REL one.
    bool kept = false;
    if (rela) {
      shdrs_[index].type = kShtSecondaryReloc;
      kept = MakeSection(index, name);
    }
    if (!kept) {
      Say(
          fmt::format("{}: warning: secondary relocation section '{}' for section {} found - "
                      "ignoring",
                      diag_, name, SectionLabel(target)));
    }
    return true;
  }
  slot = true;
  ++shdrs_[index].generation;
  sections_[target].flags |= kSecReloc;
  return true;
}

bool ElfProbe::FromShdrDefault(uint32_t index, std::string_view name) {
  const uint32_t type = shdrs_[index].type;
  const uint64_t flags = shdrs_[index].flags;
  if (type == kShtGnuAttributes) {
    if (!MakeSection(index, name)) return false;
    // _bfd_elf_parse_attributes: only the size check can be heard from.
    const ProbeShdr& h = shdrs_[index];
    if (h.size != 0 && nominal_size_ != 0 && h.size > nominal_size_) {
      Say(fmt::format("{}: error: attribute section '{}' too big: {}", diag_,
                      SectionLabel(h.section), AltHex(h.size)));
    }
    return true;
  }
  // The backend hook: the generic targets make a section of anything; the
  // x86-64 backend only of SHT_X86_64_UNWIND; i386 and iamcu use the default.
  bool backend_takes = target_.generic || !target_.x86_64 || type == kShtX8664Unwind;
  if (backend_takes && MakeSection(index, name)) return true;
  if (type >= kShtLouser) {
    if ((flags & kShfAlloc) == 0) return MakeSection(index, name);
  } else if (type >= kShtLoproc) {
    // processor-specific and unknown to this backend
  } else if (type >= kShtLoos) {
    if ((flags & kShfOsNonconforming) == 0) return MakeSection(index, name);
  }
  Say(fmt::format("{}: unknown type [{}] section `{}'", diag_, AltHex(type), name));
  return false;
}

bool ElfProbe::MakeSection(uint32_t index, std::string_view name) {
  if (shdrs_[index].section >= 0) return true;
  const int32_t id = static_cast<int32_t>(sections_.size());
  sections_.emplace_back();
  shdrs_[index].section = id;
  {
    const ProbeShdr& h = shdrs_[index];
    ProbeSection& s = sections_[id];
    s.shndx = index;
    s.name = name;
    s.hdr_type = h.type;
    s.hdr_flags = h.flags;
    s.hdr_link = h.link;
  }
  const ProbeShdr h = shdrs_[index];
  uint32_t flags = 0;
  if (h.type != kShtNobits) flags |= kSecHasContents;
  if (h.type == kShtGroup) flags |= kSecGroup;
  if ((h.flags & kShfAlloc) != 0) {
    flags |= kSecAlloc;
    if (h.type != kShtNobits) flags |= kSecLoad;
  }
  if ((h.flags & kShfWrite) == 0) flags |= kSecReadOnly;
  if ((h.flags & kShfExecinstr) != 0) {
    flags |= kSecCode;
  } else if ((flags & kSecLoad) != 0) {
    flags |= kSecData;
  }
  if ((h.flags & kShfMerge) != 0) flags |= kSecMerge;
  if ((h.flags & kShfStrings) != 0) flags |= kSecStrings;
  if ((h.flags & kShfGroup) != 0 && !SetupGroup(index, id)) return false;
  if ((h.flags & kShfTls) != 0) flags |= kSecThreadLocal;
  if ((h.flags & kShfExclude) != 0) flags |= kSecExclude;
  if ((flags & kSecAlloc) == 0 && StartsWith(name, ".")) {
    // Debugging sections are recognised by name only.
    if (StartsWith(name, ".debug") || StartsWith(name, ".gnu.debuglto_.debug_") ||
        StartsWith(name, ".gnu.linkonce.wi.") || StartsWith(name, ".zdebug")) {
      flags |= kSecDebugging | kSecElfOctets;
    } else if (StartsWith(name, ".gnu.build.attributes") || StartsWith(name, ".note.gnu")) {
      flags |= kSecElfOctets;
    } else if (StartsWith(name, ".line") || StartsWith(name, ".stab") || name == ".gdb_index") {
      flags |= kSecDebugging;
    }
  }
  ProbeSection& s = sections_[id];
  s.size = h.size;
  s.vma = h.addr;
  // bfd_set_section_alignment refuses a power of 63 or more.
  uint64_t lowest_bit = h.addralign & (~h.addralign + 1);
  if (lowest_bit >= (uint64_t{1} << 63)) return false;
  if (StartsWith(name, ".gnu.linkonce") && s.next_in_group < 0) flags |= kSecLinkOnce;
  s.flags = flags;
  // Notes are parsed at once, so their contents must be readable.
  if (h.type == kShtNote && h.size != 0) {
    if (nominal_size_ != 0 && (h.offset > nominal_size_ || h.size > nominal_size_ - h.offset)) {
      Say(fmt::format("error: {}({}) is too large ({} bytes)", diag_, SectionLabel(id),
                      AltHex(h.size)));
      return false;
    }
    if (!Readable(h.offset, h.size)) return false;
    ParseNotes(h.offset, h.size, h.addralign);
  }
  return true;
}

}  // namespace tileprof::elf
