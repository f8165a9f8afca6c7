#include "analyzer/memory_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "analyzer/execution_views.h"
#include "reports/text_writer.h"

namespace tileprof::analyzer {
namespace {

using report::Category;
using report::CompilationReport;
using report::MemoryUsage;
using report::TileUsage;

Cell Known(bool known, uint64_t value) { return known ? Cell{value} : Cell{}; }

uint64_t Magnitude(const Cell& delta) {
  int64_t d = std::get<int64_t>(delta);
  return d < 0 ? uint64_t{0} - static_cast<uint64_t>(d) : static_cast<uint64_t>(d);
}

void AddHistogramTables(const report::ByTileSummary& summary, uint64_t width_kib, Output* out) {
  Table rows{"histogram", "Histogram", {"lo_kb", "hi_kb", "tiles"}, {}};
  for (const auto& row : summary.rows) rows.Add({row.lo_kib, row.hi_kib, row.tiles});
  Table maxima{"maxima", "Maxima", {"measure", "bytes", "tile"}, {}};
  if (summary.max_including_gaps)
    maxima.Add({std::string("including_gaps"), summary.max_including_gaps->bytes,
                uint64_t{summary.max_including_gaps->tile}});
  if (summary.max_excluding_gaps)
    maxima.Add({std::string("excluding_gaps"), summary.max_excluding_gaps->bytes,
                uint64_t{summary.max_excluding_gaps->tile}});
  Table totals{"summary", "Summary", {"bucket_kb", "tiles_out_of_memory"}, {}};
  totals.Add({width_kib ? Cell{width_kib} : Cell{},
              summary.tiles_out_of_memory ? Cell{*summary.tiles_out_of_memory} : Cell{}});
  out->tables.push_back(std::move(rows));
  out->tables.push_back(std::move(maxima));
  out->tables.push_back(std::move(totals));
}

}  // namespace

std::optional<uint64_t> Capacity(const CompilationReport& report) {
  if (!report.target || report.target->bytes_per_tile == 0) return std::nullopt;
  return report.target->bytes_per_tile;
}

Cell IpuOf(const CompilationReport& report, uint32_t tile) {
  if (!report.target || report.target->tiles_per_ipu == 0) return {};
  return uint64_t{tile / report.target->tiles_per_ipu};
}

Expected<std::vector<report::HistogramRow>> BuildHistogramWithWidth(
    std::span<const uint64_t> tile_bytes, uint64_t width_kib) {
  if (width_kib == 0) return MakeError("--bucket-kb must be at least 1");
  if (tile_bytes.empty()) return std::vector<report::HistogramRow>{};
  auto [min_it, max_it] = std::minmax_element(tile_bytes.begin(), tile_bytes.end());
  // width_kib * 1024 can overflow for absurd widths; such a width is one bucket.
  uint64_t bucket_bytes = width_kib > UINT64_MAX / 1024 ? UINT64_MAX : width_kib * 1024;
  uint64_t first = *min_it / bucket_bytes;
  uint64_t last = *max_it / bucket_bytes;
  if (last - first + 1 > kMaxRequestedBuckets) {
    return MakeError("--bucket-kb {} gives {} rows (at most {}); use at least {}", width_kib,
                     last - first + 1, kMaxRequestedBuckets,
                     (*max_it - *min_it) / 1024 / (kMaxRequestedBuckets - 1) + 1);
  }
  std::vector<report::HistogramRow> rows;
  for (uint64_t b = first; b <= last; ++b) rows.push_back({b * width_kib, (b + 1) * width_kib, 0});
  for (uint64_t bytes : tile_bytes) ++rows[bytes / bucket_bytes - first].tiles;
  return rows;
}

Expected<Output> HistogramView(const LoadedReport& loaded, const HistogramOptions& options) {
  const CompilationReport& report = loaded.compilation;
  Output out;
  report::ByTileSummary summary;
  uint64_t width_kib = 0;
  if (loaded.HasTiles()) {
    summary = report::SummarizeByTile(report.tiles, Capacity(report));
    std::vector<uint64_t> bytes;
    bytes.reserve(report.tiles.size());
    for (const auto& tile : report.tiles)
      bytes.push_back(options.including_gaps ? tile.IncludingGaps() : tile.ExcludingGaps());
    if (options.bucket_kib) {
      TILEPROF_ASSIGN_OR_RETURN(summary.rows, BuildHistogramWithWidth(bytes, *options.bucket_kib));
    } else {
      summary.rows = report::BuildHistogram(bytes);
    }
  } else {
    std::optional<report::ByTileSummary> printed = report::ResolveByTile(report);
    if (!printed) return MakeError("{}: the report has no By Tile histogram", loaded.path);
    if (options.including_gaps || options.bucket_kib) {
      return MakeError(
          "{}: --including-gaps and --bucket-kb need per-tile data, and a {} report carries only "
          "the printed histogram (use a JSON, CBOR or SQLite report)",
          loaded.path, ReportFormatName(loaded.format));
    }
    summary = *printed;
  }
  if (!summary.rows.empty() && report::RowsAreContiguous(summary.rows))
    width_kib = summary.rows.front().hi_kib - summary.rows.front().lo_kib;
  std::string_view gaps = options.including_gaps ? "Including Gaps" : "Excluding Gaps";
  out.text.push_back(fmt::format("  By Tile ({}):", gaps));
  for (std::string& line : report::RenderByTile(summary)) {
    if (options.including_gaps && line == report::kHistogramHeader) {
      line.replace(line.find("Excluding"), 9, "Including");
    }
    out.text.push_back(std::move(line));
  }
  AddHistogramTables(summary, width_kib, &out);
  return out;
}

std::vector<TileUsage> TopBlocks(const CompilationReport& report, size_t count) {
  std::vector<TileUsage> blocks =
      report::ResolveTileBlocks(report, report::TileBlocks::kAlways, count);
  if (blocks.size() > count) blocks.resize(count);
  return blocks;
}

Table TileBreakdownTable(const CompilationReport& report, const std::vector<TileUsage>& blocks) {
  Table table{"tiles", "Tiles", {"tile", "ipu", "including_gaps", "excluding_gaps"}, {}};
  for (size_t r = 0; r < report::kNumRegions; ++r) {
    std::string label(report::RegionLabel(static_cast<report::Region>(r)));
    std::transform(label.begin(), label.end(), label.begin(),
                   [](char c) { return c == '-' ? '_' : static_cast<char>(std::tolower(c)); });
    table.columns.push_back(label);
  }
  table.columns.push_back("always_live");
  table.columns.push_back("not_always_live");
  for (size_t c = 0; c < report::kNumCategories; ++c)
    table.columns.emplace_back(report::CategoryMachineName(static_cast<Category>(c)));
  table.columns.push_back("vertex_data");
  for (size_t v = 0; v < report::kNumVertexDataCategories; ++v) {
    std::string label(report::VertexDataCategoryLabel(static_cast<report::VertexDataCategory>(v)));
    std::transform(label.begin(), label.end(), label.begin(),
                   [](char c) { return c == ' ' ? '_' : static_cast<char>(std::tolower(c)); });
    table.columns.push_back("vertex_data_" + label);
  }
  for (const TileUsage& block : blocks) {
    const MemoryUsage& u = block.usage;
    std::vector<Cell> row{uint64_t{block.tile}, IpuOf(report, block.tile),
                          Known(u.known.including_gaps, u.including_gaps),
                          Known(u.known.regions.all(), u.ExcludingGaps())};
    for (size_t r = 0; r < report::kNumRegions; ++r)
      row.push_back(Known(u.known.regions[r], u.by_region[r]));
    const report::TileMemory* tile = nullptr;
    if (!report.tiles.empty() && block.tile < report.tiles.size() &&
        report.tiles[block.tile].tile == block.tile)
      tile = &report.tiles[block.tile];
    // Not `tile ? Cell{...} : Cell{}`: g++ 12 then warns that the string
    // alternative of the moved temporary may be uninitialized (it is not).
    if (tile) {
      row.emplace_back(tile->always_live);
      row.emplace_back(tile->not_always_live);
    } else {
      row.emplace_back();
      row.emplace_back();
    }
    for (size_t c = 0; c < report::kNumCategories; ++c)
      row.push_back(Known(u.known.categories[c], u.by_category[c]));
    row.push_back(Known(u.known.vertex_data, u.vertex_data));
    for (size_t v = 0; v < report::kNumVertexDataCategories; ++v)
      row.push_back(Known(u.known.vertex_data_categories[v], u.vertex_data_by_category[v]));
    table.Add(std::move(row));
  }
  return table;
}

Expected<Output> TopTilesView(const LoadedReport& loaded, size_t count) {
  const CompilationReport& report = loaded.compilation;
  std::vector<TileUsage> blocks = TopBlocks(report, count);
  if (blocks.empty() && !loaded.HasTiles()) {
    return MakeError(
        "{}: the {} report prints no tile blocks (Poplar prints them only when memory "
        "is imbalanced); a JSON, CBOR or SQLite report has every tile",
        loaded.path, ReportFormatName(loaded.format));
  }
  Output out;
  for (const TileUsage& block : blocks) {
    if (!out.text.empty()) out.text.emplace_back();
    out.text.push_back(fmt::format("Tile # {} memory usage:", block.tile));
    for (std::string& line : report::MemoryUsageLines(block.usage))
      out.text.push_back(std::move(line));
  }
  if (!loaded.HasTiles() && blocks.size() < count) {
    out.notes.push_back(fmt::format("The text report printed {} tile block(s); asked for {}.",
                                    blocks.size(), count));
  }
  out.tables.push_back(TileBreakdownTable(report, blocks));
  Table types{"vertex_types", "Vertex data by type", {"tile", "type", "bytes"}, {}};
  for (const TileUsage& block : blocks)
    for (const auto& named : block.usage.by_vertex_type)
      types.Add({uint64_t{block.tile}, named.name, named.bytes});
  out.tables.push_back(std::move(types));
  return out;
}

namespace {

void AddTargetComparison(const CompilationReport& ra, const CompilationReport& rb, Output* out) {
  Table target{"target", "Target", {"field", "a", "b"}, {}};
  auto target_row = [&](std::string field, auto get) {
    target.Add({std::move(field), ra.target ? Cell{get(*ra.target)} : Cell{},
                rb.target ? Cell{get(*rb.target)} : Cell{}});
  };
  target_row("arch",
             [](const report::Target& t) { return t.arch.empty() ? std::string("-") : t.arch; });
  target_row("ipus", [](const report::Target& t) { return uint64_t{t.num_ipus}; });
  target_row("tiles_per_ipu", [](const report::Target& t) { return t.tiles_per_ipu; });
  target_row("total_tiles", [](const report::Target& t) { return t.total_tiles; });
  target_row("bytes_per_tile", [](const report::Target& t) { return t.bytes_per_tile; });
  out->tables.push_back(std::move(target));
}

// The whole-report totals and the largest tile of each report.
Table TotalsTable(const CompilationReport& ra, const CompilationReport& rb, const MemoryUsage* ta,
                  const MemoryUsage* tb) {
  Table totals{"totals", "Totals", {"measure", "a", "b", "delta"}, {}};
  auto total_row = [&](std::string measure, bool ka, uint64_t va, bool kb, uint64_t vb) {
    totals.Add(
        {std::move(measure), Known(ka, va), Known(kb, vb), ka && kb ? CountDelta(va, vb) : Cell{}});
  };
  total_row("including_gaps", ta->known.including_gaps, ta->including_gaps,
            tb->known.including_gaps, tb->including_gaps);
  total_row("excluding_gaps", ta->known.regions.all(), ta->ExcludingGaps(), tb->known.regions.all(),
            tb->ExcludingGaps());
  for (size_t r = 0; r < report::kNumRegions; ++r) {
    total_row(std::string(report::RegionLabel(static_cast<report::Region>(r))),
              ta->known.regions[r], ta->by_region[r], tb->known.regions[r], tb->by_region[r]);
  }
  auto ba = report::ResolveByTile(ra);
  auto bb = report::ResolveByTile(rb);
  auto max_of = [](const std::optional<report::ByTileSummary>& s) {
    return s && s->max_excluding_gaps ? std::optional<uint64_t>(s->max_excluding_gaps->bytes)
                                      : std::nullopt;
  };
  total_row("max_tile_excluding_gaps", max_of(ba).has_value(), max_of(ba).value_or(0),
            max_of(bb).has_value(), max_of(bb).value_or(0));
  auto oom_of = [](const std::optional<report::ByTileSummary>& s) {
    return s && s->tiles_out_of_memory ? std::optional<uint64_t>(*s->tiles_out_of_memory)
                                       : std::nullopt;
  };
  total_row("tiles_out_of_memory", oom_of(ba).has_value(), oom_of(ba).value_or(0),
            oom_of(bb).has_value(), oom_of(bb).value_or(0));
  return totals;
}

Table CategoriesTable(const MemoryUsage* ta, const MemoryUsage* tb) {
  Table categories{
      "categories", "Categories (excluding gaps)", {"category", "a", "b", "delta"}, {}};
  for (size_t c = 0; c < report::kNumCategories; ++c) {
    bool ka = ta->known.categories[c], kb = tb->known.categories[c];
    categories.Add({std::string(report::CategoryLabel(static_cast<Category>(c))),
                    Known(ka, ta->by_category[c]), Known(kb, tb->by_category[c]),
                    ka && kb ? CountDelta(ta->by_category[c], tb->by_category[c]) : Cell{}});
  }
  return categories;
}

// The tiles that changed most: every tile when both reports have per-tile
// data, else the tile blocks both text reports printed.
Table TilesTable(const LoadedReport& a, const LoadedReport& b, size_t count, Output& out) {
  const CompilationReport& ra = a.compilation;
  const CompilationReport& rb = b.compilation;
  Table tiles{"tiles", "Tiles that changed most (excluding gaps)", {"tile", "a", "b", "delta"}, {}};
  if (a.HasTiles() && b.HasTiles()) {
    size_t common = std::min(ra.tiles.size(), rb.tiles.size());
    std::vector<std::pair<uint64_t, uint32_t>> changed;  // |delta|, index
    for (size_t i = 0; i < common; ++i) {
      uint64_t x = ra.tiles[i].ExcludingGaps(), y = rb.tiles[i].ExcludingGaps();
      if (x != y) changed.emplace_back(x > y ? x - y : y - x, static_cast<uint32_t>(i));
    }
    size_t shown = std::min(count, changed.size());
    std::partial_sort(changed.begin(), changed.begin() + static_cast<std::ptrdiff_t>(shown),
                      changed.end(), [](const auto& l, const auto& r) {
                        return l.first != r.first ? l.first > r.first : l.second < r.second;
                      });
    for (size_t k = 0; k < shown; ++k) {
      uint32_t i = changed[k].second;
      uint64_t x = ra.tiles[i].ExcludingGaps(), y = rb.tiles[i].ExcludingGaps();
      tiles.Add({uint64_t{ra.tiles[i].tile}, x, y, CountDelta(x, y)});
    }
    if (ra.tiles.size() != rb.tiles.size()) {
      out.notes.push_back(
          fmt::format("The reports have {} and {} tiles; the first {} are compared.",
                      ra.tiles.size(), rb.tiles.size(), common));
    }
  } else {
    // Text reports print at most five tile blocks: compare the tiles both printed.
    std::vector<TileUsage> pa = TopBlocks(ra, SIZE_MAX), pb = TopBlocks(rb, SIZE_MAX);
    std::vector<std::vector<Cell>> rows;
    for (const TileUsage& x : pa) {
      for (const TileUsage& y : pb) {
        if (x.tile == y.tile && x.usage.known.regions.all() && y.usage.known.regions.all()) {
          uint64_t va = x.usage.ExcludingGaps(), vb = y.usage.ExcludingGaps();
          if (va != vb) rows.push_back({uint64_t{x.tile}, va, vb, CountDelta(va, vb)});
        }
      }
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& l, const auto& r) {
      return Magnitude(l[3]) > Magnitude(r[3]);
    });
    if (rows.size() > count) rows.resize(count);
    tiles.rows = std::move(rows);
    out.notes.push_back(
        "Per-tile deltas cover only the tile blocks both reports printed; JSON, CBOR "
        "or SQLite reports carry every tile.");
  }
  return tiles;
}

void AddMemoryComparison(const LoadedReport& a, const LoadedReport& b, const MemoryUsage& ta_total,
                         const MemoryUsage& tb_total, size_t count, Output* out_ptr) {
  Output& out = *out_ptr;
  out.tables.push_back(TotalsTable(a.compilation, b.compilation, &ta_total, &tb_total));
  out.tables.push_back(CategoriesTable(&ta_total, &tb_total));
  out.tables.push_back(TilesTable(a, b, count, out));
}

}  // namespace

Expected<Output> CompareView(const LoadedReport& a, const LoadedReport& b, size_t count) {
  std::optional<MemoryUsage> ta = Total(a);
  std::optional<MemoryUsage> tb = Total(b);
  bool execution = a.execution && b.execution;
  if (!(ta && tb) && !execution) {
    auto has = [](const std::optional<MemoryUsage>& total, const LoadedReport& r) {
      return total ? "Memory Usage totals" : r.execution ? "an Execution section" : "";
    };
    std::string_view has_a = has(ta, a), has_b = has(tb, b);
    if (has_a.empty() || has_b.empty())
      return MakeError("{}: the report has no Memory Usage totals or Execution section to compare",
                       has_a.empty() ? a.path : b.path);
    return MakeError("{} has only {} and {} only {}: nothing in common to compare", a.path, has_a,
                     b.path, has_b);
  }
  Output out;
  if (a.compilation.target || b.compilation.target)
    AddTargetComparison(a.compilation, b.compilation, &out);
  if (ta && tb) {
    AddMemoryComparison(a, b, *ta, *tb, count, &out);
  } else if (ta || tb) {
    out.notes.push_back(fmt::format("Only {} has Memory Usage totals: memory is not compared.",
                                    ta ? a.path : b.path));
  }
  if (execution) {
    AddExecutionComparison(*a.execution, *b.execution, count, &out);
  } else if (a.execution || b.execution) {
    out.notes.push_back(fmt::format("Only {} has an Execution section: execution is not compared.",
                                    a.execution ? a.path : b.path));
  }
  return out;
}

}  // namespace tileprof::analyzer
