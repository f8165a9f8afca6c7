// `tileprof html`: one self-contained page (no external files, fonts or
// scripts) with the report's summary, its plots (each that the report can
// give) and its most-used tiles. The only script is inline: it makes the
// tile table sortable and finally sets <body data-ready="1">, which the
// headless-Chromium test checks to know the script ran to its end.
#pragma once

#include <string>

#include "analyzer/open_report.h"

namespace tileprof::analyzer {

std::string HtmlPage(const LoadedReport& report);

}  // namespace tileprof::analyzer
