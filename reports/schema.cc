#include "reports/schema.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "reports/schema_tables.h"

namespace tileprof::report::schema {
namespace {

using json = nlohmann::json;
using internal::CategoryNames;
using internal::kCycleKindNames;
using internal::kMaxDepth;
using internal::kRegionNames;
using internal::kVertexDataNames;

// The length of the valid UTF-8 sequence (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF) at text[i], or 0.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t code = 0;
  uint32_t min = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2, code = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, code = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, code = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

// ---------------------------------------------------------------------------
// Encoding.

class Encoder {
 public:
  explicit Encoder(Emitter& out) : out_(out) {}

  void Document(const ReportDocument& document) {
    out_.BeginObject();
    out_.Key("format");
    out_.String(kReportFormatName);
    out_.Key("version");
    out_.BeginObject();
    KeyUint("major", kFormatVersion.major);
    KeyUint("minor", kFormatVersion.minor);
    out_.EndObject();
    if (document.compilation) {
      out_.Key("compilation");
      Compilation(*document.compilation);
    }
    if (document.execution) {
      out_.Key("execution");
      Execution(*document.execution);
    }
    out_.EndObject();
  }

 private:
  void Str(std::string_view text) {
    if (IsValidUtf8(text)) {
      out_.String(text);
    } else {
      out_.String(ToValidUtf8(text));
    }
  }
  void KeyUint(std::string_view key, uint64_t value) {
    out_.Key(key);
    out_.Uint(value);
  }
  void KeyStr(std::string_view key, std::string_view value) {
    out_.Key(key);
    Str(value);
  }
  void KeyDouble(std::string_view key, double value) {
    out_.Key(key);
    out_.Double(value);
  }

  // An object keyed by enum names holding the non-zero entries (all of them
  // when `known` says which to write regardless of value).
  template <typename Array, typename Names>
  void NamedCounts(std::string_view key, const Array& values, const Names& names,
                   const std::bitset<std::tuple_size_v<Array>>* known = nullptr) {
    bool any = false;
    for (size_t i = 0; i < values.size(); ++i) any |= known ? known->test(i) : values[i] != 0;
    if (!any) return;
    out_.Key(key);
    out_.BeginObject();
    for (size_t i = 0; i < values.size(); ++i)
      if (known ? known->test(i) : values[i] != 0) KeyUint(names[i], values[i]);
    out_.EndObject();
  }

  void Compilation(const CompilationReport& report) {
    out_.BeginObject();
    if (report.target) {
      out_.Key("target");
      TargetObject(*report.target);
    }
    if (report.graph) {
      out_.Key("graph");
      out_.BeginObject();
      KeyUint("numVertices", report.graph->num_vertices);
      KeyUint("numEdges", report.graph->num_edges);
      KeyUint("numVariables", report.graph->num_variables);
      KeyUint("numComputeSets", report.graph->num_compute_sets);
      out_.EndObject();
    }
    if (!report.vertex_types.empty()) {
      out_.Key("vertexTypes");
      out_.BeginArray(report.vertex_types.size());
      for (const VertexType& type : report.vertex_types) {
        out_.BeginObject();
        KeyStr("name", type.name);
        out_.EndObject();
      }
      out_.EndArray();
    }
    if (!report.compute_sets.empty()) {
      out_.Key("computeSets");
      out_.BeginArray(report.compute_sets.size());
      for (const ComputeSet& set : report.compute_sets) ComputeSetObject(set);
      out_.EndArray();
    }
    if (!report.programs.empty()) {
      out_.Key("programs");
      out_.BeginArray(report.programs.size());
      for (const Program& program : report.programs) ProgramObject(program);
      out_.EndArray();
    }
    if (!report.tiles.empty()) {
      out_.Key("tiles");
      out_.BeginArray(report.tiles.size());
      for (const TileMemory& tile : report.tiles) Tile(tile);
      out_.EndArray();
    }
    if (!report.variables.empty()) {
      out_.Key("variables");
      out_.BeginArray(report.variables.size());
      for (const Variable& variable : report.variables) VariableObject(variable);
      out_.EndArray();
    }
    if (report.verbatim != VerbatimMemory{}) {
      out_.Key("verbatim");
      Verbatim(report.verbatim);
    }
    out_.EndObject();
  }

  void TargetObject(const Target& target) {
    out_.BeginObject();
    KeyStr("arch", target.arch);
    KeyUint("numIpus", target.num_ipus);
    KeyUint("tilesPerIpu", target.tiles_per_ipu);
    KeyUint("totalTiles", target.total_tiles);
    KeyUint("bytesPerTile", target.bytes_per_tile);
    KeyUint("totalMemory", target.total_memory);
    KeyDouble("clockFrequency", target.clock_hz);
    out_.Key("sizesRounded");
    out_.Bool(target.sizes_rounded);
    if (target.replication) {
      out_.Key("replication");
      out_.BeginObject();
      KeyUint("numReplicas", target.replication->num_replicas);
      KeyUint("ipusPerReplica", target.replication->ipus_per_replica);
      KeyUint("tilesPerReplica", target.replication->tiles_per_replica);
      KeyUint("memoryPerReplica", target.replication->memory_per_replica);
      out_.EndObject();
    }
    out_.EndObject();
  }

  void ComputeSetObject(const ComputeSet& set) {
    out_.BeginObject();
    KeyStr("name", set.name);
    if (!set.vertices.empty()) {
      out_.Key("vertices");
      out_.BeginArray(set.vertices.size());
      for (const ComputeSetVertices& vertices : set.vertices) {
        out_.BeginObject();
        KeyUint("type", vertices.type);
        KeyUint("count", vertices.count);
        out_.EndObject();
      }
      out_.EndArray();
    }
    out_.EndObject();
  }

  void ProgramObject(const Program& program) {
    out_.BeginObject();
    KeyStr("name", program.name);
    KeyStr("kind", program.kind);
    if (!program.children.empty()) {
      out_.Key("children");
      out_.BeginArray(program.children.size());
      for (uint32_t child : program.children) out_.Uint(child);
      out_.EndArray();
    }
    if (program.compute_set) KeyUint("computeSet", *program.compute_set);
    out_.EndObject();
  }

  void Tile(const TileMemory& tile) {
    out_.BeginObject();
    KeyUint("tile", tile.tile);
    NamedCounts("categories", tile.by_category, CategoryNames());
    bool any_region = false;
    for (const RegionBytes& region : tile.by_region) any_region |= region != RegionBytes{};
    if (any_region) {
      out_.Key("regions");
      out_.BeginObject();
      for (size_t i = 0; i < kNumRegions; ++i) {
        const RegionBytes& region = tile.by_region[i];
        if (region == RegionBytes{}) continue;
        out_.Key(kRegionNames[i]);
        out_.BeginObject();
        KeyUint("excludingGaps", region.excluding_gaps);
        KeyUint("includingGaps", region.including_gaps);
        out_.EndObject();
      }
      out_.EndObject();
    }
    KeyUint("alwaysLiveBytes", tile.always_live);
    KeyUint("notAlwaysLiveBytes", tile.not_always_live);
    NamedCounts("vertexData", tile.vertex_data, kVertexDataNames);
    if (!tile.vertex_types.empty()) {
      out_.Key("vertexTypes");
      out_.BeginArray(tile.vertex_types.size());
      for (const VertexTypeBytes& type : tile.vertex_types) {
        out_.BeginObject();
        KeyUint("type", type.type);
        KeyUint("bytes", type.bytes);
        out_.EndObject();
      }
      out_.EndArray();
    }
    out_.EndObject();
  }

  void VariableObject(const Variable& variable) {
    out_.BeginObject();
    KeyStr("name", variable.name);
    KeyUint("tile", variable.tile);
    KeyUint("bytes", variable.bytes);
    KeyStr("category", CategoryMachineName(variable.category));
    out_.Key("alwaysLive");
    out_.Bool(variable.always_live);
    if (variable.offset) KeyUint("offset", *variable.offset);
    out_.EndObject();
  }

  void Usage(const MemoryUsage& usage) {
    const MemoryRowsKnown& known = usage.known;
    out_.BeginObject();
    if (known.including_gaps) KeyUint("includingGaps", usage.including_gaps);
    NamedCounts("regions", usage.by_region, kRegionNames, &known.regions);
    NamedCounts("categories", usage.by_category, CategoryNames(), &known.categories);
    if (known.vertex_data) KeyUint("vertexData", usage.vertex_data);
    NamedCounts("vertexDataCategories", usage.vertex_data_by_category, kVertexDataNames,
                &known.vertex_data_categories);
    if (known.by_vertex_type) {
      out_.Key("vertexTypes");
      out_.BeginArray(usage.by_vertex_type.size());
      for (const NamedBytes& type : usage.by_vertex_type) {
        out_.BeginObject();
        KeyStr("name", type.name);
        KeyUint("bytes", type.bytes);
        out_.EndObject();
      }
      out_.EndArray();
    }
    out_.EndObject();
  }

  void Maximum(std::string_view key, const std::optional<TileMaximum>& maximum) {
    if (!maximum) return;
    out_.Key(key);
    out_.BeginObject();
    KeyUint("bytes", maximum->bytes);
    KeyUint("tile", maximum->tile);
    out_.EndObject();
  }

  void Verbatim(const VerbatimMemory& verbatim) {
    out_.BeginObject();
    if (verbatim.total) {
      out_.Key("total");
      Usage(*verbatim.total);
    }
    if (verbatim.by_tile) {
      const ByTileSummary& by_tile = *verbatim.by_tile;
      out_.Key("byTile");
      out_.BeginObject();
      out_.Key("rows");
      out_.BeginArray(by_tile.rows.size());
      for (const HistogramRow& row : by_tile.rows) {
        out_.BeginObject();
        KeyUint("loKib", row.lo_kib);
        KeyUint("hiKib", row.hi_kib);
        KeyUint("tiles", row.tiles);
        out_.EndObject();
      }
      out_.EndArray();
      Maximum("maxIncludingGaps", by_tile.max_including_gaps);
      Maximum("maxExcludingGaps", by_tile.max_excluding_gaps);
      if (by_tile.tiles_out_of_memory) KeyUint("tilesOutOfMemory", *by_tile.tiles_out_of_memory);
      out_.EndObject();
    }
    if (!verbatim.tile_blocks.empty()) {
      out_.Key("tileBlocks");
      out_.BeginArray(verbatim.tile_blocks.size());
      for (const TileUsage& block : verbatim.tile_blocks) {
        out_.BeginObject();
        KeyUint("tile", block.tile);
        out_.Key("usage");
        Usage(block.usage);
        out_.EndObject();
      }
      out_.EndArray();
    }
    out_.EndObject();
  }

  void Execution(const ExecutionReport& execution) {
    out_.BeginObject();
    if (!execution.programs.empty()) {
      out_.Key("programs");
      out_.BeginArray(execution.programs.size());
      for (const std::string& program : execution.programs) Str(program);
      out_.EndArray();
    }
    KeyUint("totalCycles", execution.total_cycles);
    KeyDouble("clockFrequency", execution.clock_hz);
    bool any_average = false;
    for (const auto& average : execution.tile_average_cycles) any_average |= average.has_value();
    if (any_average) {
      out_.Key("tileAverageCycles");
      out_.BeginObject();
      for (size_t i = 0; i < kNumCycleKinds; ++i)
        if (execution.tile_average_cycles[i])
          KeyDouble(kCycleKindNames[i], *execution.tile_average_cycles[i]);
      out_.EndObject();
    }
    if (!execution.cycles_by_vertex_type.empty()) {
      out_.Key("cyclesByVertexType");
      out_.BeginArray(execution.cycles_by_vertex_type.size());
      for (const VertexTypeCycles& type : execution.cycles_by_vertex_type) {
        out_.BeginObject();
        KeyStr("name", type.name);
        KeyUint("instances", type.instances);
        KeyUint("cycles", type.cycles);
        out_.EndObject();
      }
      out_.EndArray();
    }
    if (!execution.steps.empty()) {
      out_.Key("steps");
      out_.BeginArray(execution.steps.size());
      for (const ExecutionStep& step : execution.steps) {
        out_.BeginObject();
        KeyStr("program", step.program);
        KeyUint("cycles", step.cycles);
        if (!step.cycles_by_tile.empty()) {
          out_.Key("cyclesByTile");
          out_.BeginArray(step.cycles_by_tile.size());
          for (uint64_t cycles : step.cycles_by_tile) out_.Uint(cycles);
          out_.EndArray();
        }
        out_.EndObject();
      }
      out_.EndArray();
    }
    out_.EndObject();
  }

  Emitter& out_;
};

}  // namespace

std::string_view RegionName(Region region) { return kRegionNames[static_cast<size_t>(region)]; }
std::string_view VertexDataCategoryName(VertexDataCategory category) {
  return kVertexDataNames[static_cast<size_t>(category)];
}
std::string_view CycleKindName(CycleKind kind) {
  return kCycleKindNames[static_cast<size_t>(kind)];
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    // ASCII, all that keys and most names are, without the call.
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ToValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

void Encode(const ReportDocument& document, Emitter& out) { Encoder(out).Document(document); }

}  // namespace tileprof::report::schema
