// Decoding of the report schema (docs/report-schema.md): the checked
// decoder of one value with its path for messages, and the streaming
// DocumentBuilder that JSON (SAX) and CBOR readers feed.
#include "reports/schema.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "reports/schema_tables.h"
#include "reports/schema_tile_decoder.h"
#include "reports/schema_variable_decoder.h"

namespace tileprof::report::schema {
namespace {

using json = nlohmann::json;
using internal::CategoryNames;
using internal::kCycleKindNames;
using internal::kMaxDepth;
using internal::kRegionNames;
using internal::kVertexDataNames;

// ---------------------------------------------------------------------------
// Decoding.

// A place in the document, built on the stack as decoding descends and
// rendered only when an error needs it.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  size_t index = 0;
  bool is_index = false;

  Path Key(std::string_view k) const { return Path{this, k, 0, false}; }
  Path Index(size_t i) const { return Path{this, {}, i, true}; }

  std::string Render() const {
    if (!parent) return std::string(key);
    std::string out = parent->Render();
    if (is_index) {
      fmt::format_to(std::back_inserter(out), "[{}]", index);
    } else {
      if (!out.empty()) out += '.';
      out += key;
    }
    return out;
  }
};

const json* Find(const json& object, std::string_view key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// Decodes values into structs, keeping the first error: callers check ok()
// once per record instead of after every field.
class Decoder {
 public:
  bool ok() const { return !error_.has_value(); }
  const std::optional<Error>& error() const { return error_; }

  void Fail(const Path& path, std::string_view message) {
    if (error_) return;
    std::string where = path.Render();
    error_ = Error(fmt::format("{}: {}", where.empty() ? "top level" : where, message));
  }

  bool IsObject(const json& value, const Path& path) {
    if (value.is_object()) return true;
    Fail(path, "expected an object");
    return false;
  }

  uint64_t Uint(const json& value, const Path& path) {
    if (value.is_number_unsigned()) return value.get<uint64_t>();
    Fail(path, "expected an unsigned integer");
    return 0;
  }
  uint32_t Uint32(const json& value, const Path& path) {
    uint64_t wide = Uint(value, path);
    if (wide > std::numeric_limits<uint32_t>::max()) {
      Fail(path, "expected an unsigned 32-bit integer");
      return 0;
    }
    return static_cast<uint32_t>(wide);
  }
  double Double(const json& value, const Path& path) {
    if (value.is_number()) return value.get<double>();
    if (value.is_string()) {
      const auto& text = value.get_ref<const std::string&>();
      if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
      if (text == "Infinity") return std::numeric_limits<double>::infinity();
      if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
    }
    Fail(path, "expected a number");
    return 0;
  }
  bool Bool(const json& value, const Path& path) {
    if (value.is_boolean()) return value.get<bool>();
    Fail(path, "expected true or false");
    return false;
  }
  std::string String(const json& value, const Path& path) {
    if (value.is_string()) return value.get<std::string>();
    Fail(path, "expected a string");
    return {};
  }

  const json* Required(const json& object, const Path& path, std::string_view key) {
    const json* member = Find(object, key);
    if (!member) Fail(path.Key(key), "missing");
    return member;
  }
  uint32_t RequiredUint32(const json& object, const Path& path, std::string_view key) {
    const json* member = Required(object, path, key);
    return member ? Uint32(*member, path.Key(key)) : 0;
  }

  // The value of a key (report_keys.h) of type T.
  template <typename T>
  T Get(const json& value, const Path& path) {
    if constexpr (std::is_same_v<T, bool>) {
      return Bool(value, path);
    } else if constexpr (std::is_same_v<T, uint32_t>) {
      return Uint32(value, path);
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      return Uint(value, path);
    } else if constexpr (std::is_same_v<T, double>) {
      return Double(value, path);
    } else if constexpr (std::is_same_v<T, std::string>) {
      return String(value, path);
    } else {
      static_assert(std::is_same_v<T, Category>, "a key type the decoder does not know");
      std::string name = String(value, path);
      if (!ok()) return Category{};
      if (std::optional<Category> category = CategoryFromMachineName(name)) return *category;
      Fail(path, fmt::format("unknown category \"{}\"", name));
      return Category{};
    }
  }

  // The member of `value` that `key` names, from `object`: a required key
  // must be there; a defaulted or std::optional one may be missing.
  template <typename Record, typename Member>
  void Field(const json& object, const Path& path, const Key<Record, Member>& key, Record& value) {
    using Value = typename OptionalValue<Member>::type;
    const bool required = key.presence == Presence::kRequired && !OptionalValue<Member>::kOptional;
    const json* member = required ? Required(object, path, key.name) : Find(object, key.name);
    if (member) value.*key.member = Get<Value>(*member, path.Key(key.name));
  }

  // The members of `value` from `object` in its table's order: each Key by
  // Field, each Slot by `slot(name)`.
  template <typename Record, typename SlotReader>
  void Members(const json& object, const Path& path, Record& value, SlotReader&& slot) {
    ForEachEntry<Record>([&](const auto& entry) {
      if constexpr (kIsKey<std::remove_cvref_t<decltype(entry)>>) {
        Field(object, path, entry, value);
      } else {
        slot(entry.name);
      }
    });
  }

  // A record whose table has only Keys, from an object.
  template <typename Record>
  Record Object(const json& value, const Path& path) {
    static_assert(!HasSlots<Record>(), "a record with Slots needs its slot reader");
    Record record;
    if (IsObject(value, path)) Members(value, path, record, [](std::string_view) {});
    return record;
  }

  // Calls f(element, path) for each element of an array member; absent
  // means empty.
  template <typename F>
  void Elements(const json& object, const Path& path, std::string_view key, F&& f) {
    const json* member = Find(object, key);
    if (!member) return;
    Path array_path = path.Key(key);
    if (!member->is_array()) return Fail(array_path, "expected an array");
    for (size_t i = 0; i < member->size() && ok(); ++i) f((*member)[i], array_path.Index(i));
  }

  // Calls f(index, value, path) for each member of an object keyed by enum
  // names; an unknown name is an error, since its bytes would be dropped.
  template <typename F>
  void Named(const json& object, const Path& path, std::string_view key,
             std::span<const std::string_view> names, std::string_view what, F&& f) {
    const json* member = Find(object, key);
    if (!member) return;
    Path object_path = path.Key(key);
    if (!IsObject(*member, object_path)) return;
    for (auto it = member->begin(); it != member->end() && ok(); ++it) {
      const std::string& name = it.key();
      size_t index = 0;
      while (index < names.size() && names[index] != name) ++index;
      Path member_path = object_path.Key(name);
      if (index == names.size()) return Fail(member_path, fmt::format("unknown {}", what));
      f(index, it.value(), member_path);
    }
  }

 private:
  std::optional<Error> error_;
};

Target DecodeTarget(Decoder& d, const json& value, const Path& path) {
  Target target;
  if (!d.IsObject(value, path)) return target;
  d.Members(value, path, target, [&](std::string_view slot) {
    if (const json* replication = Find(value, slot))
      target.replication = d.Object<Replication>(*replication, path.Key(slot));
  });
  return target;
}

ComputeSet DecodeComputeSet(Decoder& d, const json& value, const Path& path) {
  ComputeSet set;
  if (!d.IsObject(value, path)) return set;
  d.Members(value, path, set, [&](std::string_view slot) {
    d.Elements(value, path, slot, [&](const json& element, const Path& p) {
      set.vertices.push_back(d.Object<ComputeSetVertices>(element, p));
    });
  });
  return set;
}

Program DecodeProgram(Decoder& d, const json& value, const Path& path) {
  Program program;
  if (!d.IsObject(value, path)) return program;
  d.Members(value, path, program, [&](std::string_view slot) {
    d.Elements(value, path, slot, [&](const json& element, const Path& p) {
      program.children.push_back(d.Uint32(element, p));
    });
  });
  return program;
}

TileMemory DecodeTile(Decoder& d, const json& value, const Path& path) {
  TileMemory tile;
  if (!d.IsObject(value, path)) return tile;
  d.Members(value, path, tile, [&](std::string_view slot) {
    if (slot == "categories") {
      d.Named(value, path, slot, CategoryNames(), "category",
              [&](size_t i, const json& v, const Path& p) { tile.by_category[i] = d.Uint(v, p); });
    } else if (slot == "regions") {
      d.Named(value, path, slot, kRegionNames, "region",
              [&](size_t i, const json& v, const Path& p) {
                tile.by_region[i] = d.Object<RegionBytes>(v, p);
              });
    } else if (slot == "vertexData") {
      d.Named(value, path, slot, kVertexDataNames, "vertex data category",
              [&](size_t i, const json& v, const Path& p) { tile.vertex_data[i] = d.Uint(v, p); });
    } else {
      d.Elements(value, path, slot, [&](const json& element, const Path& p) {
        tile.vertex_types.push_back(d.Object<VertexTypeBytes>(element, p));
      });
    }
  });
  return tile;
}

// Absent rows are unknown here, not zero: a text report may print a subset,
// so its keys follow MemoryRowsKnown, not a table.
MemoryUsage DecodeUsage(Decoder& d, const json& value, const Path& path) {
  MemoryUsage usage;
  usage.known = MemoryRowsKnown::None();
  if (!d.IsObject(value, path)) return usage;
  if (const json* including = Find(value, "includingGaps")) {
    usage.including_gaps = d.Uint(*including, path.Key("includingGaps"));
    usage.known.including_gaps = true;
  }
  d.Named(value, path, "regions", kRegionNames, "region",
          [&](size_t i, const json& v, const Path& p) {
            usage.by_region[i] = d.Uint(v, p);
            usage.known.regions.set(i);
          });
  d.Named(value, path, "categories", CategoryNames(), "category",
          [&](size_t i, const json& v, const Path& p) {
            usage.by_category[i] = d.Uint(v, p);
            usage.known.categories.set(i);
          });
  if (const json* vertex_data = Find(value, "vertexData")) {
    usage.vertex_data = d.Uint(*vertex_data, path.Key("vertexData"));
    usage.known.vertex_data = true;
  }
  d.Named(value, path, "vertexDataCategories", kVertexDataNames, "vertex data category",
          [&](size_t i, const json& v, const Path& p) {
            usage.vertex_data_by_category[i] = d.Uint(v, p);
            usage.known.vertex_data_categories.set(i);
          });
  if (Find(value, "vertexTypes")) {
    usage.known.by_vertex_type = true;
    d.Elements(value, path, "vertexTypes", [&](const json& element, const Path& p) {
      usage.by_vertex_type.push_back(d.Object<NamedBytes>(element, p));
    });
  }
  return usage;
}

ByTileSummary DecodeByTile(Decoder& d, const json& value, const Path& path) {
  ByTileSummary summary;
  d.Members(value, path, summary, [&](std::string_view slot) {
    if (slot == "rows") {
      if (!d.Required(value, path, slot)) return;
      d.Elements(value, path, slot, [&](const json& element, const Path& p) {
        summary.rows.push_back(d.Object<HistogramRow>(element, p));
      });
      return;
    }
    const json* maximum = Find(value, slot);
    if (!maximum) return;
    Path p = path.Key(slot);
    if (!d.IsObject(*maximum, p)) return;
    (slot == "maxIncludingGaps" ? summary.max_including_gaps : summary.max_excluding_gaps) =
        d.Object<TileMaximum>(*maximum, p);
  });
  return summary;
}

VerbatimMemory DecodeVerbatim(Decoder& d, const json& value, const Path& path) {
  VerbatimMemory verbatim;
  if (!d.IsObject(value, path)) return verbatim;
  if (const json* total = Find(value, "total"))
    verbatim.total = DecodeUsage(d, *total, path.Key("total"));
  if (const json* by_tile = Find(value, "byTile")) {
    Path p = path.Key("byTile");
    if (d.IsObject(*by_tile, p)) verbatim.by_tile = DecodeByTile(d, *by_tile, p);
  }
  d.Elements(value, path, "tileBlocks", [&](const json& element, const Path& p) {
    if (!d.IsObject(element, p)) return;
    TileUsage block;
    d.Members(element, p, block, [&](std::string_view slot) {
      if (const json* usage = d.Required(element, p, slot))
        block.usage = DecodeUsage(d, *usage, p.Key(slot));
    });
    verbatim.tile_blocks.push_back(std::move(block));
  });
  return verbatim;
}

ExecutionStep DecodeStep(Decoder& d, const json& value, const Path& path) {
  ExecutionStep step;
  if (!d.IsObject(value, path)) return step;
  d.Members(value, path, step, [&](std::string_view slot) {
    d.Elements(value, path, slot, [&](const json& element, const Path& p) {
      step.cycles_by_tile.push_back(d.Uint(element, p));
    });
  });
  return step;
}

// The arrays decoded element by element as they arrive.
enum class Stream : uint8_t {
  kNone,
  kVertexTypes,
  kComputeSets,
  kPrograms,
  kOperations,
  kComputeSetOperations,
  kLiveness,
  kFullestTiles,
  kLivenessByIpu,
  kOperationTiles,
  kAlwaysLive,
  kLiveVariables,
  kTiles,
  kVariables,
  kSteps,
};

struct StreamInfo {
  Stream stream;
  std::string_view section;
  std::string_view key;
};
constexpr StreamInfo kStreams[] = {
    {Stream::kVertexTypes, "compilation", "vertexTypes"},
    {Stream::kComputeSets, "compilation", "computeSets"},
    {Stream::kPrograms, "compilation", "programs"},
    {Stream::kOperations, "compilation", "operations"},
    {Stream::kComputeSetOperations, "compilation", "computeSetOperations"},
    {Stream::kLiveness, "compilation", "liveness"},
    {Stream::kFullestTiles, "compilation", "livenessFullestTiles"},
    {Stream::kLivenessByIpu, "compilation", "livenessByIpu"},
    {Stream::kOperationTiles, "compilation", "operationTiles"},
    {Stream::kAlwaysLive, "compilation", "alwaysLiveVariables"},
    {Stream::kLiveVariables, "compilation", "notAlwaysLiveVariables"},
    {Stream::kTiles, "compilation", "tiles"},
    {Stream::kVariables, "compilation", "variables"},
    {Stream::kSteps, "execution", "steps"},
};

const StreamInfo& InfoOf(Stream stream) {
  for (const StreamInfo& info : kStreams)
    if (info.stream == stream) return info;
  return kStreams[0];  // unreachable: every Stream but kNone is listed
}

// Index references are checked once everything is read, because a
// key-sorted file has "tiles" before "vertexTypes".
void CheckReferences(Decoder& d, const CompilationReport& report) {
  Path root;
  Path compilation = root.Key("compilation");
  auto check = [&](uint64_t index, size_t size, std::string_view what, const Path& p) {
    if (index >= size)
      d.Fail(p, fmt::format("{} {} does not exist (the report has {})", what, index, size));
  };
  size_t num_types = report.vertex_types.size();
  Path tiles = compilation.Key("tiles");
  for (size_t i = 0; i < report.tiles.size() && d.ok(); ++i) {
    Path tile = tiles.Index(i);
    Path types = tile.Key("vertexTypes");
    const auto& list = report.tiles[i].vertex_types;
    for (size_t j = 0; j < list.size() && d.ok(); ++j)
      check(list[j].type, num_types, "vertex type", types.Index(j).Key("type"));
  }
  Path sets = compilation.Key("computeSets");
  for (size_t i = 0; i < report.compute_sets.size() && d.ok(); ++i) {
    Path set = sets.Index(i);  // named: a Path points at its parent
    Path vertices = set.Key("vertices");
    const auto& list = report.compute_sets[i].vertices;
    for (size_t j = 0; j < list.size() && d.ok(); ++j)
      check(list[j].type, num_types, "vertex type", vertices.Index(j).Key("type"));
  }
  Path programs = compilation.Key("programs");
  for (size_t i = 0; i < report.programs.size() && d.ok(); ++i) {
    const Program& program = report.programs[i];
    Path p = programs.Index(i);
    Path children = p.Key("children");
    for (size_t j = 0; j < program.children.size() && d.ok(); ++j)
      check(program.children[j], report.programs.size(), "program", children.Index(j));
    if (program.compute_set)
      check(*program.compute_set, report.compute_sets.size(), "compute set", p.Key("computeSet"));
  }
  Path liveness = compilation.Key("liveness");
  for (size_t i = 0; i < report.liveness.size() && d.ok(); ++i) {
    Path step = liveness.Index(i);
    check(report.liveness[i].program, report.programs.size(), "program", step.Key("program"));
  }
  Path made_by = compilation.Key("computeSetOperations");
  for (size_t i = 0; i < report.compute_set_operations.size() && d.ok(); ++i) {
    const ComputeSetOperation& link = report.compute_set_operations[i];
    check(link.compute_set, report.compute_sets.size(), "compute set",
          made_by.Index(i).Key("computeSet"));
    check(link.operation, report.operations.size(), "operation", made_by.Index(i).Key("operation"));
  }
  Path fullest = compilation.Key("livenessFullestTiles");
  if (d.ok() && !report.liveness_fullest_tiles.empty() &&
      report.liveness_fullest_tiles.size() != report.liveness.size())
    d.Fail(fullest, fmt::format("{} entries for {} liveness steps",
                                report.liveness_fullest_tiles.size(), report.liveness.size()));
  Path by_ipu = compilation.Key("livenessByIpu");
  for (size_t i = 0; i < report.liveness_by_ipu.size() && d.ok(); ++i)
    check(report.liveness_by_ipu[i].step, report.liveness.size(), "liveness step",
          by_ipu.Index(i).Key("step"));
  Path op_tiles = compilation.Key("operationTiles");
  for (size_t i = 0; i < report.operation_tiles.size() && d.ok(); ++i) {
    const OperationTiles& run = report.operation_tiles[i];
    check(run.operation, report.operations.size(), "operation", op_tiles.Index(i).Key("operation"));
    if (d.ok() && run.first_tile > run.last_tile)
      d.Fail(op_tiles.Index(i).Key("lastTile"),
             fmt::format("{} is before firstTile {}", run.last_tile, run.first_tile));
  }
  Path live = compilation.Key("notAlwaysLiveVariables");
  for (size_t i = 0; i < report.not_always_live_variables.size() && d.ok(); ++i) {
    const LiveVariable& v = report.not_always_live_variables[i];
    Path entry = live.Index(i);
    check(v.last_step, report.liveness.size(), "liveness step", entry.Key("lastStep"));
    if (d.ok() && v.first_step > v.last_step)
      d.Fail(entry.Key("firstStep"),
             fmt::format("first step {} is after the last, {}", v.first_step, v.last_step));
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// DocumentBuilder.

struct DocumentBuilder::State {
  // An open container. Objects and arrays outside the streamed arrays are
  // built as trees; a streamed array keeps no value, only its position.
  struct Frame {
    json value;
    Stream stream = Stream::kNone;
    std::string key;   // the member being read, in an object
    size_t index = 0;  // elements so far, in an array
    // A step's cyclesByTile, kept as plain integers while every element is
    // one: a json value per tile costs 16 bytes and an allocation pattern
    // that dominated reading tile-level profiles.
    bool packed = false;
    std::vector<uint64_t> uints;
  };
  struct Pending {
    Stream stream;
    size_t index;
    json value;
    std::optional<std::vector<uint64_t>> cycles;  // a packed cyclesByTile
    std::optional<TileMemory> tile;               // decoded by tile_decoder, `value` unused
    std::optional<Variable> variable;             // decoded by variable_decoder, `value` unused
  };

  std::vector<Frame> stack;
  std::optional<json> root;
  ReportDocument document;
  std::optional<Error> error;
  bool syntax_error = false;  // the error is "line:col: ..." or "byte N: ..."
  bool format_ok = false;
  bool version_ok = false;
  std::vector<Pending> pending;
  // The packed cyclesByTile of the step being read (see Frame::packed).
  std::optional<std::vector<uint64_t>> packed_cycles;
  // A tile element being decoded without a tree (schema_tile_decoder.h).
  internal::TileDecoder tile_decoder;
  bool fast_tile = false;
  // The same for a variable element (schema_variable_decoder.h).
  internal::VariableDecoder variable_decoder;
  bool fast_variable = false;

  bool ElementStarts(Stream stream) const {
    return !error && stack.size() == 3 && stack.back().stream == stream;
  }

  // Whichever fast decoder is active gives up (before an event neither takes).
  void LeaveFast() {
    if (fast_tile) LeaveFastTile();
    if (fast_variable) LeaveFastVariable();
  }

  void LeaveFastVariable() {
    fast_variable = false;
    using Kind = internal::VariableDecoder::Event::Kind;
    for (const internal::VariableDecoder::Event& event : variable_decoder.events()) {
      switch (event.kind) {
        case Kind::kStartObject:
          Open(true);
          break;
        case Kind::kKey: {
          std::string key(internal::VariableDecoder::KeyName(event.value));
          Key(key);
          break;
        }
        case Kind::kUint:
          Uint(event.value);
          break;
        case Kind::kString:
          Value(json(variable_decoder.Text(event)));
          break;
        case Kind::kBool:
          Value(json(event.value != 0));
          break;
      }
    }
  }

  // As Fast, for the variable decoder.
  bool FastVariable(internal::VariableDecoder::Result result) {
    using Result = internal::VariableDecoder::Result;
    if (result == Result::kMore) return true;
    if (result == Result::kBail) {
      LeaveFastVariable();
      return false;
    }
    fast_variable = false;
    Decoded(std::move(variable_decoder.variable()));
    return true;
  }

  // What Value() does with a complete element of the tiles or variables
  // stream, when a fast decoder built it.
  template <typename Element>
  void Decoded(Element element) {
    Frame& top = stack.back();
    Pending held{top.stream, top.index++, json(), std::nullopt, std::nullopt, std::nullopt};
    packed_cycles.reset();
    constexpr bool kTile = std::is_same_v<Element, TileMemory>;
    if (HeaderKnown()) {
      if constexpr (kTile)
        Compilation().tiles.push_back(std::move(element));
      else
        Compilation().variables.push_back(std::move(element));
      return;
    }
    if constexpr (kTile)
      held.tile = std::move(element);
    else
      held.variable = std::move(element);
    pending.push_back(std::move(held));
  }

  // The tile decoder gave up: what it accepted goes through the general
  // path, as if it had never been involved, and so does the rest.
  void LeaveFastTile() {
    fast_tile = false;
    using Kind = internal::TileDecoder::Event::Kind;
    for (const internal::TileDecoder::Event& event : tile_decoder.events()) {
      switch (event.kind) {
        case Kind::kStartObject:
          Open(true);
          break;
        case Kind::kStartArray:
          Open(false);
          break;
        case Kind::kEndObject:
        case Kind::kEndArray:
          Close();
          break;
        case Kind::kKey: {
          std::string key(internal::TileDecoder::KeyName(event.value));
          Key(key);
          break;
        }
        case Kind::kUint:
          Uint(event.value);
          break;
      }
    }
  }

  // Whether the tile decoder took the event; if not, the caller hands it to
  // the general path.
  bool Fast(internal::TileDecoder::Result result) {
    using Result = internal::TileDecoder::Result;
    if (result == Result::kMore) return true;
    if (result == Result::kBail) {
      LeaveFastTile();
      return false;
    }
    fast_tile = false;
    Decoded(std::move(tile_decoder.tile()));
    return true;
  }

  bool HeaderKnown() const { return format_ok && version_ok; }

  bool Fail(std::string message) {
    if (!error) error = Error(std::move(message));
    return false;
  }

  // The path of the value being read, for errors found while building.
  std::string Where() const {
    std::string out;
    for (const Frame& frame : stack) {
      if (frame.stream == Stream::kNone && frame.value.is_object()) {
        if (!out.empty()) out += '.';
        out += frame.key;
      } else {
        fmt::format_to(std::back_inserter(out), "[{}]", frame.index);
      }
    }
    return out.empty() ? "top level" : out;
  }

  Stream StreamHere() const {
    if (stack.size() != 2) return Stream::kNone;
    const Frame& top = stack[0];
    const Frame& section = stack[1];
    if (!top.value.is_object() || !section.value.is_object()) return Stream::kNone;
    for (const StreamInfo& info : kStreams)
      if (info.section == top.key && info.key == section.key) return info.stream;
    return Stream::kNone;
  }

  bool Open(bool object) {
    if (error) return false;
    if (stack.size() >= kMaxDepth)
      return Fail(fmt::format("{}: nested deeper than {} levels", Where(), kMaxDepth));
    Stream stream = object ? Stream::kNone : StreamHere();
    if (object && stack.size() == 3 && stack[2].stream == Stream::kSteps) packed_cycles.reset();
    if (!object && stack.size() == 4 && stack[2].stream == Stream::kSteps &&
        stack[3].value.is_object() && stack[3].key == "cyclesByTile") {
      Frame frame{json::array()};
      frame.packed = true;
      stack.push_back(std::move(frame));
      return true;
    }
    if (stream != Stream::kNone) {
      // Present in the tree (as []) so that a second "tiles" is a duplicate.
      stack.back().value[stack.back().key] = json::array();
      stack.push_back(Frame{json(), stream});
      return true;
    }
    stack.push_back(Frame{object ? json::object() : json::array()});
    return true;
  }

  bool Close() {
    if (error) return false;
    if (stack.empty()) return Fail("unbalanced end of container");
    Frame frame = std::move(stack.back());
    stack.pop_back();
    if (frame.stream != Stream::kNone) return true;
    if (frame.packed) {
      packed_cycles = std::move(frame.uints);
      return Value(json::array());  // the member exists; its elements are in packed_cycles
    }
    return Value(std::move(frame.value));
  }

  // An unsigned integer: appended to a packed array, or an ordinary value.
  bool Uint(uint64_t value) {
    if (!error && !stack.empty() && stack.back().packed) {
      stack.back().uints.push_back(value);
      ++stack.back().index;
      return true;
    }
    return Value(json(value));
  }

  bool Key(std::string& key) {
    if (error) return false;
    if (stack.empty() || !stack.back().value.is_object()) return Fail("key outside an object");
    Frame& top = stack.back();
    top.key = std::move(key);
    if (top.value.contains(top.key)) return Fail(fmt::format("{}: duplicate key", Where()));
    return true;
  }

  bool Value(json value) {
    if (error) return false;
    if (stack.empty()) {
      root = std::move(value);
      return true;
    }
    Frame& top = stack.back();
    if (top.packed) {
      // Not an unsigned integer: back to a tree, so the decoder reports it.
      for (uint64_t n : top.uints) top.value.push_back(n);
      top.uints = {};
      top.packed = false;
    }
    if (top.stream != Stream::kNone) {
      size_t index = top.index++;
      std::optional<std::vector<uint64_t>> cycles = std::move(packed_cycles);
      packed_cycles.reset();
      if (HeaderKnown()) {
        DecodeElement(top.stream, index, value, cycles ? &*cycles : nullptr);
      } else {
        pending.push_back(Pending{top.stream, index, std::move(value), std::move(cycles),
                                  std::nullopt, std::nullopt});
      }
      return !error;
    }
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
      ++top.index;
      return true;
    }
    json& slot = top.value[top.key];
    slot = std::move(value);
    if (stack.size() == 1) CheckHeader(top.key, slot);
    return !error;
  }

  void CheckHeader(const std::string& key, const json& value) {
    Path root_path;
    Decoder d;
    if (key == "format") {
      std::string format = d.String(value, root_path.Key("format"));
      if (d.ok() && format != kReportFormatName)
        d.Fail(root_path.Key("format"),
               fmt::format("\"{}\" is not \"{}\"", format, kReportFormatName));
      format_ok = d.ok();
    } else if (key == "version") {
      Path p = root_path.Key("version");
      if (d.IsObject(value, p)) {
        uint32_t major = d.RequiredUint32(value, p, "major");
        uint32_t minor = d.RequiredUint32(value, p, "minor");
        if (d.ok() && major != kFormatVersion.major)
          d.Fail(p, fmt::format("unsupported report format version {}.{} (this reader reads {}.x)",
                                major, minor, kFormatVersion.major));
      }
      version_ok = d.ok();
    } else {
      return;
    }
    if (!d.ok()) {
      Fail(d.error()->message());
      return;
    }
    if (HeaderKnown()) {
      for (Pending& held : pending) {
        if (held.tile) {
          Compilation().tiles.push_back(std::move(*held.tile));
          continue;
        }
        if (held.variable) {
          Compilation().variables.push_back(std::move(*held.variable));
          continue;
        }
        DecodeElement(held.stream, held.index, held.value, held.cycles ? &*held.cycles : nullptr);
        if (error) break;
      }
      pending.clear();
    }
  }

  CompilationReport& Compilation() {
    if (!document.compilation) document.compilation.emplace();
    return *document.compilation;
  }
  ExecutionReport& Execution() {
    if (!document.execution) document.execution.emplace();
    return *document.execution;
  }

  void DecodeElement(Stream stream, size_t index, const json& value,
                     std::vector<uint64_t>* packed) {
    const StreamInfo& info = InfoOf(stream);
    Path root_path;
    Path section = root_path.Key(info.section);
    Path array = section.Key(info.key);
    Path p = array.Index(index);
    Decoder d;
    switch (stream) {
      case Stream::kVertexTypes:
        Compilation().vertex_types.push_back(d.Object<VertexType>(value, p));
        break;
      case Stream::kComputeSets:
        Compilation().compute_sets.push_back(DecodeComputeSet(d, value, p));
        break;
      case Stream::kPrograms:
        Compilation().programs.push_back(DecodeProgram(d, value, p));
        break;
      case Stream::kLiveness:
        Compilation().liveness.push_back(d.Object<LivenessStep>(value, p));
        break;
      case Stream::kOperations:
        Compilation().operations.push_back(d.Object<Operation>(value, p));
        break;
      case Stream::kComputeSetOperations:
        Compilation().compute_set_operations.push_back(d.Object<ComputeSetOperation>(value, p));
        break;
      case Stream::kFullestTiles:
        Compilation().liveness_fullest_tiles.push_back(d.Object<StepTile>(value, p));
        break;
      case Stream::kLivenessByIpu:
        Compilation().liveness_by_ipu.push_back(d.Object<IpuStep>(value, p));
        break;
      case Stream::kOperationTiles:
        Compilation().operation_tiles.push_back(d.Object<OperationTiles>(value, p));
        break;
      case Stream::kAlwaysLive:
        Compilation().always_live_variables.push_back(d.Object<NamedBytes>(value, p));
        break;
      case Stream::kLiveVariables:
        Compilation().not_always_live_variables.push_back(d.Object<LiveVariable>(value, p));
        break;
      case Stream::kTiles:
        Compilation().tiles.push_back(DecodeTile(d, value, p));
        break;
      case Stream::kVariables:
        Compilation().variables.push_back(d.Object<Variable>(value, p));
        break;
      case Stream::kSteps: {
        ExecutionStep step = DecodeStep(d, value, p);
        if (packed != nullptr) step.cycles_by_tile = std::move(*packed);
        Execution().steps.push_back(std::move(step));
        break;
      }
      case Stream::kNone:
        break;
    }
    if (!d.ok()) Fail(d.error()->message());
  }

  // The members that were not streamed.
  void DecodeCompilation(Decoder& d, const json& value, const Path& path) {
    if (!d.IsObject(value, path)) return;
    CompilationReport& report = Compilation();
    if (const json* target = Find(value, "target"))
      report.target = DecodeTarget(d, *target, path.Key("target"));
    if (const json* graph = Find(value, "graph"))
      report.graph = d.Object<GraphInfo>(*graph, path.Key("graph"));
    if (const json* verbatim = Find(value, "verbatim"))
      report.verbatim = DecodeVerbatim(d, *verbatim, path.Key("verbatim"));
    // A streamed key left a [] behind; anything else was not an array.
    for (const StreamInfo& info : kStreams) {
      if (info.section != "compilation") continue;
      if (const json* member = Find(value, info.key); member && !member->is_array())
        d.Fail(path.Key(info.key), "expected an array");
    }
  }

  void DecodeExecution(Decoder& d, const json& value, const Path& path) {
    if (!d.IsObject(value, path)) return;
    ExecutionReport& execution = Execution();
    d.Members(value, path, execution, [&](std::string_view slot) {
      if (slot == "programs") {
        d.Elements(value, path, slot, [&](const json& element, const Path& p) {
          execution.programs.push_back(d.String(element, p));
        });
      } else if (slot == "tileAverageCycles") {
        d.Named(value, path, slot, kCycleKindNames, "cycle kind",
                [&](size_t i, const json& v, const Path& p) {
                  execution.tile_average_cycles[i] = d.Double(v, p);
                });
      } else if (slot == "cyclesByVertexType") {
        d.Elements(value, path, slot, [&](const json& element, const Path& p) {
          execution.cycles_by_vertex_type.push_back(d.Object<VertexTypeCycles>(element, p));
        });
      } else if (slot == "tileCycles") {
        d.Elements(value, path, slot, [&](const json& element, const Path& p) {
          execution.tile_cycles.push_back(d.Object<TileCycleSplit>(element, p));
        });
      } else if (const json* steps = Find(value, slot); steps && !steps->is_array()) {
        d.Fail(path.Key(slot), "expected an array");  // streamed: only a non-array is left here
      }
    });
  }

  Expected<ReportDocument> Finish() {
    if (error) return *error;
    if (!stack.empty() || !root) return Error("unexpected end of input");
    if (!root->is_object()) return Error("top level: expected an object");
    if (!Find(*root, "format")) return Error("format: missing (not a tileprof report)");
    if (!Find(*root, "version")) return Error("version: missing");
    Decoder d;
    Path root_path;
    if (const json* compilation = Find(*root, "compilation"))
      DecodeCompilation(d, *compilation, root_path.Key("compilation"));
    if (const json* execution = Find(*root, "execution"))
      DecodeExecution(d, *execution, root_path.Key("execution"));
    if (d.ok() && document.compilation) CheckReferences(d, *document.compilation);
    if (!d.ok()) return *d.error();
    return std::move(document);
  }
};

DocumentBuilder::DocumentBuilder() : state_(std::make_unique<State>()), error_(&state_->error) {}
DocumentBuilder::~DocumentBuilder() = default;

// Events a fast decoder does not take leave it first (LeaveFast).
bool DocumentBuilder::null() {
  state_->LeaveFast();
  return state_->Value(json());
}
bool DocumentBuilder::boolean(bool value) {
  if (state_->fast_variable && state_->FastVariable(state_->variable_decoder.Bool(value)))
    return true;
  state_->LeaveFast();
  return state_->Value(json(value));
}
bool DocumentBuilder::number_integer(json::number_integer_t value) {
  state_->LeaveFast();
  return state_->Value(json(value));
}
bool DocumentBuilder::number_unsigned(json::number_unsigned_t value) {
  if (state_->fast_tile && state_->Fast(state_->tile_decoder.Uint(value))) return true;
  if (state_->fast_variable && state_->FastVariable(state_->variable_decoder.Uint(value)))
    return true;
  return state_->Uint(value);
}
bool DocumentBuilder::number_float(json::number_float_t value, const json::string_t&) {
  state_->LeaveFast();
  return state_->Value(json(value));
}
bool DocumentBuilder::string(json::string_t& value) {
  if (state_->fast_variable && state_->FastVariable(state_->variable_decoder.String(value)))
    return true;
  state_->LeaveFast();
  return state_->Value(json(std::move(value)));
}
bool DocumentBuilder::binary(json::binary_t&) {
  state_->LeaveFast();
  return state_->Fail(fmt::format("{}: unexpected binary data", state_->Where()));
}
bool DocumentBuilder::start_object(std::size_t) {
  State& s = *state_;
  if (s.fast_tile) {
    if (s.Fast(s.tile_decoder.StartObject())) return true;
  } else if (s.fast_variable) {
    s.LeaveFastVariable();  // a variable has no nested object
  } else if (s.ElementStarts(Stream::kTiles)) {
    s.fast_tile = true;
    s.tile_decoder.Begin();
    return true;
  } else if (s.ElementStarts(Stream::kVariables)) {
    s.fast_variable = true;
    s.variable_decoder.Begin();
    return true;
  }
  return s.Open(true);
}
bool DocumentBuilder::key(json::string_t& key) {
  if (state_->fast_tile && state_->Fast(state_->tile_decoder.Key(key))) return true;
  if (state_->fast_variable && state_->FastVariable(state_->variable_decoder.Key(key))) return true;
  return state_->Key(key);
}
bool DocumentBuilder::key(std::string_view key) {
  if (state_->fast_tile && state_->Fast(state_->tile_decoder.Key(key))) return true;
  if (state_->fast_variable && state_->FastVariable(state_->variable_decoder.Key(key))) return true;
  std::string owned(key);
  return state_->Key(owned);
}
bool DocumentBuilder::end_object() {
  if (state_->fast_tile && state_->Fast(state_->tile_decoder.EndObject())) return true;
  if (state_->fast_variable && state_->FastVariable(state_->variable_decoder.EndObject()))
    return true;
  return state_->Close();
}
bool DocumentBuilder::start_array(std::size_t) {
  if (state_->fast_tile && state_->Fast(state_->tile_decoder.StartArray())) return true;
  if (state_->fast_variable) state_->LeaveFastVariable();  // nor an array
  return state_->Open(false);
}
bool DocumentBuilder::end_array() {
  if (state_->fast_tile && state_->Fast(state_->tile_decoder.EndArray())) return true;
  if (state_->fast_variable) state_->LeaveFastVariable();
  return state_->Close();
}

bool DocumentBuilder::parse_error(std::size_t position, const std::string&,
                                  const nlohmann::detail::exception& error) {
  state_->LeaveFast();
  // nlohmann says "[json.exception.parse_error.101] parse error at line 1,
  // column 5: syntax error ..."; our convention is "1:5: syntax error ...".
  if (!state_->error) state_->syntax_error = true;
  std::string_view text = error.what();
  if (size_t end = text.find("] "); text.starts_with("[json.exception.") && end != text.npos)
    text.remove_prefix(end + 2);
  constexpr std::string_view kAtLine = "parse error at line ";
  if (text.starts_with(kAtLine)) {
    text.remove_prefix(kAtLine.size());
    size_t comma = text.find(", column ");
    size_t colon = text.find(": ");
    if (comma != text.npos && colon != text.npos && comma < colon)
      return state_->Fail(fmt::format("{}:{}: {}", text.substr(0, comma),
                                      text.substr(comma + 9, colon - comma - 9),
                                      text.substr(colon + 2)));
  }
  return state_->Fail(fmt::format("byte {}: {}", position, text));
}

void DocumentBuilder::Fail(Error error) {
  state_->LeaveFast();
  state_->Fail(error.message());
}
bool DocumentBuilder::syntax_error() const { return state_->syntax_error; }
bool DocumentBuilder::done() const { return state_->root.has_value() && state_->stack.empty(); }

Expected<ReportDocument> DocumentBuilder::Finish() {
  state_->LeaveFast();  // the input ended inside an element
  return state_->Finish();
}

}  // namespace tileprof::report::schema
