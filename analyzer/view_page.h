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
// the page is up (the browser tests wait for it). `tileprof view --serve`
// (analyzer/view_server.h) serves the same page without its data, the
// shell, and the data beside it, which the script then fetches.
#pragma once

#include <string>
#include <string_view>

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

// The page's data, one JSON object: {"report": ViewData(report)} and, when
// `other` is not null, "other" (its ViewData) and "compare" (`tileprof
// compare` as JSON) for the Compare view.
Expected<nlohmann::json> ViewPageData(const LoadedReport& report, const LoadedReport* other);

// The whole page, ViewPageData embedded; `other` (may be null) adds the
// Compare view.
Expected<std::string> ViewPage(const LoadedReport& report, const LoadedReport* other);

// The same page without its data: the data element is empty and has
// data-src="`data_url`", where the script fetches ViewPageData from.
std::string ViewShell(const LoadedReport& report, const LoadedReport* other,
                      std::string_view data_url);

}  // namespace tileprof::analyzer
