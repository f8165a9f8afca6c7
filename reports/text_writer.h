// The text report writer (`Trace_Event_Report.rep`): the Poplar profile
// summary layout of ../shared/spec/text-report.md, to the character. Every
// line is computed from the structs: whole-graph numbers, the histogram and
// the tile blocks come from per-tile data when the report has it (report.h
// Resolve*), else from what a text report printed. Choices the spec leaves
// open are listed in docs/text-report.md.
#pragma once

#include <string>
#include <vector>

#include "reports/report.h"

namespace tileprof::report {

struct TextReportOptions {
  // A first line "tileprof report format: <major>.<minor>" and a blank line.
  // Off gives a file a Poplar-era tool cannot tell from the original.
  bool format_version_line = true;
  TileBlocks tile_blocks = TileBlocks::kWhenImbalanced;
  size_t max_tile_blocks = kDefaultTileBlocks;
  // showExecutionSteps: an "Execution steps:" list in the Execution section.
  bool show_execution_steps = false;
  // tileprof's own "Liveness:" section (before Execution) when the report
  // has liveness steps: the peak, the fullest tile then and what is live.
  // Poplar prints none; its readers skip it (tileprof's keeps none of it).
  bool show_liveness = false;
};

inline constexpr std::string_view kFormatLinePrefix = "tileprof report format: ";

// The whole report, ending in a newline. Sections (each only when present):
// format line, Target, Graph, Memory Usage with By Tile, tile blocks,
// Liveness (show_liveness), Execution, separated by one blank line. `execution` may be null.
std::string WriteTextReport(const CompilationReport& report, const ExecutionReport* execution,
                            const TextReportOptions& options);

// The pieces, without trailing newlines, for the analyzer and tests.
std::vector<std::string> TargetLines(const Target& target);
std::vector<std::string> GraphLines(const GraphInfo& graph);
// "Memory Usage:" through the By Type rows; rows not known are left out.
std::vector<std::string> MemoryUsageLines(const MemoryUsage& usage);
std::vector<std::string> ExecutionLines(const ExecutionReport& execution,
                                        const TextReportOptions& options);
// "Liveness:" and its rows; empty when the report has no liveness steps.
inline constexpr size_t kLivenessListed = 10;  // variables listed at the peak
std::vector<std::string> LivenessLines(const CompilationReport& report);

// The By Type name column width: the longest name rounded up to a multiple
// of 4, plus 4 (67 -> 72 and 72 -> 76 give the published 96- and
// 100-character rows with a 10-character number field; the rule itself is
// not publicly documented).
size_t VertexTypeNameWidth(size_t longest_name);

}  // namespace tileprof::report
