// SVG plots of a report (`tileprof plot`, and the pictures of `tileprof
// html`): per-tile memory with the tile capacity line, the By Tile
// histogram, the categories of the most-used tiles stacked, and the cycle
// split of an execution (compute, exchange, sync, host I/O). Written with
// XmlWriter (see xml_writer.h for why not tinyxml2).
//
// The tiles plot has at most kMaxTileColumns columns: with more tiles each
// column shows the largest tile of its run (a spike of one tile must stay
// visible), and its tooltip names that tile.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analyzer/open_report.h"
#include "common/expected.h"

namespace tileprof::analyzer {

enum class PlotKind { kTiles, kHistogram, kCategories, kExecution };
// "tiles", "histogram", "categories", "execution"
std::optional<PlotKind> ParsePlotKind(std::string_view name);
std::string_view PlotKindName(PlotKind kind);

inline constexpr size_t kMaxTileColumns = 1000;

// A standalone SVG document (with the XML declaration when `standalone`).
// Errors name the report when it lacks what the plot needs (per-tile data
// for `tiles`, a histogram, tile blocks, an Execution section).
Expected<std::string> PlotSvg(const LoadedReport& report, PlotKind kind, bool standalone = true);

// What PlotSvg(kind) reads of a report: the categories plot shows the
// report::kDefaultTileBlocks most used tiles; the execution plot needs no
// memory (an execution-only report will do); the others, per-tile totals.
OpenOptions PlotNeeds(PlotKind kind);

}  // namespace tileprof::analyzer
