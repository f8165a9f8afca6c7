// `tileprof dumpdiff A B`: which modules of two runs' XLA dumps recompile,
// and why.
#include <iostream>

#include "analyzer/dump_diff.h"
#include "cli/command.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string a, b;
  std::string format = "text";
  bool largest = false;
};

int Run(const Options& options) {
  analyzer::DumpDiffOptions diff_options;
  diff_options.largest_only = options.largest;
  auto result = analyzer::DiffDumps(options.a, options.b, diff_options);
  if (!result) {
    PrintDiagnostic("dumpdiff", result.error().message());
    return kExitUsage;
  }
  std::cout << (options.format == "json" ? analyzer::FormatDumpDiffJson(*result)
                                         : analyzer::FormatDumpDiffText(*result));
  if (result->errors() > 0) return kExitUsage;
  return result->equal() ? kExitOk : kExitError;
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "A and B are two HLO files, or two --xla_dump_to directories of two runs. Modules pair\n"
      "across directories by name with the run-specific parts removed (module_NNNN, timestamp\n"
      "prefixes, .N suffixes, TensorFlow function uids) and by stage (before_optimizations,\n"
      "*after_optimizations, per-pass dumps). For each changed pair it prints the lowest\n"
      "normalisation level at which the two are equal (1 cosmetic, 2 names and metadata,\n"
      "3 numbering and order: same fingerprint, no recompilation; 4 backend_config and float\n"
      "constants; 5 entry signature only) and the root causes found by aligning the graphs:\n"
      "parameter shape changes (batch dimension 32 -> 16), constants with old and new values,\n"
      "attribute, opcode and edge changes, added and removed instructions, each with its\n"
      "op_name and source_file:line. Downstream fallout is folded into '+N dependent'.\n"
      "Exit status: 0 equal (nothing would recompile), 1 different, 2 error.");
  cmd.add_option("A", options->a, "First run: an HLO file or a dump directory")->required();
  cmd.add_option("B", options->b, "Second run: an HLO file or a dump directory")->required();
  cmd.add_flag("--largest", options->largest, "Compare just the largest module of each run");
  cmd.add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  return [options] { return Run(*options); };
}

const Registration kDumpDiff{"dumpdiff",
                             "Explain why a module recompiled: diff two runs' XLA dumps", Setup};

}  // namespace
}  // namespace tileprof::cli
