#include "reports/schema.h"

#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
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

  // A scalar member under its key (report_keys.h): integers, doubles,
  // booleans, strings, categories by machine name; an unset optional is
  // left out.
  template <typename Member>
  void Field(std::string_view key, const Member& value) {
    if constexpr (OptionalValue<Member>::kOptional) {
      if (value) Field(key, *value);
    } else if constexpr (std::is_same_v<Member, bool>) {
      out_.Key(key);
      out_.Bool(value);
    } else if constexpr (std::is_integral_v<Member>) {
      KeyUint(key, value);
    } else if constexpr (std::is_same_v<Member, double>) {
      KeyDouble(key, value);
    } else if constexpr (std::is_same_v<Member, std::string>) {
      KeyStr(key, value);
    } else {
      static_assert(std::is_same_v<Member, Category>, "a key type the encoder does not know");
      KeyStr(key, CategoryMachineName(value));
    }
  }

  // The members of `value` in its table's order: each Key as a field,
  // each Slot by `slot(name)`. The enclosing object is the caller's.
  template <typename Record, typename SlotWriter>
  void Members(const Record& value, SlotWriter&& slot) {
    ForEachEntry<Record>([&](const auto& entry) {
      if constexpr (kIsKey<std::remove_cvref_t<decltype(entry)>>) {
        Field(entry.name, value.*entry.member);
      } else {
        slot(entry.name);
      }
    });
  }

  // A record whose table has only Keys, as an object.
  template <typename Record>
  void Object(const Record& value) {
    static_assert(!HasSlots<Record>(), "a record with Slots needs its slot writer");
    out_.BeginObject();
    Members(value, [](std::string_view) {});
    out_.EndObject();
  }

  // A list under `key`, each element by `write`; left out when empty.
  template <typename Range, typename Write>
  void List(std::string_view key, const Range& values, Write&& write) {
    if (values.empty()) return;
    out_.Key(key);
    out_.BeginArray(values.size());
    for (const auto& value : values) write(value);
    out_.EndArray();
  }
  template <typename Range>
  void Objects(std::string_view key, const Range& records) {
    List(key, records, [&](const auto& record) { Object(record); });
  }
  template <typename Range>
  void Uints(std::string_view key, const Range& values) {
    List(key, values, [&](uint64_t value) { out_.Uint(value); });
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
      Object(*report.graph);
    }
    Objects("vertexTypes", report.vertex_types);
    List("computeSets", report.compute_sets, [&](const ComputeSet& set) { ComputeSetObject(set); });
    List("programs", report.programs, [&](const Program& program) { ProgramObject(program); });
    Objects("operations", report.operations);
    Objects("computeSetOperations", report.compute_set_operations);
    Objects("liveness", report.liveness);
    Objects("livenessFullestTiles", report.liveness_fullest_tiles);
    Objects("livenessByIpu", report.liveness_by_ipu);
    Objects("operationTiles", report.operation_tiles);
    Objects("alwaysLiveVariables", report.always_live_variables);
    Objects("notAlwaysLiveVariables", report.not_always_live_variables);
    List("tiles", report.tiles, [&](const TileMemory& tile) { Tile(tile); });
    Objects("variables", report.variables);
    if (report.verbatim != VerbatimMemory{}) {
      out_.Key("verbatim");
      Verbatim(report.verbatim);
    }
    out_.EndObject();
  }

  void TargetObject(const Target& target) {
    out_.BeginObject();
    Members(target, [&](std::string_view slot) {
      assert(slot == "replication");
      if (!target.replication) return;
      out_.Key(slot);
      Object(*target.replication);
    });
    out_.EndObject();
  }

  void ComputeSetObject(const ComputeSet& set) {
    out_.BeginObject();
    Members(set, [&](std::string_view slot) {
      assert(slot == "vertices");
      Objects(slot, set.vertices);
    });
    out_.EndObject();
  }

  void ProgramObject(const Program& program) {
    out_.BeginObject();
    Members(program, [&](std::string_view slot) {
      assert(slot == "children");
      Uints(slot, program.children);
    });
    out_.EndObject();
  }

  void Tile(const TileMemory& tile) {
    out_.BeginObject();
    Members(tile, [&](std::string_view slot) {
      if (slot == "categories") {
        NamedCounts(slot, tile.by_category, CategoryNames());
      } else if (slot == "regions") {
        Regions(slot, tile.by_region);
      } else if (slot == "vertexData") {
        NamedCounts(slot, tile.vertex_data, kVertexDataNames);
      } else {
        assert(slot == "vertexTypes");
        Objects(slot, tile.vertex_types);
      }
    });
    out_.EndObject();
  }

  // The non-empty regions, keyed by region name.
  void Regions(std::string_view key, const std::array<RegionBytes, kNumRegions>& regions) {
    bool any_region = false;
    for (const RegionBytes& region : regions) any_region |= region != RegionBytes{};
    if (!any_region) return;
    out_.Key(key);
    out_.BeginObject();
    for (size_t i = 0; i < kNumRegions; ++i) {
      if (regions[i] == RegionBytes{}) continue;
      out_.Key(kRegionNames[i]);
      Object(regions[i]);
    }
    out_.EndObject();
  }

  // A printed Memory Usage block: each row only when it was printed
  // (MemoryRowsKnown), so its keys follow the known bits, not a table.
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
      for (const NamedBytes& type : usage.by_vertex_type) Object(type);
      out_.EndArray();
    }
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
      Members(by_tile, [&](std::string_view slot) {
        if (slot == "rows") {
          // Written even when empty: the reader requires it.
          out_.Key(slot);
          out_.BeginArray(by_tile.rows.size());
          for (const HistogramRow& row : by_tile.rows) Object(row);
          out_.EndArray();
        } else {
          const std::optional<TileMaximum>& maximum =
              slot == "maxIncludingGaps" ? by_tile.max_including_gaps : by_tile.max_excluding_gaps;
          assert(slot == "maxIncludingGaps" || slot == "maxExcludingGaps");
          if (!maximum) return;
          out_.Key(slot);
          Object(*maximum);
        }
      });
      out_.EndObject();
    }
    List("tileBlocks", verbatim.tile_blocks, [&](const TileUsage& block) {
      out_.BeginObject();
      Members(block, [&](std::string_view slot) {
        assert(slot == "usage");
        out_.Key(slot);
        Usage(block.usage);
      });
      out_.EndObject();
    });
    out_.EndObject();
  }

  void Execution(const ExecutionReport& execution) {
    out_.BeginObject();
    Members(execution, [&](std::string_view slot) {
      if (slot == "programs") {
        List(slot, execution.programs, [&](const std::string& program) { Str(program); });
      } else if (slot == "tileAverageCycles") {
        TileAverages(slot, execution.tile_average_cycles);
      } else if (slot == "cyclesByVertexType") {
        Objects(slot, execution.cycles_by_vertex_type);
      } else if (slot == "tileCycles") {
        Objects(slot, execution.tile_cycles);
      } else {
        assert(slot == "steps");
        Steps(slot, execution.steps);
      }
    });
    out_.EndObject();
  }

  void TileAverages(std::string_view key,
                    const std::array<std::optional<double>, kNumCycleKinds>& averages) {
    bool any_average = false;
    for (const auto& average : averages) any_average |= average.has_value();
    if (!any_average) return;
    out_.Key(key);
    out_.BeginObject();
    for (size_t i = 0; i < kNumCycleKinds; ++i)
      if (averages[i]) KeyDouble(kCycleKindNames[i], *averages[i]);
    out_.EndObject();
  }

  void Steps(std::string_view key, const std::vector<ExecutionStep>& steps) {
    List(key, steps, [&](const ExecutionStep& step) {
      out_.BeginObject();
      Members(step, [&](std::string_view slot) {
        assert(slot == "cyclesByTile");
        Uints(slot, step.cycles_by_tile);
      });
      out_.EndObject();
    });
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
