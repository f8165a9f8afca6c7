// Column rules are those measured in ../shared/spec/text-report.md (sections
// 3, 4, 5.1 and 7); the constants below name them.
#include "reports/text_writer.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "common/format.h"

namespace tileprof::report {
namespace {

// Target: label with colon left-justified in 24 characters after the indent.
constexpr size_t kTargetLabelWidth = 24;
// Graph: value right-aligned so every line is 38 characters.
constexpr size_t kGraphLineLength = 38;
// Memory Usage: line lengths at which values end (spec section 4 table).
constexpr size_t kGapsLineLength = 40;      // Including Gaps, region rows
constexpr size_t kDataTypeLineLength = 56;  // By Data Type rows (indent 10)
constexpr size_t kVertexCategoryLineLength = 51;
constexpr size_t kVertexTypeNumberWidth = 10;
// Execution: values start one space after the longest label (column 56).
constexpr size_t kExecutionIndent = 2;

// `indent` spaces, `label`, then `value` right-aligned to end at column
// `line_length`, with at least one space between them.
std::string RightAligned(size_t indent, std::string_view label, std::string_view value,
                         size_t line_length) {
  std::string line(indent, ' ');
  line += label;
  size_t used = line.size() + value.size();
  line.append(used < line_length ? line_length - used : 1, ' ');
  line += value;
  return line;
}

std::string Bytes(uint64_t bytes) { return WithThousands(bytes) + " B"; }

// The value a one-decimal figure shows, so that derived percentages are the
// same whether computed from the engine's double or from the text's digits.
double AsPrinted(double value) {
  std::string text = WithThousands(value, 1);
  std::erase(text, ',');
  double shown = 0;
  std::from_chars(text.data(), text.data() + text.size(), shown);
  return shown;
}

void AppendLines(std::vector<std::string>& out, std::vector<std::string> lines) {
  for (std::string& line : lines) out.push_back(std::move(line));
}

}  // namespace

size_t VertexTypeNameWidth(size_t longest_name) { return ((longest_name + 3) / 4 + 1) * 4; }

std::vector<std::string> TargetLines(const Target& target) {
  std::vector<std::string> lines{"Target:"};
  auto row = [&](std::string_view label, const std::string& value) {
    lines.push_back(fmt::format("  {:<{}}{}", label, kTargetLabelWidth, value));
  };
  row("Number of IPUs:", WithThousands(uint64_t{target.num_ipus}));
  row("Tiles per IPU:", WithThousands(target.tiles_per_ipu));
  row("Total Tiles:", WithThousands(target.total_tiles));
  row("Memory Per-Tile:", BinarySize(target.bytes_per_tile));
  row("Total Memory:", BinarySize(target.total_memory));
  row("Clock Speed (approx):", WithThousands(target.clock_hz / 1e6, 1) + " MHz");
  if (const std::optional<Replication>& r = target.replication) {
    row("Number of Replicas:", WithThousands(uint64_t{r->num_replicas}));
    row("IPUs per Replica:", WithThousands(uint64_t{r->ipus_per_replica}));
    row("Tiles per Replica:", WithThousands(r->tiles_per_replica));
    row("Memory per Replica:", BinarySize(r->memory_per_replica));
  }
  return lines;
}

std::vector<std::string> GraphLines(const GraphInfo& graph) {
  std::vector<std::string> lines{"Graph:"};
  auto row = [&](std::string_view label, uint64_t value) {
    lines.push_back(RightAligned(2, label, WithThousands(value), kGraphLineLength));
  };
  row("Number of vertices:", graph.num_vertices);
  row("Number of edges:", graph.num_edges);
  row("Number of variables:", graph.num_variables);
  row("Number of compute sets:", graph.num_compute_sets);
  return lines;
}

std::vector<std::string> MemoryUsageLines(const MemoryUsage& usage) {
  const MemoryRowsKnown& known = usage.known;
  std::vector<std::string> lines{"Memory Usage:", "  Total:"};
  if (known.including_gaps)
    lines.push_back(
        RightAligned(4, "Including Gaps:", Bytes(usage.including_gaps), kGapsLineLength));
  bool any_excluding = known.regions.any() || known.categories.any() || known.vertex_data ||
                       known.vertex_data_categories.any() || known.by_vertex_type;
  if (!any_excluding) return lines;
  lines.push_back("    Excluding Gaps:");
  if (known.regions.any()) {
    lines.push_back("      By Memory Region:");
    for (size_t r = 0; r < kNumRegions; ++r) {
      if (!known.regions.test(r)) continue;
      std::string label = fmt::format("{}:", RegionLabel(static_cast<Region>(r)));
      lines.push_back(RightAligned(8, label, Bytes(usage.by_region[r]), kGapsLineLength));
    }
  }
  if (known.categories.any()) {
    lines.push_back("      By Data Type:");
    for (size_t c = 0; c < kNumCategories; ++c) {
      if (!known.categories.test(c)) continue;
      std::string label = fmt::format("{}:", CategoryLabel(static_cast<Category>(c)));
      lines.push_back(RightAligned(10, label, Bytes(usage.by_category[c]), kDataTypeLineLength));
    }
  }
  // "Vertex Data" sits at indent 8, deeper than its sibling "By Data Type:"
  // (spec section 4: copy the sample's indentation exactly).
  if (known.vertex_data)
    lines.push_back(fmt::format("        Vertex Data ({}B):", WithThousands(usage.vertex_data)));
  if (known.vertex_data_categories.any()) {
    lines.push_back("          By Category:");
    for (size_t v = 0; v < kNumVertexDataCategories; ++v) {
      if (!known.vertex_data_categories.test(v)) continue;
      std::string label =
          fmt::format("{}:", VertexDataCategoryLabel(static_cast<VertexDataCategory>(v)));
      lines.push_back(RightAligned(12, label, Bytes(usage.vertex_data_by_category[v]),
                                   kVertexCategoryLineLength));
    }
  }
  if (known.by_vertex_type) {
    lines.push_back("          By Type:");
    size_t longest = 0;
    size_t number_width = kVertexTypeNumberWidth;
    for (const NamedBytes& row : usage.by_vertex_type) {
      longest = std::max(longest, row.name.size());
      number_width = std::max(number_width, WithThousands(row.bytes).size());
    }
    size_t name_width = VertexTypeNameWidth(longest);
    for (const NamedBytes& row : usage.by_vertex_type)
      lines.push_back(fmt::format("            {:<{}}{:>{}} B", row.name, name_width,
                                  WithThousands(row.bytes), number_width));
  }
  return lines;
}

namespace {

// "Cycles by vertex type:", most cycles first, after a blank line.
void AppendVertexTypeCycles(const std::vector<VertexTypeCycles>& cycles_by_vertex_type,
                            std::vector<std::string>& lines) {
  if (cycles_by_vertex_type.empty()) return;
  std::vector<const VertexTypeCycles*> rows;
  for (const VertexTypeCycles& row : cycles_by_vertex_type) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto* a, const auto* b) { return a->cycles > b->cycles; });
  size_t name_width = 0;
  size_t instances_width = 0;
  size_t cycles_width = 0;
  for (const VertexTypeCycles* row : rows) {
    name_width = std::max(name_width, row->name.size());
    instances_width =
        std::max(instances_width, fmt::formatted_size("({} instances):", row->instances));
    cycles_width = std::max(cycles_width, WithThousands(row->cycles).size());
  }
  lines.emplace_back();
  lines.push_back("  Cycles by vertex type:");
  // The sample's instance count has no thousands separator; its cycles do.
  for (const VertexTypeCycles* row : rows)
    lines.push_back(fmt::format("    {:<{}} {:<{}}   {:>{}}", row->name, name_width,
                                fmt::format("({} instances):", row->instances), instances_width,
                                WithThousands(row->cycles), cycles_width));
}

// "Execution steps:" (showExecutionSteps), after a blank line.
void AppendExecutionSteps(const std::vector<ExecutionStep>& steps,
                          std::vector<std::string>& lines) {
  if (steps.empty()) return;
  // Not publicly documented; ours: one step per line, program then cycles.
  size_t name_width = 0;
  size_t cycles_width = 0;
  for (const ExecutionStep& step : steps) {
    name_width = std::max(name_width, step.program.size());
    cycles_width = std::max(cycles_width, WithThousands(step.cycles).size());
  }
  lines.emplace_back();
  lines.push_back("  Execution steps:");
  for (const ExecutionStep& step : steps)
    lines.push_back(fmt::format("    {:<{}}   {:>{}}", step.program, name_width,
                                WithThousands(step.cycles), cycles_width));
}

}  // namespace

std::vector<std::string> ExecutionLines(const ExecutionReport& execution,
                                        const TextReportOptions& options) {
  std::vector<std::string> lines{"Execution:", "", "Programs executed:", ""};
  if (!execution.programs.empty())
    lines.push_back(fmt::format("{}.", fmt::join(execution.programs, ", ")));
  lines.emplace_back();

  // All labels take part in the column, known or not, so it never moves.
  size_t label_width = std::string_view("Total cycles:").size();
  for (size_t k = 0; k < kNumCycleKinds; ++k)
    label_width = std::max(label_width, TileAverageLabel(static_cast<CycleKind>(k)).size() + 1);
  auto row = [&](std::string_view label, const std::string& value) {
    lines.push_back(fmt::format("{:{}}{:<{}} {}", "", kExecutionIndent, label, label_width, value));
  };
  std::string total = WithThousands(execution.total_cycles);
  if (execution.clock_hz > 0) {
    double microseconds = static_cast<double>(execution.total_cycles) / execution.clock_hz * 1e6;
    total += fmt::format(" (approx {} microseconds)", WithThousands(microseconds, 1));
  }
  row("Total cycles:", total);
  for (size_t k = 0; k < kNumCycleKinds; ++k) {
    const std::optional<double>& average = execution.tile_average_cycles[k];
    if (!average) continue;
    double shown = AsPrinted(*average);
    double percent = execution.total_cycles == 0
                         ? 0.0
                         : shown / static_cast<double>(execution.total_cycles) * 100.0;
    row(fmt::format("{}:", TileAverageLabel(static_cast<CycleKind>(k))),
        fmt::format("{} ({}% of total)", WithThousands(shown, 1), WithThousands(percent, 1)));
  }
  // The SDK 1.x sums over tiles, as that layout printed them.
  auto total_row = [&](std::string_view label, const CycleTotal& total) {
    std::string value = total.cycles ? WithThousands(*total.cycles) : "";
    if (!total.cycles) {
      value = "Must enable " + total.needs_option;
    } else if (total.estimated) {
      value += fmt::format(" Estimated (must enable {})", total.needs_option);
    }
    row(fmt::format("{}:", label), value);
  };
  for (size_t k = 0; k < kNumCycleKinds; ++k)
    if (execution.tile_total_cycles[k].printed)
      total_row(TileTotalLabel(static_cast<CycleKind>(k)), execution.tile_total_cycles[k]);
  if (execution.shared_structure_copy_cycles.printed)
    total_row(kSharedStructureCopyLabel, execution.shared_structure_copy_cycles);

  AppendVertexTypeCycles(execution.cycles_by_vertex_type, lines);
  if (options.show_execution_steps) AppendExecutionSteps(execution.steps, lines);
  return lines;
}

std::vector<std::string> LivenessLines(const CompilationReport& report) {
  if (report.liveness.empty()) return {};
  size_t peak = 0;
  for (size_t i = 1; i < report.liveness.size(); ++i)
    if (report.liveness[i].not_always_live > report.liveness[peak].not_always_live) peak = i;
  const LivenessStep& step = report.liveness[peak];
  uint64_t always_live = 0;
  for (const NamedBytes& v : report.always_live_variables) always_live += v.bytes;
  std::vector<std::pair<std::string, std::string>> rows{
      {"Program steps:", WithThousands(uint64_t{report.liveness.size()})},
      {"Always-live (all tiles):", Bytes(always_live)}};
  std::string at =
      fmt::format("{} at step {}", Bytes(step.not_always_live), WithThousands(uint64_t{peak}));
  if (step.program < report.programs.size())
    at += fmt::format(" ({})", report.programs[step.program].name);
  rows.push_back({"Peak not-always-live (all tiles):", at});
  if (peak < report.liveness_fullest_tiles.size()) {
    const StepTile& fullest = report.liveness_fullest_tiles[peak];
    rows.push_back(
        {"Fullest tile at the peak:",
         fmt::format("tile {}, {} not-always-live", fullest.tile, Bytes(fullest.not_always_live))});
  }
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  std::vector<std::string> lines{"Liveness:"};
  for (const auto& [label, value] : rows)
    lines.push_back(fmt::format("  {:<{}} {}", label, width, value));
  // Largest first already (report.h): the first few live at the peak.
  std::vector<const LiveVariable*> live;
  for (const LiveVariable& v : report.not_always_live_variables) {
    if (v.first_step <= peak && peak <= v.last_step) live.push_back(&v);
    if (live.size() == kLivenessListed) break;
  }
  if (!live.empty()) {
    lines.push_back(fmt::format("  Largest live at the peak (all tiles, steps live):"));
    size_t name_width = 0, bytes_width = 0;
    for (const LiveVariable* v : live) {
      name_width = std::max(name_width, v->name.size());
      bytes_width = std::max(bytes_width, Bytes(v->bytes).size());
    }
    for (const LiveVariable* v : live)
      lines.push_back(fmt::format("    {:<{}}   {:>{}}   {}-{}", v->name, name_width,
                                  Bytes(v->bytes), bytes_width, v->first_step, v->last_step));
  }
  return lines;
}

std::string WriteTextReport(const CompilationReport& report, const ExecutionReport* execution,
                            const TextReportOptions& options) {
  std::vector<std::vector<std::string>> sections;
  if (options.format_version_line)
    sections.push_back(
        {fmt::format("{}{}.{}", kFormatLinePrefix, kFormatVersion.major, kFormatVersion.minor)});
  if (report.target) sections.push_back(TargetLines(*report.target));
  if (report.graph) sections.push_back(GraphLines(*report.graph));

  std::vector<std::string> memory;
  if (std::optional<MemoryUsage> total = ResolveTotal(report)) memory = MemoryUsageLines(*total);
  if (std::optional<ByTileSummary> by_tile = ResolveByTile(report)) {
    if (!memory.empty()) memory.emplace_back();
    memory.push_back("  By Tile (Excluding Gaps):");
    AppendLines(memory, RenderByTile(*by_tile));
  }
  if (!memory.empty()) sections.push_back(std::move(memory));

  for (const TileUsage& block :
       ResolveTileBlocks(report, options.tile_blocks, options.max_tile_blocks)) {
    std::vector<std::string> lines{fmt::format("Tile # {} memory usage:", block.tile)};
    AppendLines(lines, MemoryUsageLines(block.usage));
    sections.push_back(std::move(lines));
  }
  if (options.show_liveness) {
    if (std::vector<std::string> lines = LivenessLines(report); !lines.empty())
      sections.push_back(std::move(lines));
  }
  if (execution) sections.push_back(ExecutionLines(*execution, options));

  std::string text;
  for (size_t s = 0; s < sections.size(); ++s) {
    if (s > 0) text += '\n';
    for (const std::string& line : sections[s]) {
      text += line;
      text += '\n';
    }
  }
  return text;
}

}  // namespace tileprof::report
