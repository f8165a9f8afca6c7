#include "reports/histogram.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/format.h"
#include "reports/report.h"
#include "reports/text_reader.h"

namespace tileprof::report {

uint64_t ChooseBucketKib(uint64_t min_bytes, uint64_t max_bytes) {
  assert(min_bytes <= max_bytes);
  uint64_t width = 1;
  // Doubling terminates: once width*1024 exceeds max_bytes there is one bucket.
  while (true) {
    uint64_t bucket_bytes = width * 1024;
    uint64_t buckets = max_bytes / bucket_bytes - min_bytes / bucket_bytes + 1;
    if (buckets <= kMaxHistogramBuckets) return width;
    width *= 2;
  }
}

std::vector<HistogramRow> BuildHistogram(std::span<const uint64_t> tile_bytes) {
  if (tile_bytes.empty()) return {};
  auto [min_it, max_it] = std::minmax_element(tile_bytes.begin(), tile_bytes.end());
  uint64_t width = ChooseBucketKib(*min_it, *max_it);
  uint64_t bucket_bytes = width * 1024;
  uint64_t first = *min_it / bucket_bytes;
  uint64_t last = *max_it / bucket_bytes;
  std::vector<HistogramRow> rows;
  rows.reserve(last - first + 1);
  for (uint64_t b = first; b <= last; ++b) rows.push_back({b * width, (b + 1) * width, 0});
  for (uint64_t bytes : tile_bytes) ++rows[bytes / bucket_bytes - first].tiles;
  return rows;
}

int BarLength(uint64_t count, uint64_t largest) {
  if (count == 0 || largest == 0) return 0;
  if (count >= largest) return kHistogramBarWidth;
  // Proportional, halves up; the sample's 20 of 1,192 (0.67) gets 1 star and
  // 1 of 1,215 (0.03) is lifted to the minimum of 1. Counts read from text
  // can be any 64-bit value, hence the 128-bit arithmetic.
  using Wide = unsigned __int128;
  Wide stars = (Wide{count} * 2 * kHistogramBarWidth + largest) / (Wide{2} * largest);
  return static_cast<int>(std::clamp<Wide>(stars, 1, kHistogramBarWidth));
}

std::vector<std::string> RenderHistogramRows(std::span<const HistogramRow> rows) {
  uint64_t largest = 0;
  uint64_t top = 0;
  for (const HistogramRow& row : rows) {
    largest = std::max(largest, row.tiles);
    top = std::max(top, row.hi_kib);
  }
  size_t digits = fmt::formatted_size("{}", top);
  std::vector<std::string> lines;
  lines.reserve(rows.size());
  for (const HistogramRow& row : rows) {
    std::string range = fmt::format("{:>{}} - {:>{}}", row.lo_kib, digits, row.hi_kib, digits);
    std::string bar(static_cast<size_t>(BarLength(row.tiles, largest)), '*');
    // The count is right-aligned in 7 characters, but always one space clear
    // of a full bar: "1,000,000" tiles must still read back as a count.
    std::string count = WithThousands(row.tiles);
    lines.push_back(fmt::format("    {:>10} {:<40}{:>{}}", range, bar, count,
                                std::max<size_t>(7, count.size() + 1)));
  }
  return lines;
}

std::vector<std::string> RenderByTile(const ByTileSummary& by_tile) {
  std::vector<std::string> lines{std::string(kHistogramHeader)};
  for (std::string& row : RenderHistogramRows(by_tile.rows)) lines.push_back(std::move(row));
  bool blank_done = false;
  auto maximum = [&](std::string_view what, const std::optional<TileMaximum>& max) {
    if (!max) return;
    if (!blank_done) lines.emplace_back(), blank_done = true;
    lines.push_back(fmt::format("    Maximum ({}): {} ({}) on tile {}", what,
                                WithThousands(max->bytes), KibiK(max->bytes), max->tile));
  };
  maximum("Including Gaps", by_tile.max_including_gaps);
  maximum("Excluding Gaps", by_tile.max_excluding_gaps);
  if (by_tile.tiles_out_of_memory) {
    if (!blank_done) lines.emplace_back();
    lines.push_back(
        fmt::format("    {} tile(s) out of memory", WithThousands(*by_tile.tiles_out_of_memory)));
  }
  return lines;
}

bool RowsAreContiguous(std::span<const HistogramRow> rows) {
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].lo_kib != rows[i - 1].hi_kib) return false;
    if (rows[i].hi_kib - rows[i].lo_kib != rows[0].hi_kib - rows[0].lo_kib) return false;
  }
  return true;
}

Expected<std::vector<std::string>> ReproduceHistogram(const ParsedTextReport& parsed) {
  std::optional<ByTileSummary> by_tile = ResolveByTile(parsed.compilation);
  if (!by_tile) return MakeError("report has no By Tile section");
  return RenderByTile(*by_tile);
}

}  // namespace tileprof::report
