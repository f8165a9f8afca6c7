// `tileprof size`: GNU size 2.40 for ELF objects and ar archives, byte for
// byte on stdout with GNU's exit statuses (elfdump/gnu_size.h). Diagnostics
// read "tileprof: size: ..." where GNU prints "size: ...".
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "elfdump/file_provider.h"
#include "elfdump/gnu_size.h"

namespace tileprof::cli {
namespace {

struct SizeCliOptions {
  elf::SizeOptions size;
  std::vector<std::string> files;
  std::string usage_error;  // GNU rejects a bad --format / --radix value
};

// Writes stdout in large blocks; before each diagnostic the pending output
// goes first so that `2>&1` shows them in GNU's order.
class StdioSink final : public elf::SizeSink {
 public:
  ~StdioSink() override { Flush(); }
  void Out(std::string_view text) override {
    pending_.append(text);
    if (pending_.size() >= (1u << 20)) Flush();
  }
  void Err(std::string_view diagnostic) override {
    Flush();
    PrintDiagnostic("size", diagnostic);
  }
  void Flush() {
    if (!pending_.empty()) std::fwrite(pending_.data(), 1, pending_.size(), stdout);
    pending_.clear();
    std::fflush(stdout);
  }

 private:
  std::string pending_;
};

int Run(const SizeCliOptions& options) {
  if (!options.usage_error.empty()) {
    PrintDiagnostic("size", options.usage_error);
    return 1;  // GNU: usage (stderr, 1)
  }
  elf::DiskFileProvider files;
  StdioSink sink;
  int status = elf::RunSize(options.files, options.size, files, sink);
  sink.Flush();
  return status;
}

RunFn Setup(CLI::App& cmd) {
  auto opts = std::make_shared<SizeCliOptions>();
  cmd.footer(
      "Prints what GNU size 2.40 prints for ELF objects (ELF32/ELF64, both byte orders),\n"
      "shared libraries, executables and ar archives (GNU, BSD and thin), byte for byte.\n"
      "Options may follow file names; the last format or radix option wins; with no\n"
      "FILE, a.out is read. Other object formats (PE, S-records, core files) are not\n"
      "supported: they are reported as 'file format not recognized'.\n"
      "Exit status follows GNU size: 0 ok, 1 missing, unreadable or empty file,\n"
      "2 malformed archive, 3 unrecognised file format (the last one assigned wins).");
  // Every option acts when it is parsed, so "-A -x ... -d" ends in decimal
  // and SysV, as with GNU's getopt loop.
  auto format = [opts](elf::SizeFormat f) { return [opts, f](int64_t) { opts->size.format = f; }; };
  auto radix = [opts](int r) { return [opts, r](int64_t) { opts->size.radix = r; }; };
  cmd.add_flag_function("-A", format(elf::SizeFormat::kSysV), "SysV format (size -A)")
      ->trigger_on_parse();
  cmd.add_flag_function("-B", format(elf::SizeFormat::kBerkeley), "Berkeley format (default)")
      ->trigger_on_parse();
  cmd.add_flag_function("-G", format(elf::SizeFormat::kGnu), "GNU format")->trigger_on_parse();
  cmd.add_option_function<std::string>(
         "--format",
         [opts](const std::string& value) {
           char c = value.empty() ? '\0' : value[0];
           if (c == 'S' || c == 's') {
             opts->size.format = elf::SizeFormat::kSysV;
           } else if (c == 'B' || c == 'b') {
             opts->size.format = elf::SizeFormat::kBerkeley;
           } else if (c == 'G' || c == 'g') {
             opts->size.format = elf::SizeFormat::kGnu;
           } else {
             opts->usage_error = "invalid argument to --format: " + value;
           }
         },
         "sysv, berkeley or gnu (first letter decides)")
      ->trigger_on_parse();
  cmd.add_flag_function("-o", radix(8), "Octal numbers")->trigger_on_parse();
  cmd.add_flag_function("-d", radix(10), "Decimal numbers (default)")->trigger_on_parse();
  cmd.add_flag_function("-x", radix(16), "Hexadecimal numbers")->trigger_on_parse();
  cmd.add_option_function<std::string>(
         "--radix",
         [opts](const std::string& value) {
           long r = std::strtol(value.c_str(), nullptr, 10);
           if (r == 8 || r == 10 || r == 16) {
             opts->size.radix = static_cast<int>(r);
           } else {
             opts->usage_error = "Invalid radix: " + value;
           }
         },
         "8, 10 or 16")
      ->trigger_on_parse();
  cmd.add_flag("-t,--totals", opts->size.totals, "Add a (TOTALS) line (Berkeley and GNU formats)");
  cmd.add_flag("--common", opts->size.common, "Count common symbols (*COM* row, or bss)");
  cmd.add_flag_function(
      "-f", [](int64_t) {}, "Ignored, as by GNU size");
  cmd.add_option("FILE", opts->files, "ELF objects and ar archives (default: a.out)");
  return [opts] { return Run(*opts); };
}

const Registration kSize{"size", "List section sizes of ELF objects and archives, as GNU size",
                         Setup};

}  // namespace
}  // namespace tileprof::cli
