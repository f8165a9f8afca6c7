// ar_reader.h: BFD's archive recognition and member walk.
//
// A member header, as _bfd_generic_read_ar_hdr_mag parses it (60 bytes):
//   0  ar_name[16]  "name/" (GNU), "name" (BSD), "/123" (long name at
//                   offset 123 of `//`), "#1/12" (BSD: 12 name bytes follow)
//   16 ar_date[12]  ignored
//   28 ar_uid[6]    ignored
//   34 ar_gid[6]    ignored
//   40 ar_mode[8]   ignored
//   48 ar_size[10]  sscanf("%lu"): spaces, an optional sign, digits
//   58 ar_fmag[2]   "`\n", else the header is malformed
// BFD's numeric parsers (sscanf, strtol, atoi) run on the raw header, so a
// number can continue into the next field; the parsers below reproduce that
// and stop at ar_fmag as BFD's do.
#include "elfdump/ar_reader.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "common/checked.h"
#include "elfdump/elf_constants.h"

namespace tileprof::elf {
namespace {

constexpr uint64_t kHeader = kArHeaderSize;
constexpr uint64_t kFmagOffset = 58;
constexpr uint64_t kSizeOffset = 48;
constexpr uint64_t kArNameSize = 16;
constexpr uint64_t kArSizeSize = 10;
constexpr int kMaxThinNesting = 8;

bool IsSpace(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }

// strtol / strtoull on header bytes [begin, end): optional whitespace and
// sign, then decimal digits. `digits` is false when there were none (strtol
// then returns 0 and leaves the end pointer at `begin`).
struct ParsedNumber {
  bool digits = false;
  bool overflow = false;
  bool negative = false;
  uint64_t magnitude = 0;
  const uint8_t* end = nullptr;
};

ParsedNumber ParseDecimal(const uint8_t* begin, const uint8_t* end, uint64_t limit) {
  ParsedNumber n;
  const uint8_t* p = begin;
  while (p < end && IsSpace(*p)) ++p;
  if (p < end && (*p == '+' || *p == '-')) n.negative = *p++ == '-';
  while (p < end && IsDigit(*p)) {
    n.digits = true;
    uint64_t digit = *p++ - '0';
    if (n.magnitude > (limit - digit) / 10) {
      n.overflow = true;
      n.magnitude = limit;
    } else if (!n.overflow) {
      n.magnitude = n.magnitude * 10 + digit;
    }
  }
  n.end = n.digits ? p : begin;
  return n;
}

// strtol's long value of a parse (LONG_MIN/LONG_MAX on overflow).
int64_t AsLong(const ParsedNumber& n) {
  if (n.overflow) return n.negative ? INT64_MIN : INT64_MAX;
  return n.negative ? -static_cast<int64_t>(n.magnitude) : static_cast<int64_t>(n.magnitude);
}

enum class HeaderStatus { kOk, kNoMore, kMalformed };

struct RawHeader {
  std::string_view name;
  uint64_t offset = 0;  // of the header in its archive
  uint64_t parsed_size = 0;
  uint64_t data_start = 0;  // proxy_origin: after the header and a BSD name
  int64_t origin = 0;       // thin archives: offset inside a nested archive
  // kMalformed: the field at fault, its member and what is wrong with it
  // ("ar_fmag of member \"b.o/\" is \"XX\", not \"`\n\""), and the field's offset.
  std::string problem;
  uint64_t problem_offset = 0;
};

// Header bytes for a message, in double quotes: printable ASCII as it is,
// the rest escaped; `trim` drops the space padding of a field.
std::string Quoted(const uint8_t* p, uint64_t n, bool trim) {
  while (trim && n > 0 && p[n - 1] == ' ') --n;
  std::string out = "\"";
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t c = p[i];
    if (c == '\n') {
      out += "\\n";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out + '"';
}

std::string Quoted(std::string_view text) {
  return Quoted(reinterpret_cast<const uint8_t*>(text.data()), text.size(), false);
}

std::string_view CString(const uint8_t* p, uint64_t max) {
  const void* nul = std::memchr(p, 0, max);
  uint64_t n = nul ? static_cast<const uint8_t*>(nul) - p : max;
  return std::string_view(reinterpret_cast<const char*>(p), n);
}

HeaderStatus ReadHeader(std::span<const uint8_t> bytes, uint64_t pos, const ArchiveLayout* layout,
                        uint64_t nominal_size, RawHeader* out) {
  if (!InBounds(pos, kHeader, bytes.size())) return HeaderStatus::kNoMore;
  const uint8_t* h = bytes.data() + pos;
  const uint8_t* fmag = h + kFmagOffset;
  // Built only on failure: a walk reads up to ~100,000 good headers.
  auto malformed = [&](std::string_view field, uint64_t field_offset, std::string_view what) {
    out->problem = fmt::format("{} of member {} {}", field, Quoted(h, kArNameSize, true), what);
    out->problem_offset = pos + field_offset;
    return HeaderStatus::kMalformed;
  };
  if (fmag[0] != '`' || fmag[1] != '\n')
    return malformed("ar_fmag", kFmagOffset,
                     fmt::format("is {}, not {}", Quoted(fmag, 2, false), Quoted("`\n")));
  // sscanf ("%" SCNu64) on ar_size, cut at ar_fmag.
  ParsedNumber size = ParseDecimal(h + kSizeOffset, fmag, UINT64_MAX);
  if (!size.digits)
    return malformed("ar_size", kSizeOffset,
                     "is not a decimal number: " + Quoted(h + kSizeOffset, kArSizeSize, true));
  out->offset = pos;
  out->parsed_size = size.negative ? 0 - size.magnitude : size.magnitude;
  out->data_start = pos + kHeader;
  out->origin = 0;
  const bool has_long_names = layout != nullptr && layout->long_names.has_value();
  if ((h[0] == '/' || (h[0] == ' ' && std::memchr(h, '/', kArMaxNameLength) == nullptr)) &&
      has_long_names) {
    // "/<index>" into the `//` table; thin archives may add ":<origin>".
    ParsedNumber index = ParseDecimal(h + 1, fmag, INT64_MAX);
    const std::string& table = *layout->long_names;
    if (index.overflow || static_cast<uint64_t>(AsLong(index)) >= table.size())
      return malformed("ar_name", 0,
                       fmt::format("indexes past the {}-byte long-name table", table.size()));
    if (layout->thin && index.end < fmag && *index.end == ':') {
      ParsedNumber origin = ParseDecimal(index.end + 1, fmag, INT64_MAX);
      if (origin.overflow)
        return malformed("ar_name", 0, "gives a nested archive offset that overflows");
      out->origin = AsLong(origin);
    }
    uint64_t at = static_cast<uint64_t>(AsLong(index));
    out->name = CString(reinterpret_cast<const uint8_t*>(table.data()) + at, table.size() - at);
    return HeaderStatus::kOk;
  }
  if (h[0] == '#' && h[1] == '1' && h[2] == '/' && IsDigit(h[3])) {
    // BSD 4.4: atoi (&ar_name[3]) name bytes follow the header and are
    // counted in ar_size. atoi is (int) strtol, sign-extended to 64 bits.
    ParsedNumber length = ParseDecimal(h + 3, fmag, INT64_MAX);
    int64_t as_long = AsLong(length);
    uint64_t namelen = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(as_long)));
    if (namelen > out->parsed_size || namelen >= (uint64_t{1} << 63))
      return malformed("ar_name", 0,
                       fmt::format("gives a {}-byte name, more than ar_size", namelen));
    if (nominal_size != 0 && namelen > nominal_size)
      return malformed("ar_name", 0,
                       fmt::format("gives a {}-byte name, more than the archive's {} bytes",
                                   namelen, nominal_size));
    out->parsed_size -= namelen;
    // A short read of the name ends the archive quietly.
    if (!InBounds(pos + kHeader, namelen, bytes.size())) return HeaderStatus::kNoMore;
    out->name = CString(h + kHeader, namelen);
    out->data_start = pos + kHeader + namelen;
    return HeaderStatus::kOk;
  }
  // A short name ends at the first NUL, else '/', else ' ', within 15 bytes.
  const void* end = std::memchr(h, '\0', kArMaxNameLength);
  if (end == nullptr) end = std::memchr(h, '/', kArMaxNameLength);
  if (end == nullptr) end = std::memchr(h, ' ', kArMaxNameLength);
  uint64_t namelen = end ? static_cast<const uint8_t*>(end) - h : kArMaxNameLength;
  out->name = std::string_view(reinterpret_cast<const char*>(h), namelen);
  return HeaderStatus::kOk;
}

bool StartsWith(std::span<const uint8_t> bytes, uint64_t pos, std::string_view prefix) {
  return InBounds(pos, prefix.size(), bytes.size()) &&
         std::memcmp(bytes.data() + pos, prefix.data(), prefix.size()) == 0;
}

uint64_t ReadNumber(const uint8_t* p, unsigned width, bool big_endian) {
  uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) {
    unsigned k = big_endian ? i : width - 1 - i;
    v = (v << 8) | p[k];
  }
  return v;
}

uint64_t EvenUp(uint64_t pos) { return pos + pos % 2; }

// do_slurp_bsd_armap in one byte order; the archive is recognised when any
// target (little- or big-endian) accepts the table.
bool BsdMapValid(std::span<const uint8_t> raw, bool big_endian) {
  uint64_t parsed = raw.size() - 8;
  uint64_t amt = ReadNumber(raw.data(), 4, big_endian);
  if (amt > parsed || amt % 8 != 0) return false;
  uint64_t string_size = parsed - amt;
  for (uint64_t i = 0; i < amt / 8; ++i) {
    if (ReadNumber(raw.data() + 4 + 8 * i, 4, big_endian) >= string_size) return false;
  }
  return true;
}

// The symbol table at `pos`, if any: advances layout->first_member past it.
bool SlurpMap(std::span<const uint8_t> bytes, uint64_t nominal, ArchiveLayout* layout) {
  const uint64_t pos = layout->first_member;
  if (pos >= bytes.size()) return true;  // nothing after the magic
  if (bytes.size() - pos < 16) return false;
  RawHeader hdr;
  auto read = [&](uint64_t at) { return ReadHeader(bytes, at, nullptr, nominal, &hdr); };
  bool bsd =
      StartsWith(bytes, pos, "__.SYMDEF       ") || StartsWith(bytes, pos, "__.SYMDEF/      ");
  if (StartsWith(bytes, pos, "#1/20           ")) {
    // Mach-O's sorted table: the name follows the header.
    if (!InBounds(pos, kHeader + 20, bytes.size())) return false;
    bsd = StartsWith(bytes, pos + kHeader, "__.SYMDEF");
  }
  if (bsd) {
    if (read(pos) != HeaderStatus::kOk || hdr.parsed_size < 8) return false;
    if (!InBounds(hdr.data_start, hdr.parsed_size, bytes.size())) return false;
    auto raw = bytes.subspan(hdr.data_start, hdr.parsed_size);
    if (!BsdMapValid(raw, false) && !BsdMapValid(raw, true)) return false;
    layout->has_map = true;
    layout->first_member = EvenUp(hdr.data_start + hdr.parsed_size);
    return true;
  }
  if (StartsWith(bytes, pos, "/               ")) {
    // The GNU/COFF table: a big-endian count, the offsets, the names.
    if (read(pos) != HeaderStatus::kOk) return false;
    if (!InBounds(hdr.data_start, 4, bytes.size())) return false;
    uint64_t count = ReadNumber(bytes.data() + hdr.data_start, 4, true);
    uint64_t pointers = 4 * count;
    if ((nominal != 0 && hdr.parsed_size > nominal) || hdr.parsed_size < 4 ||
        hdr.parsed_size - 4 < pointers)
      return false;
    if (!InBounds(hdr.data_start, hdr.parsed_size, bytes.size())) return false;
    layout->has_map = true;
    layout->first_member = EvenUp(hdr.data_start + hdr.parsed_size);
    // PE archives put a second `/` member right after the first.
    RawHeader second;
    if (ReadHeader(bytes, layout->first_member, nullptr, nominal, &second) == HeaderStatus::kOk) {
      const uint8_t* h = bytes.data() + layout->first_member;
      if (h[0] == '/' && h[1] == ' ')
        layout->first_member += (second.parsed_size + kHeader + 1) & ~uint64_t{1};
    }
    return true;
  }
  if (StartsWith(bytes, pos, "/SYM64/         ")) {
    if (read(pos) != HeaderStatus::kOk) return false;
    if (nominal != 0 && hdr.parsed_size > nominal) return false;
    if (!InBounds(hdr.data_start, 8, bytes.size())) return false;
    uint64_t count = ReadNumber(bytes.data() + hdr.data_start, 8, true);
    if (count >= UINT64_MAX / 8) return false;
    uint64_t strings = hdr.parsed_size - 8 * count - 8;  // wraps like BFD's
    if (strings > hdr.parsed_size || count > UINT64_MAX / 16) return false;
    auto table = CheckedAdd(16 * count, strings);
    if (!table || !CheckedAdd(*table, 1)) return false;
    uint64_t length = 8 + 8 * count + strings;
    if ((nominal != 0 && 8 * count > nominal) || !InBounds(hdr.data_start, length, bytes.size()))
      return false;
    layout->has_map = true;
    layout->first_member = EvenUp(hdr.data_start + length);
    return true;
  }
  return true;  // no symbol table
}

// The `//` (or `ARFILENAMES/`) table, if it comes next.
bool SlurpLongNames(std::span<const uint8_t> bytes, uint64_t nominal, ArchiveLayout* layout) {
  const uint64_t pos = layout->first_member;
  if (!InBounds(pos, 16, bytes.size())) return true;
  if (!StartsWith(bytes, pos, "ARFILENAMES/    ") && !StartsWith(bytes, pos, "//              "))
    return true;
  RawHeader hdr;
  if (ReadHeader(bytes, pos, nullptr, nominal, &hdr) != HeaderStatus::kOk) return false;
  uint64_t amt = hdr.parsed_size;
  if (amt + 1 == 0 || (nominal != 0 && amt > nominal)) return false;
  if (!InBounds(hdr.data_start, amt, bytes.size())) return false;
  std::string table(reinterpret_cast<const char*>(bytes.data() + hdr.data_start), amt);
  // Entries end in "/\n" (SysV) or "\n"; DOS tools wrote '\'.
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i] == '\n') table[i > 0 && table[i - 1] == '/' ? i - 1 : i] = '\0';
    if (table[i] == '\\') table[i] = '/';
  }
  layout->long_names = std::move(table);
  layout->first_member = EvenUp(hdr.data_start + amt);
  return true;
}

// The directory part of `archive`, as _bfd_append_relative_path uses it.
std::string_view DirectoryPrefix(std::string_view archive) {
  size_t slash = archive.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : archive.substr(0, slash + 1);
}

// " of inner.a" for a header inside a nested archive, "" for the archive
// being walked.
std::string OfArchive(std::string_view nested) {
  return nested.empty() ? "" : fmt::format(" of {}", Quoted(nested));
}

// Walks one archive; thin archives that point into nested archives recurse
// (bounded by kMaxThinNesting).
class Walker {
 public:
  Walker(FileProvider& files, const MemberVisitor& visit) : files_(files), visit_(visit) {}

  Status Walk(std::span<const uint8_t> bytes, uint64_t nominal, const ArchiveLayout& layout,
              std::string_view path);
  WalkProblem problem() const { return problem_; }

 private:
  struct Nested {
    std::unique_ptr<FileContents> contents;
    ArchiveLayout layout;
  };
  Expected<Nested*> OpenNested(const std::string& path, const RawHeader& hdr);
  Status VisitThinMember(const RawHeader& hdr, std::string_view path, int depth, bool* stop);
  Status VisitNestedMember(const std::string& file, int64_t origin, int depth);
  // The error of a walk that stops, in LLVM's words: "truncated or malformed
  // archive (<what> at offset <offset><of the nested archive>)".
  Error Stop(WalkProblem problem, std::string_view what, uint64_t offset,
             std::string_view nested = {});
  Error Unreadable(Error error);

  FileProvider& files_;
  const MemberVisitor& visit_;
  std::map<std::string, Nested> nested_;
  std::string last_nested_key_;
  std::string name_;  // storage for the current thin member's path
  WalkProblem problem_ = WalkProblem::kMalformed;
};

Error Walker::Stop(WalkProblem problem, std::string_view what, uint64_t offset,
                   std::string_view nested) {
  problem_ = problem;
  return MakeError("truncated or malformed archive ({} at offset {}{})", what, offset,
                   OfArchive(nested));
}

Error Walker::Unreadable(Error error) {
  problem_ = WalkProblem::kUnreadable;
  return error;
}

// `hdr` is the thin archive's member header that names `path`.
Expected<Walker::Nested*> Walker::OpenNested(const std::string& path, const RawHeader& hdr) {
  if (auto it = nested_.find(path); it != nested_.end()) return &it->second;
  if (files_.Stat(path).kind == FileKind::kDirectory)
    return Stop(
        WalkProblem::kNotRecognized,
        fmt::format("ar_name of member {} names a directory, not an archive", Quoted(hdr.name)),
        hdr.offset);
  auto contents = files_.Open(path);
  if (!contents) return Unreadable(contents.error());
  std::span<const uint8_t> bytes = (*contents)->bytes();
  auto layout = RecognizeArchive(bytes, bytes.size());
  if (!layout)
    return Stop(
        WalkProblem::kNotRecognized,
        fmt::format("ar_name of member {} names a file that is not an archive", Quoted(hdr.name)),
        hdr.offset);
  Nested& nested = nested_[path];
  nested.contents = std::move(*contents);
  nested.layout = std::move(*layout);
  return &nested;
}

Status Walker::VisitThinMember(const RawHeader& hdr, std::string_view archive, int depth,
                               bool* stop) {
  std::string file(hdr.name);
  if (file.empty() || file[0] != '/') file = std::string(DirectoryPrefix(archive)) + file;
  if (hdr.origin > 0) {
    // PR 17512: two consecutive entries for the same nested member make BFD
    // hand out the same element twice and stop.
    std::string key = file + ':' + std::to_string(hdr.origin);
    *stop = key == last_nested_key_;
    last_nested_key_ = key;
    const std::string_view nested = depth == 0 ? std::string_view() : archive;
    if (depth >= kMaxThinNesting)
      return Stop(WalkProblem::kMalformed,
                  fmt::format("ar_name of member {} nests thin archives more than {} deep",
                              Quoted(hdr.name), kMaxThinNesting),
                  hdr.offset, nested);
    // PR 15140: a thin archive must not point into itself.
    if (file == archive)
      return Stop(
          WalkProblem::kMalformed,
          fmt::format("ar_name of member {} points into the thin archive itself", Quoted(hdr.name)),
          hdr.offset, nested);
    auto opened = OpenNested(file, hdr);
    if (!opened) return opened.error();
    return VisitNestedMember(file, hdr.origin, depth + 1);
  }
  last_nested_key_.clear();
  if (files_.Stat(file).kind == FileKind::kDirectory)
    return Stop(
        WalkProblem::kNotRecognized,
        fmt::format("ar_name of member {} names a directory, not an object file", Quoted(hdr.name)),
        hdr.offset, depth == 0 ? std::string_view() : archive);
  auto contents = files_.Open(file);
  if (!contents) return Unreadable(contents.error());
  std::span<const uint8_t> bytes = (*contents)->bytes();
  name_ = std::move(file);
  ArchiveMember member;
  member.name = name_;
  member.archive = archive;
  member.in_thin_archive = true;
  member.bytes = bytes;
  member.nominal_size = bytes.size();
  visit_(member);
  return {};
}

Status Walker::VisitNestedMember(const std::string& file, int64_t origin, int depth) {
  Nested& nested = nested_[file];
  std::span<const uint8_t> bytes = nested.contents->bytes();
  RawHeader hdr;
  uint64_t pos = static_cast<uint64_t>(origin);
  HeaderStatus status = ReadHeader(bytes, pos, &nested.layout, bytes.size(), &hdr);
  if (status == HeaderStatus::kNoMore) return {};  // BFD: "no more archived files"
  if (status == HeaderStatus::kMalformed)
    return Stop(WalkProblem::kMalformed, hdr.problem, hdr.problem_offset, file);
  if (nested.layout.thin) {
    bool stop = false;
    return VisitThinMember(hdr, nested_.find(file)->first, depth, &stop);
  }
  ArchiveMember member;
  member.name = hdr.name;
  member.archive = nested_.find(file)->first;
  member.header_offset = pos;
  uint64_t available = hdr.data_start < bytes.size() ? bytes.size() - hdr.data_start : 0;
  member.bytes = bytes.subspan(std::min(hdr.data_start, uint64_t{bytes.size()}),
                               std::min(hdr.parsed_size, available));
  member.nominal_size = std::min<uint64_t>(hdr.parsed_size, bytes.size());
  member.element_size = hdr.parsed_size;
  visit_(member);
  return {};
}

Status Walker::Walk(std::span<const uint8_t> bytes, uint64_t nominal, const ArchiveLayout& layout,
                    std::string_view path) {
  uint64_t pos = layout.first_member;
  for (;;) {
    // bfd_seek to an offset past 2^63 fails with EINVAL: "file truncated".
    if (pos > static_cast<uint64_t>(INT64_MAX))
      return Stop(WalkProblem::kTruncated,
                  "next member header beyond the largest file offset (2^63 - 1)", pos);
    RawHeader hdr;
    HeaderStatus status = ReadHeader(bytes, pos, &layout, nominal, &hdr);
    if (status == HeaderStatus::kNoMore) return {};
    if (status == HeaderStatus::kMalformed)
      return Stop(WalkProblem::kMalformed, hdr.problem, hdr.problem_offset);
    if (layout.thin) {
      bool stop = false;
      TILEPROF_RETURN_IF_ERROR(VisitThinMember(hdr, path, 0, &stop));
      if (stop) return {};
      pos = hdr.data_start;  // thin members have no data in the archive
      continue;
    }
    ArchiveMember member;
    member.name = hdr.name;
    member.archive = path;
    member.header_offset = pos;
    uint64_t available = hdr.data_start < bytes.size() ? bytes.size() - hdr.data_start : 0;
    member.bytes = bytes.subspan(std::min<uint64_t>(hdr.data_start, bytes.size()),
                                 std::min(hdr.parsed_size, available));
    // bfd_get_file_size of a member: min(ar_size, archive size); 0 stays
    // "unknown" when the archive's own size is.
    member.nominal_size = nominal == 0 ? 0 : std::min(hdr.parsed_size, nominal);
    member.element_size = hdr.parsed_size;
    visit_(member);
    // The next header follows the data, padded to an even offset; a size
    // that wraps around is PR 19256's loop.
    uint64_t next = hdr.data_start + hdr.parsed_size;
    next += next % 2;
    if (next < hdr.data_start)
      return Stop(WalkProblem::kMalformed,
                  fmt::format("ar_size of member {} is {}: the next header would come before "
                              "its data",
                              Quoted(hdr.name),
                              Quoted(bytes.data() + pos + kSizeOffset, kArSizeSize, true)),
                  pos + kSizeOffset);
    pos = next;
  }
}

}  // namespace

std::optional<ArchiveLayout> RecognizeArchive(std::span<const uint8_t> bytes, uint64_t nominal_size,
                                              std::optional<uint64_t> element_size) {
  if (bytes.size() < kArMagicSize) return std::nullopt;
  // bfd_bread at or past a member's end is an error (-1), not end of file,
  // so the symbol-table probe right after the magic fails.
  if (element_size && *element_size <= kArMagicSize) return std::nullopt;
  ArchiveLayout layout;
  if (std::memcmp(bytes.data(), kArThinMagic, kArMagicSize) == 0) {
    layout.thin = true;
  } else if (std::memcmp(bytes.data(), kArMagic, kArMagicSize) != 0) {
    return std::nullopt;
  }
  layout.first_member = kArMagicSize;
  if (!SlurpMap(bytes, nominal_size, &layout)) return std::nullopt;
  if (!SlurpLongNames(bytes, nominal_size, &layout)) return std::nullopt;
  return layout;
}

Status ForEachMember(std::span<const uint8_t> bytes, uint64_t nominal_size,
                     const ArchiveLayout& layout, std::string_view path, FileProvider& files,
                     const MemberVisitor& visit, WalkProblem* problem) {
  Walker walker(files, visit);
  Status walked = walker.Walk(bytes, nominal_size, layout, path);
  if (!walked && problem != nullptr) *problem = walker.problem();
  return walked;
}

}  // namespace tileprof::elf
