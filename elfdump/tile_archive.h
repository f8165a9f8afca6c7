// The per-tile ELF archive writer: the shape of Poplar's `target.saveArchive`
// output, an `ar` archive with one ELF32 relocatable object per tile whose
// section sizes are that tile's memory use. Follows
// ../shared/spec/size-sysv.md, section 5.5 (ar writer rules), section 6 (the
// minimal valid ELF32 object) and section 7 (the users' pipeline).
//
// What users run on such an archive (Graphcore's "Producing an ELF image of
// the compilation"):
//
//   size -A archive.a | grep -e ".text" | awk '{print $2}'
//
// `grep -e ".text"` is a regular expression (any character, then `text`), so
// every output line holding such a substring is selected and awk prints its
// second field. The writer therefore guarantees, for every tile i:
//   * member names contain no `text` at all (a header line like
//     `context3.o   (ex archive.a):` would print `(ex`);
//   * section names contain no `text` after another character unless they are
//     exactly `.text` (`.tile.text`, `.text.hot` are rejected with an Error);
//   * each member has exactly one `.text` section, and members are in tile
//     order, so line i of the pipeline is tile i.
// Outside the writer's control: the archive path as the user types it is
// printed in every member header (`tile0.o   (ex build_text/archive.a):`), so a
// path containing `text` after another character breaks the pipeline. Tell
// users to `cd` to the archive's directory or pick another path.
//
// Layouts (TileArchiveOptions::layout):
//   * kTotalInText (default): each tile's memory, the sum of all its sections,
//     goes into the single `.text` section, as Poplar does ("All of the memory
//     allocated is part of the text section"). The pipeline above prints each
//     tile's total memory. Section names given by the caller are validated but
//     not written.
//   * kByKind: the caller's sections are written as given (for example `.text`
//     code, `.data`, `.rodata`, `.bss`, `.tile.stack`), so `size -A` shows the
//     breakdown; the pipeline then prints only the code part. A tile without a
//     `.text` gets an empty one in front, so the pipeline still prints one line
//     per tile.
//
//   * kTotalInTextWithBreakdown: `.text` holds the tile's total, as in
//     kTotalInText, and the caller's sections follow it as kUnlisted sections
//     (SHT_NOBITS, flags `W` only). BFD gives such sections no flags, so GNU
//     size (and `tileprof size`) does not list them: the pipeline and `size
//     -A`'s Total still give the tile's total, while `readelf -S` and
//     `tileprof archive` show the breakdown by kind. A caller's `.text` is
//     refused (the name holds the total).
//
// Section contents: by default every section is SHT_NOBITS (sizes without
// bytes; SysV `size` reports sh_size for NOBITS too), so 1,472 tiles take a few
// hundred KB. With `zero_filled_progbits`, code, data and read-only data become
// SHT_PROGBITS filled with zero bytes (what `objdump -h` shows as CONTENTS, and
// what the Berkeley format counts as data rather than bss); kZeroInit stays
// NOBITS.
//
// Output is deterministic: the same input gives the same bytes (ar_date, uid
// and gid 0, mode 644, no symbol table, a `//` long-name table only when a
// member name is longer than 15 bytes).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/expected.h"

namespace tileprof::elf {

// What a section holds; decides its ELF flags and type.
enum class SectionKind {
  kCode,          // SHF_ALLOC | SHF_EXECINSTR ("AX")
  kData,          // SHF_ALLOC | SHF_WRITE ("WA")
  kReadOnlyData,  // SHF_ALLOC ("A")
  kZeroInit,      // SHF_ALLOC | SHF_WRITE ("WA"), always SHT_NOBITS
  // SHF_WRITE only ("W"), always SHT_NOBITS: BFD flags 0, so `size` skips it.
  kUnlisted,
};

struct TileSection {
  std::string name;   // e.g. ".text", ".data", ".tile.stack"
  uint64_t size = 0;  // bytes; must fit in 32 bits once written (ELF32)
  SectionKind kind = SectionKind::kCode;
};

// One tile's memory, as sections in the order they are written.
struct TileImage {
  std::vector<TileSection> sections;
};

enum class TileLayout {
  kTotalInText,               // one `.text` per tile holding the tile's total (default)
  kByKind,                    // the caller's sections as given
  kTotalInTextWithBreakdown,  // `.text` = total, then the caller's, unlisted
};

struct TileArchiveOptions {
  TileLayout layout = TileLayout::kTotalInText;
  // SHT_PROGBITS with zero bytes for kCode/kData/kReadOnlyData instead of
  // SHT_NOBITS. Archives grow by the section sizes (about 900 MB for a full
  // ipu2), and every member must stay below 4 GiB (ELF32 offsets).
  bool zero_filled_progbits = false;
  // Member name; the single `{}` is replaced by the tile index in decimal.
  // Must not contain `text`, `/`, whitespace or control characters. Names
  // longer than 15 bytes go through the `//` long-name table.
  std::string member_name_pattern = "tile{}.o";
};

// Builds the whole archive in memory, members in tile order (tiles[i] is
// member i, named after index i). Errors name the tile, the section (index and
// name) or the option at fault, e.g. "tile 7 (tile7.o): section 1
// '.tile.text': name contains 'text' after another character ...": empty,
// blank-containing, grep-selected or duplicate section names; too many
// sections; a size or offset beyond ELF32's 32 bits; a total that overflows
// 64 bits; an invalid member name pattern. Nothing is allocated for the
// archive before the whole input has been checked.
Expected<std::string> BuildTileArchive(std::span<const TileImage> tiles,
                                       const TileArchiveOptions& options = {});

// BuildTileArchive, then writes the result atomically (temporary file in the
// same directory, renamed over `path`), so a failure leaves no partial file.
Status WriteTileArchive(const std::string& path, std::span<const TileImage> tiles,
                        const TileArchiveOptions& options = {});

// A tile of the default layout: a single `.text` (kCode) of `tile_bytes`.
TileImage TotalInText(uint64_t tile_bytes);

}  // namespace tileprof::elf
