// Writes the sample per-tile archives in this folder with the tileprof writer
// (elfdump/tile_archive.h), the shape of Poplar's `target.saveArchive` output:
//
//   tiles16.a          default layout: each tile's total memory in `.text`
//   tiles16_by_kind.a  the same tiles, one section per kind of memory
//
// usage: make_sample_archive [OUT_DIR]   (default: the current directory)
//
// The 16 tiles are an illustrative slice of an ipu2 (624 KiB = 638,976 bytes
// per tile), not the output of the compiler: a few tiles hold a large tensor,
// tile 0 also holds host-exchange buffers, tile 9 is nearly full and tile 15
// is unused. Sizes are in bytes.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "elfdump/tile_archive.h"

namespace {

using tileprof::elf::SectionKind;
using tileprof::elf::TileArchiveOptions;
using tileprof::elf::TileImage;
using tileprof::elf::TileLayout;

struct SampleTile {
  uint64_t code;       // .text: vertex, control and exchange code
  uint64_t data;       // .data: vertex state, edge pointers
  uint64_t rodata;     // .rodata: constants
  uint64_t variables;  // .bss: tensors, zero-initialised
  uint64_t stack;      // .tile.stack: worker and supervisor stacks
};

constexpr SampleTile kTiles[] = {
    {14'212, 6'480, 2'048, 241'664, 8'192},  // 0: host-exchange buffers
    {11'036, 4'224, 1'024, 196'608, 8'192},  //
    {11'036, 4'224, 1'024, 196'608, 8'192},  //
    {10'804, 3'968, 1'024, 180'224, 8'192},  //
    {12'420, 5'120, 4'096, 262'144, 8'192},  //
    {12'420, 5'120, 4'096, 262'144, 8'192},  //
    {9'876, 3'072, 512, 131'072, 8'192},     //
    {9'876, 3'072, 512, 131'072, 8'192},     //
    {13'588, 7'936, 4'096, 393'216, 8'192},  //
    {15'004, 9'344, 4'096, 598'016, 8'192},  // 9: nearly full (634,652 of 638,976)
    {10'212, 3'584, 0, 147'456, 8'192},      //
    {10'212, 3'584, 0, 147'456, 8'192},      //
    {8'964, 2'304, 0, 65'536, 8'192},        //
    {8'964, 2'304, 0, 65'536, 8'192},        //
    {6'148, 1'152, 0, 16'384, 8'192},        //
    {0, 0, 0, 0, 0},                         // 15: unused
};

std::vector<TileImage> SampleTiles() {
  std::vector<TileImage> tiles;
  for (const SampleTile& t : kTiles) {
    tiles.push_back(TileImage{{{".text", t.code, SectionKind::kCode},
                               {".data", t.data, SectionKind::kData},
                               {".rodata", t.rodata, SectionKind::kReadOnlyData},
                               {".bss", t.variables, SectionKind::kZeroInit},
                               {".tile.stack", t.stack, SectionKind::kZeroInit}}});
  }
  return tiles;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: make_sample_archive [OUT_DIR]\n");
    return 2;
  }
  const std::string dir = argc == 2 ? std::string(argv[1]) + "/" : "";
  const std::vector<TileImage> tiles = SampleTiles();
  TileArchiveOptions by_kind;
  by_kind.layout = TileLayout::kByKind;
  for (const auto& [name, options] :
       {std::pair{"tiles16.a", TileArchiveOptions{}}, std::pair{"tiles16_by_kind.a", by_kind}}) {
    const std::string path = dir + name;
    if (auto status = tileprof::elf::WriteTileArchive(path, tiles, options); !status) {
      std::fprintf(stderr, "make_sample_archive: %s: %s\n", path.c_str(),
                   status.error().message().c_str());
      return 1;
    }
    std::printf("wrote %s\n", path.c_str());
  }
  return 0;
}
