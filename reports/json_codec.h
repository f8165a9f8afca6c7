// JSON reports: the schema of docs/report-schema.md ({"format":
// "tileprof-report", "version": {"major": 1, "minor": 0}, "compilation":
// {...}, "execution": {...}}), written compactly in one line.
//
// The reader streams (json_sax.h's parser feeding schema::DocumentBuilder):
// tiles, variables and execution steps are decoded one at a time, so reading
// a report costs the structs plus the input, not a DOM of the whole file.
// Errors are "<file>:<line>:<col>: <syntax error>" or "<file>: <path>:
// <problem>" with a JSON path such as compilation.tiles[12].categories.stack;
// an unknown major version fails naming both versions. Unknown keys are
// ignored (a newer minor version may add some).
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"
#include "reports/report_document.h"

namespace tileprof::report {

// Names that are not valid UTF-8 (possible only in reports read from text)
// are written with U+FFFD for each invalid byte. Doubles are written so that
// they read back exactly; non-finite ones as the strings "NaN", "Infinity",
// "-Infinity".
std::string WriteJsonReport(const ReportDocument& document);
Status WriteJsonReportFile(const std::string& path, const ReportDocument& document);

// `filename` only names the input in messages.
Expected<ReportDocument> ReadJsonReport(std::string_view text, std::string_view filename);
// Reads the file in 1 MiB chunks: memory is the structs plus one chunk.
Expected<ReportDocument> ReadJsonReportFile(const std::string& path);

}  // namespace tileprof::report
