#include "reports/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <vector>

namespace tileprof::report {
namespace {

// A JSON string literal; invalid UTF-8 (names read from text) is replaced.
std::string Quote(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Each step's program node and that node's ancestors, root first, from the
// program tree: a node's parent is the first that lists it, in tree order.
class ProgramChains {
 public:
  explicit ProgramChains(const std::vector<Program>* programs) {
    if (programs == nullptr || programs->empty()) return;
    programs_ = programs;
    parent_.assign(programs->size(), kNone);
    std::vector<bool> seen(programs->size(), false);
    std::vector<uint32_t> order{0};  // depth first from the root
    seen[0] = true;
    for (size_t i = 0; i < order.size(); ++i) {
      const Program& node = (*programs)[order[i]];
      for (uint32_t child : node.children) {
        if (child >= programs->size() || seen[child]) continue;
        seen[child] = true;
        parent_[child] = order[i];
        order.push_back(child);
      }
    }
    for (uint32_t node : order) by_name_.emplace((*programs)[node].name, node);
  }
  // Root first, the step's own node last; empty when no node has the name.
  std::vector<uint32_t> Chain(std::string_view step) const {
    std::vector<uint32_t> chain;
    auto it = by_name_.find(step);
    if (it == by_name_.end()) return chain;
    for (uint32_t node = it->second; node != kNone; node = parent_[node]) chain.push_back(node);
    std::reverse(chain.begin(), chain.end());
    return chain;
  }
  const Program& node(uint32_t i) const { return (*programs_)[i]; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  const std::vector<Program>* programs_ = nullptr;
  std::vector<uint32_t> parent_;
  std::map<std::string_view, uint32_t> by_name_;  // the first node of a name in tree order
};

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
  auto thread = [&](uint64_t pid, uint64_t tid, const std::string& name, uint64_t sort) {
    event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                      pid, tid, Quote(name)));
    event(fmt::format(
        R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
        pid, tid, sort));
  };
  const ProgramChains chains(options.programs);
  const bool with_programs = options.programs != nullptr && !options.programs->empty();
  // Rows, top to bottom: steps, programs, tile groups, tiles.
  if (with_programs) {
    for (uint64_t ipu : ipus) thread(ipu, kProgramsTid, "programs", 1);
  }
  // Tile groups: within an IPU's tiles, g = (tile - first tile) / group.
  const uint64_t group = std::max<uint64_t>(options.tile_group, 1);
  const bool grouped = !tiles.empty() && options.tiles_per_ipu > group;
  std::set<std::pair<uint64_t, uint64_t>> groups;  // (ipu, g)
  auto group_of = [&](uint64_t tile) { return (tile % options.tiles_per_ipu) / group; };
  if (grouped) {
    for (uint64_t tile : tiles) groups.insert({ipu_of(tile), group_of(tile)});
    for (const auto& [ipu, g] : groups) {
      const uint64_t first_tile = ipu * options.tiles_per_ipu + g * group;
      const uint64_t last_tile =
          std::min(first_tile + group, (ipu + 1) * options.tiles_per_ipu) - 1;
      thread(ipu, kTileGroupTid + g, fmt::format("tiles {}-{}", first_tile, last_tile), 2 + g);
    }
  }
  for (uint64_t tile : tiles)
    thread(ipu_of(tile), tile + 1, fmt::format("tile {}", tile), kProgramsTid + tile);
  // The program slices open on every IPU's programs row: (node, start cycle).
  std::vector<std::pair<uint32_t, uint64_t>> open;
  auto slice = [&](uint32_t node, uint64_t from, uint64_t to, const char* cat) {
    for (uint64_t ipu : ipus) {
      event(fmt::format(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},)"
                        R"("args":{{"kind":{},"cycles":{}}}}})",
                        Quote(chains.node(node).name), cat, ipu, kProgramsTid,
                        static_cast<double>(from) * us_per_cycle,
                        static_cast<double>(to - from) * us_per_cycle,
                        Quote(chains.node(node).kind), to - from));
    }
  };
  auto close_to = [&](size_t keep, uint64_t now) {
    while (open.size() > keep) {
      slice(open.back().first, open.back().second, now, "program");
      open.pop_back();
    }
  };
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
    if (with_programs) {
      // The step's ancestors stay open while consecutive steps share them
      // (a loop's iterations are one slice of it); its own node is a slice
      // of its own.
      std::vector<uint32_t> chain = chains.Chain(step.program);
      const uint32_t own = chain.empty() ? UINT32_MAX : chain.back();
      if (!chain.empty()) chain.pop_back();
      size_t keep = 0;
      while (keep < open.size() && keep < chain.size() && open[keep].first == chain[keep]) ++keep;
      close_to(keep, start);
      for (size_t k = keep; k < chain.size(); ++k) open.push_back({chain[k], start});
      if (own != UINT32_MAX) slice(own, start, start + step.cycles, "program");
    }
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> busiest;  // (ipu, g) -> cycles
    for (size_t tile = 0; tile < step.cycles_by_tile.size(); ++tile) {
      const uint64_t cycles = step.cycles_by_tile[tile];
      if (cycles == 0) continue;
      event(fmt::format(R"({{"ph":"X","name":{},"cat":"tile","pid":{},"tid":{},"ts":{},"dur":{},)"
                        R"("args":{{"step":{},"cycles":{}}}}})",
                        name, ipu_of(tile), tile + 1, ts,
                        static_cast<double>(cycles) * us_per_cycle, i, cycles));
      if (grouped) {
        uint64_t& most = busiest[{ipu_of(tile), group_of(tile)}];
        most = std::max(most, cycles);
      }
    }
    for (const auto& [at, cycles] : busiest) {
      event(fmt::format(
          R"({{"ph":"X","name":{},"cat":"tile-group","pid":{},"tid":{},"ts":{},"dur":{},)"
          R"("args":{{"step":{},"cycles":{}}}}})",
          name, at.first, kTileGroupTid + at.second, ts, static_cast<double>(cycles) * us_per_cycle,
          i, cycles));
    }
    start += step.cycles;
  }
  close_to(0, start);
  out += "]}\n";
  return out;
}

}  // namespace tileprof::report
