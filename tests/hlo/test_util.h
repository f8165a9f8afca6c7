// Helpers shared by the HLO tests: corpus files and parsing shortcuts.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/file.h"
#include "engine/hlo/parser.h"
#include "tests/sanitizers.h"

namespace tileprof::hlo::testing {

inline std::filesystem::path CorpusDir() {
  return std::filesystem::path(TILEPROF_SHARED_DIR) / "corpus" / "hlo";
}

// Every HLO file of the shared corpus (README.md and SOURCES.tsv excluded),
// sorted by name.
inline std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDir())) {
    std::string name = entry.path().filename().string();
    if (name == "README.md" || name == "SOURCES.tsv") continue;
    files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Corpus files that each take about a minute to compile or run in the
// release build (millions of vertices or exchanged regions), or two minutes
// across the corpus tests under ASan+UBSan (jit_loss.9581: its LU
// factorisations, which the oracle's linalg module also drives). Under the
// sanitizers each would take many minutes, so the sanitizer build leaves
// them to the release build, which runs every file; the other corpus files
// drive the same code under the sanitizers.
inline bool TooSlowUnderSanitizers(const std::string& file) {
  static const char* const kSlow[] = {
      "1648627826626299.module_0161.jit__reduce_max.11.before_optimizations.txt",
      "1648647409115717.module_0337.jit_loss.9581.before_optimizations.txt",
      "module_0033.jit_prim_fun.13.before_optimizations.txt",
      "module_0698.jit__lambda_.256.before_optimizations.txt",
      "xla_tools_data_benchmarking_mobilenet_v2.hlo",
      "xla_tools_hlo_opt_tests_cpu_hlo_pass.hlo",
  };
  const std::string name = std::filesystem::path(file).filename().string();
  return kUnderAddressSanitizer && std::any_of(std::begin(kSlow), std::end(kSlow),
                                               [&](const char* slow) { return name == slow; });
}

inline std::string ReadCorpus(const std::string& name) {
  Expected<std::string> text = ReadFile((CorpusDir() / name).string());
  EXPECT_TRUE(text.has_value()) << name;
  return text ? *text : std::string();
}

// Parses or fails the test with the diagnostic.
inline Module MustParse(std::string text, std::string name = "test.hlo") {
  Expected<Module> module = ParseModule(std::move(text), {.source_name = name});
  if (!module) {
    ADD_FAILURE() << module.error().message();
    std::abort();
  }
  return std::move(*module);
}

// The error message of a parse that must fail.
inline std::string ParseError(std::string text) {
  Expected<std::vector<Module>> modules = ParseModules(std::move(text), {.source_name = "bad.hlo"});
  EXPECT_FALSE(modules.has_value()) << "parsed, but should not have";
  return modules ? std::string() : modules.error().message();
}

// A gtest-safe parameter name from a file name.
inline std::string TestName(const std::string& file) {
  std::string name;
  for (char c : file) name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return name;
}

}  // namespace tileprof::hlo::testing
