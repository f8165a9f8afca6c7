#include "analyzer/html_page.h"

#include <fmt/format.h>

#include "analyzer/memory_views.h"
#include "analyzer/output.h"
#include "analyzer/plots.h"
#include "analyzer/xml_writer.h"
#include "common/format.h"

namespace tileprof::analyzer {
namespace {

constexpr std::string_view kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #ccc;padding:2px 8px}td.n{text-align:right}"
    "th{background:#f3f3f3;cursor:pointer}h2{margin-top:1.5em}"
    ".note{color:#666}";

// Sorts #tiles by the clicked column (numbers by value), then marks the page
// ready. No external resources, no eval.
constexpr std::string_view kScript = R"JS(
(function () {
  var table = document.getElementById('tiles');
  if (table) {
    var heads = table.querySelectorAll('th');
    heads.forEach(function (th, col) {
      th.addEventListener('click', function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var desc = th.getAttribute('data-desc') !== '1';
        th.setAttribute('data-desc', desc ? '1' : '0');
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
          var nx = parseFloat(x), ny = parseFloat(y);
          var c = (isNaN(nx) || isNaN(ny)) ? String(x).localeCompare(String(y)) : nx - ny;
          return desc ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }
  document.body.setAttribute('data-ready', '1');
})();
)JS";

void WriteTable(XmlWriter& w, const Table& table, const char* id = nullptr) {
  if (id)
    w.Open("table", {{"id", id}});
  else
    w.Open("table");
  w.Open("thead");
  w.Open("tr");
  for (const std::string& column : table.columns) {
    w.Open("th");
    w.Text(column);
    w.Close();
  }
  w.Close();
  w.Close();
  w.Open("tbody");
  for (const auto& row : table.rows) {
    w.Open("tr");
    for (const Cell& cell : row) {
      bool number = !std::holds_alternative<std::string>(cell) &&
                    !std::holds_alternative<std::monostate>(cell);
      std::string value = std::visit(
          [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>)
              return "";
            else if constexpr (std::is_same_v<T, std::string>)
              return v;
            else
              return fmt::format("{}", v);
          },
          cell);
      if (number)
        w.Open("td", {{"class", "n"}, {"data-v", value}});
      else
        w.Open("td", {{"data-v", value}});
      w.Text(CellText(cell));
      w.Close();
    }
    w.Close();
  }
  w.Close();
  w.Close();
}

Table SummaryTable(const LoadedReport& loaded) {
  const auto& report = loaded.compilation;
  Table summary{"summary", "", {"measure", "value"}, {}};
  if (report.target) {
    const auto& t = *report.target;
    if (!t.arch.empty()) summary.Add({std::string("architecture"), t.arch});
    summary.Add({std::string("IPUs"), uint64_t{t.num_ipus}});
    summary.Add({std::string("tiles"), t.total_tiles});
    summary.Add({std::string("memory per tile (B)"), t.bytes_per_tile});
    summary.Add({std::string("total memory (B)"), t.total_memory});
  }
  if (auto total = Total(loaded)) {
    if (total->known.including_gaps)
      summary.Add({std::string("including gaps (B)"), total->including_gaps});
    if (total->known.regions.all())
      summary.Add({std::string("excluding gaps (B)"), total->ExcludingGaps()});
  }
  if (auto by_tile = report::ResolveByTile(report)) {
    if (by_tile->max_excluding_gaps)
      summary.Add({fmt::format("largest tile (B, tile {})", by_tile->max_excluding_gaps->tile),
                   by_tile->max_excluding_gaps->bytes});
    if (by_tile->tiles_out_of_memory)
      summary.Add({std::string("tiles out of memory"), *by_tile->tiles_out_of_memory});
  }
  return summary;
}

void WritePlots(XmlWriter& w, const LoadedReport& loaded) {
  for (PlotKind kind : {PlotKind::kTiles, PlotKind::kHistogram, PlotKind::kCategories}) {
    w.Open("h2");
    w.Text(kind == PlotKind::kTiles       ? "Memory per tile"
           : kind == PlotKind::kHistogram ? "By Tile histogram"
                                          : "Categories of the most-used tiles");
    w.Close();
    Expected<std::string> svg = PlotSvg(loaded, kind, /*standalone=*/false);
    if (svg) {
      w.Open("div");
      w.Raw(*svg);
      w.Close();
    } else {
      w.Open("p", {{"class", "note"}});
      w.Text("Not available: " + svg.error().message());
      w.Close();
    }
  }
}

// The most-used tiles' breakdown, with only the columns that have a non-zero
// value, so the table fits.
void WriteTopTiles(XmlWriter& w, const report::CompilationReport& report) {
  w.Open("h2");
  w.Text("Most-used tiles");
  w.Close();
  Table tiles = TileBreakdownTable(report, TopBlocks(report, kHtmlTopTiles));
  std::vector<size_t> keep;
  for (size_t c = 0; c < tiles.columns.size(); ++c) {
    bool any = c < 4;
    for (const auto& row : tiles.rows) {
      if (const auto* v = std::get_if<uint64_t>(&row[c]); v && *v) any = true;
    }
    if (any) keep.push_back(c);
  }
  Table shown{"tiles", "", {}, {}};
  for (size_t c : keep) shown.columns.push_back(tiles.columns[c]);
  for (const auto& row : tiles.rows) {
    std::vector<Cell> cells;
    for (size_t c : keep) cells.push_back(row[c]);
    shown.Add(std::move(cells));
  }
  w.Open("p", {{"class", "note"}});
  if (shown.rows.empty()) {
    w.Text("The report has no tile blocks.");
    w.Close();
    return;
  }
  w.Text("Bytes, excluding gaps unless named otherwise. Click a column heading to sort.");
  w.Close();
  WriteTable(w, shown, "tiles");
}

}  // namespace

std::string HtmlPage(const LoadedReport& loaded) {
  XmlWriter w;
  w.Raw("<!DOCTYPE html>\n");
  w.Open("html", {{"lang", "en"}});
  w.Open("head");
  w.Empty("meta", {{"charset", "utf-8"}});
  w.Open("title");
  w.Text("tileprof: " + loaded.path);
  w.Close();
  w.Open("style");
  w.Raw(kStyle);
  w.Close();
  w.Close();
  w.Open("body");
  w.Open("h1");
  w.Text("Memory report: " + loaded.path);
  w.Close();
  w.Open("h2");
  w.Text("Summary");
  w.Close();
  WriteTable(w, SummaryTable(loaded));
  WritePlots(w, loaded);
  WriteTopTiles(w, loaded.compilation);
  w.Open("script");
  w.Raw(kScript);
  w.Close();
  return w.Finish() + "\n";
}

}  // namespace tileprof::analyzer
