// What the report-analysis subcommands (hist, top, oom, compare, plot, html)
// share: the --format option and printing an analyzer::Output or an error.
// A header only: each subcommand stays one file and registers itself.
#pragma once

#include <iostream>
#include <string>

#include "analyzer/output.h"
#include "cli/command.h"
#include "common/expected.h"

namespace tileprof::cli {

inline void AddFormatOption(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format, std::string(analyzer::kOutputFormatHelp))
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
}

// Prints `output` in `format` on stdout, or the error on stderr; the exit status.
inline int PrintOutput(std::string_view command, const Expected<analyzer::Output>& output,
                       const std::string& format) {
  if (!output) {
    PrintDiagnostic(command, output.error().message());
    return kExitError;
  }
  // The option is checked by CLI11, so the format always parses.
  std::cout << analyzer::Render(
      *output, analyzer::ParseOutputFormat(format).value_or(analyzer::OutputFormat::kTable));
  return std::cout.good() ? kExitOk : kExitError;
}

}  // namespace tileprof::cli
