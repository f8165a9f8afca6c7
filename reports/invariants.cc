#include "reports/invariants.h"

#include <fmt/format.h>

#include "common/format.h"

namespace tileprof::report {
namespace {

std::string TileName(const TileMemory& tile) { return fmt::format("tile {}", tile.tile); }

uint64_t VertexDataCategoryTotal(const CategoryBytes& by_category) {
  uint64_t total = 0;
  for (Category category : kVertexDataCategories) total += At(by_category, category);
  return total;
}

}  // namespace

void CheckCategoriesSumToRegions(const TileMemory& tile, Violations& out) {
  if (tile.CategoryTotal() != tile.ExcludingGaps())
    out.push_back(fmt::format("{}: categories sum to {} B, regions (excluding gaps) to {} B",
                              TileName(tile), tile.CategoryTotal(), tile.ExcludingGaps()));
}

void CheckIncludingAtLeastExcluding(const TileMemory& tile, Violations& out) {
  for (size_t r = 0; r < kNumRegions; ++r) {
    const RegionBytes& region = tile.by_region[r];
    if (region.including_gaps < region.excluding_gaps)
      out.push_back(fmt::format("{}: {} region has {} B including gaps < {} B excluding gaps",
                                TileName(tile), RegionLabel(static_cast<Region>(r)),
                                region.including_gaps, region.excluding_gaps));
  }
}

void CheckLivenessSumsToTotal(const TileMemory& tile, Violations& out) {
  if (tile.always_live + tile.not_always_live != tile.ExcludingGaps())
    out.push_back(fmt::format("{}: always-live {} B + not-always-live {} B != {} B excluding gaps",
                              TileName(tile), tile.always_live, tile.not_always_live,
                              tile.ExcludingGaps()));
}

void CheckVertexDataSums(const TileMemory& tile, Violations& out) {
  uint64_t by_category = 0;
  for (uint64_t bytes : tile.vertex_data) by_category += bytes;
  uint64_t expected = VertexDataCategoryTotal(tile.by_category);
  if (by_category != expected)
    out.push_back(fmt::format("{}: vertex data by category sums to {} B, its categories to {} B",
                              TileName(tile), by_category, expected));
}

void CheckVertexTypeIndices(const TileMemory& tile, std::span<const VertexType> vertex_types,
                            Violations& out) {
  for (const VertexTypeBytes& entry : tile.vertex_types)
    if (entry.type >= vertex_types.size())
      out.push_back(fmt::format("{}: vertex type index {} out of range ({} types)", TileName(tile),
                                entry.type, vertex_types.size()));
}

void CheckMemoryUsage(const MemoryUsage& usage, std::string_view where, Violations& out) {
  const MemoryRowsKnown& known = usage.known;
  uint64_t categories = 0;
  for (uint64_t bytes : usage.by_category) categories += bytes;
  if (known.regions.all() && known.categories.all() && categories != usage.ExcludingGaps())
    out.push_back(fmt::format("{}: data types sum to {} B, memory regions to {} B", where,
                              categories, usage.ExcludingGaps()));
  if (known.including_gaps && known.regions.all() && usage.including_gaps < usage.ExcludingGaps())
    out.push_back(fmt::format("{}: including gaps {} B < excluding gaps {} B", where,
                              usage.including_gaps, usage.ExcludingGaps()));
  bool vertex_categories_known = true;
  for (Category category : kVertexDataCategories)
    vertex_categories_known &= known.categories.test(static_cast<size_t>(category));
  uint64_t expected = VertexDataCategoryTotal(usage.by_category);
  if (known.vertex_data && vertex_categories_known && usage.vertex_data != expected)
    out.push_back(fmt::format("{}: Vertex Data is {} B, its data types sum to {} B", where,
                              usage.vertex_data, expected));
  uint64_t by_category = 0;
  for (uint64_t bytes : usage.vertex_data_by_category) by_category += bytes;
  if (known.vertex_data && known.vertex_data_categories.all() && by_category != usage.vertex_data)
    out.push_back(fmt::format("{}: Vertex Data is {} B, its By Category rows sum to {} B", where,
                              usage.vertex_data, by_category));
}

void CheckTarget(const Target& target, Violations& out) {
  // Text reports print sizes rounded to 0.1 of a unit, so sizes are compared
  // as printed; targets built by MakeTarget are exact and compare equal too.
  auto same_size = [](uint64_t a, uint64_t b) { return BinarySize(a) == BinarySize(b); };
  if (target.total_tiles != uint64_t{target.num_ipus} * target.tiles_per_ipu)
    out.push_back(fmt::format("target: {} total tiles != {} IPUs x {} tiles", target.total_tiles,
                              target.num_ipus, target.tiles_per_ipu));
  if (!same_size(target.total_memory, target.total_tiles * target.bytes_per_tile))
    out.push_back(fmt::format("target: total memory {} != {} tiles x {}",
                              BinarySize(target.total_memory), target.total_tiles,
                              BinarySize(target.bytes_per_tile)));
  if (!target.replication) return;
  const Replication& r = *target.replication;
  if (uint64_t{r.num_replicas} * r.ipus_per_replica != target.num_ipus)
    out.push_back(fmt::format("target: {} replicas x {} IPUs != {} IPUs", r.num_replicas,
                              r.ipus_per_replica, target.num_ipus));
  if (r.tiles_per_replica != uint64_t{r.ipus_per_replica} * target.tiles_per_ipu)
    out.push_back(fmt::format("target: {} tiles per replica != {} IPUs x {} tiles",
                              r.tiles_per_replica, r.ipus_per_replica, target.tiles_per_ipu));
  if (!same_size(r.memory_per_replica, r.tiles_per_replica * target.bytes_per_tile))
    out.push_back(fmt::format("target: memory per replica {} != {} tiles x {}",
                              BinarySize(r.memory_per_replica), r.tiles_per_replica,
                              BinarySize(target.bytes_per_tile)));
}

void CheckTilesCoverTarget(const CompilationReport& report, Violations& out) {
  if (report.tiles.empty()) return;
  if (report.target && report.tiles.size() != report.target->total_tiles)
    out.push_back(fmt::format("report has {} tiles, the target {}", report.tiles.size(),
                              report.target->total_tiles));
  for (size_t i = 0; i < report.tiles.size(); ++i) {
    if (report.tiles[i].tile != i) {
      out.push_back(fmt::format("tiles[{}] has id {}; tiles must be in id order from 0", i,
                                report.tiles[i].tile));
      return;  // one message, not one per later tile
    }
  }
}

void CheckHistogram(const ByTileSummary& by_tile, std::optional<uint64_t> total_tiles,
                    Violations& out) {
  const auto& rows = by_tile.rows;
  uint64_t counted = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    counted += rows[i].tiles;
    if (rows[i].hi_kib <= rows[i].lo_kib)
      out.push_back(fmt::format("histogram row {} - {} is empty", rows[i].lo_kib, rows[i].hi_kib));
    if (i > 0 && rows[i].lo_kib < rows[i - 1].hi_kib)
      out.push_back(fmt::format("histogram row {} - {} overlaps or precedes {} - {}",
                                rows[i].lo_kib, rows[i].hi_kib, rows[i - 1].lo_kib,
                                rows[i - 1].hi_kib));
  }
  if (total_tiles && !rows.empty() && counted != *total_tiles)
    out.push_back(
        fmt::format("histogram counts sum to {}, the target has {} tiles", counted, *total_tiles));
  if (!rows.empty() && (rows.front().tiles == 0 || rows.back().tiles == 0))
    out.push_back("histogram starts or ends with an empty bucket");
  if (by_tile.max_excluding_gaps && !rows.empty()) {
    uint64_t max = by_tile.max_excluding_gaps->bytes;
    if (max / 1024 < rows.back().lo_kib || max / 1024 >= rows.back().hi_kib)
      out.push_back(fmt::format("maximum (excluding gaps) {} B is not in the last bucket {} - {}",
                                max, rows.back().lo_kib, rows.back().hi_kib));
  }
  if (by_tile.max_including_gaps && by_tile.max_excluding_gaps &&
      by_tile.max_including_gaps->bytes < by_tile.max_excluding_gaps->bytes)
    out.push_back("maximum including gaps is below the maximum excluding gaps");
  if (by_tile.tiles_out_of_memory && !rows.empty() && *by_tile.tiles_out_of_memory > counted)
    out.push_back(fmt::format("{} tiles out of memory, but only {} tiles counted",
                              *by_tile.tiles_out_of_memory, counted));
}

void CheckTilesSumToTotal(const CompilationReport& report, Violations& out) {
  const VerbatimMemory& verbatim = report.verbatim;
  if (!report.tiles.empty() && verbatim.total) {
    MemoryUsage derived = Summarize(report.tiles, report.vertex_types);
    const MemoryUsage& read = *verbatim.total;
    if (read.known.including_gaps && read.including_gaps != derived.including_gaps)
      out.push_back(fmt::format("tiles sum to {} B including gaps, the report says {} B",
                                derived.including_gaps, read.including_gaps));
    for (size_t c = 0; c < kNumCategories; ++c)
      if (read.known.categories.test(c) && read.by_category[c] != derived.by_category[c])
        out.push_back(fmt::format("tiles sum to {} B of {}, the report says {} B",
                                  derived.by_category[c], CategoryLabel(static_cast<Category>(c)),
                                  read.by_category[c]));
    for (size_t r = 0; r < kNumRegions; ++r)
      if (read.known.regions.test(r) && read.by_region[r] != derived.by_region[r])
        out.push_back(fmt::format("tiles sum to {} B {}, the report says {} B",
                                  derived.by_region[r], RegionLabel(static_cast<Region>(r)),
                                  read.by_region[r]));
  }
  if (!verbatim.total) return;
  const MemoryUsage& total = *verbatim.total;
  for (const TileUsage& block : verbatim.tile_blocks) {
    const MemoryUsage& tile = block.usage;
    for (size_t c = 0; c < kNumCategories; ++c)
      if (tile.known.categories.test(c) && total.known.categories.test(c) &&
          tile.by_category[c] > total.by_category[c])
        out.push_back(fmt::format("tile {}: {} B of {} exceeds the whole graph's {} B", block.tile,
                                  tile.by_category[c], CategoryLabel(static_cast<Category>(c)),
                                  total.by_category[c]));
    if (tile.known.including_gaps && total.known.including_gaps &&
        tile.including_gaps > total.including_gaps)
      out.push_back(fmt::format("tile {}: {} B including gaps exceeds the whole graph's {} B",
                                block.tile, tile.including_gaps, total.including_gaps));
  }
}

Violations CheckInvariants(const CompilationReport& report) {
  Violations out;
  if (report.target) CheckTarget(*report.target, out);
  CheckTilesCoverTarget(report, out);
  for (const TileMemory& tile : report.tiles) {
    CheckCategoriesSumToRegions(tile, out);
    CheckIncludingAtLeastExcluding(tile, out);
    CheckLivenessSumsToTotal(tile, out);
    CheckVertexDataSums(tile, out);
    CheckVertexTypeIndices(tile, report.vertex_types, out);
  }
  if (std::optional<MemoryUsage> total = ResolveTotal(report))
    CheckMemoryUsage(*total, "total", out);
  for (const TileUsage& block : report.verbatim.tile_blocks)
    CheckMemoryUsage(block.usage, fmt::format("tile {}", block.tile), out);
  if (std::optional<ByTileSummary> by_tile = ResolveByTile(report)) {
    std::optional<uint64_t> total_tiles;
    if (report.target) total_tiles = report.target->total_tiles;
    CheckHistogram(*by_tile, total_tiles, out);
  }
  CheckTilesSumToTotal(report, out);
  for (const Variable& variable : report.variables) {
    if (report.target && variable.tile >= report.target->total_tiles) {
      out.push_back(fmt::format("variable '{}' is on tile {}, past the last tile", variable.name,
                                variable.tile));
    } else if (variable.offset && variable.tile < report.tiles.size() &&
               *variable.offset + variable.bytes > report.tiles[variable.tile].IncludingGaps()) {
      // Addresses run from 0 to the tile's including-gaps extent.
      out.push_back(
          fmt::format("variable '{}' on tile {} ends at byte {}, past the tile's {} bytes "
                      "including gaps",
                      variable.name, variable.tile, *variable.offset + variable.bytes,
                      report.tiles[variable.tile].IncludingGaps()));
    }
  }
  return out;
}

Violations CheckInvariants(const ExecutionReport& execution) {
  Violations out;
  const auto& avg = execution.tile_average_cycles;
  const auto& incl = avg[static_cast<size_t>(CycleKind::kComputeIncludingIdle)];
  const auto& excl = avg[static_cast<size_t>(CycleKind::kComputeExcludingIdle)];
  if (incl && excl && *excl > *incl)
    out.push_back(
        fmt::format("compute cycles excluding idle threads ({}) exceed those including "
                    "them ({})",
                    *excl, *incl));
  double sum = 0;
  for (size_t kind = 0; kind < kNumCycleKinds; ++kind) {
    if (static_cast<CycleKind>(kind) == CycleKind::kComputeExcludingIdle) continue;
    if (avg[kind]) sum += *avg[kind];
  }
  // The averages are printed to 0.1 cycle; allow for that rounding.
  if (sum > static_cast<double>(execution.total_cycles) + 0.05 * kNumCycleKinds)
    out.push_back(fmt::format("tile averages sum to {:.1f} cycles, more than the {} total", sum,
                              execution.total_cycles));
  return out;
}

}  // namespace tileprof::report
