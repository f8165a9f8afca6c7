// Target presets (text-report.md §9), custom tile counts and global tile
// numbering.
#include "engine/target/target.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tileprof::engine {
namespace {

using ::testing::HasSubstr;

Target Make(std::string_view preset, uint32_t ipus = 1,
            std::optional<uint32_t> tiles = std::nullopt) {
  auto target = Target::FromPreset(preset, ipus, tiles);
  EXPECT_TRUE(target) << target.error().message();
  return *target;
}

TEST(Target, Ipu1MatchesTheMk1Report) {
  const Target t = Make("ipu1");
  EXPECT_EQ(t.arch(), IpuArch::kIpu1);
  EXPECT_EQ(t.ArchString(), "ipu1");
  EXPECT_EQ(t.NumIpus(), 1u);
  EXPECT_EQ(t.TilesPerIpu(), 1216u);
  EXPECT_EQ(t.NumTiles(), 1216u);
  EXPECT_EQ(t.BytesPerTile(), 262144u);
  EXPECT_EQ(t.TotalMemory(), 318767104u);  // "304.0 MB" = 1,216 x 256 KiB
  EXPECT_DOUBLE_EQ(t.ClockHz(), 1.6e9);
  EXPECT_EQ(t.NumWorkerContexts(), 6u);
  EXPECT_FALSE(t.IsCustomTileCount());
}

TEST(Target, Ipu1MemoryElementsAreTheLoweredVarsOffsets) {
  const Target t = Make("ipu1");
  const std::vector<uint32_t> expected = {0,     16384,  32768,  49152,  65536,  81920,
                                          98304, 114688, 131072, 163840, 196608, 229376};
  const auto offsets = t.MemoryElementOffsets();
  EXPECT_EQ(std::vector<uint32_t>(offsets.begin(), offsets.end()), expected);
  EXPECT_EQ(t.InterleavedMemoryStart(), 131072u);
  EXPECT_EQ(t.InterleavedMemoryElementIndex(), 8u);
}

TEST(Target, Ipu2MatchesTheMk2Numbers) {
  const Target t = Make("ipu2");
  EXPECT_EQ(t.TilesPerIpu(), 1472u);
  EXPECT_EQ(t.BytesPerTile(), 638976u);
  EXPECT_EQ(t.BytesPerIpu(), 940572672u);  // bytesPerIPU in profile_test.py
  EXPECT_DOUBLE_EQ(t.ClockHz(), 1.33e9);
  EXPECT_EQ(t.NumWorkerContexts(), 6u);
}

TEST(Target, TwoMk2IpusMatchProfileTestValues) {
  const Target t = Make("ipu2", 2);
  EXPECT_EQ(t.NumTiles(), 2944u);           // numTiles=2944
  EXPECT_EQ(t.TotalMemory(), 1881145344u);  // totalMemory=1881145344
}

TEST(Target, Ipu21IsAnIpu2At1850MHz) {
  const Target bow = Make("ipu21");
  const Target mk2 = Make("ipu2");
  EXPECT_EQ(bow.ArchString(), "ipu21");
  EXPECT_DOUBLE_EQ(bow.ClockHz(), 1.85e9);
  EXPECT_EQ(bow.TilesPerIpu(), mk2.TilesPerIpu());
  EXPECT_EQ(bow.BytesPerTile(), mk2.BytesPerTile());
  const auto a = bow.MemoryElementOffsets();
  const auto b = mk2.MemoryElementOffsets();
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  EXPECT_EQ(bow.AmpMacsPerCycle(ElementType::kF16, ElementType::kF32),
            mk2.AmpMacsPerCycle(ElementType::kF16, ElementType::kF32));
}

TEST(Target, Mk2MemoryElementsCoverTheTileAndFitTheInterleavedHint) {
  const Target t = Make("ipu2");
  const auto offsets = t.MemoryElementOffsets();
  ASSERT_EQ(offsets.size(), 26u);
  EXPECT_EQ(offsets.front(), 0u);
  EXPECT_TRUE(std::is_sorted(offsets.begin(), offsets.end()));
  EXPECT_EQ(t.InterleavedMemoryStart(), 0x34000u);
  EXPECT_EQ(offsets[t.InterleavedMemoryElementIndex() + 1], 0x3c000u);
  EXPECT_EQ(offsets.back() + 32768u, t.BytesPerTile());
}

TEST(Target, DefaultOptionsAreOneFullIpu2) {
  auto t = Target::Create(TargetOptions{});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->ArchString(), "ipu2");
  EXPECT_EQ(t->NumTiles(), 1472u);
}

TEST(Target, CustomTileCountKeepsPerTileNumbers) {
  const Target t = Make("ipu1", 2, 4);
  EXPECT_TRUE(t.IsCustomTileCount());
  EXPECT_EQ(t.PresetTilesPerIpu(), 1216u);
  EXPECT_EQ(t.TilesPerIpu(), 4u);
  EXPECT_EQ(t.NumTiles(), 8u);
  EXPECT_EQ(t.BytesPerTile(), 262144u);
  EXPECT_EQ(t.BytesPerIpu(), 4u * 262144u);
  EXPECT_EQ(t.TotalMemory(), 8u * 262144u);
}

TEST(Target, TilesAreNumberedGloballyAcrossIpus) {
  const Target t = Make("ipu2", 3, 4);
  EXPECT_EQ(t.IpuOfTile(0), 0u);
  EXPECT_EQ(t.IpuOfTile(3), 0u);
  EXPECT_EQ(t.IpuOfTile(4), 1u);
  EXPECT_EQ(t.IpuOfTile(11), 2u);
  EXPECT_EQ(t.TileWithinIpu(5), 1u);
  EXPECT_EQ(t.GlobalTile(2, 3), 11u);
  for (uint32_t tile = 0; tile < t.NumTiles(); ++tile) {
    EXPECT_EQ(t.GlobalTile(t.IpuOfTile(tile), t.TileWithinIpu(tile)), tile);
  }
  EXPECT_TRUE(t.IsValidTile(11));
  EXPECT_FALSE(t.IsValidTile(12));
}

TEST(Target, CheckTileNamesThePlaceAndTheRange) {
  const Target t = Make("ipu2", 2, 4);
  EXPECT_TRUE(t.CheckTile(7, "vertex 3"));
  auto status = t.CheckTile(8, "vertex 3");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message(),
            "vertex 3: tile 8 out of range (target has 8 tiles: 2 IPU(s) x 4)");
}

TEST(Target, RejectsBadOptions) {
  auto unknown = Target::FromPreset("ipu3");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message(), "unknown target 'ipu3' (expected ipu1, ipu2 or ipu21)");

  auto zero_ipus = Target::FromPreset("ipu2", 0);
  ASSERT_FALSE(zero_ipus);
  EXPECT_THAT(zero_ipus.error().message(), HasSubstr("--ipus 0 out of range (1 to 64)"));
  EXPECT_FALSE(Target::FromPreset("ipu2", 65));
  EXPECT_TRUE(Target::FromPreset("ipu2", 64));

  auto zero_tiles = Target::FromPreset("ipu1", 1, 0);
  ASSERT_FALSE(zero_tiles);
  EXPECT_EQ(zero_tiles.error().message(), "--tiles-per-ipu 0 out of range for ipu1 (1 to 1,216)");
  EXPECT_FALSE(Target::FromPreset("ipu1", 1, 1217));
  EXPECT_TRUE(Target::FromPreset("ipu1", 1, 1216));
  EXPECT_FALSE(Target::FromPreset("ipu2", 1, 1473));
}

TEST(Target, VectorWidthsFollowThe64BitDataPath) {
  const Target t = Make("ipu1");
  EXPECT_EQ(t.DataPathWidthBits(), 64u);
  EXPECT_EQ(t.VectorWidth(ElementType::kF32), 2u);
  EXPECT_EQ(t.VectorWidth(ElementType::kF16), 4u);
  for (ElementType type : {ElementType::kBF16, ElementType::kF64, ElementType::kS32,
                           ElementType::kU8, ElementType::kPred}) {
    EXPECT_EQ(t.VectorWidth(type), 1u) << HloName(type);
  }
}

TEST(Target, AmpThroughputFollowsPeakFlops) {
  const Target mk1 = Make("ipu1");
  const Target mk2 = Make("ipu2");
  // 31.1 TFLOPS / (1,216 x 1.6 GHz) / 2 = 8 MACs per tile-cycle.
  EXPECT_EQ(mk1.AmpMacsPerCycle(ElementType::kF32, ElementType::kF32), 8u);
  EXPECT_EQ(mk1.AmpMacsPerCycle(ElementType::kF16, ElementType::kF32), 32u);
  EXPECT_EQ(mk2.AmpMacsPerCycle(ElementType::kF16, ElementType::kF32), 64u);
  EXPECT_EQ(mk2.AmpMacsPerCycle(ElementType::kF32, ElementType::kF32), 16u);
  EXPECT_EQ(mk2.AmpMacsPerCycle(ElementType::kS32, ElementType::kS32), 0u);
  // Consistency with the published peaks (within 1%).
  const double mk1_fp32 = 2.0 * 8 * 1216 * 1.6e9;
  EXPECT_NEAR(mk1_fp32 / 31.1e12, 1.0, 0.01);
  const double mk2_fp16 = 2.0 * 64 * 1472 * 1.33e9;
  EXPECT_NEAR(mk2_fp16 / 250e12, 1.0, 0.01);
}

TEST(Target, DescribeNamesTheNumbers) {
  EXPECT_EQ(Make("ipu1").Describe(), "ipu1, 1 IPU x 1,216 tiles, 262,144 B per tile, 1,600.0 MHz");
  EXPECT_EQ(Make("ipu21", 2, 4).Describe(),
            "ipu21, 2 IPUs x 4 tiles, 638,976 B per tile, 1,850.0 MHz");
}

TEST(Target, PresetNamesInOrder) {
  const auto names = Target::PresetNames();
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "ipu1");
  EXPECT_EQ(names[1], "ipu2");
  EXPECT_EQ(names[2], "ipu21");
}

}  // namespace
}  // namespace tileprof::engine
