// Whole-module comparisons at a normalisation level (canonical.h), by
// hashing each side's print; see hlo_levels.h.
#include "analyzer/hlo_levels.h"

#include <thread>

#include "analyzer/hlo_diff.h"
#include "common/hash.h"
#include "engine/hlo/canonical.h"
#include "engine/hlo/printer.h"

namespace tileprof::analyzer {
namespace {

using hlo::Module;

// Prints into a hash: comparing two 2 MB modules at a level costs no string.
class HashSink : public hlo::TextSink {
 public:
  void Append(std::string_view text) override { hasher_.Add(text); }
  uint64_t Digest() const { return hasher_.Digest(); }

 private:
  Hasher hasher_;
};

uint64_t LevelHash(const Module& m, int level) {
  HashSink sink;
  hlo::PrintModule(m, {hlo::PrintStyle::kShort, level}, &sink);
  return sink.Digest();
}

}  // namespace

bool SameAtLevel(const Module& a, const Module& b, int level) {
  if (level >= hlo::kLevelSignature) return LevelHash(a, level) == LevelHash(b, level);
  uint64_t hash_a = 0;
  std::thread worker([&] { hash_a = LevelHash(a, level); });
  uint64_t hash_b = LevelHash(b, level);
  worker.join();
  return hash_a == hash_b;
}

std::optional<int> EqualLevel(const Module& a, const Module& b) {
  if (a.source() == b.source()) return 0;
  // Coarsest first: a level that differs means every finer one differs too.
  if (!SameAtLevel(a, b, hlo::kLevelSignature)) return std::nullopt;
  for (int level = hlo::kLevelSignature - 1; level >= hlo::kLevelRaw; --level)
    if (!SameAtLevel(a, b, level)) return level + 1;
  return 0;
}

std::string DescribeLevel(std::optional<int> level) {
  if (!level) return "never equal: the entry signatures differ";
  switch (*level) {
    case 0:
      return "equal (level 0: the same module)";
    case 1:
      return "equal once print style, whitespace and comments are ignored (level 1: cosmetic)";
    case 2:
      return "equal once names and metadata are ignored (level 2: cosmetic; a cache keyed on raw "
             "text would miss)";
    case 3:
      return "equal once instructions are renumbered and reordered (level 3: same fingerprint, no "
             "recompilation)";
    case 4:
      return "equal only once backend_config and float constant values are ignored (level 4: "
             "recompiles)";
    default:
      return "equal only in the entry signature (level 5: the graphs differ, recompiles)";
  }
}

}  // namespace tileprof::analyzer
