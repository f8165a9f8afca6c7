// Google Benchmark of BuildTileArchive (elfdump/tile_archive.h) for one, four
// and sixteen ipu2s (1,472 tiles each), with the five by-kind sections of
// ../shared/corpus/elf/mkbench.py, in both layouts. The writer must build
// 23,552 tiles well under 50 ms; compare.sh prints that figure.
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "elfdump/tile_archive.h"

namespace tileprof::elf {
namespace {

std::vector<TileImage> MakeTiles(size_t count) {
  std::mt19937_64 rng(1);
  auto upto = [&](uint64_t max) { return rng() % (max + 1); };
  std::vector<TileImage> tiles(count);
  for (TileImage& tile : tiles) {
    tile.sections = {{".text", 1000 + upto(599000), SectionKind::kCode},
                     {".data", upto(50000), SectionKind::kData},
                     {".bss", upto(20000), SectionKind::kZeroInit},
                     {".rodata", upto(9000), SectionKind::kReadOnlyData},
                     {".tile.stack", upto(4096), SectionKind::kZeroInit}};
  }
  return tiles;
}

// Args: tile count, layout (0 = kTotalInText, 1 = kByKind).
void BM_BuildTileArchive(benchmark::State& state) {
  std::vector<TileImage> tiles = MakeTiles(static_cast<size_t>(state.range(0)));
  TileArchiveOptions options;
  options.layout = state.range(1) == 0 ? TileLayout::kTotalInText : TileLayout::kByKind;
  size_t bytes = 0;
  for (auto _ : state) {
    auto archive = BuildTileArchive(tiles, options);
    if (!archive) {
      state.SkipWithError(archive.error().message().c_str());
      return;
    }
    bytes = archive->size();
    benchmark::DoNotOptimize(archive->data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["archive_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_BuildTileArchive)
    ->ArgNames({"tiles", "by_kind"})
    ->ArgsProduct({{1472, 5888, 23552}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tileprof::elf
