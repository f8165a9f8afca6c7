// Every key of the report-key tables (reports/report_keys.h, the tables in
// report.h and histogram.h) round-trips through every structured format:
// a document whose every key holds a value other than its default is
// written and read back as JSON, as CBOR and as a SQLite profile, and comes
// back equal. A key that a writer left out, or a reader did not read, would
// come back as its default. The text report is Poplar's layout, which
// prints only some of these keys, and is not among the formats here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/report.h"
#include "reports/sqlite_profile.h"

namespace tileprof::report {
namespace {

// Sets every Key of `record` to a value unlike its default and unlike any
// other key's, counting up from `next`.
template <typename Record>
void FillKeys(Record& record, uint64_t& next) {
  ForEachKey<Record>([&](const auto& key) {
    using Member = MemberOf<decltype(key)>;
    using Value = typename OptionalValue<Member>::type;
    const uint64_t n = ++next;
    auto& member = record.*key.member;
    if constexpr (std::is_same_v<Value, bool>) {
      member = true;
    } else if constexpr (std::is_same_v<Value, uint32_t>) {
      member = static_cast<uint32_t>(1000 + n);
    } else if constexpr (std::is_same_v<Value, uint64_t>) {
      member = (uint64_t{1} << 40) + n;
    } else if constexpr (std::is_same_v<Value, double>) {
      member = static_cast<double>(n) + 0.25;
    } else if constexpr (std::is_same_v<Value, std::string>) {
      member = "value of " + std::string(key.name) + " " + std::to_string(n);
    } else {
      static_assert(std::is_same_v<Value, Category>);
      member = static_cast<Category>(1 + n % (kNumCategories - 1));
    }
  });
}

// Fails for each key of `record` that holds its default (it would not
// show a key that a format drops).
template <typename Record>
void ExpectNoDefaultKeys(const Record& record, const std::string& where) {
  ForEachKey<Record>([&](const auto& key) {
    using Member = MemberOf<decltype(key)>;
    EXPECT_NE(record.*key.member, Member{}) << where << "." << key.name << " is its default";
  });
}

template <typename Record>
Record Filled(uint64_t& next) {
  Record record;
  FillKeys(record, next);
  ExpectNoDefaultKeys(record, typeid(Record).name());
  return record;
}

// Every record with a key table, each key filled, and the structure that
// holds them: references (vertex types, compute sets, programs) point at
// records that exist, as the readers check.
ReportDocument EveryKey() {
  uint64_t next = 0;
  CompilationReport compilation;
  Target& target = compilation.target.emplace(Filled<Target>(next));
  target.replication = Filled<Replication>(next);
  compilation.graph = Filled<GraphInfo>(next);
  for (int i = 0; i < 3; ++i) compilation.vertex_types.push_back(Filled<VertexType>(next));
  for (int i = 0; i < 2; ++i) {
    ComputeSet& set = compilation.compute_sets.emplace_back(Filled<ComputeSet>(next));
    ComputeSetVertices& vertices = set.vertices.emplace_back(Filled<ComputeSetVertices>(next));
    vertices.type = 2;
  }
  for (int i = 0; i < 2; ++i) {
    Program& program = compilation.programs.emplace_back(Filled<Program>(next));
    program.compute_set = 1;
    program.children = {1};
  }
  compilation.operations.push_back(Filled<Operation>(next));
  compilation.compute_set_operations.push_back(Filled<ComputeSetOperation>(next));
  compilation.compute_set_operations.back().compute_set = 1;
  compilation.compute_set_operations.back().operation = 0;
  for (int i = 0; i < 2; ++i) {
    compilation.liveness.push_back(Filled<LivenessStep>(next));
    compilation.liveness.back().program = 1;
  }
  for (int i = 0; i < 2; ++i) {
    compilation.liveness_fullest_tiles.push_back(Filled<StepTile>(next));
    compilation.liveness_fullest_tiles.back().tile = 10;  // a tile of the report
  }
  for (int i = 0; i < 2; ++i) {
    compilation.liveness_by_ipu.push_back(Filled<IpuStep>(next));
    compilation.liveness_by_ipu.back().step = static_cast<uint64_t>(i);  // a step that exists
  }
  compilation.operation_tiles.push_back(Filled<OperationTiles>(next));
  compilation.operation_tiles.back().operation = 0;
  compilation.operation_tiles.back().first_tile = 10;
  compilation.operation_tiles.back().last_tile = 11;
  compilation.always_live_variables.push_back(Filled<NamedBytes>(next));
  for (int i = 0; i < 2; ++i) {
    LiveVariable& live =
        compilation.not_always_live_variables.emplace_back(Filled<LiveVariable>(next));
    live.first_step = 0;  // steps that exist
    live.last_step = static_cast<uint64_t>(i);
  }
  for (int i = 0; i < 2; ++i) {
    TileMemory& tile = compilation.tiles.emplace_back(Filled<TileMemory>(next));
    tile.tile = static_cast<uint32_t>(10 + i);  // ascending, as the database requires
    tile.by_category[3] = 7;
    tile.by_region[1] = Filled<RegionBytes>(next);
    tile.vertex_data[2] = 9;
    tile.vertex_types.push_back(Filled<VertexTypeBytes>(next));
    tile.vertex_types.back().type = 1;
  }
  compilation.variables.push_back(Filled<Variable>(next));
  ByTileSummary& by_tile = compilation.verbatim.by_tile.emplace(Filled<ByTileSummary>(next));
  by_tile.rows.push_back(Filled<HistogramRow>(next));
  by_tile.max_including_gaps = Filled<TileMaximum>(next);
  by_tile.max_excluding_gaps = Filled<TileMaximum>(next);
  TileUsage& block = compilation.verbatim.tile_blocks.emplace_back(Filled<TileUsage>(next));
  block.usage.known = MemoryRowsKnown::None();
  block.usage.known.by_vertex_type = true;
  block.usage.by_vertex_type.push_back(Filled<NamedBytes>(next));

  ExecutionReport execution = Filled<ExecutionReport>(next);
  execution.programs = {"main"};
  execution.cycles_by_vertex_type.push_back(Filled<VertexTypeCycles>(next));
  execution.steps.push_back(Filled<ExecutionStep>(next));
  execution.steps.back().cycles_by_tile = {5, 0, 6};
  execution.tile_cycles.push_back(Filled<TileCycleSplit>(next));

  ReportDocument document;
  document.compilation = std::move(compilation);
  document.execution = std::move(execution);
  return document;
}

TEST(ReportKeys, EveryKeyRoundTripsThroughJson) {
  const ReportDocument document = EveryKey();
  const std::string json = WriteJsonReport(document);
  Expected<ReportDocument> back = ReadJsonReport(json, "keys.json");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, document);
}

TEST(ReportKeys, EveryKeyRoundTripsThroughCbor) {
  const ReportDocument document = EveryKey();
  const std::string cbor = WriteCborReport(document);
  Expected<ReportDocument> back =
      ReadCborReport({reinterpret_cast<const uint8_t*>(cbor.data()), cbor.size()}, "keys.cbor");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, document);
}

TEST(ReportKeys, EveryKeyRoundTripsThroughSqlite) {
  const ReportDocument document = EveryKey();
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tileprof-report-keys-" + std::to_string(::getpid()) + ".db"))
                               .string();
  Status written = WriteProfileDatabase(path, document);
  ASSERT_TRUE(written) << written.error().message();
  Expected<ReportDocument> back = ReadProfileDatabase(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, document);
}

// A missing required key is named; a missing defaulted one reads as its
// default: the Presence of the table is what the reader applies.
TEST(ReportKeys, PresenceDecidesWhatAReaderRequires) {
  ReportDocument document;
  document.compilation.emplace().variables.push_back(Variable{"v", 1, 8});
  std::string json = WriteJsonReport(document);
  const std::string always_live = R"(,"alwaysLive":false)";
  ASSERT_NE(json.find(always_live), std::string::npos) << json;
  std::string without_default = json;
  without_default.erase(json.find(always_live), always_live.size());
  Expected<ReportDocument> back = ReadJsonReport(without_default, "d.json");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, document);
  std::string without_required = json;
  without_required.replace(json.find(R"("bytes")"), 7, R"("bytez")");
  back = ReadJsonReport(without_required, "r.json");
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().message(), "r.json: compilation.variables[0].bytes: missing");
}

}  // namespace
}  // namespace tileprof::report
