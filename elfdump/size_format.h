// The three output formats of GNU size (binutils/size.c print_sysv_format,
// print_berkeley_or_gnu_format), internal to elfdump/. Spec:
// ../shared/spec/size-sysv.md §1.1 (SysV) and §2 (Berkeley, GNU).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "elfdump/elf_reader.h"
#include "elfdump/gnu_size.h"

namespace tileprof::elf {

// "1234", "02322" or "0x4d2" (zero is "0", "00" and "0x0"), appended.
void AppendNumber(std::string* out, uint64_t value, int radix);

// Appends the SysV table of one object, including the two blank lines that
// follow it. `archive` is set for archive members.
void AppendSysv(std::string* out, std::span<const ElfSection> sections, std::string_view name,
                std::optional<std::string_view> archive, const SizeOptions& options,
                uint64_t common_size);

struct BerkeleySums {
  uint64_t text = 0;
  uint64_t data = 0;
  uint64_t bss = 0;
};

// Adds up the allocated sections the way the Berkeley (read-only data is
// text) or GNU (read-only data is data) format does.
BerkeleySums SumSections(std::span<const ElfSection> sections, SizeFormat format,
                         uint64_t common_size);

// The column titles, printed once before the first object.
void AppendBerkeleyHeader(std::string* out, const SizeOptions& options);

// One object's line; `name` is "(TOTALS)" for the -t line.
void AppendBerkeleyLine(std::string* out, const BerkeleySums& sums, const SizeOptions& options,
                        std::string_view name, std::optional<std::string_view> archive);

}  // namespace tileprof::elf
