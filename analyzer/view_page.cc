#include "analyzer/view_page.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "analyzer/memory_views.h"
#include "analyzer/oom.h"
#include "analyzer/output.h"
#include "analyzer/view/view_assets.h"
#include "analyzer/xml_writer.h"
#include "reports/program_chains.h"

namespace tileprof::analyzer {
namespace {

using nlohmann::json;

// An analysis's JSON, or {"error": why} when it cannot be made of this
// report (a text excerpt without a target has no out-of-memory analysis):
// the page then says why in that view instead of failing whole.
json AnalysisJson(const Expected<Output>& output) {
  if (!output) return json{{"error", output.error().message()}};
  return json::parse(Render(*output, OutputFormat::kJson));
}

json TargetJson(const report::CompilationReport& report) {
  if (!report.target) return nullptr;
  const report::Target& t = *report.target;
  return json{{"arch", t.arch},
              {"numIpus", t.num_ipus},
              {"tilesPerIpu", t.tiles_per_ipu},
              {"totalTiles", t.total_tiles},
              {"bytesPerTile", t.bytes_per_tile},
              {"totalMemory", t.total_memory},
              {"clockHz", t.clock_hz}};
}

json TotalJson(const LoadedReport& loaded) {
  const std::optional<report::MemoryUsage> total = Total(loaded);
  if (!total) return nullptr;
  json categories = json::array();
  for (size_t c = 0; c < report::kNumCategories; ++c) {
    const auto category = static_cast<report::Category>(c);
    if (!total->known.categories[c]) continue;
    categories.push_back(
        {std::string(report::CategoryLabel(category)), report::At(total->by_category, category)});
  }
  json out{{"categories", std::move(categories)}};
  out["includingGaps"] = total->known.including_gaps ? json(total->including_gaps) : json();
  out["excludingGaps"] = total->known.regions.all() ? json(total->ExcludingGaps()) : json();
  return out;
}

// Per-tile columns, each category only when some tile has bytes of it.
json TilesJson(const report::CompilationReport& report) {
  if (report.tiles.empty()) return nullptr;
  json excluding = json::array(), including = json::array(), always = json::array(),
       not_always = json::array();
  for (const report::TileMemory& tile : report.tiles) {
    excluding.push_back(tile.ExcludingGaps());
    including.push_back(tile.IncludingGaps());
    always.push_back(tile.always_live);
    not_always.push_back(tile.not_always_live);
  }
  json categories = json::array();
  for (size_t c = 0; c < report::kNumCategories; ++c) {
    json bytes = json::array();
    bool any = false;
    for (const report::TileMemory& tile : report.tiles) {
      bytes.push_back(tile.by_category[c]);
      any = any || tile.by_category[c] != 0;
    }
    if (!any) continue;
    const auto category = static_cast<report::Category>(c);
    categories.push_back({{"name", std::string(report::CategoryLabel(category))},
                          {"machineName", std::string(report::CategoryMachineName(category))},
                          {"bytes", std::move(bytes)}});
  }
  json regions = json::array();
  for (size_t r = 0; r < report::kNumRegions; ++r) {
    json bytes = json::array();
    for (const report::TileMemory& tile : report.tiles)
      bytes.push_back(tile.by_region[r].excluding_gaps);
    regions.push_back({{"name", std::string(report::RegionLabel(static_cast<report::Region>(r)))},
                       {"bytes", std::move(bytes)}});
  }
  return json{{"excludingGaps", std::move(excluding)}, {"includingGaps", std::move(including)},
              {"alwaysLive", std::move(always)},       {"notAlwaysLive", std::move(not_always)},
              {"categories", std::move(categories)},   {"regions", std::move(regions)}};
}

// The largest variables of each tile, most used tiles first, until
// kViewMaxVariables are listed: rows [tile, name, bytes, category,
// always live].
json VariablesJson(const report::CompilationReport& report, size_t* tiles_listed) {
  std::vector<const report::Variable*> sorted;
  sorted.reserve(report.variables.size());
  for (const report::Variable& v : report.variables) sorted.push_back(&v);
  std::sort(sorted.begin(), sorted.end(), [](const report::Variable* a, const report::Variable* b) {
    if (a->tile != b->tile) return a->tile < b->tile;
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->name < b->name;
  });
  std::vector<uint32_t> order;
  for (const report::TileMemory& tile : report.tiles) order.push_back(tile.tile);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return report.tiles[a].ExcludingGaps() > report.tiles[b].ExcludingGaps();
  });
  json rows = json::array();
  *tiles_listed = 0;
  for (uint32_t tile : order) {
    auto first =
        std::lower_bound(sorted.begin(), sorted.end(), tile,
                         [](const report::Variable* v, uint32_t t) { return v->tile < t; });
    if (rows.size() + kViewVariablesPerTile > kViewMaxVariables) break;
    ++*tiles_listed;
    for (size_t k = 0; k < kViewVariablesPerTile && first != sorted.end() && (*first)->tile == tile;
         ++k, ++first) {
      const report::Variable& v = **first;
      rows.push_back(
          {v.tile, v.name, v.bytes, std::string(report::CategoryLabel(v.category)), v.always_live});
    }
  }
  return rows;
}

json ProgramsJson(const report::CompilationReport& report) {
  json programs = json::array();
  for (const report::Program& p : report.programs) {
    json node{{"name", p.name}, {"kind", p.kind}, {"children", p.children}};
    if (p.compute_set) node["computeSet"] = *p.compute_set;  // its vertices: computeSets
    programs.push_back(std::move(node));
  }
  return programs;
}

// Rows [name, opcode, vertices, vertex state bytes, exchange bytes, FLOPs
// or null, cycles or null, [compute sets], code bytes or null, tiles or
// null, [[first tile, last tile, vertices], ...]]: cycles are those of the
// execution's steps that ran the operation's compute sets (a step names the
// compute set it executes), null when the report has no execution.
json OperationsJson(const LoadedReport& loaded) {
  const report::CompilationReport& report = loaded.compilation;
  std::vector<json> sets(report.operations.size(), json::array());
  std::unordered_map<std::string_view, uint32_t> operation_of;
  for (const report::ComputeSetOperation& link : report.compute_set_operations) {
    if (link.operation >= report.operations.size() ||
        link.compute_set >= report.compute_sets.size())
      continue;  // the readers refuse these; a report built in memory may not
    sets[link.operation].push_back(link.compute_set);
    operation_of.emplace(report.compute_sets[link.compute_set].name, link.operation);
  }
  std::vector<uint64_t> cycles(report.operations.size(), 0);
  if (loaded.execution) {
    for (const report::ExecutionStep& step : loaded.execution->steps) {
      auto it = operation_of.find(step.program);
      if (it != operation_of.end()) cycles[it->second] += step.cycles;
    }
  }
  std::vector<json> runs(report.operations.size(), json::array());
  for (const report::OperationTiles& run : report.operation_tiles) {
    if (run.operation < runs.size())
      runs[run.operation].push_back({run.first_tile, run.last_tile, run.vertices});
  }
  auto optional = [](const std::optional<uint64_t>& value) {
    return value ? json(*value) : json();
  };
  json rows = json::array();
  for (size_t i = 0; i < report.operations.size(); ++i) {
    const report::Operation& op = report.operations[i];
    rows.push_back({op.name, op.opcode, op.vertices, op.vertex_state_bytes, op.exchange_bytes,
                    optional(op.flops), loaded.execution ? json(cycles[i]) : json(),
                    std::move(sets[i]), optional(op.code_bytes), optional(op.tiles),
                    std::move(runs[i])});
  }
  return rows;
}

json LivenessJson(const report::CompilationReport& report) {
  json program = json::array(), bytes = json::array(), fullest_tile = json::array(),
       fullest_bytes = json::array();
  for (const report::LivenessStep& step : report.liveness) {
    program.push_back(step.program);
    bytes.push_back(step.not_always_live);
  }
  for (const report::StepTile& fullest : report.liveness_fullest_tiles) {
    fullest_tile.push_back(fullest.tile);
    fullest_bytes.push_back(fullest.not_always_live);
  }
  // Per IPU: [ipu][step] not-always-live bytes, and each IPU's always-live.
  json by_ipu = json::array();
  for (const report::IpuStep& entry : report.liveness_by_ipu) {
    while (by_ipu.size() <= entry.ipu) by_ipu.push_back(json::array());
    by_ipu[entry.ipu].push_back(entry.not_always_live);
  }
  uint64_t always_live = 0;
  std::vector<uint64_t> always_by_ipu(by_ipu.size(), 0);  // only when per-IPU steps exist
  const uint64_t per_ipu = report.target ? report.target->tiles_per_ipu : 0;
  for (size_t t = 0; t < report.tiles.size(); ++t) {
    always_live += report.tiles[t].always_live;
    const size_t ipu = per_ipu ? t / per_ipu : 0;
    if (ipu < always_by_ipu.size()) always_by_ipu[ipu] += report.tiles[t].always_live;
  }
  return json{{"program", std::move(program)},
              {"notAlwaysLive", std::move(bytes)},
              {"fullestTile", std::move(fullest_tile)},
              {"fullestBytes", std::move(fullest_bytes)},
              {"alwaysLive", report.tiles.empty() ? json() : json(always_live)},
              {"byIpu", std::move(by_ipu)},
              {"alwaysLiveByIpu", std::move(always_by_ipu)}};
}

// Each step's cycles, and per IPU when profiled per tile: the busiest tile
// of the IPU (its busy cycles: a BSP step lasts at least that long).
json ExecutionJson(const LoadedReport& loaded) {
  if (!loaded.execution) return nullptr;
  const report::ExecutionReport& execution = *loaded.execution;
  const uint64_t per_ipu =
      loaded.compilation.target ? loaded.compilation.target->tiles_per_ipu : uint64_t{0};
  // Each step's program and its ancestors (root first): the flame chart.
  const report::ProgramChains chains(&loaded.compilation.programs);
  json steps = json::array();
  for (const report::ExecutionStep& step : execution.steps) {
    json by_ipu = json::array();
    if (per_ipu > 0 && !step.cycles_by_tile.empty()) {
      for (size_t first = 0; first < step.cycles_by_tile.size(); first += per_ipu) {
        const auto end =
            step.cycles_by_tile.begin() +
            static_cast<ptrdiff_t>(std::min(first + per_ipu, step.cycles_by_tile.size()));
        by_ipu.push_back(
            *std::max_element(step.cycles_by_tile.begin() + static_cast<ptrdiff_t>(first), end));
      }
    }
    json entry{{"program", step.program},
               {"cycles", step.cycles},
               {"cyclesByIpu", by_ipu},
               {"chain", chains.Chain(step.program)}};
    if (step.compute_cycles && step.exchange_cycles && step.sync_cycles)
      entry["split"] = {*step.compute_cycles, *step.exchange_cycles, *step.sync_cycles};
    steps.push_back(std::move(entry));
  }
  // Each tile's split over the run, as three columns.
  json compute = json::array(), exchange = json::array(), sync = json::array();
  for (const report::TileCycleSplit& tile : execution.tile_cycles) {
    compute.push_back(tile.compute);
    exchange.push_back(tile.exchange);
    sync.push_back(tile.sync);
  }
  return json{{"totalCycles", execution.total_cycles},
              {"clockHz", execution.clock_hz},
              {"steps", std::move(steps)},
              {"tiles",
               {{"compute", std::move(compute)},
                {"exchange", std::move(exchange)},
                {"sync", std::move(sync)}}}};
}

// The data as a <script> body: "</" would end the element early and a
// U+2028 is no problem in JSON script data, so only '<' is escaped.
std::string ScriptSafe(const json& data) {
  std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

// The page around its data element: `data_attributes` go in the element's
// tag, `data_text` (script-safe JSON, or nothing) is its body.
std::string PageHtml(const LoadedReport& report, const LoadedReport* other,
                     std::string_view data_attributes, std::string_view data_text) {
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  html += "<title>tileprof: " + XmlEscape(report.path) +
          (other ? " vs " + XmlEscape(other->path) : std::string()) + "</title>";
  html += "<style>";
  html += kViewCss;
  html += "</style></head><body>\n<script type=\"application/json\" id=\"tileprof-data\"";
  html += data_attributes;
  html += ">";
  html += data_text;
  html += "</script>\n<script>";
  html += kViewJs;
  html += "</script></body></html>\n";
  return html;
}

}  // namespace

Expected<json> ViewData(const LoadedReport& loaded) {
  const report::CompilationReport& report = loaded.compilation;
  json data;
  data["path"] = loaded.path;
  data["target"] = TargetJson(report);
  if (report.graph) {
    data["graph"] = {{"numVertices", report.graph->num_vertices},
                     {"numEdges", report.graph->num_edges},
                     {"numVariables", report.graph->num_variables},
                     {"numComputeSets", report.graph->num_compute_sets}};
  }
  data["total"] = TotalJson(loaded);
  data["tiles"] = TilesJson(report);
  size_t tiles_listed = 0;
  data["variables"] = VariablesJson(report, &tiles_listed);
  data["variablesTiles"] = tiles_listed;
  data["histogram"] = AnalysisJson(HistogramView(loaded, {}));
  data["oom"] = AnalysisJson(OomView(loaded, nullptr, OomOptions{}));
  data["liveness"] = LivenessJson(report);
  data["programs"] = ProgramsJson(report);
  data["operations"] = OperationsJson(loaded);
  json sets = json::array();
  for (const report::ComputeSet& set : report.compute_sets) {
    uint64_t vertices = 0;
    for (const report::ComputeSetVertices& type : set.vertices) vertices += type.count;
    sets.push_back({set.name, vertices});
  }
  data["computeSets"] = std::move(sets);
  json always_live = json::array();
  for (const report::NamedBytes& v : report.always_live_variables)
    always_live.push_back({v.name, v.bytes});
  data["alwaysLiveVariables"] = std::move(always_live);
  json live = json::array();
  for (const report::LiveVariable& v : report.not_always_live_variables)
    live.push_back({v.name, v.bytes, v.first_step, v.last_step});
  data["notAlwaysLiveVariables"] = std::move(live);
  data["execution"] = ExecutionJson(loaded);
  return data;
}

Expected<json> ViewPageData(const LoadedReport& report, const LoadedReport* other) {
  Expected<json> data = ViewData(report);
  if (!data) return data.error();
  json page{{"report", std::move(*data)}};
  if (other != nullptr) {
    Expected<json> second = ViewData(*other);
    if (!second) return second.error();
    page["other"] = std::move(*second);
    page["compare"] = AnalysisJson(CompareView(report, *other, 20));
  }
  return page;
}

Expected<std::string> ViewPage(const LoadedReport& report, const LoadedReport* other) {
  Expected<json> data = ViewPageData(report, other);
  if (!data) return data.error();
  return PageHtml(report, other, "", ScriptSafe(*data));
}

std::string ViewShell(const LoadedReport& report, const LoadedReport* other,
                      std::string_view data_url) {
  return PageHtml(report, other, " data-src=\"" + XmlEscape(data_url) + "\"", "");
}

}  // namespace tileprof::analyzer
