// Why a module would miss the executable cache (`tileprof cache explain`,
// ../shared/spec/executable-cache.md section 9): whether its key is there,
// and if not, which cached executable is closest to it and what differs —
// the writer's version, the target, the program-changing options, the
// module. Comparing two modules is the dump differ's job (analyzer/, a
// layer beside the engine), so the caller passes a comparer.
//
//   CacheQuery query{.key = key, .path = cache.ExecutablePath(key), ...};
//   CacheExplanation why = ExplainLookup(*ListCache(dir, false), query, compare);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/exec/cache.h"

namespace tileprof::engine::exec {

// The module being looked up, as the cache sees it.
struct CacheQuery {
  uint64_t key = 0;
  std::string path;          // ExecutableCache::ExecutablePath(key)
  uint64_t fingerprint = 0;  // hlo::Fingerprint of the module
  std::string target_arch;   // Target::ArchString: "ipu2"
  std::string target_text;   // TargetKeyText
  std::string options_text;  // the program-changing options (CacheOptionsText)
  std::string tool_version;  // this tileprof's TILEPROF_VERSION
};

// How a cached module differs from the queried one, as a dump diff says.
struct ModuleDifference {
  size_t causes = 0;                 // root causes
  uint64_t dependent_changes = 0;    // their fallout
  bool equal_at_some_level = false;  // equal once some normalisation level drops the rest
  std::string text;                  // the diff for people, shown for the closest entry
};
// Compares the module text kept beside `entry` with the queried module;
// nullopt when the two cannot be compared.
using ModuleComparer = std::function<std::optional<ModuleDifference>(const CacheEntry& entry)>;

struct CacheExplanation {
  enum class Kind : uint8_t {
    kHit,       // the key's executable is there and sound
    kUnusable,  // it is there but corrupt: it will be recompiled and replaced
    kMiss,
  };
  Kind kind = Kind::kMiss;
  // kHit, kUnusable: the key's entry. kMiss: the closest cached executable,
  // or null when no entry could be compared.
  const CacheEntry* entry = nullptr;
  // kMiss with an entry: why it does not match, one line each: "compiled by
  // tileprof 0.0.9, this is tileprof 0.1.0", "target: ipu2 ... (cached) ->
  // ipu21 ...", "option NAME: OLD (cached) -> NEW".
  std::vector<std::string> reasons;
  bool same_module = false;  // kMiss: the closest entry has the module's fingerprint
  // kMiss, not the same module: the comparer's text for the closest entry.
  std::optional<std::string> module_difference;
};

// Looks the query up among `entries` (ListCache's, which must outlive the
// result). On a miss the closest entry is the same module compiled
// differently, when there is one; otherwise the comparable entry with the
// lowest MissScore (the first of equals, in `entries` order). `compare` is
// called only for entries with module text.
CacheExplanation ExplainLookup(const std::vector<CacheEntry>& entries, const CacheQuery& query,
                               const ModuleComparer& compare);

// Orders candidates for the closest entry, lowest first: root causes x 1000
// + dependent changes, + 1,000,000 for a module equal at no normalisation
// level, + 1 for another target preset (which breaks ties).
uint64_t MissScore(const ModuleDifference& difference, bool same_target_preset);

// The lines of `now` (a key's options text, one "name=value" a line) that
// `cached` lacks, as "option NAME: OLD (cached) -> NEW", OLD "(unset)" when
// `cached` has no line for NAME.
std::vector<std::string> OptionChanges(const std::string& cached, const std::string& now);

}  // namespace tileprof::engine::exec
