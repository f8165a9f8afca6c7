// Report documents for the JSON, CBOR and SQLite codec tests: one that sets
// every field of every struct (so a field a codec forgets fails a round
// trip), small ones for the fuzz seeds, and the text reports of the corpus
// read into documents.
#pragma once

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "report_fixtures.h"
#include "reports/report_document.h"
#include "reports/text_reader.h"

namespace tileprof::report::testing {

// Four tiles of a made-up two-IPU target, with every per-tile field set.
inline CompilationReport SmallCompilation() {
  CompilationReport report;
  report.target = MakeTarget("ipu21", 2, 2, 638976, 1.85e9, 1);
  report.graph = GraphInfo{12, 20, 7, 2};
  report.vertex_types = {{"popops::ScaledAddSupervisor<float,float,true>"},
                         {"poplar_rt::DstStridedCopyDA32"}};
  report.compute_sets = {{"add/ComputeSet", {{0, 4}}}, {"copy", {{1, 2}, {0, 1}}}};
  report.programs = {{"main", "Sequence", {1, 2}, std::nullopt},
                     {"add", "Execute", {}, 0},
                     {"copy", "Execute", {}, 1}};
  report.operations = {{"add.1", "add", 4, 96, 512, std::nullopt},
                       {"dot.2", "dot", 2, 48, 0, uint64_t{1} << 40}};
  report.compute_set_operations = {{0, 0}, {1, 1}};
  report.liveness = {{1, 1200}, {2, 400}};
  report.liveness_fullest_tiles = {{2, 700}, {0, 100}};
  report.always_live_variables = {{"Vertex Code", 1200}, {"c", 8}};
  report.not_always_live_variables = {{"exchange buffer of add", 800, 0, 0}, {"x", 400, 0, 1}};
  for (uint32_t i = 0; i < 4; ++i) {
    TileMemory& tile = report.tiles.emplace_back();
    tile.tile = i;
    At(tile.by_category, Category::kVariables) = 100 * (i + 1);
    At(tile.by_category, Category::kStack) = 64;
    At(tile.by_category, Category::kVertexInstances) = 24 + i;
    At(tile.by_category, Category::kVertexCode) = 300;
    tile.vertex_data = {16, 8 + i, 0, 0, 0};
    tile.vertex_types = {{0, 20}, {1, 4 + i}};
    FinishTile(tile, 8 * i, i == 3 ? Region::kInterleaved : Region::kNonInterleaved);
  }
  report.variables = {{"a", 0, 100, Category::kVariables, false, 352},
                      {"b", 1, 200, Category::kVariables, false, std::nullopt},
                      {"stack", 2, 64, Category::kStack, true, 0}};
  return report;
}

inline ExecutionReport SmallExecution() {
  ExecutionReport execution = SampleExecution();
  execution.programs = {"main", "<anonymous>"};
  execution.steps = {{"add", 120, {30, 0, 45, 0}}, {"copy", 80, {}}, {"sync", 5, {5, 5, 5, 5}}};
  return execution;
}

// Every field of every struct set, including the awkward values: names with
// quotes, backslashes, control characters and non-ASCII text, unknown tile
// averages, an unset optional offset, verbatim figures with partial rows.
inline ReportDocument FullDocument() {
  ReportDocument document;
  CompilationReport& report = document.compilation.emplace(SmallCompilation());
  report.vertex_types.push_back({"weird \"name\" \\ with\ttab\n\x01 and \xc3\xa9\xe2\x82\xac"});
  report.tiles[2].vertex_types.push_back({2, 1});
  report.variables.push_back(
      {"\xf0\x9f\x98\x80", 3, 7, Category::kSharedDataStorage, true, 1u << 20});

  MemoryUsage total = Summarize(report.tiles, report.vertex_types);
  total.known.regions.reset(2);
  total.by_region[2] = 0;
  total.known.vertex_data = false;
  total.vertex_data = 0;
  report.verbatim.total = total;
  report.verbatim.by_tile = SummarizeByTile(report.tiles, report.target->bytes_per_tile);
  MemoryUsage block = UsageOfTile(report.tiles[3], report.vertex_types);
  block.known.by_vertex_type = false;
  block.by_vertex_type.clear();
  report.verbatim.tile_blocks = {{3, block},
                                 {0, UsageOfTile(report.tiles[0], report.vertex_types)}};

  // Format 1.2: each operation's tiles and code, per-IPU liveness, the
  // cycle splits.
  report.operations[0].code_bytes = 548;
  report.operations[0].tiles = 3;
  report.operations[1].code_bytes = 160;
  report.operations[1].tiles = 1;
  report.operation_tiles = {{0, 0, 1, 3}, {0, 3, 3, 1}, {1, 2, 2, 2}};
  report.liveness_by_ipu = {{0, 0, 300}, {0, 1, 900}, {1, 0, 100}, {1, 1, 300}};

  ExecutionReport& execution = document.execution.emplace(SmallExecution());
  execution.tile_average_cycles[3].reset();
  execution.cycles_by_vertex_type.push_back({"popops::Zero<float>", 3, 0});
  execution.steps[0].compute_cycles = 75;
  execution.steps[0].exchange_cycles = 200;
  execution.steps[0].sync_cycles = 205;
  execution.tile_cycles = {{0, 30, 100, 75}, {1, 0, 50, 155}, {2, 45, 60, 100}, {3, 0, 0, 205}};
  return document;
}

inline ReportDocument EngineDocument(CompilationReport report,
                                     std::optional<ExecutionReport> execution = std::nullopt) {
  ReportDocument document;
  document.compilation = std::move(report);
  document.execution = std::move(execution);
  return document;
}

inline ReportDocument DocumentOf(const ParsedTextReport& parsed) {
  ReportDocument document;
  document.compilation = parsed.compilation;
  document.execution = parsed.execution;
  return document;
}

// Every text report we have: the published corpus and the text fuzz seeds.
inline std::vector<std::filesystem::path> TextReportFiles() {
  std::vector<std::filesystem::path> files;
  for (const char* dir :
       {TILEPROF_SHARED_DIR "/corpus/reports", TILEPROF_SOURCE_DIR "/fuzz/text_report/corpus"}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".rep") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tileprof::report::testing
