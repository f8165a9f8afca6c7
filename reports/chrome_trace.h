// The execution steps of an execution report as a Chrome trace-event JSON
// file (the "JSON Object Format" of the Trace Event Format document), which
// chrome://tracing and Perfetto's UI open:
//
//   {"displayTimeUnit":"ns","otherData":{...},"traceEvents":[
//     {"ph":"M","name":"process_name","pid":0,"args":{"name":"IPU 0"}}, ...
//     {"ph":"X","name":"add","cat":"step","pid":0,"tid":0,"ts":0,"dur":0.075,"args":{...}}, ...]}
//
// One process (pid) per IPU. In each, thread 0 ("steps") shows every step
// for its whole duration; given the compilation's program tree, thread
// kProgramsTid ("programs") shows each step inside the program nodes that
// run it (Sequence, Repeat, If ... down to the Execute or copy), as nested
// slices, consecutive steps of one node in one slice of it; with per-tile
// cycles (a tile-level profile), thread <tile>+1 ("tile <tile>", global tile
// id) shows each tile's busy cycles within the step and, when an IPU has
// more than `tile_group` tiles, thread kTileGroupTid + g ("tiles a-b") the
// busiest tile of each group of that many. Steps run one after another and every tile starts
// a step together (bulk-synchronous execution), so step i starts at the sum
// of the earlier steps' cycles. Times are microseconds at the report's clock;
// with no clock (0) one cycle is shown as one microsecond, and otherData
// says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/report.h"

namespace tileprof::report {

// Thread ids of the programs row and of the first tile group: above any
// tile's (tile + 1), so every kind of row keeps its own ids.
inline constexpr uint64_t kProgramsTid = uint64_t{1} << 31;
inline constexpr uint64_t kTileGroupTid = kProgramsTid + 1;

struct ChromeTraceOptions {
  // Tiles per IPU for the pid of a tile; 0 puts every tile on IPU 0.
  uint64_t tiles_per_ipu = 0;
  // IPUs shown without per-tile data (each gets the steps row); at least 1.
  uint32_t num_ipus = 1;
  // The compilation's program tree (node 0 the root; may be null or empty):
  // a step belongs to the first node, in tree order, named as it is.
  const std::vector<Program>* programs = nullptr;
  // Tiles per group row; an IPU of at most this many tiles has none.
  uint64_t tile_group = 64;
};

std::string WriteChromeTrace(const ExecutionReport& execution, const ChromeTraceOptions& options);

}  // namespace tileprof::report
