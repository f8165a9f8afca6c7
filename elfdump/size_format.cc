#include "elfdump/size_format.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace tileprof::elf {
namespace {

// Formats into a small buffer; returns the characters written.
std::string_view FormatNumber(char (&buffer)[32], uint64_t value, int radix) {
  char* p = buffer;
  if (radix == 16) {
    *p++ = '0';
    *p++ = 'x';
  } else if (radix == 8) {
    *p++ = '0';
  }
  auto result = std::to_chars(p, buffer + sizeof buffer, value, radix);
  return std::string_view(buffer, result.ptr - buffer);
}

// The same number without a prefix ("%lx", "%lo", "%lu").
std::string_view FormatBare(char (&buffer)[32], uint64_t value, int base) {
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value, base);
  return std::string_view(buffer, result.ptr - buffer);
}

void AppendRight(std::string* out, std::string_view text, size_t width) {
  if (text.size() < width) out->append(width - text.size(), ' ');
  out->append(text);
}

void AppendLeft(std::string* out, std::string_view text, size_t width) {
  out->append(text);
  if (text.size() < width) out->append(width - text.size(), ' ');
}

size_t NumberWidth(uint64_t value, int radix) {
  char buffer[32];
  return FormatNumber(buffer, value, radix).size();
}

void AppendRightNumber(std::string* out, uint64_t value, int radix, size_t width) {
  char buffer[32];
  AppendRight(out, FormatNumber(buffer, value, radix), width);
}

}  // namespace

void AppendNumber(std::string* out, uint64_t value, int radix) {
  char buffer[32];
  out->append(FormatNumber(buffer, value, radix));
}

void AppendSysv(std::string* out, std::span<const ElfSection> sections, std::string_view name,
                std::optional<std::string_view> archive, const SizeOptions& options,
                uint64_t common_size) {
  // First pass (sysv_internal_sizer): column widths. The size column is as
  // wide as the total, not the widest row; names have no minimum width.
  size_t name_width = 0;
  uint64_t total = 0;
  uint64_t max_vma = 0;
  for (const ElfSection& s : sections) {
    if (s.flags == 0) continue;  // "omit som spaces"
    name_width = std::max(name_width, s.name.size());
    total += s.size;  // wraps like bfd_size_type
    max_vma = std::max(max_vma, s.vma);
  }
  if (options.common) {
    name_width = std::max<size_t>(name_width, 5);  // "*COM*"
    total += common_size;
  }
  const int radix = options.radix;
  const size_t vma_width = std::max<size_t>(NumberWidth(max_vma, radix), 4);
  const size_t size_width = std::max<size_t>(NumberWidth(total, radix), 4);

  out->append(name);
  out->append("  ");
  if (archive) {
    out->append(" (ex ");
    out->append(*archive);
    out->append(")");
  }
  out->append(":\n");
  AppendLeft(out, "section", name_width);
  out->append("   ");
  AppendRight(out, "size", size_width);
  out->append("   ");
  AppendRight(out, "addr", vma_width);
  out->append("\n");
  auto row = [&](std::string_view row_name, uint64_t size, uint64_t vma) {
    AppendLeft(out, row_name, name_width);
    out->append("   ");
    AppendRightNumber(out, size, radix, size_width);
    out->append("   ");
    AppendRightNumber(out, vma, radix, vma_width);
    out->append("\n");
  };
  for (const ElfSection& s : sections)
    if (s.flags != 0) row(s.name, s.size, s.vma);
  if (options.common) row("*COM*", common_size, 0);
  AppendLeft(out, "Total", name_width);
  out->append("   ");
  AppendRightNumber(out, total, radix, size_width);
  out->append("\n\n");
}

BerkeleySums SumSections(std::span<const ElfSection> sections, SizeFormat format,
                         uint64_t common_size) {
  BerkeleySums sums;
  for (const ElfSection& s : sections) {
    if ((s.flags & kSecAlloc) == 0) continue;
    if ((s.flags & kSecCode) != 0 ||
        (format == SizeFormat::kBerkeley && (s.flags & kSecReadOnly) != 0)) {
      sums.text += s.size;
    } else if ((s.flags & kSecHasContents) != 0) {
      sums.data += s.size;
    } else {
      sums.bss += s.size;
    }
  }
  sums.bss += common_size;
  return sums;
}

void AppendBerkeleyHeader(std::string* out, const SizeOptions& options) {
  if (options.format == SizeFormat::kBerkeley) {
    out->append(options.radix == 8 ? "   text\t   data\t    bss\t    oct\t    hex\tfilename\n"
                                   : "   text\t   data\t    bss\t    dec\t    hex\tfilename\n");
  } else {
    out->append("      text       data        bss      total filename\n");
  }
}

void AppendBerkeleyLine(std::string* out, const BerkeleySums& sums, const SizeOptions& options,
                        std::string_view name, std::optional<std::string_view> archive) {
  const bool berkeley = options.format == SizeFormat::kBerkeley;
  const size_t width = berkeley ? 7 : 10;
  const char separator = berkeley ? '\t' : ' ';
  const int radix = options.radix;
  const uint64_t total = sums.text + sums.data + sums.bss;
  AppendRightNumber(out, sums.text, radix, width);
  out->push_back(separator);
  AppendRightNumber(out, sums.data, radix, width);
  out->push_back(separator);
  AppendRightNumber(out, sums.bss, radix, width);
  out->push_back(separator);
  if (berkeley) {
    // "%7lu\t%7lx" (octal "%7lo"): the total is never hexadecimal here and
    // the hex column never has a prefix.
    char buffer[32];
    AppendRight(out, FormatBare(buffer, total, radix == 8 ? 8 : 10), 7);
    out->push_back('\t');
    AppendRight(out, FormatBare(buffer, total, 16), 7);
  } else {
    AppendRightNumber(out, total, radix, width);
  }
  out->push_back(separator);
  out->append(name);
  if (archive) {
    out->append(" (ex ");
    out->append(*archive);
    out->append(")");
  }
}

}  // namespace tileprof::elf
