// `size`: GNU size 2.40 (binutils/size.c, Debian x86-64 build) for ELF
// objects and ar archives, byte for byte on stdout and with the same exit
// status. Spec: ../shared/spec/size-sysv.md (SysV §1, Berkeley and GNU §2,
// files, archives, messages and exit statuses §3).
//
// Exit status (the last one assigned, as GNU's return_code):
//   0  everything printed
//   1  a file is missing, a directory, not a regular file or unreadable;
//      an empty file (silently); a fatal error while reading symbols
//   2  an archive's member header is malformed (or a thin member is missing)
//   3  a file or archive member is not a recognised object
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "elfdump/file_provider.h"

namespace tileprof::elf {

enum class SizeFormat { kSysV, kBerkeley, kGnu };

struct SizeOptions {
  SizeFormat format = SizeFormat::kBerkeley;  // GNU's default (BSD_DEFAULT)
  int radix = 10;                             // 8, 10 or 16
  bool totals = false;                        // -t: Berkeley and GNU formats only
  bool common = false;                        // --common: a *COM* row / bss share
};

// Receives what GNU size writes, in order. A diagnostic is what GNU prints
// after its "size: " prefix, without the final newline; BFD's grouped
// messages contain '\n' between lines and get one prefix.
class SizeSink {
 public:
  virtual ~SizeSink() = default;
  virtual void Out(std::string_view text) = 0;
  virtual void Err(std::string_view diagnostic) = 0;
};

// Runs `size [options] files...` (an empty list means "a.out") against
// `files`. Returns the exit status.
int RunSize(const std::vector<std::string>& paths, const SizeOptions& options, FileProvider& files,
            SizeSink& sink);

// The whole run collected in memory (tests, the fuzz target).
struct SizeResult {
  struct Diagnostic {
    size_t out_offset = 0;  // how much of `out` had been written before it
    std::string text;
  };
  std::string out;
  std::vector<Diagnostic> err;
  int exit_code = 0;

  // stderr as GNU prints it with `prefix` ("size: ").
  std::string ErrText(std::string_view prefix) const;
  // stdout and stderr interleaved, as `2>&1` shows them.
  std::string Interleaved(std::string_view prefix) const;
};

SizeResult RunSize(const std::vector<std::string>& paths, const SizeOptions& options,
                   FileProvider& files);

}  // namespace tileprof::elf
