// The "By Tile (Excluding Gaps)" part of a text report: bucketing per-tile
// bytes into the KiB histogram, the bar rule, and the rendering of the rows,
// Maximum lines and out-of-memory count exactly as
// ../shared/spec/text-report.md section 5 lays them out. Shared by the text
// writer and the analyzer (`tileprof hist`).
//
// Choices where the spec says "not publicly documented" (see
// docs/text-report.md):
//  * bucket width: the smallest of 1, 2, 4, 8, ... KiB for which the buckets
//    from the one holding the smallest tile to the one holding the largest
//    number at most kMaxHistogramBuckets (128);
//  * bar length: the largest count gets 40 stars, any other non-empty bucket
//    round(40 * count / largest) with halves rounded up, but at least one;
//  * range numbers carry no thousands separators;
//  * a count wider than its 7-character column (over 999,999 tiles, only
//    possible in text, not on a real target) still gets one space before it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "reports/report_keys.h"

namespace tileprof::report {

struct ParsedTextReport;  // text_reader.h

inline constexpr uint64_t kMaxHistogramBuckets = 128;
inline constexpr int kHistogramBarWidth = 40;
inline constexpr std::string_view kHistogramHeader =
    "    Range (KB) Histogram (Excluding Gaps)               Count (tiles)";

// One printed row: tiles whose bytes b satisfy lo_kib*1024 <= b < hi_kib*1024.
struct HistogramRow {
  uint64_t lo_kib = 0;
  uint64_t hi_kib = 0;
  uint64_t tiles = 0;

  bool operator==(const HistogramRow&) const = default;
};
template <>
struct Keys<HistogramRow> {
  static constexpr std::tuple kAll{Key{"loKib", "lo_kib", &HistogramRow::lo_kib},
                                   Key{"hiKib", "hi_kib", &HistogramRow::hi_kib},
                                   Key{"tiles", "tiles", &HistogramRow::tiles}};
};

struct TileMaximum {
  uint64_t bytes = 0;
  uint32_t tile = 0;

  bool operator==(const TileMaximum&) const = default;
};
template <>
struct Keys<TileMaximum> {
  static constexpr std::tuple kAll{Key{"bytes", "bytes", &TileMaximum::bytes},
                                   Key{"tile", "tile", &TileMaximum::tile}};
};

// Everything the By Tile part prints. Built from per-tile data by
// SummarizeByTile (report.h), or read verbatim from a text report, where rows
// may be elided and any line may be absent.
struct ByTileSummary {
  std::vector<HistogramRow> rows;  // ascending, non-overlapping
  std::optional<TileMaximum> max_including_gaps;
  std::optional<TileMaximum> max_excluding_gaps;
  std::optional<uint64_t> tiles_out_of_memory;  // unknown when bytes per tile is

  bool operator==(const ByTileSummary&) const = default;
};
template <>
struct Keys<ByTileSummary> {
  static constexpr std::tuple kAll{
      Slot{"rows"}, Slot{"maxIncludingGaps"}, Slot{"maxExcludingGaps"},
      Key{"tilesOutOfMemory", "tiles_out_of_memory", &ByTileSummary::tiles_out_of_memory}};
};

// The bucket width (KiB) for tiles spanning [min_bytes, max_bytes].
// Precondition: min_bytes <= max_bytes.
uint64_t ChooseBucketKib(uint64_t min_bytes, uint64_t max_bytes);

// Contiguous rows from the bucket of the smallest value to that of the
// largest, empty buckets included. No rows for no tiles.
std::vector<HistogramRow> BuildHistogram(std::span<const uint64_t> tile_bytes);

// Stars for `count` when the fullest printed bucket holds `largest`.
int BarLength(uint64_t count, uint64_t largest);

// The rows as printed (no header), bars scaled to the largest row given and
// range numbers padded to the digits of the largest upper bound given. Rows
// are printed as given: an elided (non-contiguous) list stays elided.
std::vector<std::string> RenderHistogramRows(std::span<const HistogramRow> rows);

// Header, rows, a blank line, the Maximum lines and the out-of-memory line
// (each only when known), without the "  By Tile (Excluding Gaps):" label.
std::vector<std::string> RenderByTile(const ByTileSummary& by_tile);

// True when the rows cover one contiguous run of equal-width buckets.
bool RowsAreContiguous(std::span<const HistogramRow> rows);

// Re-renders the By Tile lines (as RenderByTile) of a report read from text,
// from the numbers read (bars and padding are recomputed, not copied).
// Errors: "report has no By Tile section".
Expected<std::vector<std::string>> ReproduceHistogram(const ParsedTextReport& parsed);

}  // namespace tileprof::report
