#include "reports/report.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tileprof::report {
namespace {

struct CategoryName {
  std::string_view label;
  std::string_view machine;
};

// Spec section 8.2, in section 4 order (the enum's order).
constexpr CategoryName kCategoryNames[kNumCategories] = {
    {"Variables", "variable"},
    {"Constants", "constant"},
    {"Host Exchange Packet Headers", "hostExchangePacketHeader"},
    {"Global Exchange Packet Headers", "globalExchangePacketHeader"},
    {"Stack", "stack"},
    {"Vertex Instances", "vertexInstanceState"},
    {"Copy Descriptors", "copyDescriptor"},
    {"VectorList Descriptors", "vectorListDescriptor"},
    {"Vertex Field Data", "vertexFieldData"},
    {"Control Table", "controlTable"},
    {"Control Code", "controlCode"},
    {"Vertex Code", "vertexCode"},
    {"Internal Exchange Code", "internalExchangeCode"},
    {"Host Exchange Code", "hostExchangeCode"},
    {"Global Exchange Code", "globalExchangeCode"},
    {"Instrumentation Results", "instrumentationResults"},
    {"Shared Code Storage", "sharedCodeStorage"},
    {"Shared Data Storage", "sharedDataStorage"},
};

constexpr std::string_view kRegionLabels[kNumRegions] = {"Non-interleaved", "Interleaved",
                                                         "Overflowed"};

constexpr std::string_view kVertexDataLabels[kNumVertexDataCategories] = {
    "Internal vertex state", "Edge pointers", "Copy pointers", "Padding", "Descriptors"};

constexpr std::string_view kCycleLabels[kNumCycleKinds] = {
    "Tile average compute cycles (including idle threads)",
    "Tile average compute cycles (excluding idle threads)",
    "Tile average IPU exchange cycles",
    "Tile average global exchange cycles",
    "Tile average host exchange cycles",
    "Tile average sync cycles",
};

constexpr std::string_view kCycleTotalLabels[kNumCycleKinds] = {
    "Total compute cycles (including idle threads)",
    "Total compute cycles (excluding idle threads)",
    "Total IPU exchange cycles",
    "Total global exchange cycles",
    "Total host exchange cycles",
    "Total sync cycles",
};

uint64_t Sum(std::span<const uint64_t> values) {
  return std::accumulate(values.begin(), values.end(), uint64_t{0});
}

void SortByBytesDescending(std::vector<NamedBytes>& rows) {
  std::sort(rows.begin(), rows.end(), [](const NamedBytes& a, const NamedBytes& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
  });
}

std::string_view TypeName(std::span<const VertexType> types, uint32_t index) {
  // An out-of-range index is a producer bug that CheckInvariants reports; the
  // derivation still names the row rather than crashing.
  return index < types.size() ? std::string_view(types[index].name) : "<unknown vertex type>";
}

}  // namespace

std::string_view CategoryLabel(Category category) {
  return kCategoryNames[static_cast<size_t>(category)].label;
}

std::string_view CategoryMachineName(Category category) {
  return kCategoryNames[static_cast<size_t>(category)].machine;
}

std::optional<Category> CategoryFromLabel(std::string_view label) {
  for (size_t i = 0; i < kNumCategories; ++i)
    if (kCategoryNames[i].label == label) return static_cast<Category>(i);
  return std::nullopt;
}

std::optional<Category> CategoryFromMachineName(std::string_view name) {
  for (size_t i = 0; i < kNumCategories; ++i)
    if (kCategoryNames[i].machine == name) return static_cast<Category>(i);
  return std::nullopt;
}

std::string_view RegionLabel(Region region) { return kRegionLabels[static_cast<size_t>(region)]; }

std::string_view VertexDataCategoryLabel(VertexDataCategory category) {
  return kVertexDataLabels[static_cast<size_t>(category)];
}

std::string_view TileAverageLabel(CycleKind kind) {
  return kCycleLabels[static_cast<size_t>(kind)];
}

std::string_view TileTotalLabel(CycleKind kind) {
  return kCycleTotalLabels[static_cast<size_t>(kind)];
}

Target MakeTarget(std::string arch, uint32_t num_ipus, uint64_t tiles_per_ipu,
                  uint64_t bytes_per_tile, double clock_hz, uint32_t ipus_per_replica) {
  Target target;
  target.arch = std::move(arch);
  target.num_ipus = num_ipus;
  target.tiles_per_ipu = tiles_per_ipu;
  target.total_tiles = num_ipus * tiles_per_ipu;
  target.bytes_per_tile = bytes_per_tile;
  target.total_memory = target.total_tiles * bytes_per_tile;
  target.clock_hz = clock_hz;
  if (ipus_per_replica > 0) {
    Replication replication;
    replication.num_replicas = num_ipus / ipus_per_replica;
    replication.ipus_per_replica = ipus_per_replica;
    replication.tiles_per_replica = ipus_per_replica * tiles_per_ipu;
    replication.memory_per_replica = replication.tiles_per_replica * bytes_per_tile;
    target.replication = replication;
  }
  return target;
}

uint64_t TileMemory::ExcludingGaps() const {
  uint64_t total = 0;
  for (const RegionBytes& region : by_region) total += region.excluding_gaps;
  return total;
}

uint64_t TileMemory::IncludingGaps() const {
  uint64_t total = 0;
  for (const RegionBytes& region : by_region) total += region.including_gaps;
  return total;
}

uint64_t TileMemory::CategoryTotal() const { return Sum(by_category); }

MemoryRowsKnown MemoryRowsKnown::None() {
  MemoryRowsKnown none;
  none.including_gaps = false;
  none.regions.reset();
  none.categories.reset();
  none.vertex_data = false;
  none.vertex_data_categories.reset();
  none.by_vertex_type = false;
  return none;
}

bool MemoryRowsKnown::IsComplete() const {
  return including_gaps && regions.all() && categories.all() && vertex_data &&
         vertex_data_categories.all() && by_vertex_type;
}

bool MemoryRowsKnown::IsEmpty() const { return *this == None(); }

uint64_t MemoryUsage::ExcludingGaps() const { return Sum(by_region); }

std::array<std::optional<double>, kNumCycleKinds> AverageTileCycles(
    std::span<const TileCycles> tiles) {
  std::array<std::optional<double>, kNumCycleKinds> averages;
  if (tiles.empty()) return averages;
  for (size_t kind = 0; kind < kNumCycleKinds; ++kind) {
    double sum = 0;
    for (const TileCycles& tile : tiles) sum += static_cast<double>(tile.cycles[kind]);
    averages[kind] = sum / static_cast<double>(tiles.size());
  }
  return averages;
}

MemoryUsage UsageOfTile(const TileMemory& tile, std::span<const VertexType> vertex_types) {
  MemoryUsage usage;
  usage.including_gaps = tile.IncludingGaps();
  for (size_t r = 0; r < kNumRegions; ++r) usage.by_region[r] = tile.by_region[r].excluding_gaps;
  usage.by_category = tile.by_category;
  for (Category category : kVertexDataCategories)
    usage.vertex_data += At(tile.by_category, category);
  usage.vertex_data_by_category = tile.vertex_data;
  // A type listed twice on one tile is one row.
  std::map<std::string_view, uint64_t> by_type;
  for (const VertexTypeBytes& entry : tile.vertex_types)
    by_type[TypeName(vertex_types, entry.type)] += entry.bytes;
  for (const auto& [name, bytes] : by_type)
    usage.by_vertex_type.push_back({std::string(name), bytes});
  SortByBytesDescending(usage.by_vertex_type);
  return usage;
}

MemoryUsage Summarize(std::span<const TileMemory> tiles, std::span<const VertexType> vertex_types) {
  MemoryUsage total;
  // Sum by type index first: one map lookup per type, not per tile entry.
  std::vector<uint64_t> by_type(vertex_types.size());
  std::vector<bool> listed(vertex_types.size());
  std::map<std::string_view, uint64_t> unknown_types;
  for (const TileMemory& tile : tiles) {
    total.including_gaps += tile.IncludingGaps();
    for (size_t r = 0; r < kNumRegions; ++r) total.by_region[r] += tile.by_region[r].excluding_gaps;
    for (size_t c = 0; c < kNumCategories; ++c) total.by_category[c] += tile.by_category[c];
    for (size_t v = 0; v < kNumVertexDataCategories; ++v)
      total.vertex_data_by_category[v] += tile.vertex_data[v];
    for (const VertexTypeBytes& entry : tile.vertex_types) {
      if (entry.type < by_type.size()) {
        by_type[entry.type] += entry.bytes;
        listed[entry.type] = true;
      } else {
        unknown_types[TypeName(vertex_types, entry.type)] += entry.bytes;
      }
    }
  }
  for (Category category : kVertexDataCategories)
    total.vertex_data += At(total.by_category, category);
  // Types with the same name (a producer that did not intern) merge into one row.
  std::map<std::string_view, uint64_t> merged(unknown_types);
  for (size_t t = 0; t < by_type.size(); ++t)
    if (listed[t]) merged[vertex_types[t].name] += by_type[t];
  for (const auto& [name, bytes] : merged)
    total.by_vertex_type.push_back({std::string(name), bytes});
  SortByBytesDescending(total.by_vertex_type);
  return total;
}

ByTileSummary SummarizeByTile(std::span<const TileMemory> tiles,
                              std::optional<uint64_t> bytes_per_tile) {
  ByTileSummary summary;
  if (tiles.empty()) return summary;
  std::vector<uint64_t> excluding;
  excluding.reserve(tiles.size());
  TileMaximum max_including{tiles[0].IncludingGaps(), tiles[0].tile};
  TileMaximum max_excluding{tiles[0].ExcludingGaps(), tiles[0].tile};
  uint64_t out_of_memory = 0;
  for (const TileMemory& tile : tiles) {
    uint64_t excl = tile.ExcludingGaps();
    uint64_t incl = tile.IncludingGaps();
    excluding.push_back(excl);
    // Ties go to the lowest tile id (spec 5.1).
    auto better = [&](uint64_t bytes, const TileMaximum& max) {
      return bytes > max.bytes || (bytes == max.bytes && tile.tile < max.tile);
    };
    if (better(incl, max_including)) max_including = {incl, tile.tile};
    if (better(excl, max_excluding)) max_excluding = {excl, tile.tile};
    if (bytes_per_tile && excl > *bytes_per_tile) ++out_of_memory;
  }
  summary.rows = BuildHistogram(excluding);
  summary.max_including_gaps = max_including;
  summary.max_excluding_gaps = max_excluding;
  if (bytes_per_tile) summary.tiles_out_of_memory = out_of_memory;
  return summary;
}

std::vector<const TileMemory*> TopTiles(std::span<const TileMemory> tiles, size_t count) {
  std::vector<const TileMemory*> order;
  order.reserve(tiles.size());
  for (const TileMemory& tile : tiles) order.push_back(&tile);
  count = std::min(count, order.size());
  auto more_used = [](const TileMemory* a, const TileMemory* b) {
    uint64_t ea = a->ExcludingGaps();
    uint64_t eb = b->ExcludingGaps();
    return ea != eb ? ea > eb : a->tile < b->tile;
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(count), order.end(),
                    more_used);
  order.resize(count);
  return order;
}

bool IsImbalanced(std::span<const TileMemory> tiles, std::optional<uint64_t> bytes_per_tile) {
  if (tiles.empty()) return false;
  unsigned __int128 total = 0;
  uint64_t max = 0;
  for (const TileMemory& tile : tiles) {
    uint64_t excl = tile.ExcludingGaps();
    if (bytes_per_tile && excl > *bytes_per_tile) return true;
    total += excl;
    max = std::max(max, excl);
  }
  // max > 2 * total / n, in integers: max * n > 2 * total.
  return static_cast<unsigned __int128>(max) * tiles.size() > 2 * total;
}

std::optional<MemoryUsage> ResolveTotal(const CompilationReport& report) {
  if (!report.tiles.empty()) return Summarize(report.tiles, report.vertex_types);
  return report.verbatim.total;
}

std::vector<TileUsage> ResolveTileBlocks(const CompilationReport& report, TileBlocks policy,
                                         size_t count) {
  if (policy == TileBlocks::kNever) return {};
  if (report.tiles.empty()) return report.verbatim.tile_blocks;
  std::optional<uint64_t> bytes_per_tile;
  if (report.target) bytes_per_tile = report.target->bytes_per_tile;
  if (policy == TileBlocks::kWhenImbalanced && !IsImbalanced(report.tiles, bytes_per_tile))
    return {};
  std::vector<TileUsage> blocks;
  for (const TileMemory* tile : TopTiles(report.tiles, count))
    blocks.push_back({tile->tile, UsageOfTile(*tile, report.vertex_types)});
  return blocks;
}

std::optional<ByTileSummary> ResolveByTile(const CompilationReport& report) {
  if (!report.tiles.empty()) {
    std::optional<uint64_t> bytes_per_tile;
    if (report.target) bytes_per_tile = report.target->bytes_per_tile;
    return SummarizeByTile(report.tiles, bytes_per_tile);
  }
  return report.verbatim.by_tile;
}

}  // namespace tileprof::report
