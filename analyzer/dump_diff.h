// `tileprof dumpdiff`: compares two runs' XLA dumps (or two HLO files) and
// says which modules recompile and why, verdict first, details after.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/dump_pairing.h"
#include "analyzer/hlo_diff.h"
#include "common/expected.h"

namespace tileprof::analyzer {

struct DumpDiffOptions {
  bool largest_only = false;  // compare just the largest module of each run
};

struct PairResult {
  std::string key;             // function + stage
  std::string path_a, path_b;  // empty on the side where the module is missing
  std::string module_a, module_b;
  std::optional<ModuleDiff> diff;  // set when both sides parsed
  std::string error;               // a side did not parse
  // Computations whose text is the same bytes in both and so were never
  // parsed (SkimComputations); 0 when both were parsed in full.
  int unparsed_same_computations = 0;
};

struct DumpDiffResult {
  std::string input_a, input_b;
  std::vector<PairResult> pairs;
  std::vector<std::string> skipped_a, skipped_b;  // not HLO text

  int changed() const;
  int identical() const;
  int only_a() const;
  int only_b() const;
  int errors() const;
  // Equal as far as recompilation goes: every pair at level <= 3, nothing unpaired.
  bool equal() const { return changed() == 0 && only_a() == 0 && only_b() == 0 && errors() == 0; }
};

// A and B are both files or both directories. Errors: unreadable inputs.
// Unparsable modules are reported per pair, not as an error of the whole run.
Expected<DumpDiffResult> DiffDumps(const std::string& a, const std::string& b,
                                   const DumpDiffOptions& options);

std::string FormatDumpDiffText(const DumpDiffResult& result);
std::string FormatDumpDiffJson(const DumpDiffResult& result);

}  // namespace tileprof::analyzer
