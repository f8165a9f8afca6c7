// The simulated device as Graphcore's command line tools show a device, for
// `tileprof info`: the fields of `gc-info -d N -i` ("Device Info:") in the
// names and order the published outputs have, and the device list of
// `gc-info -l`. Sources (../shared/corpus/published/SOURCES.md):
//   C04  gc-info -d 0 --device-info, Command Line Tools 1.2.1, C2 card, ipu1
//   C05  gc-info -i -d 0, Command Line Tools (latest), C600 card, ipu21
//   C06  gc-info --list-devices: single IPUs, then "Multi IPU" devices
// ipu1 gets C04's field list (the tools of the Mk1 era); ipu2 and ipu21 get
// C05's (the Mk2 tools). A field that has no meaning for a simulator (board
// temperature, serial number, PCI id, driver and firmware versions, the
// attached process) is "N/A", as gc-info itself prints an unknown value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/target/target.h"

namespace tileprof::engine {

struct DeviceField {
  std::string name;   // "remote buffers supported"
  std::string value;  // "1"
};

// The "Device Info:" fields of IPU `device_id` (0 .. NumIpus() - 1).
std::vector<DeviceField> DeviceInfoFields(const Target& target, uint32_t device_id);

// A device of the list: a single IPU, or a multi-IPU device made of
// `ipus` (in order; the DNC id is the index in that list).
struct ListedDevice {
  uint32_t id = 0;
  std::vector<uint32_t> ipus;
};

// gc-info's numbering: the NumIpus() single IPUs first, then the devices of
// 2, 4, 8, ... IPUs that tile them in order, up to all of them.
std::vector<ListedDevice> SimulatedDevices(const Target& target);

}  // namespace tileprof::engine
