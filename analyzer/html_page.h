// `tileprof html`: one self-contained page (no external files, fonts or
// scripts) with the report's summary, its plots (each that the report can
// give) and its most-used tiles. The only script is inline: it makes the
// tile table sortable and finally sets <body data-ready="1">, which the
// headless-Chromium test checks to know the script ran to its end.
#pragma once

#include <string>

#include "analyzer/open_report.h"

namespace tileprof::analyzer {

// The most-used tiles listed (the categories plot shows the first
// report::kDefaultTileBlocks of them).
inline constexpr size_t kHtmlTopTiles = 20;
static_assert(kHtmlTopTiles >= report::kDefaultTileBlocks);
// What HtmlPage reads of a report.
inline constexpr OpenOptions kHtmlNeeds = TotalsAndTopTiles(kHtmlTopTiles, /*total=*/true);

std::string HtmlPage(const LoadedReport& report);

}  // namespace tileprof::analyzer
