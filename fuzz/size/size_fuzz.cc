// Fuzz target for `tileprof size` (elfdump/gnu_size.h, elf_reader.h,
// ar_reader.h): the input is one file, read as GNU size would read it (an
// ELF object, an archive, or anything else), in every format and radix, all
// in memory. A thin archive's members resolve through a MemoryFileProvider
// that holds only the input itself, so a thin archive can reach itself.
//
// Properties checked besides "no crash, no sanitizer report, no hang":
//  * the reader lists at most one section per 40 input bytes;
//  * BFD-style messages stay capped (no warning storms);
//  * the output is bounded by the input: every archive member costs at
//    least a 60-byte header, every section a 40-byte header, so stdout is
//    O(n + members * name length) and stderr O(members);
//  * the exit status is one of GNU's: 0, 1, 2 or 3.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "elfdump/elf_reader.h"
#include "elfdump/file_provider.h"
#include "elfdump/gnu_size.h"

namespace {

void Check(bool condition, const char* what) {
  if (!condition) {
    __builtin_trap();  // a property violation is a finding, like a crash
  }
  (void)what;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tileprof::elf;
  const std::span<const uint8_t> bytes(data, size);

  // The reader on its own, as a file and as a member whose ar_size claims
  // more than is there.
  ElfReader reader;
  for (uint64_t nominal : {uint64_t{size}, uint64_t{size} * 2 + 7}) {
    const ElfObject& object = reader.Read({bytes, nominal, "f"});
    Check(object.sections.size() <= size / 40 + 1, "sections bounded by headers");
    Check(object.messages.size() <= 1, "one message group per object");
    // At most five cached messages, each naming a few strings of the input
    // (names may contain newlines, so lines cannot be counted).
    for (const std::string& m : object.messages)
      Check(m.size() <= 5 * (256 + 3 * size), "BFD caches at most five messages");
    std::vector<std::string> messages;
    if (object.recognized) (void)reader.CommonSize(&messages);
    Check(messages.size() <= size / 16 + 2, "one message per symbol at most");
  }

  MemoryFileProvider files;
  files.Add("f", std::string(reinterpret_cast<const char*>(data), size));
  files.Add("dir/f", std::string(reinterpret_cast<const char*>(data), size));
  const uint64_t n = size;
  const uint64_t out_bound = 16 * n + n * n / 8 + 4096;
  const uint64_t err_bound = 8 * (n / 60 + 2);
  const SizeFormat formats[] = {SizeFormat::kSysV, SizeFormat::kBerkeley, SizeFormat::kGnu};
  const int radixes[] = {10, 16, 8};
  for (int i = 0; i < 3; ++i) {
    SizeOptions options;
    options.format = formats[i];
    options.radix = radixes[(i + (size > 0 ? data[0] : 0)) % 3];
    options.totals = i == 1;
    options.common = i == 2;
    SizeResult result = RunSize({"f", "dir/f"}, options, files);
    Check(result.exit_code >= 0 && result.exit_code <= 3, "GNU exit statuses");
    Check(result.out.size() <= 2 * out_bound, "stdout bounded by the input");
    Check(result.err.size() <= 2 * err_bound, "stderr bounded by the input");
  }
  return 0;
}
