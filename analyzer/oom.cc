#include "analyzer/oom.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <span>

#include "analyzer/memory_views.h"
#include "common/format.h"

namespace tileprof::analyzer {
namespace {

using report::Category;
using report::CompilationReport;
using report::TileUsage;

constexpr Category kCodeCategories[] = {Category::kControlCode, Category::kVertexCode,
                                        Category::kInternalExchangeCode,
                                        Category::kHostExchangeCode, Category::kGlobalExchangeCode};

// A tensor's share of one tile.
struct TensorOnTile {
  const MappedTensor* tensor = nullptr;
  uint64_t bytes = 0;
};

struct WorstTile {
  TileUsage block;
  const report::TileMemory* memory = nullptr;  // when the report has per-tile data
  std::optional<uint64_t> over_by;             // excluding-gaps bytes beyond capacity
};

std::string Label(const MappedTensor& t) {
  return t.op_name.empty() ? t.instruction : fmt::format("{} ({})", t.instruction, t.op_name);
}

// The tiles to examine: every tile over capacity (worst first), else the
// most used ones, at most `count`; and how many tiles are over.
struct Examined {
  std::vector<WorstTile> worst;
  uint64_t over_count = 0;               // among the tiles read
  std::optional<uint64_t> printed_over;  // what a text report printed
};

Examined ChooseTiles(const LoadedReport& loaded, uint64_t capacity, size_t count) {
  const CompilationReport& report = loaded.compilation;
  Examined examined;
  if (loaded.HasTiles()) {
    for (const auto& tile : report.tiles)
      if (tile.ExcludingGaps() > capacity) ++examined.over_count;
    for (const report::TileMemory* tile : report::TopTiles(report.tiles, count)) {
      WorstTile w{
          {tile->tile, report::UsageOfTile(*tile, report.vertex_types)}, tile, std::nullopt};
      if (tile->ExcludingGaps() > capacity) w.over_by = tile->ExcludingGaps() - capacity;
      examined.worst.push_back(std::move(w));
    }
    return examined;
  }
  for (TileUsage& block : TopBlocks(report, count)) {
    WorstTile w{std::move(block), nullptr, std::nullopt};
    if (w.block.usage.known.regions.all() && w.block.usage.ExcludingGaps() > capacity) {
      w.over_by = w.block.usage.ExcludingGaps() - capacity;
      ++examined.over_count;
    }
    examined.worst.push_back(std::move(w));
  }
  if (auto by_tile = report::ResolveByTile(report); by_tile && by_tile->tiles_out_of_memory)
    examined.printed_over = by_tile->tiles_out_of_memory;
  return examined;
}

// Tensor bytes per examined tile, largest first. Errors when the map names
// a tile the report's target does not have.
using TensorsByTile = std::map<uint32_t, std::vector<TensorOnTile>>;
Expected<TensorsByTile> TensorsOnTiles(const LoadedReport& loaded,
                                       const std::vector<MappedTensor>& tensors,
                                       std::span<const WorstTile> worst, uint64_t total_tiles) {
  TensorsByTile on_tile;
  for (const WorstTile& w : worst) on_tile[w.block.tile];
  for (const MappedTensor& t : tensors) {
    for (const auto& [tile, n] : t.tiles) {
      if (loaded.compilation.target && total_tiles && tile >= total_tiles) {
        return MakeError("tensor map: tensor '{},{}' is mapped to tile {}, but {} has {} tiles",
                         t.instruction, t.output_index, tile, loaded.path, total_tiles);
      }
      auto it = on_tile.find(tile);
      if (it != on_tile.end()) it->second.push_back({&t, n * t.element_bytes});
    }
  }
  for (auto& [tile, list] : on_tile) {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  }
  return on_tile;
}

// The tables of the examined tiles, a row (or rows) per tile each.
struct OomTables {
  Table tiles{"tiles",
              "Tiles examined (over capacity first; by excluding-gaps bytes)",
              {"tile", "ipu", "excluding_gaps", "including_gaps", "over_by", "non_interleaved",
               "interleaved", "overflowed", "always_live", "not_always_live", "code"},
              {}};
  Table categories{"categories", "What is on them: categories", {"tile", "category", "bytes"}, {}};
  Table types{"vertex_types", "Vertex data by type", {"tile", "type", "bytes"}, {}};
  Table variables{
      "variables", "Largest variables", {"tile", "variable", "bytes", "always_live"}, {}};
  Table tensors{"tensors",
                "Largest tensors (tensor map)",
                {"tile", "instruction", "op_name", "computation", "shape", "bytes_on_tile",
                 "tensor_bytes", "tiles_spanned"},
                {}};
  Table suggestions{"suggestions",
                    "Suggestions (estimated bytes saved on the tile)",
                    {"tile", "suggestion", "saves", "fits_after", "target", "assumption"},
                    {}};
};

// The tile's row, its categories (largest first) and vertex types.
void AddTileRows(const CompilationReport& report, const WorstTile& w, OomTables& out) {
  const report::MemoryUsage& u = w.block.usage;
  const uint32_t id = w.block.tile;
  uint64_t code = 0;
  bool code_known = true;
  for (Category c : kCodeCategories) {
    code += report::At(u.by_category, c);
    code_known = code_known && u.known.categories[static_cast<size_t>(c)];
  }
  out.tiles.Add(
      {uint64_t{id}, IpuOf(report, id), u.known.regions.all() ? Cell{u.ExcludingGaps()} : Cell{},
       u.known.including_gaps ? Cell{u.including_gaps} : Cell{},
       w.over_by ? Cell{*w.over_by} : Cell{uint64_t{0}},
       u.known.regions[0] ? Cell{u.by_region[0]} : Cell{},
       u.known.regions[1] ? Cell{u.by_region[1]} : Cell{},
       u.known.regions[2] ? Cell{u.by_region[2]} : Cell{},
       w.memory ? Cell{w.memory->always_live} : Cell{},
       w.memory ? Cell{w.memory->not_always_live} : Cell{}, code_known ? Cell{code} : Cell{}});
  std::vector<std::pair<uint64_t, size_t>> by_bytes;
  for (size_t c = 0; c < report::kNumCategories; ++c)
    if (u.known.categories[c] && u.by_category[c] > 0) by_bytes.emplace_back(u.by_category[c], c);
  std::stable_sort(by_bytes.begin(), by_bytes.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [bytes, c] : by_bytes)
    out.categories.Add(
        {uint64_t{id}, std::string(report::CategoryLabel(static_cast<Category>(c))), bytes});
  for (const auto& named : u.by_vertex_type) out.types.Add({uint64_t{id}, named.name, named.bytes});
}

// What a receive buffer ("exchange buffer of X") belongs to: the HLO
// operations of compute set X and whether its vertices are opaque ops (an
// op tileprof has no codelet for: one vertex on one tile that reads every
// operand whole). Null for other variables, or when the report does not
// list compute set X (a text report, or one without operations).
struct BufferOwner {
  std::string ops;  // "custom-call token", comma-separated
  bool opaque = false;
};

constexpr std::string_view kReceiveBufferPrefix = "exchange buffer of ";

std::optional<BufferOwner> OwnerOf(const CompilationReport& report, std::string_view variable) {
  if (!variable.starts_with(kReceiveBufferPrefix)) return std::nullopt;
  const std::string_view set = variable.substr(kReceiveBufferPrefix.size());
  const auto it = std::find_if(report.compute_sets.begin(), report.compute_sets.end(),
                               [&](const report::ComputeSet& c) { return c.name == set; });
  if (it == report.compute_sets.end()) return std::nullopt;
  const auto index = static_cast<uint32_t>(it - report.compute_sets.begin());
  BufferOwner owner;
  std::vector<std::string> ops;
  for (const report::ComputeSetOperation& link : report.compute_set_operations) {
    if (link.compute_set != index || link.operation >= report.operations.size()) continue;
    const report::Operation& op = report.operations[link.operation];
    ops.push_back(fmt::format("{} {}", op.opcode, op.name));
  }
  if (ops.empty()) return std::nullopt;
  owner.ops = fmt::format("{}", fmt::join(ops, ", "));
  for (const report::ComputeSetVertices& v : it->vertices) {
    owner.opaque =
        owner.opaque || (v.type < report.vertex_types.size() &&
                         report.vertex_types[v.type].name.starts_with("tileprof::OpaqueOp"));
  }
  return owner;
}

// Suggestions for one tile, each with the bytes it would free there:
// `here` are the tile's tensors (largest first; null without a tensor map),
// `vars` its largest variables.
void AddSuggestions(const CompilationReport& report, const WorstTile& w, uint64_t total_tiles,
                    const std::vector<TensorOnTile>* here,
                    std::span<const report::Variable* const> vars, Table& suggestions) {
  const uint32_t id = w.block.tile;
  auto suggest = [&](std::string what, uint64_t saves, std::string target, std::string assumption) {
    if (saves == 0) return;
    Cell fits =
        w.over_by ? Cell{std::string(saves >= *w.over_by ? "yes" : "no")} : Cell{std::string("-")};
    suggestions.Add(
        {uint64_t{id}, std::move(what), saves, fits, std::move(target), std::move(assumption)});
  };
  const TensorOnTile* largest = here && !here->empty() ? &here->front() : nullptr;
  if (largest && total_tiles) {
    uint64_t even = (largest->tensor->Bytes() + total_tiles - 1) / total_tiles;
    if (largest->bytes > even) {
      suggest("spread the largest tensor over all tiles", largest->bytes - even,
              Label(*largest->tensor),
              fmt::format("{} B here, {} B in all over {} tile(s); evenly {} B per tile",
                          largest->bytes, largest->tensor->Bytes(), largest->tensor->tiles.size(),
                          even));
    }
    suggest("split the largest tensor in two (serialise its op)", largest->bytes / 2,
            Label(*largest->tensor), "half of it live at once");
  }
  // A variable larger than any tensor here is what to shrink: an op's
  // receive buffer ("exchange buffer of X", which no tensor map lists)
  // holds more than the tensors on the tile when X reads too much.
  const report::Variable* var = vars.empty() ? nullptr : vars.front();
  if (var && (!largest || var->bytes > largest->bytes)) {
    const std::optional<BufferOwner> owner = OwnerOf(report, var->name);
    if (owner && owner->opaque) {
      // Halving it is not the user's to do: the op has no codelet, so its
      // one vertex receives its operands whole.
      suggest("give the op a codelet, or run it on the host", var->bytes, var->name,
              fmt::format("upper bound: {} is an opaque op (tileprof has no codelet for it), so "
                          "one vertex on this tile receives all its operands; planned like the "
                          "ops it stands for, it would read its share",
                          owner->ops));
    } else if (owner) {
      suggest("serialise the op that receives it (in two steps)", var->bytes / 2, var->name,
              fmt::format("what {} reads from other tiles onto this tile; half of it live at once",
                          owner->ops));
    } else {
      suggest("split the largest variable in two", var->bytes / 2, var->name,
              "half of it live at once");
    }
  }
  if (w.memory && w.memory->not_always_live > 0) {
    uint64_t nal = w.memory->not_always_live;
    suggest(
        "halve the batch size", nal / 2, "not-always-live memory",
        fmt::format("activations ({} B not-always-live at the peak) scale with the batch", nal));
    // What must stay: the largest tensor or variable here, whichever is
    // larger (an op's receive buffer is not an activation to recompute).
    const uint64_t keep =
        std::min(std::max(largest ? largest->bytes : 0, var ? var->bytes : 0), nal);
    suggest("recompute activations instead of keeping them", nal - keep, "not-always-live memory",
            largest ? "upper bound: all of the peak but the largest tensor or variable here"
                    : "upper bound: all of the not-always-live peak but the largest variable here "
                      "(no tensor map to say what else must stay)");
  }
  if (here) {
    uint64_t f32 = 0;
    std::vector<std::string> names;
    for (const TensorOnTile& t : *here) {
      if (t.tensor->type != "float") continue;
      f32 += t.bytes;
      if (names.size() < 3) names.push_back(Label(*t.tensor));
    }
    suggest("store f32 tensors as f16", f32 / 2, fmt::format("{}", fmt::join(names, ", ")),
            fmt::format("{} B of f32 tensors here, halved", f32));
  }
}

}  // namespace

Expected<Output> OomView(const LoadedReport& loaded, const std::vector<MappedTensor>* tensors,
                         const OomOptions& options) {
  const CompilationReport& report = loaded.compilation;
  std::optional<uint64_t> capacity =
      options.bytes_per_tile ? options.bytes_per_tile : Capacity(report);
  if (!capacity) {
    return MakeError(
        "{}: the report has no Target section, so the memory per tile is unknown; give "
        "--bytes-per-tile",
        loaded.path);
  }
  uint64_t total_tiles = report.target ? report.target->total_tiles : report.tiles.size();
  const Examined examined = ChooseTiles(loaded, *capacity, options.worst_tiles);
  const std::vector<WorstTile>& worst = examined.worst;
  TensorsByTile on_tile;
  if (tensors) {
    TILEPROF_ASSIGN_OR_RETURN(on_tile, TensorsOnTiles(loaded, *tensors, worst, total_tiles));
  }

  Output out;
  Table summary{
      "summary",
      "Out of memory",
      {"report", "bytes_per_tile", "tiles", "tiles_out_of_memory", "worst_tile", "worst_over_by"},
      {}};
  uint64_t over_shown = loaded.HasTiles() ? examined.over_count : examined.printed_over.value_or(0);
  bool over_known = loaded.HasTiles() || examined.printed_over.has_value();
  const WorstTile* first = worst.empty() ? nullptr : &worst.front();
  summary.Add({loaded.path, *capacity, total_tiles ? Cell{total_tiles} : Cell{},
               over_known ? Cell{over_shown} : Cell{},
               first ? Cell{uint64_t{first->block.tile}} : Cell{},
               first && first->over_by ? Cell{*first->over_by} : Cell{uint64_t{0}}});
  out.tables.push_back(std::move(summary));

  OomTables tables;
  for (const WorstTile& w : worst) {
    const uint32_t id = w.block.tile;
    AddTileRows(report, w, tables);
    std::vector<const report::Variable*> vars;
    for (const auto& v : report.variables)
      if (v.tile == id) vars.push_back(&v);
    std::stable_sort(vars.begin(), vars.end(),
                     [](auto* a, auto* b) { return a->bytes > b->bytes; });
    if (vars.size() > options.items) vars.resize(options.items);
    for (const report::Variable* v : vars)
      tables.variables.Add(
          {uint64_t{id}, v->name, v->bytes, std::string(v->always_live ? "yes" : "no")});
    const std::vector<TensorOnTile>* here = nullptr;
    if (auto it = on_tile.find(id); it != on_tile.end()) here = &it->second;
    for (size_t k = 0; here && k < here->size() && k < options.items; ++k) {
      const TensorOnTile& t = (*here)[k];
      tables.tensors.Add({uint64_t{id}, t.tensor->instruction, t.tensor->op_name,
                          t.tensor->computation, t.tensor->ShapeText(), t.bytes, t.tensor->Bytes(),
                          uint64_t{t.tensor->tiles.size()}});
    }
    AddSuggestions(report, w, total_tiles, here, vars, tables.suggestions);
  }
  for (Table* table : {&tables.tiles, &tables.categories, &tables.types, &tables.variables,
                       &tables.tensors, &tables.suggestions})
    out.tables.push_back(std::move(*table));

  if (examined.over_count == 0 && !(examined.printed_over && *examined.printed_over > 0)) {
    out.notes.push_back(fmt::format("No tile is over its {} B; the tiles shown are the most used.",
                                    WithThousands(*capacity)));
  }
  if (!loaded.HasTiles()) {
    out.notes.push_back(
        fmt::format("{} is a {} report: only its printed tile blocks are examined. A JSON, CBOR or "
                    "SQLite report "
                    "adds always-live/not-always-live and every tile.",
                    loaded.path, ReportFormatName(loaded.format)));
  }
  if (!tensors)
    out.notes.push_back(
        "Give --tensor-map FILE to name the tensors on these tiles by HLO instruction.");
  return out;
}

}  // namespace tileprof::analyzer
