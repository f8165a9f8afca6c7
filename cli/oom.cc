// `tileprof oom REPORT [--tensor-map FILE]`: why a graph does not fit.
#include "analyzer/oom.h"
#include "cli/report_command.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string report;
  std::string tensor_map;
  uint64_t bytes_per_tile = 0;
  size_t tiles = 5;
  std::string format = "table";
};

int Run(const Options& options) {
  auto loaded = analyzer::OpenReport(options.report, analyzer::TotalsAndTopTiles(options.tiles));
  if (!loaded) return PrintOutput("oom", loaded.error(), options.format);
  std::optional<std::vector<analyzer::MappedTensor>> tensors;
  if (!options.tensor_map.empty()) {
    auto read = analyzer::ReadTensorMapFile(options.tensor_map);
    if (!read) return PrintOutput("oom", read.error(), options.format);
    tensors = std::move(*read);
  }
  analyzer::OomOptions oom;
  oom.worst_tiles = options.tiles;
  if (options.bytes_per_tile > 0) oom.bytes_per_tile = options.bytes_per_tile;
  return PrintOutput("oom", analyzer::OomView(*loaded, tensors ? &*tensors : nullptr, oom),
                     options.format);
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Lists the tiles over their memory (worst first) and by how much, in which region, what\n"
      "is on them (categories, vertex types, code, always-live and not-always-live bytes, the\n"
      "largest variables, and with --tensor-map the largest tensors by HLO instruction and op),\n"
      "and suggestions with the bytes each would save on the tile (estimates; the assumption\n"
      "is in each row). The tensor map is the COMPILE_END tensor_map JSON\n"
      "(../shared/spec/tensor-map.md).\n"
      "Exit status: 0 ok (whether or not tiles are over), 1 a file could not be read, 2 usage.");
  cmd.add_option("REPORT", options->report, "Report file")->required();
  cmd.add_option("--tensor-map", options->tensor_map, "Tensor map JSON of the same compilation");
  cmd.add_option("--bytes-per-tile", options->bytes_per_tile,
                 "Tile capacity, for a report without a Target section")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--tiles", options->tiles, "Tiles to examine")
      ->check(CLI::Range(size_t{1}, size_t{1000}))
      ->capture_default_str();
  AddFormatOption(cmd, options->format);
  return [options] { return Run(*options); };
}

const Registration kOom{
    "oom", "Explain which tiles are out of memory, what fills them, and what would help", Setup};

}  // namespace
}  // namespace tileprof::cli
