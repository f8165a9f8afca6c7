// `tileprof info`: the simulated device as `gc-info -d N -i` prints an
// attached one ("Device Info:", the published field list of the IPU's era;
// engine/target/device_info.h), and `tileprof info -l` the device list of
// `gc-info -l`, so checks written for gc-info work unchanged:
//   tileprof info --ipu-version ipu2 | grep 'remote buffers supported: 1'
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "common/format.h"
#include "engine/target/device_info.h"
#include "engine/target/target.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string ipu_version = "ipu2";
  uint32_t ipus = 1;
  uint32_t device = 0;
  bool device_info = false;  // -i: the default view, accepted as gc-info spells it
  bool list = false;
  bool target_details = false;
};

void PrintList(const engine::Target& target) {
  std::cout << "Graphcore device listing:\n";
  for (const engine::ListedDevice& d : engine::SimulatedDevices(target)) {
    if (d.ipus.size() == 1) {
      std::cout << fmt::format("-+- Id: [{}], target: [Simulator], IPU#: [{}]\n", d.id, d.ipus[0]);
      continue;
    }
    std::cout << fmt::format("-+- Id: [{}], target: [Multi IPU]\n", d.id);
    for (size_t i = 0; i < d.ipus.size(); ++i)
      std::cout << fmt::format(" |--- Id: [{}], DNC Id: [{}], IPU#: [{}]\n", d.ipus[i], i,
                               d.ipus[i]);
  }
}

void PrintTargetDetails(const engine::Target& t) {
  std::cout << "Simulated target:\n";
  std::cout << fmt::format("  ipus: {}\n", t.NumIpus());
  std::cout << fmt::format("  tiles per ipu: {}\n", t.TilesPerIpu());
  std::cout << fmt::format("  total tiles: {}\n", t.NumTiles());
  std::cout << fmt::format("  memory per tile: {} bytes\n", t.BytesPerTile());
  std::cout << fmt::format("  total memory: {} bytes\n", t.TotalMemory());
  std::cout << fmt::format("  worker contexts per tile: {}\n", t.NumWorkerContexts());
  std::cout << fmt::format("  data path width: {} bits\n", t.DataPathWidthBits());
}

int Run(const Options& options) {
  auto target = engine::Target::FromPreset(options.ipu_version, options.ipus);
  if (!target) {
    PrintDiagnostic("info", target.error().message());
    return kExitUsage;
  }
  if (options.list) {
    PrintList(*target);
    return kExitOk;
  }
  if (options.device >= target->NumIpus()) {
    PrintDiagnostic("info", fmt::format("no device {}: the simulated system has IPUs 0 to {} "
                                        "(see 'tileprof info -l')",
                                        options.device, target->NumIpus() - 1));
    return kExitUsage;
  }
  std::cout << "Device Info:\n";
  for (const engine::DeviceField& field : engine::DeviceInfoFields(*target, options.device))
    std::cout << fmt::format("  {}: {}\n", field.name, field.value);
  if (options.target_details) PrintTargetDetails(*target);
  return std::cout.good() ? kExitOk : kExitError;
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Prints the simulated device as `gc-info -d N -i` prints an attached one: the fields of\n"
      "Graphcore's published outputs in their order (the Mk1 tools' list for ipu1, the Mk2\n"
      "tools' for ipu2 and ipu21), 'N/A' where a field has no meaning for a simulator, and\n"
      "'remote buffers supported: 1', the line the pre-compile documentation tells users to\n"
      "check. -l lists the devices as `gc-info -l` does: the IPUs, then the multi-IPU devices.\n"
      "--target-details adds the simulated tiles and memory.");
  cmd.add_option("--ipu-version", options->ipu_version, "Device to describe: ipu1, ipu2, ipu21")
      ->check(CLI::IsMember({"ipu1", "ipu2", "ipu21"}))
      ->capture_default_str();
  cmd.add_option("--ipus", options->ipus, "Number of IPUs")
      ->check(CLI::Range(1u, engine::kMaxIpus))
      ->capture_default_str();
  cmd.add_option("-d,--device-id", options->device, "Device (IPU) to describe")
      ->capture_default_str();
  cmd.add_flag("-i,--device-info", options->device_info, "Device Info (the default)");
  cmd.add_flag("-l,--list-devices", options->list, "List the devices");
  cmd.add_flag("--target-details", options->target_details,
               "Add the simulated target's tiles and memory");
  return [options] { return Run(*options); };
}

const Registration kInfo{"info", "Describe the simulated device, like gc-info -d 0 -i or -l",
                         Setup};

}  // namespace
}  // namespace tileprof::cli
