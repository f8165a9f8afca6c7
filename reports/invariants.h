// Named consistency checks over the report structs: the invariants of
// ../shared/DESIGN.md "The memory model" and ../shared/spec/text-report.md
// section 5.2. Each check appends one message per violation ("tile 3:
// categories sum to 100 B, regions to 90 B") and skips rows that are not
// known, so the same checks run on engine-made reports and on partial reports
// read from text. Used by tests, by the engine's self-checks and by
// `tileprof check`.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reports/report.h"

namespace tileprof::report {

using Violations = std::vector<std::string>;

// Categories sum to the excluding-gaps total (the sum of the regions).
void CheckCategoriesSumToRegions(const TileMemory& tile, Violations& out);
// Including gaps >= excluding gaps, region by region.
void CheckIncludingAtLeastExcluding(const TileMemory& tile, Violations& out);
// always_live + not_always_live = the excluding-gaps total.
void CheckLivenessSumsToTotal(const TileMemory& tile, Violations& out);
// Vertex data by category sums to Vertex Instances + Vertex Field Data + Copy
// Descriptors + VectorList Descriptors.
void CheckVertexDataSums(const TileMemory& tile, Violations& out);
// Vertex type indices name an entry of `vertex_types`.
void CheckVertexTypeIndices(const TileMemory& tile, std::span<const VertexType> vertex_types,
                            Violations& out);

// The same relations on a printed block, over its known rows. `where` names
// the block ("total", "tile 0").
void CheckMemoryUsage(const MemoryUsage& usage, std::string_view where, Violations& out);

// total_tiles = num_ipus * tiles_per_ipu; the memory totals and replica lines
// agree with bytes_per_tile as printed (to the 0.1-unit rounding of the text).
void CheckTarget(const Target& target, Violations& out);

// One TileMemory per tile of the target, with ids 0, 1, ... in order.
void CheckTilesCoverTarget(const CompilationReport& report, Violations& out);

// The histogram counts sum to the tile count (when known); rows ascend; the
// first and last rows are non-empty; the maximum falls in the last row.
void CheckHistogram(const ByTileSummary& by_tile, std::optional<uint64_t> total_tiles,
                    Violations& out);

// When a report has both per-tile data and verbatim figures, the tiles sum to
// them; a verbatim tile block never exceeds the verbatim whole-graph total.
void CheckTilesSumToTotal(const CompilationReport& report, Violations& out);

// Every check above that applies. Empty when the report is consistent.
Violations CheckInvariants(const CompilationReport& report);

// Compute excluding idle <= including idle; the known averages sum to at most
// the total cycles (which also count host I/O of the busiest tile).
Violations CheckInvariants(const ExecutionReport& execution);

}  // namespace tileprof::report
