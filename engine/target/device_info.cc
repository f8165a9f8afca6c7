#include "engine/target/device_info.h"

#include <cmath>
#include <string_view>

namespace tileprof::engine {
namespace {

constexpr std::string_view kNotApplicable = "N/A";

// C04 (Command Line Tools 1.2.1, ipu1), field by field in its order.
constexpr std::string_view kMk1Fields[] = {"id",
                                           "target",
                                           "average board temp",
                                           "average die temp",
                                           "board ipu index",
                                           "board serial number",
                                           "board type",
                                           "clock",
                                           "driver version",
                                           "firmware version",
                                           "hexoatt active size (bytes)",
                                           "hexoatt total size (bytes)",
                                           "hexopt active size (bytes)",
                                           "hexopt total size (bytes)",
                                           "ipu architecture",
                                           "ipu utilisation",
                                           "ipu utilisation (session)",
                                           "link correctable error count",
                                           "link speed",
                                           "link width",
                                           "numa node",
                                           "parity initialised",
                                           "pci id",
                                           "pcie physical slot",
                                           "process start time",
                                           "remote buffers supported",
                                           "sysfs file id",
                                           "total board power",
                                           "user executable",
                                           "user name",
                                           "user process id"};

// C05 (Command Line Tools, latest, ipu21), field by field in its order.
constexpr std::string_view kMk2Fields[] = {"id",
                                           "target",
                                           "average board temp",
                                           "average die temp",
                                           "board ipu index",
                                           "board serial number",
                                           "board type",
                                           "board variant",
                                           "clock",
                                           "driver version",
                                           "firmware major version",
                                           "firmware minor version",
                                           "firmware patch version",
                                           "firmware version",
                                           "hexoatt active size (bytes)",
                                           "hexoatt total size (bytes)",
                                           "hexopt active size (bytes)",
                                           "hexopt total size (bytes)",
                                           "icu bootloader version",
                                           "ipu architecture",
                                           "ipu error state",
                                           "ipu power",
                                           "ipu utilisation",
                                           "ipu utilisation (session)",
                                           "link correctable error count",
                                           "link correctable error count (session)",
                                           "link speed",
                                           "link width",
                                           "numa node",
                                           "parity error count threshold",
                                           "parity error threshold interval",
                                           "parity initialised",
                                           "pci id",
                                           "pcie physical slot",
                                           "remote buffers supported",
                                           "sysfs file id",
                                           "total board power",
                                           "user executable",
                                           "user name",
                                           "user process id"};

// The value of one field for the simulated device; N/A unless it means
// something for a simulator.
std::string Value(std::string_view field, const Target& target, uint32_t device_id) {
  if (field == "id") return std::to_string(device_id);
  if (field == "target") return "Simulator";
  if (field == "clock")
    return std::to_string(static_cast<uint64_t>(std::llround(target.ClockHz() / 1e6))) + "MHz";
  if (field == "ipu architecture") return std::string(target.ArchString());
  if (field == "ipu error state") return "no errors";
  // The simulator keeps remote buffers in host memory on every target, so the
  // check the pre-compile documentation gives (seed 000) passes.
  if (field == "remote buffers supported") return "1";
  return std::string(kNotApplicable);
}

}  // namespace

std::vector<DeviceField> DeviceInfoFields(const Target& target, uint32_t device_id) {
  std::vector<DeviceField> fields;
  auto add = [&](const auto& names) {
    for (std::string_view name : names)
      fields.push_back({std::string(name), Value(name, target, device_id)});
  };
  if (target.arch() == IpuArch::kIpu1) {
    add(kMk1Fields);
  } else {
    add(kMk2Fields);
  }
  return fields;
}

std::vector<ListedDevice> SimulatedDevices(const Target& target) {
  std::vector<ListedDevice> devices;
  uint32_t n = target.NumIpus();
  for (uint32_t ipu = 0; ipu < n; ++ipu) devices.push_back({ipu, {ipu}});
  for (uint32_t size = 2; size <= n; size *= 2) {
    for (uint32_t first = 0; first + size <= n; first += size) {
      ListedDevice device{static_cast<uint32_t>(devices.size()), {}};
      for (uint32_t ipu = first; ipu < first + size; ++ipu) device.ipus.push_back(ipu);
      devices.push_back(std::move(device));
    }
  }
  return devices;
}

}  // namespace tileprof::engine
