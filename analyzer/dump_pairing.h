// Pairs the modules of two `--xla_dump_to` directories: the same function
// compiled in two runs gets different file names (module ids, timestamps,
// uniquifier suffixes), so files are matched on a key with those parts
// removed. File-name grammar: ../shared/spec/hlo-text.md section 9.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace tileprof::analyzer {

// What a dump file name says about the module it holds.
struct DumpName {
  std::string file;        // the name as found (no directory)
  int64_t module_id = -1;  // module_NNNN, -1 when absent
  std::string module;      // module name as printed, e.g. "jit__uniform.21"
  std::string function;    // the run-independent part, e.g. "jit__uniform"
  std::string
      stage;  // "before_optimizations", "cpu_after_optimizations", "0004.pipe.after_x.before_y"
};

// Parses an HLO text dump file name. Returns nullopt for files that are not
// HLO text (protos, .dot, buffer assignments, LLVM IR, ...).
std::optional<DumpName> ParseDumpName(std::string_view file_name);

// The run-independent part of a module name: drops the ".N" uniquifier and
// TensorFlow's per-trace function uid ("a_inference_step_1981__.1083" → "a_inference_step").
std::string FunctionKey(std::string_view module_name);

struct DumpFile {
  std::string path;
  DumpName name;
  uint64_t bytes = 0;
};

struct DumpPair {
  std::string key;               // function + " " + stage
  std::optional<DumpFile> a, b;  // one side empty: present in only one run
};

struct DumpPairing {
  std::vector<DumpPair> pairs;                    // sorted by key, then by module id
  std::vector<std::string> skipped_a, skipped_b;  // files that are not HLO text
};

// Lists `dir` (not recursively) and parses every file name.
Expected<std::vector<DumpFile>> ListDump(const std::string& dir,
                                         std::vector<std::string>* skipped = nullptr);

// Pairs two listings. Several modules of one function in a run (a function
// compiled for several shapes) pair in module-id order.
DumpPairing PairDumps(std::vector<DumpFile> a, std::vector<DumpFile> b);

// The largest HLO file of a listing (the seed's "compare the largest module").
const DumpFile* LargestModule(const std::vector<DumpFile>& files);

}  // namespace tileprof::analyzer
