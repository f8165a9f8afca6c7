// `tileprof archive ARCHIVE.a`: the per-tile table and histogram straight
// from a per-tile archive, for users who only have the archive.
#include "analyzer/tile_archives.h"
#include "cli/report_command.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string archive;
  std::string format = "table";
};

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Member i is tile i; its .text size is the tile's memory (as in Poplar's target.saveArchive\n"
      "archives), and .tile.<category> sections, when present, its breakdown.\n"
      "Exit status: 0 ok, 1 the archive could not be read, 2 usage.");
  cmd.add_option("ARCHIVE", options->archive, "Per-tile ar archive")->required();
  AddFormatOption(cmd, options->format);
  return [options] {
    return PrintOutput("archive", analyzer::ArchiveView(options->archive), options->format);
  };
}

const Registration kArchive{"archive",
                            "Per-tile memory table and histogram from a per-tile archive", Setup};

}  // namespace
}  // namespace tileprof::cli
