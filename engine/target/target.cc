// IPU presets and the per-tile target model. Numbers: text-report.md §9
// (../shared/spec/text-report.md, "IPU target numbers").
#include "engine/target/target.h"

#include <array>
#include <cassert>

#include <fmt/format.h>

#include "common/format.h"

namespace tileprof::engine {
namespace {

constexpr std::string_view kPresetNames[] = {"ipu1", "ipu2", "ipu21"};

// §9 "Tiles per IPU": 1,216 (Mk1), 1,472 (Mk2; Bow is a Mk2).
constexpr uint32_t kIpu1Tiles = 1216;
constexpr uint32_t kIpu2Tiles = 1472;
// §9 "Memory per tile": 256 KiB = 262,144 B (Mk1), 624 KiB = 638,976 B (Mk2,
// `bytesPerTile=638976`).
constexpr uint64_t kIpu1BytesPerTile = 262144;
constexpr uint64_t kIpu2BytesPerTile = 638976;
// §9 "Clock": 1,600 MHz (Mk1), 1,330 MHz on the M2000
// (`clockFrequency=1330000000.0`), 1,850 MHz on Bow ("1,850.0 MHz").
constexpr double kIpu1ClockHz = 1.6e9;
constexpr double kIpu2ClockHz = 1.33e9;
constexpr double kIpu21ClockHz = 1.85e9;
// §9 "Hardware threads": 6 worker contexts + 1 supervisor
// (`Target::getNumWorkerContexts()` = 6), on Mk1 and Mk2 alike.
constexpr uint32_t kWorkerContexts = 6;
// The IPU's load/store path is 64 bits wide: its vector float instructions
// work on f32v2 and f16v4 (Poplar `getDataPathWidth`, named in §9; the width
// itself is what those instruction names imply).
constexpr uint32_t kDataPathWidthBits = 64;

// §9 "Memory layout", Mk1 `memoryElementOffsets` from profile-data
// lowered-vars: 8 x 16 KiB non-interleaved elements, then 4 x 32 KiB
// interleaved ones from `interleavedMemoryStart` 131,072.
constexpr std::array<uint32_t, 12> kIpu1MemoryElements = {
    0, 16384, 32768, 49152, 65536, 81920, 98304, 114688, 131072, 163840, 196608, 229376};
constexpr uint32_t kIpu1InterleavedIndex = 8;

// §9 says the Mk2 layout is not publicly documented; the only public hint (low
// confidence) is an interleaved element at tile-memory offset 0x34000 to
// 0x3c000. tileprof's choice keeps Mk1's element sizes and fits that hint
// exactly: 13 x 16 KiB non-interleaved elements (0 to 212,992 = 0x34000), then
// 13 x 32 KiB interleaved elements (the first is 0x34000 to 0x3c000), which
// ends at 212,992 + 425,984 = 638,976 B, the Mk2 tile size.
constexpr std::array<uint32_t, 26> kIpu2MemoryElements = {
    0,      16384,  32768,  49152,  65536,  81920,  98304,  114688, 131072,
    147456, 163840, 180224, 196608, 212992, 245760, 278528, 311296, 344064,
    376832, 409600, 442368, 475136, 507904, 540672, 573440, 606208};
constexpr uint32_t kIpu2InterleavedIndex = 13;

static_assert(kIpu1MemoryElements.back() + 32768 == kIpu1BytesPerTile);
static_assert(kIpu2MemoryElements.back() + 32768 == kIpu2BytesPerTile);
static_assert(kIpu2MemoryElements[kIpu2InterleavedIndex] == 0x34000);

// AMP (convolution unit) throughput per tile, derived from the §9 peak FLOPs
// with 2 FLOPs per multiply-accumulate:
//   Mk1 fp32:  31.1 TFLOPS / (1,216 tiles x 1.6 GHz) = 16.0 FLOPs -> 8 MACs;
//   Mk1 mixed: 124.5 TFLOPS / (1,216 x 1.6 GHz)     = 64.0 FLOPs -> 32 MACs;
//   Mk2 fp16:  250 TFLOPS / (1,472 x 1.33 GHz)      = 127.7 FLOPs -> 64 MACs.
// §9 gives no Mk2 fp32 figure; tileprof keeps Mk1's fp32:fp16 ratio of 1:4
// (16 MACs). f16 accumulation runs at the mixed rate (no separate figure).
constexpr uint32_t kIpu1AmpMacsF32 = 8;
constexpr uint32_t kIpu1AmpMacsF16 = 32;
constexpr uint32_t kIpu2AmpMacsF32 = 16;
constexpr uint32_t kIpu2AmpMacsF16 = 64;

}  // namespace

Expected<Target> Target::Create(const TargetOptions& options) {
  IpuArch arch;
  if (options.preset == "ipu1") {
    arch = IpuArch::kIpu1;
  } else if (options.preset == "ipu2") {
    arch = IpuArch::kIpu2;
  } else if (options.preset == "ipu21") {
    arch = IpuArch::kIpu21;
  } else {
    return MakeError("unknown target '{}' (expected ipu1, ipu2 or ipu21)", options.preset);
  }
  if (options.num_ipus < 1 || options.num_ipus > kMaxIpus) {
    return MakeError("--ipus {} out of range (1 to {})", options.num_ipus, kMaxIpus);
  }
  const uint32_t full = arch == IpuArch::kIpu1 ? kIpu1Tiles : kIpu2Tiles;
  const uint32_t tiles = options.tiles_per_ipu.value_or(full);
  if (tiles < 1 || tiles > full) {
    return MakeError("--tiles-per-ipu {} out of range for {} (1 to {})", tiles, options.preset,
                     WithThousands(uint64_t{full}));
  }
  return Target(arch, options.num_ipus, tiles);
}

Expected<Target> Target::FromPreset(std::string_view preset, uint32_t num_ipus,
                                    std::optional<uint32_t> tiles_per_ipu) {
  return Create(TargetOptions{std::string(preset), num_ipus, tiles_per_ipu});
}

std::span<const std::string_view> Target::PresetNames() { return kPresetNames; }

std::string_view Target::ArchString() const { return kPresetNames[static_cast<size_t>(arch_)]; }

uint32_t Target::PresetTilesPerIpu() const {
  return arch_ == IpuArch::kIpu1 ? kIpu1Tiles : kIpu2Tiles;
}

uint64_t Target::BytesPerTile() const {
  return arch_ == IpuArch::kIpu1 ? kIpu1BytesPerTile : kIpu2BytesPerTile;
}

double Target::ClockHz() const {
  switch (arch_) {
    case IpuArch::kIpu1:
      return kIpu1ClockHz;
    case IpuArch::kIpu2:
      return kIpu2ClockHz;
    case IpuArch::kIpu21:
      return kIpu21ClockHz;
  }
  return kIpu2ClockHz;
}

uint32_t Target::NumWorkerContexts() const { return kWorkerContexts; }
uint32_t Target::DataPathWidthBits() const { return kDataPathWidthBits; }

uint32_t Target::VectorWidth(ElementType type) const {
  if (type == ElementType::kF32 || type == ElementType::kF16) {
    return kDataPathWidthBits / (SizeOf(type) * 8);
  }
  return 1;
}

uint32_t Target::AmpMacsPerCycle(ElementType input, ElementType accumulator) const {
  const bool mk1 = arch_ == IpuArch::kIpu1;
  if (input == ElementType::kF32 && accumulator == ElementType::kF32) {
    return mk1 ? kIpu1AmpMacsF32 : kIpu2AmpMacsF32;
  }
  if (input == ElementType::kF16 &&
      (accumulator == ElementType::kF32 || accumulator == ElementType::kF16)) {
    return mk1 ? kIpu1AmpMacsF16 : kIpu2AmpMacsF16;
  }
  return 0;
}

std::span<const uint32_t> Target::MemoryElementOffsets() const {
  if (arch_ == IpuArch::kIpu1) return kIpu1MemoryElements;
  return kIpu2MemoryElements;
}

uint32_t Target::InterleavedMemoryElementIndex() const {
  return arch_ == IpuArch::kIpu1 ? kIpu1InterleavedIndex : kIpu2InterleavedIndex;
}

uint32_t Target::InterleavedMemoryStart() const {
  return MemoryElementOffsets()[InterleavedMemoryElementIndex()];
}

uint32_t Target::GlobalTile(uint32_t ipu, uint32_t tile_in_ipu) const {
  assert(ipu < num_ipus_ && tile_in_ipu < tiles_per_ipu_);
  return ipu * tiles_per_ipu_ + tile_in_ipu;
}

Status Target::CheckTile(uint64_t tile, std::string_view where) const {
  if (IsValidTile(tile)) return {};
  return MakeError("{}: tile {} out of range (target has {} tiles: {} IPU(s) x {})", where, tile,
                   WithThousands(uint64_t{NumTiles()}), num_ipus_,
                   WithThousands(uint64_t{tiles_per_ipu_}));
}

std::string Target::Describe() const {
  return fmt::format("{}, {} IPU{} x {} tiles, {} B per tile, {} MHz", ArchString(), num_ipus_,
                     num_ipus_ == 1 ? "" : "s", WithThousands(uint64_t{tiles_per_ipu_}),
                     WithThousands(BytesPerTile()), WithThousands(ClockHz() / 1e6, 1));
}

}  // namespace tileprof::engine
