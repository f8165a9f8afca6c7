#include "reports/stats.h"

#include <fmt/format.h>

namespace tileprof::report {
namespace {

constexpr StatInfo kStatInfo[] = {
#define TILEPROF_STAT_INFO(id, name, severity, description) \
  {name, StatSeverity::severity, description},
    TILEPROF_REPORT_STATS(TILEPROF_STAT_INFO)
#undef TILEPROF_STAT_INFO
};
static_assert(std::size(kStatInfo) == kNumStats);

}  // namespace

const StatInfo& GetStatInfo(StatId id) { return kStatInfo[static_cast<size_t>(id)]; }

std::string_view SeverityName(StatSeverity severity) {
  switch (severity) {
    case StatSeverity::kInfo:
      return "info";
    case StatSeverity::kDataLoss:
      return "data_loss";
    case StatSeverity::kError:
      return "error";
  }
  return "unknown";
}

void Stats::Add(StatId id, std::string_view where) {
  size_t i = Index(id);
  if (counts_[i]++ == 0) first_[i] = std::string(where);
}

bool Stats::empty() const {
  for (uint64_t count : counts_)
    if (count != 0) return false;
  return true;
}

bool Stats::HasErrors() const {
  for (size_t i = 0; i < kNumStats; ++i)
    if (counts_[i] != 0 && kStatInfo[i].severity == StatSeverity::kError) return true;
  return false;
}

std::vector<std::string> Stats::Describe() const {
  std::vector<std::string> lines;
  for (size_t i = 0; i < kNumStats; ++i) {
    if (counts_[i] == 0) continue;
    lines.push_back(fmt::format("{} ({}): {}, first at {}: {}", kStatInfo[i].name,
                                SeverityName(kStatInfo[i].severity), counts_[i], first_[i],
                                kStatInfo[i].description));
  }
  return lines;
}

}  // namespace tileprof::report
