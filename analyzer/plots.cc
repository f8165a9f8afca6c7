#include "analyzer/plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyzer/execution_views.h"
#include "analyzer/memory_views.h"
#include "analyzer/xml_writer.h"
#include "common/format.h"

namespace tileprof::analyzer {
namespace {

constexpr double kWidth = 1100, kHeight = 460;
constexpr double kLeft = 90, kRight = 30, kTop = 40, kBottom = 60;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

// One colour per category, in report order (Tableau-like, readable on white).
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
                                    "#1f77b4", "#aec7e8", "#ff7f0e", "#2ca02c", "#98df8a",
                                    "#d62728", "#9467bd", "#8c564b"};

std::string Num(double v) { return fmt::format("{:.1f}", v); }

// A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten.
double NiceCeil(double v) {
  if (v <= 0) return 1;
  double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= v) return m * p;
  return 10 * p;
}

void Begin(XmlWriter& w, std::string_view title, bool standalone) {
  if (standalone) w.Raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  w.Open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                 {"width", Num(kWidth)},
                 {"height", Num(kHeight)},
                 {"viewBox", fmt::format("0 0 {} {}", kWidth, kHeight)},
                 {"font-family", "sans-serif"},
                 {"font-size", "12"}});
  w.Open("title");
  w.Text(title);
  w.Close();
  w.Empty("rect", {{"width", Num(kWidth)}, {"height", Num(kHeight)}, {"fill", "white"}});
  w.Open("text",
         {{"x", Num(kWidth / 2)}, {"y", "22"}, {"text-anchor", "middle"}, {"font-size", "15"}});
  w.Text(title);
  w.Close();
}

// Axes with five y ticks from 0 to `y_max`, labelled by `label`.
template <typename Label>
void Axes(XmlWriter& w, double y_max, std::string_view y_title, std::string_view x_title,
          Label label) {
  for (int i = 0; i <= 5; ++i) {
    double v = y_max * i / 5, y = kTop + kPlotH - kPlotH * i / 5;
    w.Empty("line", {{"x1", Num(kLeft)},
                     {"x2", Num(kLeft + kPlotW)},
                     {"y1", Num(y)},
                     {"y2", Num(y)},
                     {"stroke", "#ddd"}});
    w.Open("text", {{"x", Num(kLeft - 6)}, {"y", Num(y + 4)}, {"text-anchor", "end"}});
    w.Text(label(v));
    w.Close();
  }
  w.Empty("line", {{"x1", Num(kLeft)},
                   {"x2", Num(kLeft)},
                   {"y1", Num(kTop)},
                   {"y2", Num(kTop + kPlotH)},
                   {"stroke", "black"}});
  w.Empty("line", {{"x1", Num(kLeft)},
                   {"x2", Num(kLeft + kPlotW)},
                   {"y1", Num(kTop + kPlotH)},
                   {"y2", Num(kTop + kPlotH)},
                   {"stroke", "black"}});
  w.Open("text", {{"x", "16"},
                  {"y", Num(kTop + kPlotH / 2)},
                  {"text-anchor", "middle"},
                  {"transform", fmt::format("rotate(-90 16 {})", Num(kTop + kPlotH / 2))}});
  w.Text(y_title);
  w.Close();
  w.Open("text",
         {{"x", Num(kLeft + kPlotW / 2)}, {"y", Num(kHeight - 12)}, {"text-anchor", "middle"}});
  w.Text(x_title);
  w.Close();
}

std::string Kib(double bytes) { return fmt::format("{:.0f}", bytes / 1024); }

Expected<std::string> TilesPlot(const LoadedReport& loaded, bool standalone) {
  const auto& report = loaded.compilation;
  if (!loaded.HasTiles()) {
    return MakeError(
        "{}: the tiles plot needs per-tile data, which a {} report does not carry (use a "
        "JSON, CBOR or SQLite report, or --kind histogram)",
        loaded.path, ReportFormatName(loaded.format));
  }
  const auto& tiles = report.tiles;
  size_t columns = std::min(tiles.size(), kMaxTileColumns);
  std::vector<size_t> peak(columns);  // index of the largest tile in each column
  uint64_t max_bytes = 0;
  for (size_t c = 0; c < columns; ++c) {
    size_t begin = c * tiles.size() / columns, end = (c + 1) * tiles.size() / columns;
    peak[c] = begin;
    for (size_t i = begin; i < end; ++i)
      if (tiles[i].ExcludingGaps() > tiles[peak[c]].ExcludingGaps()) peak[c] = i;
    max_bytes = std::max(max_bytes, tiles[peak[c]].ExcludingGaps());
  }
  std::optional<uint64_t> capacity = Capacity(report);
  double y_max =
      NiceCeil(static_cast<double>(std::max(max_bytes, capacity.value_or(0))) * 1.05 / 1024) * 1024;
  XmlWriter w;
  Begin(w,
        fmt::format("Memory per tile (excluding gaps), {} tiles{}",
                    WithThousands(uint64_t{tiles.size()}),
                    columns < tiles.size() ? ", largest tile per column" : ""),
        standalone);
  Axes(w, y_max, "KiB", "tile", [](double v) { return Kib(v); });
  double bar = kPlotW / static_cast<double>(columns);
  w.Open("g", {{"fill", "#4e79a7"}});
  for (size_t c = 0; c < columns; ++c) {
    const auto& tile = tiles[peak[c]];
    double h = kPlotH * static_cast<double>(tile.ExcludingGaps()) / y_max;
    bool over = capacity && tile.ExcludingGaps() > *capacity;
    w.Open("rect", {{"x", Num(kLeft + bar * static_cast<double>(c))},
                    {"y", Num(kTop + kPlotH - h)},
                    {"width", Num(std::max(bar, 0.5))},
                    {"height", Num(h)},
                    {"fill", over ? "#e15759" : "#4e79a7"}});
    w.Open("title");
    w.Text(fmt::format("tile {}: {} B", tile.tile, WithThousands(tile.ExcludingGaps())));
    w.Close();
    w.Close();
  }
  w.Close();
  // Tile ids under the x axis at the start, middle and end.
  for (size_t c : {size_t{0}, columns / 2, columns - 1}) {
    w.Open("text", {{"x", Num(kLeft + bar * (static_cast<double>(c) + 0.5))},
                    {"y", Num(kTop + kPlotH + 16)},
                    {"text-anchor", "middle"}});
    w.Text(std::to_string(tiles[c * tiles.size() / columns].tile));
    w.Close();
  }
  if (capacity) {
    double y = kTop + kPlotH - kPlotH * static_cast<double>(*capacity) / y_max;
    w.Empty("line", {{"class", "capacity"},
                     {"x1", Num(kLeft)},
                     {"x2", Num(kLeft + kPlotW)},
                     {"y1", Num(y)},
                     {"y2", Num(y)},
                     {"stroke", "#d62728"},
                     {"stroke-dasharray", "6 4"},
                     {"stroke-width", "1.5"}});
    w.Open("text", {{"x", Num(kLeft + kPlotW - 4)},
                    {"y", Num(y - 5)},
                    {"text-anchor", "end"},
                    {"fill", "#d62728"}});
    w.Text(fmt::format("capacity {} B per tile", WithThousands(*capacity)));
    w.Close();
  }
  return w.Finish();
}

Expected<std::string> HistogramPlot(const LoadedReport& loaded, bool standalone) {
  std::optional<report::ByTileSummary> summary = report::ResolveByTile(loaded.compilation);
  if (!summary || summary->rows.empty())
    return MakeError("{}: the report has no By Tile histogram to plot", loaded.path);
  const auto& rows = summary->rows;
  uint64_t largest = 0;
  for (const auto& r : rows) largest = std::max(largest, r.tiles);
  double y_max = NiceCeil(static_cast<double>(largest) * 1.05);
  XmlWriter w;
  Begin(w, "By Tile histogram (excluding gaps)", standalone);
  Axes(w, y_max, "tiles", "KiB per tile", [](double v) { return fmt::format("{:.0f}", v); });
  double bar = kPlotW / static_cast<double>(rows.size());
  size_t label_every = std::max<size_t>(1, rows.size() / 12);
  w.Open("g", {{"fill", "#59a14f"}});
  for (size_t i = 0; i < rows.size(); ++i) {
    double h = kPlotH * static_cast<double>(rows[i].tiles) / y_max;
    // Non-empty buckets get at least a pixel: a single tile in a far bucket matters.
    if (rows[i].tiles > 0) h = std::max(h, 1.0);
    w.Open("rect", {{"x", Num(kLeft + bar * static_cast<double>(i) + 0.5)},
                    {"y", Num(kTop + kPlotH - h)},
                    {"width", Num(std::max(bar - 1, 0.5))},
                    {"height", Num(h)}});
    w.Open("title");
    w.Text(fmt::format("{} - {} KB: {} tiles", rows[i].lo_kib, rows[i].hi_kib,
                       WithThousands(rows[i].tiles)));
    w.Close();
    w.Close();
    if (i % label_every == 0) {
      w.Open("text", {{"x", Num(kLeft + bar * static_cast<double>(i))},
                      {"y", Num(kTop + kPlotH + 16)},
                      {"text-anchor", "start"}});
      w.Text(std::to_string(rows[i].lo_kib));
      w.Close();
    }
  }
  w.Close();
  return w.Finish();
}

}  // namespace

OpenOptions PlotNeeds(PlotKind kind) {
  if (kind == PlotKind::kExecution) return kExecutionNeeds;
  return TotalsAndTopTiles(kind == PlotKind::kCategories ? report::kDefaultTileBlocks : 0);
}

namespace {

Expected<std::string> CategoriesPlot(const LoadedReport& loaded, bool standalone) {
  std::vector<report::TileUsage> blocks = TopBlocks(loaded.compilation, report::kDefaultTileBlocks);
  if (blocks.empty())
    return MakeError(
        "{}: the report has no tile blocks to plot (a text report prints them only when memory is "
        "imbalanced)",
        loaded.path);
  uint64_t largest = 0;
  for (const auto& b : blocks) {
    uint64_t sum = 0;
    for (size_t c = 0; c < report::kNumCategories; ++c) sum += b.usage.by_category[c];
    largest = std::max(largest, sum);
  }
  double y_max = NiceCeil(static_cast<double>(largest) * 1.05 / 1024) * 1024;  // round KiB ticks
  XmlWriter w;
  Begin(w, fmt::format("Categories of the {} most-used tiles", blocks.size()), standalone);
  Axes(w, y_max, "KiB", "tile", [](double v) { return Kib(v); });
  double slot = (kPlotW - 230) / static_cast<double>(blocks.size());
  std::vector<bool> used(report::kNumCategories, false);
  for (size_t i = 0; i < blocks.size(); ++i) {
    double x = kLeft + slot * static_cast<double>(i) + slot * 0.2, y = kTop + kPlotH;
    for (size_t c = 0; c < report::kNumCategories; ++c) {
      uint64_t bytes = blocks[i].usage.by_category[c];
      if (bytes == 0) continue;
      used[c] = true;
      double h = kPlotH * static_cast<double>(bytes) / y_max;
      y -= h;
      w.Open("rect", {{"x", Num(x)},
                      {"y", Num(y)},
                      {"width", Num(slot * 0.6)},
                      {"height", Num(h)},
                      {"fill", kPalette[c]}});
      w.Open("title");
      w.Text(fmt::format("tile {}: {} {} B", blocks[i].tile,
                         report::CategoryLabel(static_cast<report::Category>(c)),
                         WithThousands(bytes)));
      w.Close();
      w.Close();
    }
    w.Open("text",
           {{"x", Num(x + slot * 0.3)}, {"y", Num(kTop + kPlotH + 16)}, {"text-anchor", "middle"}});
    w.Text(fmt::format("tile {}", blocks[i].tile));
    w.Close();
  }
  double ly = kTop;
  for (size_t c = 0; c < report::kNumCategories; ++c) {
    if (!used[c]) continue;
    double lx = kWidth - kRight - 210;
    w.Empty(
        "rect",
        {{"x", Num(lx)}, {"y", Num(ly)}, {"width", "12"}, {"height", "12"}, {"fill", kPalette[c]}});
    w.Open("text", {{"x", Num(lx + 18)}, {"y", Num(ly + 10)}});
    w.Text(report::CategoryLabel(static_cast<report::Category>(c)));
    w.Close();
    ly += 17;
  }
  return w.Finish();
}

// One bar per kind of cycles as the report gives them, with its share of
// the total cycles (tile averages) or its value (SDK 1.x sums over tiles).
Expected<std::string> ExecutionPlot(const LoadedReport& loaded, bool standalone) {
  if (!loaded.execution)
    return MakeError("{}: the report has no Execution section to plot", loaded.path);
  const report::ExecutionReport& execution = *loaded.execution;
  std::vector<CycleShare> split = CycleSplit(execution);
  double largest = 0;
  for (const CycleShare& row : split) largest = std::max(largest, row.cycles.value_or(0));
  if (split.empty())
    return MakeError("{}: the Execution section has no cycle split to plot", loaded.path);
  bool averages = CycleSplitMeasure(execution) == "tile average";
  double y_max = NiceCeil(largest * 1.05);
  XmlWriter w;
  Begin(w,
        fmt::format("Execution cycles by kind ({}), total {} cycles",
                    averages ? "tile average" : "sum over tiles",
                    WithThousands(execution.total_cycles)),
        standalone);
  Axes(w, y_max, "cycles", "", [](double v) { return WithThousands(v, 0); });
  double slot = kPlotW / static_cast<double>(split.size());
  for (size_t i = 0; i < split.size(); ++i) {
    const CycleShare& row = split[i];
    double x = kLeft + slot * static_cast<double>(i) + slot * 0.15;
    double value = row.cycles.value_or(0);
    double h = kPlotH * value / y_max;
    if (row.cycles && value > 0) h = std::max(h, 1.0);
    std::string share;
    if (averages && execution.total_cycles > 0)
      share =
          fmt::format(" ({}% of total)",
                      WithThousands(value / static_cast<double>(execution.total_cycles) * 100, 1));
    std::string tooltip =
        row.cycles ? fmt::format("{}: {}{}{}", row.label, WithThousands(value, 1), share,
                                 row.estimated ? " (estimated)" : "")
                   : fmt::format("{}: not measured (needs {})", row.label, row.needs_option);
    w.Open("rect", {{"x", Num(x)},
                    {"y", Num(kTop + kPlotH - h)},
                    {"width", Num(slot * 0.7)},
                    {"height", Num(h)},
                    {"fill", kPalette[i % std::size(kPalette)]}});
    w.Open("title");
    w.Text(tooltip);
    w.Close();
    w.Close();
    // The kind under the bar, without the words every label shares.
    std::string name = row.label;
    for (std::string_view word : {"Tile average ", "Total ", " cycles"})
      if (size_t at = name.find(word); at != std::string::npos) name.erase(at, word.size());
    w.Open("text", {{"x", Num(x + slot * 0.35)},
                    {"y", Num(kTop + kPlotH + 16)},
                    {"text-anchor", "middle"},
                    {"font-size", "10"}});
    w.Text(name);
    w.Close();
    w.Open("text", {{"x", Num(x + slot * 0.35)},
                    {"y", Num(kTop + kPlotH - h - 4)},
                    {"text-anchor", "middle"},
                    {"font-size", "10"}});
    w.Text(row.cycles ? WithThousands(value, 1) + share : "not measured");
    w.Close();
  }
  return w.Finish();
}

}  // namespace

std::optional<PlotKind> ParsePlotKind(std::string_view name) {
  if (name == "tiles") return PlotKind::kTiles;
  if (name == "histogram") return PlotKind::kHistogram;
  if (name == "categories") return PlotKind::kCategories;
  if (name == "execution") return PlotKind::kExecution;
  return std::nullopt;
}

std::string_view PlotKindName(PlotKind kind) {
  switch (kind) {
    case PlotKind::kTiles:
      return "tiles";
    case PlotKind::kHistogram:
      return "histogram";
    case PlotKind::kCategories:
      return "categories";
    case PlotKind::kExecution:
      return "execution";
  }
  return "tiles";
}

Expected<std::string> PlotSvg(const LoadedReport& report, PlotKind kind, bool standalone) {
  switch (kind) {
    case PlotKind::kTiles:
      return TilesPlot(report, standalone);
    case PlotKind::kHistogram:
      return HistogramPlot(report, standalone);
    case PlotKind::kCategories:
      return CategoriesPlot(report, standalone);
    case PlotKind::kExecution:
      return ExecutionPlot(report, standalone);
  }
  return MakeError("unknown plot kind");
}

}  // namespace tileprof::analyzer
