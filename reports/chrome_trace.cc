#include "reports/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <vector>

#include "reports/program_chains.h"

namespace tileprof::report {
namespace {

// A JSON string literal; invalid UTF-8 (names read from text) is replaced.
std::string Quote(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The trace's JSON, event by event. Rows, top to bottom in each IPU's
// process: steps, programs, tile groups, tiles.
class TraceWriter {
 public:
  TraceWriter(const ExecutionReport& execution, const ChromeTraceOptions& options)
      : execution_(execution),
        options_(options),
        have_clock_(execution.clock_hz > 0 && std::isfinite(execution.clock_hz)),
        us_per_cycle_(have_clock_ ? 1e6 / execution.clock_hz : 1.0),
        chains_(options.programs),
        with_programs_(options.programs != nullptr && !options.programs->empty()),
        group_(std::max<uint64_t>(options.tile_group, 1)) {
    // The IPUs and tiles that appear: every IPU gets a steps row.
    for (uint32_t i = 0; i < std::max<uint32_t>(1, options.num_ipus); ++i) ipus_.insert(i);
    for (const ExecutionStep& step : execution.steps) {
      for (size_t tile = 0; tile < step.cycles_by_tile.size(); ++tile) {
        if (step.cycles_by_tile[tile] == 0) continue;
        tiles_.insert(tile);
        ipus_.insert(IpuOf(tile));
      }
    }
    grouped_ = !tiles_.empty() && options.tiles_per_ipu > group_;
  }

  std::string Write() {
    out_ += "{\"displayTimeUnit\":\"ns\",\"otherData\":{";
    out_ += fmt::format(
        "\"generator\":\"tileprof "
        "export-trace\",\"clock_hz\":{},\"time_unit\":{},\"total_cycles\":{}",
        have_clock_ ? execution_.clock_hz : 0.0,
        Quote(have_clock_ ? "microseconds" : "cycles (no clock in the report)"),
        execution_.total_cycles);
    out_ += "},\"traceEvents\":[";
    Rows();
    uint64_t start = 0;
    for (size_t i = 0; i < execution_.steps.size(); ++i) {
      Step(i, start);
      start += execution_.steps[i].cycles;
    }
    CloseTo(0, start);
    out_ += "]}\n";
    return std::move(out_);
  }

 private:
  uint64_t IpuOf(uint64_t tile) const {
    return options_.tiles_per_ipu > 0 ? tile / options_.tiles_per_ipu : 0;
  }
  // Tile groups: within an IPU's tiles, g = (tile - first tile) / group.
  uint64_t GroupOf(uint64_t tile) const { return (tile % options_.tiles_per_ipu) / group_; }
  double Us(uint64_t cycles) const { return static_cast<double>(cycles) * us_per_cycle_; }

  void Event(const std::string& text) {
    if (!first_) out_ += ",\n";
    first_ = false;
    out_ += text;
  }
  void Thread(uint64_t pid, uint64_t tid, const std::string& name, uint64_t sort) {
    Event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                      pid, tid, Quote(name)));
    Event(fmt::format(
        R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
        pid, tid, sort));
  }

  // The processes and rows (metadata events).
  void Rows() {
    for (uint64_t ipu : ipus_) {
      Event(fmt::format(
          R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"IPU {}"}}}})", ipu,
          ipu));
      Event(fmt::format(
          R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
          ipu, ipu));
      Event(fmt::format(
          R"({{"ph":"M","name":"thread_name","pid":{},"tid":0,"args":{{"name":"steps"}}}})", ipu));
    }
    if (with_programs_) {
      for (uint64_t ipu : ipus_) Thread(ipu, kProgramsTid, "programs", 1);
    }
    if (grouped_) {
      std::set<std::pair<uint64_t, uint64_t>> groups;  // (ipu, g)
      for (uint64_t tile : tiles_) groups.insert({IpuOf(tile), GroupOf(tile)});
      for (const auto& [ipu, g] : groups) {
        const uint64_t first_tile = ipu * options_.tiles_per_ipu + g * group_;
        const uint64_t last_tile =
            std::min(first_tile + group_, (ipu + 1) * options_.tiles_per_ipu) - 1;
        Thread(ipu, kTileGroupTid + g, fmt::format("tiles {}-{}", first_tile, last_tile), 2 + g);
      }
    }
    for (uint64_t tile : tiles_)
      Thread(IpuOf(tile), tile + 1, fmt::format("tile {}", tile), kProgramsTid + tile);
  }

  // A program node's slice on every IPU's programs row.
  void Slice(uint32_t node, uint64_t from, uint64_t to) {
    for (uint64_t ipu : ipus_) {
      Event(fmt::format(R"({{"ph":"X","name":{},"cat":"program","pid":{},"tid":{},"ts":{},)"
                        R"("dur":{},"args":{{"kind":{},"cycles":{}}}}})",
                        Quote(chains_.node(node).name), ipu, kProgramsTid, Us(from), Us(to - from),
                        Quote(chains_.node(node).kind), to - from));
    }
  }
  // Closes the open program slices beyond the first `keep` at cycle `now`.
  void CloseTo(size_t keep, uint64_t now) {
    while (open_.size() > keep) {
      Slice(open_.back().first, open_.back().second, now);
      open_.pop_back();
    }
  }

  // Step i, starting at cycle `start`: its slice on each steps row, its
  // program nodes, and each tile's (and group's) busy cycles.
  void Step(size_t i, uint64_t start) {
    const ExecutionStep& step = execution_.steps[i];
    const std::string name = Quote(step.program);
    const double ts = Us(start);
    for (uint64_t ipu : ipus_) {
      Event(fmt::format(R"({{"ph":"X","name":{},"cat":"step","pid":{},"tid":0,"ts":{},"dur":{},)"
                        R"("args":{{"step":{},"cycles":{}}}}})",
                        name, ipu, ts, Us(step.cycles), i, step.cycles));
    }
    if (with_programs_) {
      // The step's ancestors stay open while consecutive steps share them
      // (a loop's iterations are one slice of it); its own node is a slice
      // of its own.
      std::vector<uint32_t> chain = chains_.Chain(step.program);
      const uint32_t own = chain.empty() ? UINT32_MAX : chain.back();
      if (!chain.empty()) chain.pop_back();
      size_t keep = 0;
      while (keep < open_.size() && keep < chain.size() && open_[keep].first == chain[keep]) ++keep;
      CloseTo(keep, start);
      for (size_t k = keep; k < chain.size(); ++k) open_.push_back({chain[k], start});
      if (own != UINT32_MAX) Slice(own, start, start + step.cycles);
    }
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> busiest;  // (ipu, g) -> cycles
    for (size_t tile = 0; tile < step.cycles_by_tile.size(); ++tile) {
      const uint64_t cycles = step.cycles_by_tile[tile];
      if (cycles == 0) continue;
      Event(fmt::format(R"({{"ph":"X","name":{},"cat":"tile","pid":{},"tid":{},"ts":{},"dur":{},)"
                        R"("args":{{"step":{},"cycles":{}}}}})",
                        name, IpuOf(tile), tile + 1, ts, Us(cycles), i, cycles));
      if (grouped_) {
        uint64_t& most = busiest[{IpuOf(tile), GroupOf(tile)}];
        most = std::max(most, cycles);
      }
    }
    for (const auto& [at, cycles] : busiest) {
      Event(fmt::format(
          R"({{"ph":"X","name":{},"cat":"tile-group","pid":{},"tid":{},"ts":{},"dur":{},)"
          R"("args":{{"step":{},"cycles":{}}}}})",
          name, at.first, kTileGroupTid + at.second, ts, Us(cycles), i, cycles));
    }
  }

  const ExecutionReport& execution_;
  const ChromeTraceOptions& options_;
  const bool have_clock_;
  const double us_per_cycle_;
  const ProgramChains chains_;
  const bool with_programs_;
  const uint64_t group_;
  bool grouped_ = false;
  std::set<uint64_t> ipus_, tiles_;
  std::vector<std::pair<uint32_t, uint64_t>> open_;  // program slices open: (node, start cycle)
  std::string out_;
  bool first_ = true;
};

}  // namespace

std::string WriteChromeTrace(const ExecutionReport& execution, const ChromeTraceOptions& options) {
  return TraceWriter(execution, options).Write();
}

}  // namespace tileprof::report
