// `tileprof view`: one self-contained page of a report (and optionally a
// second one to compare with) in the spirit of PopVision Graph Analyser:
// Summary, Insights, Memory (per tile by category, the tile map, a tile's
// breakdown and largest variables), Liveness (live bytes over the program
// steps), Program tree, Execution (when the report has one) and Compare.
//
// The page is a shell, the report's data as one JSON object in
// <script type="application/json" id="tileprof-data">, and an inline script
// (analyzer/view/*.js) that draws the views in the browser: no network
// access, works from file://. The script sets <body data-ready="1"> once
// the page is up (the browser tests wait for it).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "analyzer/open_report.h"
#include "common/expected.h"

namespace tileprof::analyzer {

// Variables listed per tile in the page (the largest), and the most listed
// in all: a 94,208-tile report would otherwise carry millions.
inline constexpr size_t kViewVariablesPerTile = 12;
inline constexpr size_t kViewMaxVariables = 60'000;

// The page's data for one report: target, summary, per-tile columns (bytes
// excluding gaps, always/not-always live, each category), the largest
// variables of the most used tiles, the histogram, the out-of-memory
// analysis, liveness steps, programs, always-live variables and the
// execution's steps. Errors only when an analysis fails on a malformed
// report (named by the analysis).
Expected<nlohmann::json> ViewData(const LoadedReport& report);

// The whole page; `other` (may be null) adds the Compare view.
Expected<std::string> ViewPage(const LoadedReport& report, const LoadedReport* other);

}  // namespace tileprof::analyzer
