#include "engine/sim/cycle_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tileprof::engine::sim {
namespace {

uint64_t LinkCycles(uint64_t bytes, double bytes_per_second, double clock_hz) {
  if (bytes == 0) return 0;
  const double bytes_per_cycle = bytes_per_second / clock_hz;
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / bytes_per_cycle));
}

}  // namespace

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

uint64_t ExchangeCycles(uint64_t bytes_in, uint64_t bytes_out) {
  const uint64_t bytes = std::max(bytes_in, bytes_out);
  return bytes == 0 ? 0 : kExchangeSetupCycles + CeilDiv(bytes, kExchangeBytesPerCycle);
}

uint64_t HostTransferCycles(uint64_t bytes, const Target& target, bool ipu_model) {
  const double rate = ipu_model                         ? kIpuModelHostLinkBytesPerSecond
                      : target.arch() == IpuArch::kIpu1 ? kHostLinkBytesPerSecondMk1
                                                        : kHostLinkBytesPerSecondMk2;
  return LinkCycles(bytes, rate, target.ClockHz());
}

bool StreamCopyUsesExchange(const Target& target) { return target.arch() != IpuArch::kIpu1; }

uint64_t IpuLinkCycles(uint64_t bytes, const Target& target) {
  return LinkCycles(bytes, kIpuLinkBytesPerSecond, target.ClockHz());
}

uint64_t LocalCopyCycles(uint64_t bytes) { return CeilDiv(bytes, kLocalCopyBytesPerCycle); }

TileCompute PackTile(std::span<const uint64_t> worker_cycles,
                     std::span<const uint64_t> supervisor_cycles, uint32_t contexts) {
  TileCompute result;
  for (uint64_t cycles : supervisor_cycles) {
    result.including_idle += cycles;
    result.excluding_idle += cycles;
  }
  if (worker_cycles.empty() || contexts == 0) return result;
  // Small fixed array: the IPU has 6 contexts; a larger count (a custom
  // target) still works through the vector.
  std::vector<uint64_t> busy_until(contexts, 0);
  uint64_t issued = 0;
  for (uint64_t cycles : worker_cycles) {
    auto earliest = std::min_element(busy_until.begin(), busy_until.end());
    *earliest += cycles;
    issued += cycles;
  }
  const uint64_t makespan = *std::max_element(busy_until.begin(), busy_until.end());
  result.including_idle += makespan * contexts;
  result.excluding_idle += issued;
  return result;
}

}  // namespace tileprof::engine::sim
