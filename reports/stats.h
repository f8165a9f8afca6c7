// Data-problem counters filled while a report is read, in the manner of
// Perfetto's trace_processor stats table: a reader that meets something odd
// but survivable counts it (with the first place it happened) and carries on,
// instead of failing or silently guessing. The CLI prints them and exits
// non-zero when any `kError` stat is set.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tileprof::report {

enum class StatSeverity {
  kInfo,      // nothing lost; worth knowing (a rounded size, an elision marker)
  kDataLoss,  // the report lacks data it should carry; results are partial
  kError,     // the report contradicts itself; results may be wrong
};

// X(enumerator, name, severity, description). Names are stable: they are
// printed and stored, so rename only with a format version bump.
#define TILEPROF_REPORT_STATS(X)                                                     \
  X(kTextUnknownLine, "text_unknown_line", kInfo,                                    \
    "a line the text reader does not recognise was skipped")                         \
  X(kTextElisionMarker, "text_elision_marker", kInfo,                                \
    "a '...' line (an elision in a published excerpt) was skipped")                  \
  X(kTextCrlf, "text_crlf", kInfo, "a line ended in CR LF")                          \
  X(kTextMissingTotalLabel, "text_missing_total_label", kInfo,                       \
    "a Memory Usage block has no '  Total:' line (as in the published TF-1.2 text)") \
  X(kTextMissingRows, "text_missing_rows", kDataLoss,                                \
    "a section lacks some of its rows; the missing numbers are unknown")             \
  X(kTextHistogramRowsElided, "text_histogram_rows_elided", kInfo,                   \
    "By Tile histogram rows are not contiguous (empty buckets left out)")            \
  X(kTextHistogramBarMismatch, "text_histogram_bar_mismatch", kInfo,                 \
    "a histogram bar length differs from tileprof's bar rule")                       \
  X(kTextHistogramCountMismatch, "text_histogram_count_mismatch", kDataLoss,         \
    "histogram counts do not sum to Total Tiles")                                    \
  X(kTextInconsistentTotals, "text_inconsistent_totals", kInfo,                      \
    "a printed total disagrees with the rows it summarises")                         \
  X(kTextVertexTypeOrder, "text_vertex_type_order", kInfo,                           \
    "By Type rows are not in descending order of bytes")                             \
  X(kTextDuplicateRow, "text_duplicate_row", kInfo,                                  \
    "a row appeared twice in one block; the later value was kept")                   \
  X(kTextOrphanTileHeader, "text_orphan_tile_header", kDataLoss,                     \
    "a 'Tile # N memory usage:' line was not followed by a Memory Usage block")      \
  X(kTextExtraReport, "text_extra_report", kDataLoss,                                \
    "the file holds a second report; only the first was read")

enum class StatId : uint8_t {
#define TILEPROF_STAT_ENUM(id, name, severity, description) id,
  TILEPROF_REPORT_STATS(TILEPROF_STAT_ENUM)
#undef TILEPROF_STAT_ENUM
};

inline constexpr size_t kNumStats = 0
#define TILEPROF_STAT_COUNT(id, name, severity, description) +1
    TILEPROF_REPORT_STATS(TILEPROF_STAT_COUNT)
#undef TILEPROF_STAT_COUNT
    ;

struct StatInfo {
  std::string_view name;
  StatSeverity severity;
  std::string_view description;
};

const StatInfo& GetStatInfo(StatId id);
std::string_view SeverityName(StatSeverity severity);  // "info", "data_loss", "error"

class Stats {
 public:
  // Counts one occurrence at `where` ("file:line"); the first place is kept.
  void Add(StatId id, std::string_view where);

  uint64_t count(StatId id) const { return counts_[Index(id)]; }
  const std::string& first_location(StatId id) const { return first_[Index(id)]; }
  bool empty() const;
  bool HasErrors() const;

  // One line per non-zero stat, in table order:
  //   "text_missing_rows (data_loss): 2, first at x.rep:40: a section lacks ..."
  std::vector<std::string> Describe() const;

  bool operator==(const Stats&) const = default;

 private:
  static size_t Index(StatId id) { return static_cast<size_t>(id); }

  std::array<uint64_t, kNumStats> counts_{};
  std::array<std::string, kNumStats> first_{};
};

}  // namespace tileprof::report
