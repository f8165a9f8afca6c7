#include "reports/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

namespace tileprof::report {
namespace {

// A JSON string literal; invalid UTF-8 (names read from text) is replaced.
std::string Quote(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string WriteChromeTrace(const ExecutionReport& execution, const ChromeTraceOptions& options) {
  const bool have_clock = execution.clock_hz > 0 && std::isfinite(execution.clock_hz);
  const double us_per_cycle = have_clock ? 1e6 / execution.clock_hz : 1.0;
  auto ipu_of = [&](uint64_t tile) -> uint64_t {
    return options.tiles_per_ipu > 0 ? tile / options.tiles_per_ipu : 0;
  };
  // The IPUs and tiles that appear: every IPU gets a steps row.
  std::set<uint64_t> ipus;
  for (uint32_t i = 0; i < std::max<uint32_t>(1, options.num_ipus); ++i) ipus.insert(i);
  std::set<uint64_t> tiles;
  for (const ExecutionStep& step : execution.steps) {
    for (size_t tile = 0; tile < step.cycles_by_tile.size(); ++tile) {
      if (step.cycles_by_tile[tile] == 0) continue;
      tiles.insert(tile);
      ipus.insert(ipu_of(tile));
    }
  }

  std::string out;
  out += "{\"displayTimeUnit\":\"ns\",\"otherData\":{";
  out += fmt::format(
      "\"generator\":\"tileprof "
      "export-trace\",\"clock_hz\":{},\"time_unit\":{},\"total_cycles\":{}",
      have_clock ? execution.clock_hz : 0.0,
      Quote(have_clock ? "microseconds" : "cycles (no clock in the report)"),
      execution.total_cycles);
  out += "},\"traceEvents\":[";
  bool first = true;
  auto event = [&](const std::string& text) {
    if (!first) out += ",\n";
    first = false;
    out += text;
  };
  for (uint64_t ipu : ipus) {
    event(fmt::format(
        R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"IPU {}"}}}})", ipu,
        ipu));
    event(fmt::format(
        R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
        ipu, ipu));
    event(fmt::format(
        R"({{"ph":"M","name":"thread_name","pid":{},"tid":0,"args":{{"name":"steps"}}}})", ipu));
  }
  for (uint64_t tile : tiles) {
    event(fmt::format(
        R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"tile {}"}}}})",
        ipu_of(tile), tile + 1, tile));
    event(fmt::format(
        R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
        ipu_of(tile), tile + 1, tile + 1));
  }
  uint64_t start = 0;
  for (size_t i = 0; i < execution.steps.size(); ++i) {
    const ExecutionStep& step = execution.steps[i];
    const std::string name = Quote(step.program);
    const double ts = static_cast<double>(start) * us_per_cycle;
    for (uint64_t ipu : ipus) {
      event(fmt::format(R"({{"ph":"X","name":{},"cat":"step","pid":{},"tid":0,"ts":{},"dur":{},)"
                        R"("args":{{"step":{},"cycles":{}}}}})",
                        name, ipu, ts, static_cast<double>(step.cycles) * us_per_cycle, i,
                        step.cycles));
    }
    for (size_t tile = 0; tile < step.cycles_by_tile.size(); ++tile) {
      const uint64_t cycles = step.cycles_by_tile[tile];
      if (cycles == 0) continue;
      event(fmt::format(R"({{"ph":"X","name":{},"cat":"tile","pid":{},"tid":{},"ts":{},"dur":{},)"
                        R"("args":{{"step":{},"cycles":{}}}}})",
                        name, ipu_of(tile), tile + 1, ts,
                        static_cast<double>(cycles) * us_per_cycle, i, cycles));
    }
    start += step.cycles;
  }
  out += "]}\n";
  return out;
}

}  // namespace tileprof::report
