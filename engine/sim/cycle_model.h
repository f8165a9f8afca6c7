// The simulator's cycle model: what one bulk-synchronous step costs on a
// tile, from the codelets' cycle estimates, the bytes a step moves and the
// target's clock. Every constant is named here and justified, with its
// source, in docs/cycle-model.md; the step structure (sync, exchange,
// compute) is the IPU's BSP execution (seed 003's "compute, sync,
// exchange" phases).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "engine/target/target.h"

namespace tileprof::engine::sim {

// ---- Exchange --------------------------------------------------------------
// Bytes a tile can receive (and, separately, send) per tile clock cycle over
// the on-chip exchange: one 32-bit word. 4 B x 1,472 tiles x 1.33 GHz =
// 7.8 TB/s, the published 8 TB/s IPU-Exchange of a Mk2 (spec section 9).
inline constexpr uint64_t kExchangeBytesPerCycle = 4;
// Fixed cost of a tile's part in one exchange phase: the exchange code sets
// up each transfer and data crosses the chip before the first word lands.
// tileprof's choice (no public per-exchange figure).
inline constexpr uint64_t kExchangeSetupCycles = 32;
// ---- Synchronisation -------------------------------------------------------
// A sync of the tiles of one IPU (the hardware barrier before every exchange
// phase). tileprof's choice: the barrier signal crosses a ~25 mm die and back.
inline constexpr uint64_t kIpuSyncCycles = 100;
// A sync across IPUs (over IPU-Links): ten times an internal one.
inline constexpr uint64_t kGlobalSyncCycles = 1000;
// A sync with the host before a stream copy: a PCIe round trip, about 1.5 us
// (2,000 cycles at 1.33 GHz). Counted as host exchange, not sync.
inline constexpr uint64_t kHostSyncCycles = 2000;
// ---- Links -----------------------------------------------------------------
// Host link, as measured, not the PCIe peak. Poplar tutorial 7 streams a
// 40 MB matrix in: its Mk2 hardware run (published A10) spends 2,641,488
// host-exchange cycles at 1.33 GHz, 20.2 GB/s, 63% of PCIe Gen4 x16's
// 32 GB/s each way (spec section 9); Mk1 cards have PCIe Gen3 x16 (16 GB/s),
// taken at the same 63%. The IPU Model assumes a slower link: 7.8 GB/s in
// the Mk1 run (A07), 8.0 GB/s in the Mk2 one (A08/A09).
inline constexpr double kHostLinkBytesPerSecondMk2 = 20e9;
inline constexpr double kHostLinkBytesPerSecondMk1 = 10e9;
inline constexpr double kIpuModelHostLinkBytesPerSecond = 8e9;
// IPU-Links: 10 links, 320 GB/s per IPU (spec section 9), 160 GB/s each way.
inline constexpr double kIpuLinkBytesPerSecond = 160e9;
// ---- On-tile copies ----------------------------------------------------------
// A copy within one tile's memory: each of the 6 workers moves 8 B (one
// 64-bit load and one store) every 2 worker cycles, i.e. 48 B per 12 tile
// cycles: 4 B per tile cycle.
inline constexpr uint64_t kLocalCopyBytesPerCycle = 4;

uint64_t CeilDiv(uint64_t a, uint64_t b);

// Cycles of one tile's part in an exchange phase: setup plus the larger of
// its bytes in and out at kExchangeBytesPerCycle; 0 when it moves nothing.
uint64_t ExchangeCycles(uint64_t bytes_in, uint64_t bytes_out);
// Cycles to move `bytes` over the host link (the IPU Model's when
// `ipu_model`) / one IPU's links at the target's clock.
uint64_t HostTransferCycles(uint64_t bytes, const Target& target, bool ipu_model = false);
uint64_t IpuLinkCycles(uint64_t bytes, const Target& target);
// True when a stream copy's bytes reach their tiles through the tiles'
// exchange ports, counted as IPU exchange after the host transfer (Mk2 and
// Bow: tutorial 7's ~8,700 average IPU-exchange cycles, published for the
// IPU Model and hardware alike, are its 27 KB share per tile at 4 B per
// cycle plus its compute sets' exchange). The Mk1 run counts no such
// exchange (793 cycles, A07): there the whole copy is host exchange.
bool StreamCopyUsesExchange(const Target& target);
// Cycles of an on-tile copy of `bytes`.
uint64_t LocalCopyCycles(uint64_t bytes);

// A tile's compute phase. Worker vertices are dispatched in order, each onto
// the worker context that frees up first (ties: the lowest context), as a
// supervisor starts workers as contexts become free; a worker cycle is
// `contexts` tile cycles, so the tile's time is contexts x the busiest
// context's worker cycles. Supervisor vertices take the whole tile and run
// one after the other.
struct TileCompute {
  uint64_t including_idle = 0;  // tile cycles the compute phase lasts
  uint64_t excluding_idle = 0;  // tile cycles some context issued in
};
TileCompute PackTile(std::span<const uint64_t> worker_cycles,
                     std::span<const uint64_t> supervisor_cycles, uint32_t contexts);

// What one step cost. Every tile spends `duration` cycles in it (that is
// what bulk-synchronous means); the sums split that time per tile into
// compute, exchange and host exchange, and the rest of each tile's time is
// sync (the barrier itself and waiting for the slowest tile).
struct StepCost {
  uint64_t duration = 0;
  // The tiles that work in the step, by tile id: each one's exchange and
  // compute cycles (its busy time; the rest of `duration` it waits). Listed
  // only for a tile-level profile (PlanProgram's busy_tiles). Empty for
  // steps costed for the whole chip at once (host transfers, a predicate's
  // broadcast): every tile is then busy for the whole step.
  struct Busy {
    uint32_t tile = 0;
    uint64_t compute = 0;   // including idle worker slots
    uint64_t exchange = 0;  // internal and global
  };
  std::vector<Busy> busy_tiles;
  uint64_t compute_including_idle = 0;  // summed over tiles
  uint64_t compute_excluding_idle = 0;
  uint64_t exchange = 0;
  uint64_t global_exchange = 0;
  uint64_t host_exchange = 0;
};

}  // namespace tileprof::engine::sim
