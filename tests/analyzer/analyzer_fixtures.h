// Reports for the analyzer tests: samples compiled by the engine and written
// in every format (text, JSON, CBOR, SQLite) into a per-process temporary
// directory, plus helpers to run shell pipelines.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "common/file.h"
#include "engine/session/session.h"
#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/sqlite_profile.h"
#include "reports/text_writer.h"

namespace tileprof::analyzer::testing {

namespace fs = std::filesystem;

inline std::string SourcePath(const std::string& relative) {
  return std::string(TILEPROF_SOURCE_DIR) + "/" + relative;
}
inline std::string SharedPath(const std::string& relative) {
  return std::string(TILEPROF_SHARED_DIR) + "/" + relative;
}

// Removed when the test binary exits.
inline fs::path TempDir() {
  struct Dir {
    fs::path path =
        fs::temp_directory_path() / ("tileprof_analyzer_test_" + std::to_string(::getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  };
  static Dir dir;
  return dir.path;
}

struct CompiledSample {
  report::CompilationReport report;
  std::map<std::string, std::string> paths;  // "text", "json", "cbor", "sqlite" -> file
};

// Compiles `model` (relative to the source tree) for `preset` and writes the
// four formats as <stem>.rep/.json/.cbor/.db. Cached per (model, preset).
inline const CompiledSample& Sample(const std::string& model, const std::string& preset,
                                    const std::string& stem) {
  static std::map<std::string, CompiledSample> cache;
  auto it = cache.find(stem);
  if (it != cache.end()) return it->second;
  engine::SessionOptions options;
  options.target.preset = preset;
  options.progress = engine::ProgressMode::kOff;
  engine::CompileLog log;
  auto compiled = engine::CompileHloFile(SourcePath(model), options, log);
  EXPECT_TRUE(compiled) << compiled.error().message();
  CompiledSample sample;
  if (!compiled) return cache[stem];
  sample.report = compiled->result.report;
  report::ReportDocument document;
  document.compilation = sample.report;
  std::string base = (TempDir() / stem).string();
  sample.paths["text"] = base + ".rep";
  sample.paths["json"] = base + ".json";
  sample.paths["cbor"] = base + ".cbor";
  sample.paths["sqlite"] = base + ".db";
  EXPECT_TRUE(
      WriteFileAtomic(sample.paths["text"], report::WriteTextReport(sample.report, nullptr, {})));
  EXPECT_TRUE(report::WriteJsonReportFile(sample.paths["json"], document));
  EXPECT_TRUE(report::WriteCborReportFile(sample.paths["cbor"], document));
  EXPECT_TRUE(report::WriteProfileDatabase(sample.paths["sqlite"], document));
  return cache[stem] = std::move(sample);
}

inline const CompiledSample& OomSample() {
  return Sample("samples/oom/model.hlo", "ipu1", "oom_ipu1");
}
inline const CompiledSample& AdderSample() {
  return Sample("samples/adder.hlo", "ipu2", "adder_ipu2");
}

inline std::string ReadOrEmpty(const std::string& path) {
  auto text = ReadFile(path);
  return text ? *text : std::string();
}

struct ShellRun {
  std::string out;
  int status = -1;
};

// Runs `command` with /bin/sh, capturing stdout (stderr too with `2>&1`).
inline ShellRun Shell(const std::string& command) {
  ShellRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace tileprof::analyzer::testing
