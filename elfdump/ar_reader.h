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
//    stops at the first bad header, where BFD says "malformed archive" (exit
//    status 2). Our message names the member, the field and its offset, in
//    LLVM's words: truncated or malformed archive (ar_fmag of member "b.o/"
//    is "XX", not "`\n" at offset 128). `tileprof size` prints GNU's words
//    instead, from the WalkProblem. A member that is not an object is the
//    visitor's business; one bad member never stops the walk. Every step
//    strictly advances (PR 19256), so the walk ends on any input.
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

// What stopped a walk, for a caller that must print GNU's words for it
// (gnu_size.cc): "malformed archive", "file truncated", "file format not
// recognized", or for kUnreadable the provider's message itself.
enum class WalkProblem : uint8_t {
  kMalformed,      // a member header, or a thin archive's reference, is bad
  kTruncated,      // the next header would start past 2^63 (bfd_seek fails)
  kNotRecognized,  // a thin member is a directory, or its nested file no archive
  kUnreadable,     // a thin member's file cannot be read
};

// Walks the members of the archive `bytes` (already recognised, `layout`)
// whose path as given on the command line is `path`. Returns OK at the
// archive's end; otherwise an Error that names the member, field and offset
// at fault (kUnreadable: the provider's message), and sets `*problem` when
// given. Members before the fault have been visited.
Status ForEachMember(std::span<const uint8_t> bytes, uint64_t nominal_size,
                     const ArchiveLayout& layout, std::string_view path, FileProvider& files,
                     const MemberVisitor& visit, WalkProblem* problem = nullptr);

}  // namespace tileprof::elf
