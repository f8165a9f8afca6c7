// The per-tile ELF archive writer (see tile_archive.h and
// ../shared/spec/size-sysv.md sections 5.5, 6 and 7).
//
// Two passes over the tiles: the first validates every name and computes each
// member's layout and the archive's exact size, so that nothing is allocated
// for an input that fails (a 4 GiB zero-filled section is rejected before a
// byte is written); the second fills one preallocated, zero-initialised string
// in place. Zero-filled PROGBITS contents and all padding come from that
// initialisation.
//
// Member object layout (as ../shared/corpus/elf/mkelf.py, accepted silently by
// GNU size, readelf, objdump and llvm-size):
//   ELF header (52) | contents of PROGBITS sections, each 4-aligned |
//   .shstrtab | section header table, 8-aligned:
//   [0] null, [1..n] the tile's sections, [n+1] .shstrtab (e_shstrndx).
#include "elfdump/tile_archive.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <limits>
#include <string_view>

#include "common/checked.h"
#include "common/file.h"
#include "elfdump/elf_constants.h"

namespace tileprof::elf {
namespace {

constexpr uint64_t kElf32Max = std::numeric_limits<uint32_t>::max();
constexpr std::string_view kTextName = ".text";
constexpr std::string_view kShstrtabName = ".shstrtab";
constexpr size_t kMaxShortMemberName = 15;  // longer names go through `//`
constexpr size_t kSectionAlign = 4;
constexpr size_t kHeaderTableAlign = 8;
// e_shnum must stay below SHN_LORESERVE without extended numbering, and on
// top of the tile's sections come index 0, .shstrtab and possibly a `.text`.
constexpr uint64_t kMaxTileSections = kWriterShnLoreserve - 4;

constexpr uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// The sections a member actually gets, after the layout is applied.
struct TileView {
  bool lead_text = false;  // emit a `.text` of lead_text_size first
  uint64_t lead_text_size = 0;
  std::span<const TileSection> given;  // written after it, as given
  bool given_unlisted = false;         // ... or all as SectionKind::kUnlisted
};

template <typename Fn>
void ForEachSection(const TileView& view, Fn&& fn) {
  if (view.lead_text) fn(kTextName, view.lead_text_size, SectionKind::kCode);
  for (const TileSection& s : view.given)
    fn(std::string_view(s.name), s.size, view.given_unlisted ? SectionKind::kUnlisted : s.kind);
}

bool HasContents(SectionKind kind, bool zero_filled_progbits) {
  return zero_filled_progbits && kind != SectionKind::kZeroInit && kind != SectionKind::kUnlisted;
}

uint32_t SectionFlags(SectionKind kind) {
  switch (kind) {
    case SectionKind::kCode:
      return kWriterShfAlloc | kWriterShfExecinstr;
    case SectionKind::kData:
      return kWriterShfAlloc | kWriterShfWrite;
    case SectionKind::kReadOnlyData:
      return kWriterShfAlloc;
    case SectionKind::kZeroInit:
      return kWriterShfAlloc | kWriterShfWrite;
    case SectionKind::kUnlisted:
      return kWriterShfWrite;
  }
  return kWriterShfAlloc;
}

// `size -A` prints names raw and awk splits on whitespace, so a blank or
// control byte would shift or split the columns users extract.
bool IsBadNameByte(char c) {
  auto u = static_cast<unsigned char>(c);
  return u <= 0x20 || u == 0x7f;
}

// Why a section name is refused, or an empty string.
std::string SectionNameProblem(std::string_view name) {
  if (name.empty()) return "name is empty";
  for (size_t i = 0; i < name.size(); ++i) {
    if (IsBadNameByte(name[i])) {
      return fmt::format("name has a blank or control byte 0x{:02x} at position {}",
                         static_cast<unsigned char>(name[i]), i);
    }
  }
  // grep's ".text" is "any character, then text"; position 0 has no character
  // before it, so only a `text` from position 1 on would be selected.
  if (name != kTextName && name.find("text", 1) != std::string_view::npos) {
    return "name contains 'text' after another character, so `size -A | grep -e \".text\"` "
           "would select it as well (only '.text' itself may)";
  }
  return {};
}

// The member name pattern split around its `{}`.
struct MemberPattern {
  std::string_view prefix;
  std::string_view suffix;
};

Expected<MemberPattern> ParseMemberPattern(std::string_view pattern) {
  auto fail = [&](std::string_view why) {
    return MakeError("member name pattern '{}': {}", pattern, why);
  };
  size_t hole = pattern.find("{}");
  if (hole == std::string_view::npos || pattern.find("{}", hole + 2) != std::string_view::npos) {
    return fail("must contain '{}' (the tile index) exactly once");
  }
  for (char c : pattern) {
    if (IsBadNameByte(c)) return fail("contains a blank or control byte");
    if (c == '/') return fail("contains '/', which ends a member name in an ar header");
  }
  MemberPattern parts{pattern.substr(0, hole), pattern.substr(hole + 2)};
  // The index digits always separate prefix and suffix, so a name contains
  // `text` exactly when one of the two does.
  if (parts.prefix.find("text") != std::string_view::npos ||
      parts.suffix.find("text") != std::string_view::npos) {
    return fail(
        "contains 'text', so `size -A | grep -e \".text\"` would select every member "
        "header line");
  }
  return parts;
}

// Writes prefix, decimal index, suffix at `out`; returns the length. `out`
// must have room for prefix + 20 + suffix bytes.
size_t FormatMemberName(const MemberPattern& pattern, size_t index, char* out) {
  char* p = out;
  std::memcpy(p, pattern.prefix.data(), pattern.prefix.size());
  p += pattern.prefix.size();
  p = std::to_chars(p, p + 20, index).ptr;
  std::memcpy(p, pattern.suffix.data(), pattern.suffix.size());
  p += pattern.suffix.size();
  return static_cast<size_t>(p - out);
}

// Everything pass 2 needs about one member.
struct MemberPlan {
  TileView view;
  uint64_t long_name_offset = 0;  // into `//`, when the name is long
  uint32_t strtab_offset = 0;     // of .shstrtab inside the object
  uint32_t object_size = 0;
  uint32_t section_count = 0;  // e_shnum: null, the tile's, .shstrtab
  bool long_name = false;
};

// "tile 7 (tile7.o)": where an error is, built only when there is one.
struct TilePlace {
  size_t index;
  std::string_view member_name;
};

std::string Describe(const TilePlace& place) {
  return fmt::format("tile {} ({})", place.index, place.member_name);
}

// A tile's sections: valid, distinct names and a total that fits 64 bits.
struct SectionTotals {
  uint64_t total = 0;
  bool has_text = false;
};
Expected<SectionTotals> CheckSections(const std::vector<TileSection>& sections,
                                      const TilePlace& where) {
  bool has_text = false;
  uint64_t total = 0;
  for (size_t i = 0; i < sections.size(); ++i) {
    const std::string& name = sections[i].name;
    if (std::string problem = SectionNameProblem(name); !problem.empty()) {
      return MakeError("{}: section {} '{}': {}", Describe(where), i, name, problem);
    }
    // Pairwise is fine for the handful of sections a tile has; beyond that
    // the quadratic cost would show, so compare against a sorted copy.
    if (sections.size() <= 64) {
      for (size_t j = 0; j < i; ++j) {
        if (sections[j].name == name) {
          return MakeError("{}: section {} '{}': duplicate name (also section {})", Describe(where),
                           i, name, j);
        }
      }
    }
    has_text = has_text || name == kTextName;
    auto sum = CheckedAdd(total, sections[i].size);
    if (!sum)
      return MakeError("{}: the sum of the section sizes overflows 64 bits", Describe(where));
    total = *sum;
  }
  if (sections.size() > 64) {
    std::vector<std::string_view> names(sections.size());
    for (size_t i = 0; i < sections.size(); ++i) names[i] = sections[i].name;
    std::sort(names.begin(), names.end());
    auto dup = std::adjacent_find(names.begin(), names.end());
    if (dup != names.end())
      return MakeError("{}: section '{}': duplicate name", Describe(where), *dup);
  }

  return SectionTotals{total, has_text};
}

// The object's layout: each section aligned, contents for those that have
// them, the string table and the section headers, all within ELF32.
Status LayOutObject(const TileArchiveOptions& options, const TilePlace& where, MemberPlan& plan) {
  uint64_t offset = kWriterElf32EhdrSize;
  uint64_t strtab_size = 1 + kShstrtabName.size() + 1;  // leading NUL, .shstrtab
  uint64_t count = 0;
  Status status;
  ForEachSection(plan.view, [&](std::string_view name, uint64_t size, SectionKind kind) {
    if (!status) return;
    ++count;
    strtab_size += name.size() + 1;
    if (size > kElf32Max) {
      status = MakeError(
          "{}: section '{}': sh_size {}{} does not fit in ELF32's 32 bits", Describe(where), name,
          size,
          options.layout != TileLayout::kByKind && name == kTextName ? " (the tile's total)" : "");
      return;
    }
    offset = AlignUp(offset, kSectionAlign);
    if (HasContents(kind, options.zero_filled_progbits)) {
      offset += size;
      if (offset > kElf32Max) {
        status = MakeError(
            "{}: section '{}': zero-filled contents end at offset {}, beyond ELF32's 32-bit "
            "offsets",
            Describe(where), name, offset);
      }
    }
  });
  if (!status) return status;
  plan.strtab_offset = static_cast<uint32_t>(offset);  // checked above
  uint64_t end = AlignUp(offset + strtab_size, kHeaderTableAlign) +
                 (count + 2) * uint64_t{kWriterElf32ShdrSize};
  if (end > kElf32Max) {
    return MakeError("{}: the object would be {} bytes, beyond ELF32's 32-bit offsets",
                     Describe(where), end);
  }
  plan.object_size = static_cast<uint32_t>(end);
  plan.section_count = static_cast<uint32_t>(count + 2);
  return {};
}

// Pass 1 for one tile: validates and lays out.
Expected<MemberPlan> PlanMember(const TileImage& tile, const TileArchiveOptions& options,
                                const TilePlace& where) {
  const auto& sections = tile.sections;
  if (sections.size() > kMaxTileSections) {
    return MakeError("{}: {} sections; ELF32 without extended numbering allows at most {}",
                     Describe(where), sections.size(), kMaxTileSections);
  }
  TILEPROF_ASSIGN_OR_RETURN(const SectionTotals totals, CheckSections(sections, where));
  const uint64_t total = totals.total;
  const bool has_text = totals.has_text;
  MemberPlan plan;
  if (options.layout == TileLayout::kTotalInText) {
    plan.view = {true, total, {}};
  } else if (options.layout == TileLayout::kTotalInTextWithBreakdown) {
    if (has_text) {
      return MakeError("{}: section '.text': the name holds the tile's total in this layout",
                       Describe(where));
    }
    plan.view = {true, total, sections, true};
  } else {
    plan.view = {!has_text, 0, sections};
  }

  TILEPROF_RETURN_IF_ERROR(LayOutObject(options, where, plan));
  return plan;
}

void Put16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v & 0xff);
  p[1] = static_cast<char>(v >> 8);
}

void Put32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void PutDecimal(char* p, uint64_t v) { std::to_chars(p, p + 20, v); }

// A 60-byte member header; `name` is the raw ar_name field. Without
// `with_ids`, date, uid, gid and mode stay blank, as GNU ar writes the `//`
// table.
void WriteArHeader(char* p, std::string_view name, uint64_t size, bool with_ids) {
  std::memset(p, ' ', kWriterArHeaderSize);
  std::memcpy(p, name.data(), name.size());  // ar_name, 0..15
  if (with_ids) {
    p[16] = '0';                    // ar_date, 16..27
    p[28] = '0';                    // ar_uid, 28..33
    p[34] = '0';                    // ar_gid, 34..39
    std::memcpy(p + 40, "644", 3);  // ar_mode (octal), 40..47
  }
  PutDecimal(p + 48, size);               // ar_size, 48..57
  std::memcpy(p + 58, kWriterArFmag, 2);  // ar_fmag, 58..59
}

// Pass 2 for one member: the ELF object at `obj` (zero-filled, object_size
// bytes).
void WriteObject(const MemberPlan& plan, bool zero_filled_progbits, char* obj) {
  const uint32_t strtab = plan.strtab_offset;
  const uint32_t section_count = plan.section_count;
  const uint32_t shoff = plan.object_size - section_count * kWriterElf32ShdrSize;

  // ELF header (section 6.1 of the spec); unset bytes stay zero.
  std::memcpy(obj,
              "\x7f"
              "ELF",
              4);                                             // e_ident[EI_MAG0..3]
  obj[4] = static_cast<char>(kWriterElfClass32);              // EI_CLASS
  obj[5] = static_cast<char>(kWriterElfDataLsb);              // EI_DATA
  obj[6] = static_cast<char>(kWriterEvCurrent);               // EI_VERSION
  obj[7] = static_cast<char>(kOsAbiStandalone);               // EI_OSABI
  Put16(obj + 16, kWriterEtRel);                              // e_type
  Put16(obj + 18, kEmGraphcoreIpu);                           // e_machine
  Put32(obj + 20, kWriterEvCurrent);                          // e_version
  Put32(obj + 32, shoff);                                     // e_shoff
  Put16(obj + 40, kWriterElf32EhdrSize);                      // e_ehsize
  Put16(obj + 46, kWriterElf32ShdrSize);                      // e_shentsize
  Put16(obj + 48, static_cast<uint16_t>(section_count));      // e_shnum
  Put16(obj + 50, static_cast<uint16_t>(section_count - 1));  // e_shstrndx

  // Section headers 1..n and their names; header 0 stays zero.
  char* shdr = obj + shoff + kWriterElf32ShdrSize;
  uint32_t name_offset = 1;
  uint64_t offset = kWriterElf32EhdrSize;
  ForEachSection(plan.view, [&](std::string_view name, uint64_t size, SectionKind kind) {
    bool contents = HasContents(kind, zero_filled_progbits);
    offset = AlignUp(offset, kSectionAlign);
    std::memcpy(obj + strtab + name_offset, name.data(), name.size());
    Put32(shdr + 0, name_offset);                                       // sh_name
    Put32(shdr + 4, contents ? kWriterShtProgbits : kWriterShtNobits);  // sh_type
    Put32(shdr + 8, SectionFlags(kind));                                // sh_flags
    Put32(shdr + 16, static_cast<uint32_t>(offset));                    // sh_offset
    Put32(shdr + 20, static_cast<uint32_t>(size));                      // sh_size
    Put32(shdr + 32, kSectionAlign);                                    // sh_addralign
    name_offset += static_cast<uint32_t>(name.size()) + 1;
    if (contents) offset += size;
    shdr += kWriterElf32ShdrSize;
  });
  std::memcpy(obj + strtab + name_offset, kShstrtabName.data(), kShstrtabName.size());
  uint32_t strtab_size = name_offset + static_cast<uint32_t>(kShstrtabName.size()) + 1;
  Put32(shdr + 0, name_offset);       // sh_name
  Put32(shdr + 4, kWriterShtStrtab);  // sh_type
  Put32(shdr + 16, strtab);           // sh_offset
  Put32(shdr + 20, strtab_size);      // sh_size
  Put32(shdr + 32, 1);                // sh_addralign
}

}  // namespace

Expected<std::string> BuildTileArchive(std::span<const TileImage> tiles,
                                       const TileArchiveOptions& options) {
  TILEPROF_ASSIGN_OR_RETURN(MemberPattern pattern, ParseMemberPattern(options.member_name_pattern));
  const size_t max_name = pattern.prefix.size() + 20 + pattern.suffix.size();
  std::string name_buffer(max_name, '\0');

  // Pass 1: validate, lay out, size.
  std::vector<MemberPlan> plans;
  plans.reserve(tiles.size());
  std::string long_names;  // the `//` member's data: "name/\n" per long name
  uint64_t total = std::char_traits<char>::length(kWriterArMagic);
  for (size_t i = 0; i < tiles.size(); ++i) {
    size_t name_length = FormatMemberName(pattern, i, name_buffer.data());
    std::string_view name(name_buffer.data(), name_length);
    auto plan = PlanMember(tiles[i], options, TilePlace{i, name});
    if (!plan) return plan.error();
    if (name_length > kMaxShortMemberName) {
      plan->long_name = true;
      plan->long_name_offset = long_names.size();
      long_names.append(name).append("/\n");
    }
    total += kWriterArHeaderSize + AlignUp(plan->object_size, 2);
    plans.push_back(*plan);
  }
  if (!long_names.empty()) total += kWriterArHeaderSize + AlignUp(long_names.size(), 2);
  if (total > std::string().max_size()) {
    return MakeError("the archive would be {} bytes, too large to build in memory", total);
  }

  // Pass 2: fill the preallocated, zeroed archive.
  std::string archive(total, '\0');
  char* base = archive.data();
  size_t pos = std::char_traits<char>::length(kWriterArMagic);
  std::memcpy(base, kWriterArMagic, pos);
  auto pad = [&](uint64_t size) {
    pos += size;
    if (size % 2 != 0) base[pos++] = '\n';  // members start at even offsets
  };
  if (!long_names.empty()) {
    WriteArHeader(base + pos, "//", long_names.size(), /*with_ids=*/false);
    pos += kWriterArHeaderSize;
    std::memcpy(base + pos, long_names.data(), long_names.size());
    pad(long_names.size());
  }
  for (size_t i = 0; i < plans.size(); ++i) {
    const MemberPlan& plan = plans[i];
    std::string_view ar_name;
    char offset_name[24];
    if (plan.long_name) {  // "/<offset into //>"
      offset_name[0] = '/';
      ar_name = {offset_name,
                 std::to_chars(offset_name + 1, std::end(offset_name), plan.long_name_offset).ptr};
    } else {  // "name/": at most 16 bytes, and name_buffer holds at least 20
      size_t length = FormatMemberName(pattern, i, name_buffer.data());
      name_buffer[length] = '/';
      ar_name = {name_buffer.data(), length + 1};
    }
    WriteArHeader(base + pos, ar_name, plan.object_size, /*with_ids=*/true);
    pos += kWriterArHeaderSize;
    WriteObject(plan, options.zero_filled_progbits, base + pos);
    pad(plan.object_size);
  }
  return archive;
}

Status WriteTileArchive(const std::string& path, std::span<const TileImage> tiles,
                        const TileArchiveOptions& options) {
  TILEPROF_ASSIGN_OR_RETURN(std::string archive, BuildTileArchive(tiles, options));
  return WriteFileAtomic(path, archive);
}

TileImage TotalInText(uint64_t tile_bytes) {
  return TileImage{{TileSection{std::string(kTextName), tile_bytes, SectionKind::kCode}}};
}

}  // namespace tileprof::elf
