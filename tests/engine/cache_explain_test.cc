// Why a module misses the executable cache (engine/exec/cache_explain.h):
// a hit and an unusable entry by key, the same module compiled differently
// before any other, otherwise the lowest MissScore with the comparer's text,
// and the reasons (version, target, options).
#include "engine/exec/cache_explain.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tileprof::engine::exec {
namespace {

using ::testing::ElementsAre;

CacheEntry Entry(uint64_t key, uint64_t fingerprint, std::string preset = "ipu2",
                 std::string key_text = "a=1\nb=2") {
  CacheEntry entry;
  entry.key = key;
  entry.path = "cache/" + ExecutableFileName(key);
  entry.file_name = ExecutableFileName(key);
  entry.has_module_text = true;
  ExecutableInfo info;
  info.key = key;
  info.tool_version = "1.0";
  info.module_name = "m" + std::to_string(key);
  info.fingerprint = fingerprint;
  info.target.preset = std::move(preset);
  info.key_text = std::move(key_text);
  entry.info = info;
  return entry;
}

CacheQuery Query() {
  auto target = Target::Create(TargetOptions{.preset = "ipu2"});
  CacheQuery query;
  query.key = 0x99;
  query.path = "cache/" + ExecutableFileName(0x99);
  query.fingerprint = 0xF;
  query.target_arch = "ipu2";
  query.target_text = TargetKeyText(*target);
  query.options_text = "a=1\nb=2";
  query.tool_version = "1.0";
  return query;
}

// A comparer that looks the entry's difference up by key, counting calls.
struct FakeComparer {
  std::map<uint64_t, ModuleDifference> differences;
  int calls = 0;
  ModuleComparer Get() {
    return [this](const CacheEntry& entry) -> std::optional<ModuleDifference> {
      ++calls;
      auto it = differences.find(entry.key);
      if (it == differences.end()) return std::nullopt;
      return it->second;
    };
  }
};

TEST(CacheExplain, HitAndUnusableByKey) {
  std::vector<CacheEntry> entries = {Entry(1, 0xA), Entry(0x99, 0xF)};
  FakeComparer compare;
  CacheExplanation why = ExplainLookup(entries, Query(), compare.Get());
  EXPECT_EQ(why.kind, CacheExplanation::Kind::kHit);
  EXPECT_EQ(why.entry, &entries[1]);
  entries[1].problem = "cache/99.poplar_exec: checksum mismatch";
  why = ExplainLookup(entries, Query(), compare.Get());
  EXPECT_EQ(why.kind, CacheExplanation::Kind::kUnusable);
  EXPECT_EQ(why.entry, &entries[1]);
  EXPECT_EQ(compare.calls, 0);
}

TEST(CacheExplain, SameModuleComesFirstWithItsReasons) {
  std::vector<CacheEntry> entries = {Entry(1, 0xA), Entry(2, 0xF, "ipu1", "a=1\nb=3")};
  entries[1].info->tool_version = "0.9";
  FakeComparer compare;
  compare.differences[1] = {.causes = 0, .equal_at_some_level = true, .text = "cosmetic\n"};
  CacheExplanation why = ExplainLookup(entries, Query(), compare.Get());
  EXPECT_EQ(why.kind, CacheExplanation::Kind::kMiss);
  EXPECT_EQ(why.entry, &entries[1]);
  EXPECT_TRUE(why.same_module);
  EXPECT_FALSE(why.module_difference);
  auto ipu1 = Target::Create(TargetOptions{.preset = "ipu1"});
  EXPECT_THAT(why.reasons,
              ElementsAre("compiled by tileprof 0.9, this is tileprof 1.0",
                          "target: " + TargetKeyText(*ipu1) + " (cached) -> " + Query().target_text,
                          "option b: 3 (cached) -> 2"));
}

TEST(CacheExplain, ClosestByScoreKeepsItsDifference) {
  std::vector<CacheEntry> entries = {Entry(1, 0xA), Entry(2, 0xB), Entry(3, 0xC, "ipu1"),
                                     Entry(4, 0xD)};
  entries[3].has_module_text = false;
  FakeComparer compare;
  compare.differences[1] = {.causes = 2, .equal_at_some_level = true, .text = "two causes\n"};
  compare.differences[2] = {.causes = 1, .dependent_changes = 5, .text = "never equal\n"};
  compare.differences[3] = {.causes = 1, .equal_at_some_level = true, .text = "other target\n"};
  CacheExplanation why = ExplainLookup(entries, Query(), compare.Get());
  EXPECT_EQ(why.entry, &entries[2]);
  EXPECT_FALSE(why.same_module);
  EXPECT_EQ(why.module_difference, "other target\n");
  EXPECT_EQ(compare.calls, 3);        // not the entry without module text
  EXPECT_EQ(why.reasons.size(), 1u);  // the target
}

TEST(CacheExplain, NothingComparable) {
  std::vector<CacheEntry> entries = {Entry(1, 0xA)};
  entries[0].info.reset();
  FakeComparer compare;
  CacheExplanation why = ExplainLookup(entries, Query(), compare.Get());
  EXPECT_EQ(why.kind, CacheExplanation::Kind::kMiss);
  EXPECT_EQ(why.entry, nullptr);
  EXPECT_TRUE(why.reasons.empty());
}

TEST(CacheExplain, MissScoreAndOptionChanges) {
  EXPECT_EQ(MissScore({.causes = 2, .dependent_changes = 7, .equal_at_some_level = true}, true),
            2007u);
  EXPECT_EQ(MissScore({.causes = 0, .equal_at_some_level = false}, false), 1000001u);
  EXPECT_THAT(OptionChanges("a=1\nb=2\n", "a=1\nb=5\nc=x"),
              ElementsAre("option b: 2 (cached) -> 5", "option c: (unset) (cached) -> x"));
  EXPECT_TRUE(OptionChanges("a=1", "a=1").empty());
}

}  // namespace
}  // namespace tileprof::engine::exec
