// CBOR reports (RFC 8949, via libcbor): the same schema as the JSON reports
// (docs/report-schema.md), member for member, in CBOR's encoding. The file
// starts with the self-describing tag 55799 (bytes d9 d9 f7) so `file` and
// other tools recognise it. Objects are written as indefinite-length maps
// (the writer streams and does not count members ahead), arrays with their
// length; doubles as 64-bit floats, so they read back exactly, NaN included.
//
// The reader walks the items with libcbor's stream decoder and feeds the
// same builder as the JSON reader: same streaming, same error paths
// ("<file>: compilation.tiles[12].categories.stack: expected an unsigned
// integer"); malformed CBOR fails with the byte offset. Definite and
// indefinite lengths are both accepted; tags are ignored.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/expected.h"
#include "reports/report_document.h"

namespace tileprof::report {

// The CBOR bytes (in a std::string as a byte buffer).
std::string WriteCborReport(const ReportDocument& document);
Status WriteCborReportFile(const std::string& path, const ReportDocument& document);

Expected<ReportDocument> ReadCborReport(std::span<const uint8_t> bytes, std::string_view filename);
Expected<ReportDocument> ReadCborReportFile(const std::string& path);

}  // namespace tileprof::report
