// The simulated target: an IPU preset (ipu1, ipu2, ipu21), the number of IPUs
// and of tiles per IPU, and the per-tile numbers the compiler, the memory
// model and the simulator need. Every number comes from
// ../shared/spec/text-report.md section 9 unless its comment says it is
// tileprof's own choice.
//
// Tiles are numbered globally across IPUs: tile t lives on IPU
// t / TilesPerIpu() (../shared/DESIGN.md, "Scale").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/target/element_type.h"

namespace tileprof::engine {

enum class IpuArch : uint8_t {
  kIpu1,   // Mk1 (GC2, Colossus Mk1)
  kIpu2,   // Mk2 (GC200, M2000)
  kIpu21,  // Bow: an ipu2 clocked at 1.85 GHz
};

// What the user asks for: `--target ipu2 --ipus 2 --tiles-per-ipu 4` (the
// `tiles_per_ipu` of IPUConfig.ipu_model / `--ipu_model_tiles` of
// TF_POPLAR_FLAGS in the original).
struct TargetOptions {
  std::string preset = "ipu2";  // TF's IPU Model default (spec section 9)
  uint32_t num_ipus = 1;
  std::optional<uint32_t> tiles_per_ipu;  // unset: the preset's full count
};

// Upper bound on --ipus: the largest system the design covers (DESIGN.md,
// "Scale": 64 IPUs, 94,208 tiles), which also keeps global tile ids and
// total memory comfortably inside their integer types.
inline constexpr uint32_t kMaxIpus = 64;

class Target {
 public:
  // Builds a target. Errors: unknown preset (names the accepted ones),
  // num_ipus outside [1, kMaxIpus], tiles_per_ipu outside [1, preset's
  // tiles per IPU] (the IPU Model only ever removes tiles).
  static Expected<Target> Create(const TargetOptions& options);
  // Shorthand for Create({preset, num_ipus, tiles_per_ipu}).
  static Expected<Target> FromPreset(std::string_view preset, uint32_t num_ipus = 1,
                                     std::optional<uint32_t> tiles_per_ipu = std::nullopt);

  // "ipu1", "ipu2", "ipu21": the accepted preset names, in order.
  static std::span<const std::string_view> PresetNames();

  IpuArch arch() const { return arch_; }
  // The preset name ("ipu2"), as getTargetArchString reports it.
  std::string_view ArchString() const;

  uint32_t NumIpus() const { return num_ipus_; }
  uint32_t TilesPerIpu() const { return tiles_per_ipu_; }
  uint32_t NumTiles() const { return num_ipus_ * tiles_per_ipu_; }
  // Tiles per IPU of the physical chip, before --tiles-per-ipu.
  uint32_t PresetTilesPerIpu() const;
  bool IsCustomTileCount() const { return tiles_per_ipu_ != PresetTilesPerIpu(); }

  uint64_t BytesPerTile() const;
  uint64_t BytesPerIpu() const { return BytesPerTile() * tiles_per_ipu_; }
  uint64_t TotalMemory() const { return BytesPerIpu() * num_ipus_; }
  // Report clock ("Clock Speed (approx)"), in Hz.
  double ClockHz() const;

  // Worker contexts per tile (6; a supervisor context runs beside them).
  uint32_t NumWorkerContexts() const;
  // Width of the load/store data path in bits (64: f32v2 / f16v4 vectors).
  uint32_t DataPathWidthBits() const;
  // Elements of `type` per data-path vector for the vector float units: 2 for
  // f32, 4 for f16; 1 for every type without vector arithmetic (integers,
  // pred, f64, and bf16, which Mk1/Mk2 tiles have no arithmetic for).
  uint32_t VectorWidth(ElementType type) const;
  // Multiply-accumulates per cycle per tile of the convolution (AMP) unit for
  // `input` operands accumulated in `accumulator`; 0 when the unit cannot do
  // that pair (then a codelet falls back to the vector units).
  uint32_t AmpMacsPerCycle(ElementType input, ElementType accumulator) const;

  // Memory elements: start offsets within a tile's memory, ascending, the
  // first 0. The interleaved region starts at InterleavedMemoryStart(), which
  // is the offset of element InterleavedMemoryElementIndex().
  std::span<const uint32_t> MemoryElementOffsets() const;
  uint32_t InterleavedMemoryStart() const;
  uint32_t InterleavedMemoryElementIndex() const;

  // Global tile numbering.
  uint32_t IpuOfTile(uint32_t tile) const { return tile / tiles_per_ipu_; }
  uint32_t TileWithinIpu(uint32_t tile) const { return tile % tiles_per_ipu_; }
  // Precondition: ipu < NumIpus(), tile_in_ipu < TilesPerIpu().
  uint32_t GlobalTile(uint32_t ipu, uint32_t tile_in_ipu) const;
  bool IsValidTile(uint64_t tile) const { return tile < NumTiles(); }
  // Error "<where>: tile N out of range (target has M tiles: ...)" unless
  // IsValidTile(tile).
  Status CheckTile(uint64_t tile, std::string_view where) const;

  // "ipu2, 1 IPU x 1,472 tiles, 638,976 B per tile, 1,330.0 MHz".
  std::string Describe() const;

 private:
  Target(IpuArch arch, uint32_t num_ipus, uint32_t tiles_per_ipu)
      : arch_(arch), num_ipus_(num_ipus), tiles_per_ipu_(tiles_per_ipu) {}

  IpuArch arch_;
  uint32_t num_ipus_;
  uint32_t tiles_per_ipu_;
};

}  // namespace tileprof::engine
