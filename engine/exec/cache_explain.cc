#include "engine/exec/cache_explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace tileprof::engine::exec {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Why `info` (the closest entry's) does not match the query, but for the module.
std::vector<std::string> Reasons(const ExecutableInfo& info, const CacheQuery& query) {
  std::vector<std::string> reasons;
  if (info.tool_version != query.tool_version)
    reasons.push_back(fmt::format("compiled by tileprof {}, this is tileprof {}", info.tool_version,
                                  query.tool_version));
  auto cached = Target::Create(info.target);
  const std::string cached_target = cached ? TargetKeyText(*cached) : "(invalid)";
  if (cached_target != query.target_text)
    reasons.push_back(fmt::format("target: {} (cached) -> {}", cached_target, query.target_text));
  for (std::string& change : OptionChanges(info.key_text, query.options_text))
    reasons.push_back(std::move(change));
  return reasons;
}

}  // namespace

uint64_t MissScore(const ModuleDifference& difference, bool same_target_preset) {
  return difference.causes * 1000 + difference.dependent_changes +
         (difference.equal_at_some_level ? 0 : 1000000) + (same_target_preset ? 0 : 1);
}

std::vector<std::string> OptionChanges(const std::string& cached, const std::string& now) {
  std::vector<std::string> a = Lines(cached), b = Lines(now), changes;
  for (const std::string& line : b) {
    if (std::find(a.begin(), a.end(), line) != a.end()) continue;
    const std::string name = line.substr(0, line.find('='));
    std::string old_value = "(unset)";
    for (const std::string& old : a)
      if (old.substr(0, old.find('=')) == name) old_value = old.substr(old.find('=') + 1);
    changes.push_back(fmt::format("option {}: {} (cached) -> {}", name, old_value,
                                  line.substr(line.find('=') + 1)));
  }
  return changes;
}

CacheExplanation ExplainLookup(const std::vector<CacheEntry>& entries, const CacheQuery& query,
                               const ModuleComparer& compare) {
  CacheExplanation out;
  for (const CacheEntry& entry : entries) {
    if (entry.path != query.path && entry.key != query.key) continue;
    out.kind =
        entry.problem.empty() ? CacheExplanation::Kind::kHit : CacheExplanation::Kind::kUnusable;
    out.entry = &entry;
    return out;
  }
  // The closest executable: the same module compiled differently first, else
  // the cached module with the fewest differences from this one.
  uint64_t closest_score = std::numeric_limits<uint64_t>::max();
  for (const CacheEntry& entry : entries) {
    if (!entry.info) continue;
    if (entry.info->fingerprint == query.fingerprint) {
      out.entry = &entry;
      out.module_difference.reset();
      break;
    }
    if (!entry.has_module_text) continue;
    std::optional<ModuleDifference> difference = compare(entry);
    if (!difference) continue;
    const uint64_t score = MissScore(*difference, entry.info->target.preset == query.target_arch);
    if (score < closest_score) {
      closest_score = score;
      out.entry = &entry;
      out.module_difference = std::move(difference->text);
    }
  }
  if (out.entry != nullptr) {
    out.reasons = Reasons(*out.entry->info, query);
    out.same_module = out.entry->info->fingerprint == query.fingerprint;
  }
  return out;
}

}  // namespace tileprof::engine::exec
