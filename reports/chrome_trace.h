// The execution steps of an execution report as a Chrome trace-event JSON
// file (the "JSON Object Format" of the Trace Event Format document), which
// chrome://tracing and Perfetto's UI open:
//
//   {"displayTimeUnit":"ns","otherData":{...},"traceEvents":[
//     {"ph":"M","name":"process_name","pid":0,"args":{"name":"IPU 0"}}, ...
//     {"ph":"X","name":"add","cat":"step","pid":0,"tid":0,"ts":0,"dur":0.075,"args":{...}}, ...]}
//
// One process (pid) per IPU. In each, thread 0 ("steps") shows every step
// for its whole duration; with per-tile cycles (a tile-level profile),
// thread <tile>+1 ("tile <tile>", global tile id) shows each tile's busy
// cycles within the step. Steps run one after another and every tile starts
// a step together (bulk-synchronous execution), so step i starts at the sum
// of the earlier steps' cycles. Times are microseconds at the report's clock;
// with no clock (0) one cycle is shown as one microsecond, and otherData
// says so.
#pragma once

#include <cstdint>
#include <string>

#include "reports/report.h"

namespace tileprof::report {

struct ChromeTraceOptions {
  // Tiles per IPU for the pid of a tile; 0 puts every tile on IPU 0.
  uint64_t tiles_per_ipu = 0;
  // IPUs shown without per-tile data (each gets the steps row); at least 1.
  uint32_t num_ipus = 1;
};

std::string WriteChromeTrace(const ExecutionReport& execution, const ChromeTraceOptions& options);

}  // namespace tileprof::report
