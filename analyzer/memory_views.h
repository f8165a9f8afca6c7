// The memory views of `tileprof hist`, `top` and `compare`: the By Tile
// histogram, the most-used tiles with their full breakdown, and two reports
// side by side. Each works on any report: from per-tile data when the report
// has it (JSON, CBOR, SQLite of a compiled graph), else from the figures a
// text report printed, and says so when an option needs per-tile data.
#pragma once

#include <cstdint>
#include <optional>

#include "analyzer/open_report.h"
#include "analyzer/output.h"
#include "common/expected.h"

namespace tileprof::analyzer {

// The largest number of rows --bucket-kb may ask for.
inline constexpr uint64_t kMaxRequestedBuckets = 100'000;

struct HistogramOptions {
  bool including_gaps = false;
  std::optional<uint64_t> bucket_kib;  // unset: ChooseBucketKib (text-report.md section 5)
};

// Contiguous rows of `width_kib` from the bucket of the smallest value to
// that of the largest. Errors when that would be more than
// kMaxRequestedBuckets rows.
Expected<std::vector<report::HistogramRow>> BuildHistogramWithWidth(
    std::span<const uint64_t> tile_bytes, uint64_t width_kib);

// The table format is the text report's "By Tile" part, to the character.
// Tables: histogram (lo_kb, hi_kb, tiles), maxima, summary.
Expected<Output> HistogramView(const LoadedReport& report, const HistogramOptions& options);

// The `count` most-used tiles (excluding gaps), each as the text report's
// "Tile # N memory usage:" block. Tables: tiles (one row per tile: regions,
// always-live, categories, vertex data), vertex_types (tile, type, bytes).
Expected<Output> TopTilesView(const LoadedReport& report, size_t count);

// Target, totals, categories (with deltas B - A) and the `count` tiles whose
// excluding-gaps bytes changed most, by |delta| descending, ties by tile id.
Expected<Output> CompareView(const LoadedReport& a, const LoadedReport& b, size_t count);

// Helpers shared by the other views.
std::optional<uint64_t> Capacity(const report::CompilationReport& report);
Cell IpuOf(const report::CompilationReport& report, uint32_t tile);
// One row per printed/derived tile block: the "tiles" table of `top`.
Table TileBreakdownTable(const report::CompilationReport& report,
                         const std::vector<report::TileUsage>& blocks);
std::vector<report::TileUsage> TopBlocks(const report::CompilationReport& report, size_t count);

}  // namespace tileprof::analyzer
