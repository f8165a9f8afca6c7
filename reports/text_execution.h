// The Execution section of a text report, line by line: every layout Poplar
// published (../shared/spec/text-report.md section 7; docs/text-report.md
// "Execution layouts"):
//
//   SDK 1.x   Total cycles: ... / Total compute cycles (including idle threads):
//             5,513,152 Estimated (must enable debug.instrumentCompute) / Total
//             global exchange cycles: Must enable debug.instrumentExternalExchange /
//             Total shared structure copy cycles: 0 / Cycles by vertex type:
//   SDK 2.0   Total cycles: ... / Tile average ... cycles: 3,801.8 (0.1% of total)
//   SDK 2.1+  Programs executed: / <anonymous>. / the same rows, indented
//
// The text reader (text_reader.cc) owns the section state machine; this file
// reads the lines inside it, so the reader stays one state machine over
// sections and this one over rows.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reports/report.h"

namespace tileprof::report {

// What a line did; kError carries the token at fault (a view into the line)
// and the message, which the caller turns into "file:line: error: ...".
struct ExecutionLineOutcome {
  enum Kind { kRead, kUnknown, kDuplicate, kInconsistent, kError } kind = kRead;
  std::string_view token;
  std::string message;
};

class ExecutionSectionReader {
 public:
  explicit ExecutionSectionReader(ExecutionReport& out) : out_(out) {}

  // Reads one trimmed, non-empty line of the section.
  ExecutionLineOutcome Read(std::string_view text);

  // The "approx N microseconds" of the last Total cycles line.
  const std::optional<double>& microseconds() const { return microseconds_; }

 private:
  enum class Group { kNone, kPrograms, kVertexTypes, kSteps };

  ExecutionLineOutcome TotalCycles(std::string_view value);
  std::optional<ExecutionLineOutcome> TileAverage(std::string_view text);
  std::optional<ExecutionLineOutcome> TileTotal(std::string_view text);
  ExecutionLineOutcome GroupRow(std::string_view text);

  ExecutionReport& out_;
  Group group_ = Group::kNone;
  std::optional<double> microseconds_;
};

}  // namespace tileprof::report
