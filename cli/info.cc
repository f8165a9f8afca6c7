// `tileprof info`: the simulated device, in the `key: value` form of
// `gc-info -d 0 -i`, so the check the pre-compile documentation gives
// ("If you see remote buffers supported: 1 ...", seed 000) works unchanged:
//   tileprof info --ipu-version ipu2 | grep 'remote buffers supported: 1'
// Only that line's wording comes from the original; gc-info's other field
// names are not public, so the rest names the simulated target's numbers in
// the same style.
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "common/format.h"
#include "engine/target/target.h"
#include "version.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string ipu_version = "ipu2";
  uint32_t ipus = 1;
};

int Run(const Options& options) {
  auto target = engine::Target::FromPreset(options.ipu_version, options.ipus);
  if (!target) {
    PrintDiagnostic("info", target.error().message());
    return kExitUsage;
  }
  const engine::Target& t = *target;
  std::cout << fmt::format("Device 0:\n");
  std::cout << fmt::format("  id: 0\n");
  std::cout << fmt::format("  type: tileprof simulated IPU (no hardware attached)\n");
  std::cout << fmt::format("  driver version: tileprof {}\n", TILEPROF_VERSION);
  std::cout << fmt::format("  ipu architecture: {}\n", t.ArchString());
  std::cout << fmt::format("  ipu version: {}\n", t.ArchString());
  std::cout << fmt::format("  num ipus: {}\n", t.NumIpus());
  std::cout << fmt::format("  tiles per ipu: {}\n", t.TilesPerIpu());
  std::cout << fmt::format("  total tiles: {}\n", t.NumTiles());
  std::cout << fmt::format("  memory per tile: {} bytes\n", t.BytesPerTile());
  std::cout << fmt::format("  total memory: {} bytes\n", t.TotalMemory());
  std::cout << fmt::format("  worker contexts per tile: {}\n", t.NumWorkerContexts());
  std::cout << fmt::format("  data path width: {} bits\n", t.DataPathWidthBits());
  std::cout << fmt::format("  clock frequency: {:.0f} MHz\n", t.ClockHz() / 1e6);
  // The simulator keeps remote buffers in host memory on every target.
  std::cout << fmt::format("  remote buffers supported: 1\n");
  return kExitOk;
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Prints the simulated device as `gc-info -d 0 -i` prints an attached one, including\n"
      "'remote buffers supported: 1', the line the pre-compile documentation tells users to\n"
      "check before using remote buffers (optimizer state offloading).");
  cmd.add_option("--ipu-version", options->ipu_version, "Device to describe: ipu1, ipu2, ipu21")
      ->check(CLI::IsMember({"ipu1", "ipu2", "ipu21"}))
      ->capture_default_str();
  cmd.add_option("--ipus", options->ipus, "Number of IPUs")
      ->check(CLI::Range(1u, engine::kMaxIpus))
      ->capture_default_str();
  return [options] { return Run(*options); };
}

const Registration kInfo{"info", "Describe the simulated device, like gc-info -d 0 -i", Setup};

}  // namespace
}  // namespace tileprof::cli
