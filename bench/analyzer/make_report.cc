// Writes a synthetic compilation report of `--ipus` ipu2 IPUs (64 gives the
// design's largest system, 94,208 tiles) in all four formats: PREFIX.rep,
// PREFIX.json, PREFIX.cbor, PREFIX.db, and its per-tile archive PREFIX.a. Per-tile figures vary per
// tile (a fixed xorshift seed, so runs are reproducible) and every 9,973rd tile is far over its
// memory, so the histogram, top and oom views have work to do. The report passes
// report::CheckInvariants.
//
//   make_analyzer_report --ipus 64 --tiles-per-ipu 1472 bench64
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "analyzer/tile_archives.h"
#include "common/file.h"
#include "reports/cbor_codec.h"
#include "reports/invariants.h"
#include "reports/json_codec.h"
#include "reports/sqlite_profile.h"
#include "reports/text_writer.h"

namespace {

using namespace tileprof::report;  // NOLINT: a tool

uint64_t Next(uint64_t& state) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

int Usage() {
  fmt::print(stderr, "usage: make_analyzer_report [--ipus N] [--tiles-per-ipu N] PREFIX\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t ipus = 64;
  uint64_t tiles_per_ipu = 1472;
  std::string prefix;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--ipus" || arg == "--tiles-per-ipu") && i + 1 < argc) {
      uint64_t v = std::strtoull(argv[++i], nullptr, 10);
      if (v == 0) return Usage();
      (arg == "--ipus" ? static_cast<void>(ipus = static_cast<uint32_t>(v))
                       : static_cast<void>(tiles_per_ipu = v));
    } else if (prefix.empty() && !arg.starts_with("-")) {
      prefix = arg;
    } else {
      return Usage();
    }
  }
  if (prefix.empty()) return Usage();
  constexpr uint64_t kBytesPerTile = 638976;
  CompilationReport report;
  report.target = MakeTarget("ipu2", ipus, tiles_per_ipu, kBytesPerTile, 1.33e9);
  report.graph = GraphInfo{ipus * tiles_per_ipu * 12, ipus * tiles_per_ipu * 20, 4096, 96};
  report.vertex_types = {{"poplin::ConvPartial1x1Out<float,float,true,false>"},
                         {"popops::ScaledAddSupervisor<float,float,true>"},
                         {"poplar_rt::DstStridedCopy64BitMultiAccess"}};
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t total_tiles = report.target->total_tiles;
  report.tiles.resize(total_tiles);
  for (uint64_t i = 0; i < total_tiles; ++i) {
    TileMemory& t = report.tiles[i];
    t.tile = static_cast<uint32_t>(i);
    auto& c = t.by_category;
    uint64_t r = Next(state);
    At(c, Category::kVariables) = 60'000 + r % 240'000 + (i % 9973 == 17 ? 700'000 : 0);
    At(c, Category::kConstants) = (r >> 20) % 2'000;
    At(c, Category::kHostExchangePacketHeaders) = 16 * (1 + (r >> 12) % 8);
    At(c, Category::kStack) = 3'168;
    At(c, Category::kVertexInstances) = 4'000 + (r >> 24) % 8'000;
    At(c, Category::kCopyDescriptors) = (r >> 30) % 1'500;
    At(c, Category::kVectorListDescriptors) = (r >> 34) % 1'000;
    At(c, Category::kVertexFieldData) = (r >> 38) % 8'000;
    At(c, Category::kControlCode) = 20'000 + (r >> 40) % 10'000;
    At(c, Category::kVertexCode) = 8'000 + (r >> 44) % 4'000;
    At(c, Category::kInternalExchangeCode) = 5'000 + (r >> 48) % 20'000;
    At(c, Category::kHostExchangeCode) = 352;
    At(c, Category::kInstrumentationResults) = 8;
    uint64_t total = t.CategoryTotal();
    uint64_t over = total > kBytesPerTile ? total - kBytesPerTile : 0;
    uint64_t interleaved = std::min<uint64_t>(total - over, 131'072);
    t.by_region[0] = {total - over - interleaved, total - over - interleaved + (r >> 8) % 4'096};
    t.by_region[1] = {interleaved, interleaved};
    t.by_region[2] = {over, over};
    t.not_always_live = At(c, Category::kVariables) / 2;
    t.always_live = total - t.not_always_live;
    t.vertex_data = {At(c, Category::kVertexInstances), At(c, Category::kVertexFieldData),
                     At(c, Category::kCopyDescriptors), 0, At(c, Category::kVectorListDescriptors)};
    uint64_t vd = At(c, Category::kVertexInstances) + At(c, Category::kVertexFieldData) +
                  At(c, Category::kCopyDescriptors) + At(c, Category::kVectorListDescriptors);
    t.vertex_types = {{0, vd / 2}, {1, vd / 4}, {2, vd - vd / 2 - vd / 4}};
  }
  Violations violations = CheckInvariants(report);
  for (const std::string& v : violations) fmt::print(stderr, "invariant: {}\n", v);
  if (!violations.empty()) return 1;
  ReportDocument document;
  document.compilation = report;
  auto check = [](const tileprof::Status& status) {
    if (!status) {
      fmt::print(stderr, "make_analyzer_report: {}\n", status.error().message());
      std::exit(1);
    }
  };
  check(tileprof::WriteFileAtomic(prefix + ".rep", WriteTextReport(report, nullptr, {})));
  check(WriteJsonReportFile(prefix + ".json", document));
  check(WriteCborReportFile(prefix + ".cbor", document));
  check(WriteProfileDatabase(prefix + ".db", document));
  check(tileprof::analyzer::WriteReportArchive(prefix + ".a", report, prefix));
  return 0;
}
