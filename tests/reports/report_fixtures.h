// Report structs filled with the figures of the published reports
// (../shared/corpus/reports/), for the writer, reader and invariant tests.
//
// The published reports print whole-graph figures; the writer derives those
// from per-tile data. So these fixtures build per-tile data (1,216 Mk1 tiles)
// whose sums, maxima and histogram are the published ones: each whole-graph
// category is spread evenly over the tiles (remainders to the lowest ids),
// then bytes are moved onto tile 0 until it holds the published maximum. The
// writer must then compute every printed line from these tiles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/file.h"
#include "reports/report.h"

namespace tileprof::report::testing {

inline constexpr uint32_t kMk1Tiles = 1216;
inline constexpr uint64_t kMk1BytesPerTile = 262144;

inline std::string SharedPath(const std::string& relative) {
  return std::string(TILEPROF_SHARED_DIR) + "/" + relative;
}

inline std::string ReadShared(const std::string& relative) {
  Expected<std::string> text = ReadFile(SharedPath(relative));
  return text ? *text : std::string();
}

// `total` spread over `n` tiles: tile i's share.
inline uint64_t Spread(uint64_t total, uint64_t n, uint64_t i) {
  return total / n + (i < total % n ? 1 : 0);
}

inline Target Mk1Target() { return MakeTarget("ipu1", 1, kMk1Tiles, kMk1BytesPerTile, 1.6e9); }

// Sets region bytes from the categories (all in `region`) plus `gaps`, and
// the liveness split (variables are the not-always-live part).
inline void FinishTile(TileMemory& tile, uint64_t gaps, Region region = Region::kNonInterleaved) {
  uint64_t total = tile.CategoryTotal();
  tile.by_region = {};
  At(tile.by_region, region) = {total, total + gaps};
  tile.not_always_live = At(tile.by_category, Category::kVariables);
  tile.always_live = total - tile.not_always_live;
}

// The adder graph on a Mk1 (adder-mk1.rep): 5,355,604 B excluding gaps,
// 23,878,396 B including, tile 0 the largest at 5,780 / 49,184 B.
inline CompilationReport AdderMk1Report() {
  CompilationReport report;
  report.target = Mk1Target();
  report.graph = GraphInfo{1219, 1223, 30562, 4};
  report.vertex_types = {{"poprand::SetSeedSupervisor"},
                         {"popops::ScaledAddSupervisor<float,float,true>"},
                         {"popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::ADD,float>"}};
  const std::pair<Category, uint64_t> kTotals[] = {{Category::kVariables, 39108},
                                                   {Category::kHostExchangePacketHeaders, 10512},
                                                   {Category::kStack, 3852288},
                                                   {Category::kVertexInstances, 14640},
                                                   {Category::kControlCode, 851272},
                                                   {Category::kVertexCode, 170788},
                                                   {Category::kInternalExchangeCode, 60792},
                                                   {Category::kHostExchangeCode, 351328},
                                                   {Category::kInstrumentationResults, 4876}};
  report.tiles.resize(kMk1Tiles);
  for (uint32_t i = 0; i < kMk1Tiles; ++i) {
    TileMemory& tile = report.tiles[i];
    tile.tile = i;
    for (auto [category, total] : kTotals)
      At(tile.by_category, category) = Spread(total, kMk1Tiles, i);
    // Vertex data: all of it is vertex instances, split into state and edges.
    uint64_t instances = At(tile.by_category, Category::kVertexInstances);
    uint64_t state = Spread(9736, kMk1Tiles, i);
    tile.vertex_data[0] = state;
    tile.vertex_data[1] = instances - state;
    tile.vertex_types.push_back({0, 28});  // 28 B x 1,216 = 34,048 B
  }
  report.tiles[0].vertex_types.push_back({1, 60});
  report.tiles[0].vertex_types.push_back({2, 16});
  // Move control code onto tile 0 until it holds the published maximum.
  uint64_t missing = 5780 - report.tiles[0].CategoryTotal();
  for (uint32_t i = 1; missing > 0; i = i % (kMk1Tiles - 1) + 1, --missing) {
    --At(report.tiles[i].by_category, Category::kControlCode);
    ++At(report.tiles[0].by_category, Category::kControlCode);
  }
  // Gaps: tile 0 at 49,184 B including gaps, the rest sharing the remainder.
  uint64_t others_including = 23878396 - 49184;
  for (uint32_t i = 0; i < kMk1Tiles; ++i) {
    TileMemory& tile = report.tiles[i];
    uint64_t including = i == 0 ? 49184 : Spread(others_including, kMk1Tiles - 1, i - 1);
    FinishTile(tile, including - tile.CategoryTotal());
  }
  return report;
}

// A tile of the imbalanced graph holding `excluding` bytes: stack and
// variables only.
inline TileMemory SmallTile(uint32_t id, uint64_t excluding, uint64_t gaps) {
  TileMemory tile;
  tile.tile = id;
  At(tile.by_category, Category::kStack) = std::min<uint64_t>(excluding, 3168);
  At(tile.by_category, Category::kVariables) = excluding - At(tile.by_category, Category::kStack);
  FinishTile(tile, gaps);
  return tile;
}

// The imbalanced convolutional graph of oom-mk1-excerpt.rep: histogram
// counts 20 / 1,192 / 2 / 1 / 1 and tile 0 exactly as its published block
// (seed 004, which also has the By Type row the corpus excerpt leaves out).
inline CompilationReport ImbalancedMk1Report() {
  CompilationReport report;
  report.target = Mk1Target();
  report.graph = GraphInfo{90000, 120000, 40000, 60};
  report.vertex_types = {
      {"poplin::ConvPartial1x1Out<float,float,true,false>"},
      {"poplar_rt::DstStridedCopy64BitMultiAccess"},
      {"popops::Reduce<popops::ReduceAdd,float,float,false,0>"},
      {"popops::ScaledAddSupervisor<float,float,true>"},
      {"poplar_rt::StridedCopyDA32"},
      {"poplar_rt::DstStridedCopyDA32"},
      {"popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::MULTIPLY,float>"}};
  TileMemory tile0;
  tile0.tile = 0;
  At(tile0.by_category, Category::kVariables) = 807658;
  At(tile0.by_category, Category::kHostExchangePacketHeaders) = 1160;
  At(tile0.by_category, Category::kStack) = 3168;
  At(tile0.by_category, Category::kVertexInstances) = 12074;
  At(tile0.by_category, Category::kCopyDescriptors) = 1385;
  At(tile0.by_category, Category::kVectorListDescriptors) = 960;
  At(tile0.by_category, Category::kVertexFieldData) = 7934;
  tile0.vertex_data = {4152, 10798, 7403, 0, 0};  // 22,353 B in all
  const uint64_t kTypeBytes[] = {6648, 2669, 2542, 1440, 1374, 1101, 752};
  for (uint32_t t = 0; t < std::size(kTypeBytes); ++t)
    tile0.vertex_types.push_back({t, kTypeBytes[t]});
  tile0.by_region[0] = {122880, 122880};
  tile0.by_region[1] = {131072, 131072};
  tile0.by_region[2] = {580387, 580387 + 77};  // 834,416 B including gaps
  tile0.not_always_live = 807658;
  tile0.always_live = 834339 - 807658;
  report.tiles.push_back(tile0);
  for (uint32_t i = 1; i < kMk1Tiles; ++i) {
    uint64_t kib = i == 1 ? 508 : i <= 3 ? 20 : i <= 23 ? 6 : 12;
    report.tiles.push_back(SmallTile(i, kib * 1024 + i % 7, 100));
  }
  return report;
}

// The execution summary of spec section 7 (an M2000 at 1,330 MHz).
inline ExecutionReport SampleExecution() {
  ExecutionReport execution;
  execution.programs = {"<anonymous>"};
  execution.total_cycles = 6681766;
  execution.clock_hz = 1.33e9;
  execution.tile_average_cycles = {3801.8, 3717.6, 8697.4, 0.0, 6663550.8, 1134.8};
  execution.cycles_by_vertex_type = {{"popops::Zero2d<float>", 14592, 17612544}};
  return execution;
}

// Splits text into lines (no trailing empty line for a final newline).
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

}  // namespace tileprof::report::testing
