// ar archives as GNU size 2.40 reads them (binutils bfd/archive.c,
// bfd/archive64.c; spec size-sysv.md §3 and §5): GNU/SysV archives with `/`
// or `/SYM64/` symbol tables and a `//` long-name table, BSD archives
// (`#1/N` names, `__.SYMDEF`), and thin archives (`!<thin>`), whose members
// are other files reached through a FileProvider.
//
// Two steps, as in BFD:
//  * RecognizeArchive is bfd_generic_archive_p: the magic, the symbol table
//    (only as the first member) and the long-name table must all be sound,
//    else the file is not an archive at all ("file format not recognized").
//  * ForEachMember is display_archive: it visits members in file order and
//    stops at the first bad header with BFD's message ("malformed archive",
//    exit status 2). A member that is not an object is the visitor's
//    business; one bad member never stops the walk. Every step strictly
//    advances (PR 19256), so the walk ends on any input.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/expected.h"
#include "elfdump/file_provider.h"

namespace tileprof::elf {

// What bfd_generic_archive_p learned about an archive.
struct ArchiveLayout {
  bool thin = false;
  bool has_map = false;       // a symbol table was found (and skipped)
  uint64_t first_member = 8;  // first_file_filepos
  // The `//` table with BFD's rewriting (names end in NUL, '\' is '/'),
  // when present. Members named "/<offset>" index into it.
  std::optional<std::string> long_names;
};

// Returns the layout when BFD would accept `bytes` as an archive, nullopt
// when it would not. `nominal_size` is bfd_get_file_size (0 = unknown).
// `element_size` is set when the bytes are an archive member: its ar_size,
// beyond which BFD's reads fail outright instead of returning nothing, so a
// member holding just "!<arch>\n" is not an (empty) archive, unlike a file.
std::optional<ArchiveLayout> RecognizeArchive(std::span<const uint8_t> bytes, uint64_t nominal_size,
                                              std::optional<uint64_t> element_size = {});

// One member as display_archive hands it to display_bfd.
struct ArchiveMember {
  std::string_view name;                 // BFD's filename (thin: path relative to the cwd)
  std::string_view archive;              // the archive printed in "(ex ...)"
  bool in_thin_archive = false;          // BFD's %pB then prints the name alone
  std::span<const uint8_t> bytes;        // the member's readable bytes
  uint64_t nominal_size = 0;             // bfd_get_file_size of the member
  std::optional<uint64_t> element_size;  // ar_size (not for thin members)
  uint64_t header_offset = 0;            // where its header starts in its archive
};

using MemberVisitor = std::function<void(const ArchiveMember&)>;

// Walks the members of the archive `bytes` (already recognised, `layout`)
// whose path as given on the command line is `path`. Returns OK at the
// archive's end; otherwise an Error whose message is what GNU size prints
// after "<path>: " before giving up on the archive with exit status 2.
Status ForEachMember(std::span<const uint8_t> bytes, uint64_t nominal_size,
                     const ArchiveLayout& layout, std::string_view path, FileProvider& files,
                     const MemberVisitor& visit);

}  // namespace tileprof::elf
