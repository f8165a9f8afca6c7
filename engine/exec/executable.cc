// Rebuilding executables from their bytes. See executable.h for the layout.
#include "engine/exec/executable.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <optional>

#include "engine/codelets/codelets.h"
#include "engine/compiler/opaque.h"
#include "engine/exec/executable_format.h"
#include "reports/cbor_codec.h"

namespace tileprof::engine::exec {
namespace {

// Limits on what a file may ask the reader to build, far above what the
// compiler makes (a program nests a few levels per HLO while/conditional)
// and low enough that a crafted file cannot exhaust the stack or make a
// program whose unrolled size overflows the simulator's counters.
constexpr uint64_t kMaxProgramDepth = 256;
constexpr uint64_t kMaxExpandedSteps = uint64_t{1} << 40;
constexpr uint64_t kMaxRank = 64;

using format::Header;
using format::ReadHeader;
using format::Section;
using format::VariableKind;

// ---------------------------------------------------------------------------
// Reading. A Reader fails sticky: after the first error every read returns
// zero or empty and the error (naming the field and its offset) is kept, so
// the loops below check ok() once per item rather than after every field.

class Reader {
 public:
  Reader(std::span<const uint8_t> data, uint64_t base) : data_(data), base_(base) {}

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  uint64_t remaining() const { return data_.size() - pos_; }

  void Fail(std::string_view field, std::string_view what) {
    if (ok()) error_ = fmt::format("{} at offset {}: {}", field, base_ + pos_, what);
  }

  uint8_t U8(std::string_view field) {
    if (!ok()) return 0;
    if (pos_ >= data_.size()) {
      Fail(field, "the file ends here");
      return 0;
    }
    return data_[pos_++];
  }
  uint64_t Var(std::string_view field) {
    uint64_t value = 0;
    for (int shift = 0; ok(); shift += 7) {
      if (pos_ >= data_.size()) {
        Fail(field, "the file ends here");
        return 0;
      }
      const uint8_t byte = data_[pos_++];
      if (shift == 63 && (byte & 0x7e) != 0) {
        Fail(field, "integer overflows 64 bits");
        return 0;
      }
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
      if (shift == 63) {
        Fail(field, "integer longer than 10 bytes");
        return 0;
      }
    }
    return 0;
  }
  // A value that must be below `limit` (an index or an enum).
  uint64_t Below(uint64_t limit, std::string_view field) {
    uint64_t value = Var(field);
    if (ok() && value >= limit)
      Fail(field, fmt::format("{} is out of range (limit {})", value, limit));
    return ok() ? value : 0;
  }
  uint32_t U32Var(std::string_view field) {
    return static_cast<uint32_t>(Below(uint64_t{1} << 32, field));
  }
  // A count of items each taking at least `min_bytes`, so that a huge count
  // in a small file is an error before anything is allocated.
  uint64_t Count(std::string_view field, uint64_t min_bytes = 1) {
    uint64_t count = Var(field);
    if (ok() && count > remaining() / min_bytes)
      Fail(field, fmt::format("count {} exceeds what the remaining {} bytes can hold", count,
                              remaining()));
    return ok() ? count : 0;
  }
  std::span<const uint8_t> Bytes(uint64_t size, std::string_view field) {
    if (!ok()) return {};
    if (size > remaining()) {
      Fail(field, fmt::format("{} bytes run past the end of the file", size));
      return {};
    }
    auto bytes = data_.subspan(pos_, size);
    pos_ += size;
    return bytes;
  }
  std::string Str(std::string_view field) { return std::string(StrView(field)); }
  // The string in place: valid while the payload is.
  std::string_view StrView(std::string_view field) {
    uint64_t size = Var(field);
    auto bytes = Bytes(size, field);
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }
  uint64_t Fixed64(std::string_view field) {
    auto bytes = Bytes(8, field);
    uint64_t value = 0;
    for (size_t i = 0; i < bytes.size(); ++i) value |= uint64_t{bytes[i]} << (8 * i);
    return value;
  }
  ElementType Type(std::string_view field) {
    return static_cast<ElementType>(Below(std::size(kAllElementTypes), field));
  }
  std::vector<uint64_t> Shape(std::string_view field) {
    std::vector<uint64_t> shape;
    ShapeInto(field, shape);
    return shape;
  }
  // Into a buffer the caller reuses (a shape per vertex field).
  void ShapeInto(std::string_view field, std::vector<uint64_t>& shape) {
    shape.clear();
    uint64_t rank = Var(field);
    if (ok() && rank > kMaxRank) Fail(field, fmt::format("rank {} is above {}", rank, kMaxRank));
    for (uint64_t i = 0; ok() && i < rank; ++i) shape.push_back(Var(field));
  }
  // A tensor as its element type, shape and regions, in buffers this reader
  // reuses (for TensorValue).
  ElementType TensorParts(std::string_view field) {
    return TypeShapeAndList(field, 3, regions_, [&] {
      TensorRegion region;
      region.variable = U32Var(field);
      region.begin = Var(field);
      uint64_t size = Var(field);
      if (ok() && size > UINT64_MAX - region.begin) Fail(field, "run end overflows");
      region.end = region.begin + size;
      return region;
    });
  }
  // A vertex field's runs (Writer::FieldRuns), into runs().
  ElementType FieldRuns(std::string_view field) {
    return TypeShapeAndList(field, 5, runs_, [&] {
      StridedRegion run;
      run.variable = U32Var(field);
      run.begin = Var(field);
      run.length = Var(field);
      run.count = U32Var(field);
      const uint64_t zigzag = Var(field);
      run.stride = static_cast<int64_t>((zigzag >> 1) ^ (0 - (zigzag & 1)));
      return run;
    });
  }
  // An element type, a shape into shape_, then a count and that many items
  // (each at least `min_bytes`) read by `read_one` into `items`.
  template <typename T, typename ReadOne>
  ElementType TypeShapeAndList(std::string_view field, uint64_t min_bytes, std::vector<T>& items,
                               ReadOne read_one) {
    const ElementType type = Type(field);
    ShapeInto(field, shape_);
    const uint64_t count = Count(field, min_bytes);
    items.clear();
    for (uint64_t i = 0; ok() && i < count; ++i) items.push_back(read_one());
    return type;
  }
  std::span<const uint64_t> shape() const { return shape_; }
  std::span<const StridedRegion> runs() const { return runs_; }
  Tensor TensorValue(std::string_view field) {
    const ElementType type = TensorParts(field);
    if (!ok()) return Tensor();
    auto tensor = Tensor::FromRegions(type, shape_, regions_);
    if (!tensor) {
      Fail(field, tensor.error().message());
      return Tensor();
    }
    return std::move(*tensor);
  }
  // The next section, which must be `section`, as a reader of its own;
  // this reader moves past it.
  Reader Sub(Section section, std::string_view name) {
    const uint8_t found = U8(name);
    if (ok() && found != static_cast<uint8_t>(section))
      Fail(name, fmt::format("expected section {}, found {}", static_cast<int>(section), found));
    const uint64_t size = Fixed64(name);
    const uint64_t start = base_ + pos_;
    auto bytes = Bytes(size, name);
    Reader sub(bytes, start);
    if (!ok()) sub.error_ = error_;
    return sub;
  }
  // After a section's last field: nothing may be left over.
  void End(std::string_view name) {
    if (ok() && remaining() != 0)
      Fail(name, fmt::format("{} unexpected bytes at the end of the section", remaining()));
  }
  void Adopt(const Reader& sub) {
    if (ok() && !sub.ok()) error_ = sub.error_;
  }

 private:
  std::span<const uint8_t> data_;
  uint64_t base_;
  uint64_t pos_ = 0;
  std::string error_;
  std::vector<uint64_t> shape_;  // reused by TensorParts
  std::vector<TensorRegion> regions_;
  std::vector<StridedRegion> runs_;  // reused by FieldRuns
};

ExecutableInfo ReadInfo(Reader& outer, const Header& header) {
  ExecutableInfo info;
  info.format_version = header.version;
  info.key = header.key;
  Reader r = outer.Sub(Section::kInfo, "info section");
  info.tool_version = r.Str("tool version");
  info.module_name = r.Str("module name");
  info.fingerprint = r.Fixed64("fingerprint");
  info.target.preset = r.Str("target preset");
  info.target.num_ipus = r.U32Var("number of IPUs");
  if (uint32_t tiles = r.U32Var("tiles per IPU"); tiles != 0) info.target.tiles_per_ipu = tiles;
  info.key_text = r.Str("key text");
  for (uint64_t i = 0, n = r.Count("input streams"); r.ok() && i < n; ++i)
    info.input_streams.push_back(r.Str("input stream"));
  for (uint64_t i = 0, n = r.Count("output streams"); r.ok() && i < n; ++i)
    info.output_streams.push_back(r.Str("output stream"));
  r.End("info section");
  outer.Adopt(r);
  return info;
}

// A variable's kind byte; a valueless one is listed in `result` (as the
// compile listed it) under the id it is about to get.
VariableKind ReadVariableKind(Reader& r, VariableId id, compiler::CompileResult& result) {
  const uint8_t kind = r.U8("variable kind");
  if (kind > uint8_t(VariableKind::kElided)) {
    r.Fail("variable kind", fmt::format("unknown kind {}", kind));
    return VariableKind::kVariable;
  }
  if (kind >= uint8_t(VariableKind::kValueless)) result.valueless_constants.push_back(id);
  if (kind == uint8_t(VariableKind::kElided)) result.elided_constants.push_back(id);
  return VariableKind(kind);
}

// The graph section's variables and constants with their tile mappings.
void ReadVariables(Reader& r, compiler::CompileResult& result) {
  Graph& graph = *result.graph;
  const uint64_t num_variables = r.Count("variable count", 4);
  for (uint64_t id = 0; r.ok() && id < num_variables; ++id) {
    std::string name = r.Str("variable name");
    ElementType type = r.Type("variable type");
    std::vector<uint64_t> shape = r.Shape("variable shape");
    const bool is_constant =
        ReadVariableKind(r, static_cast<VariableId>(id), result) == VariableKind::kConstant;
    std::vector<std::byte> data;
    if (is_constant) {
      auto bytes = r.Bytes(r.Var("constant size"), "constant data");
      data.assign(reinterpret_cast<const std::byte*>(bytes.data()),
                  reinterpret_cast<const std::byte*>(bytes.data() + bytes.size()));
    }
    if (!r.ok()) break;
    auto tensor = is_constant ? graph.AddConstant(type, shape, std::move(data), name)
                              : graph.AddVariable(type, shape, name);
    if (!tensor) {
      r.Fail("variable", tensor.error().message());
      break;
    }
    const uint64_t elements = tensor->NumElements();
    uint64_t position = 0;
    const uint64_t num_runs = r.Count("tile runs", 3);
    // Bounded by the bytes left (3 a run), so a crafted count cannot make it
    // reserve more than a few times the file.
    if (r.ok()) graph.ReserveTileRuns(static_cast<VariableId>(id), num_runs);
    for (uint64_t i = 0; r.ok() && i < num_runs; ++i) {
      const uint64_t gap = r.Var("tile run start");
      const uint64_t size = r.Var("tile run size");
      const uint32_t tile = r.U32Var("tile run tile");
      if (!r.ok()) break;
      if (gap > elements - position || size > elements - position - gap || size == 0) {
        r.Fail("tile run", fmt::format("run does not fit {}",
                                       graph.DescribeVariable(static_cast<VariableId>(id))));
        break;
      }
      position += gap;
      const Status mapped =
          graph.SetTileMapping(static_cast<VariableId>(id), position, position + size, tile);
      if (!mapped) r.Fail("tile run", mapped.error().message());
      position += size;
    }
  }
}

// Codelets: the catalogue's, or the compiler's own (recreated by name).
void ReadCodelets(Reader& r, compiler::CompilerCodelets& compiler_codelets,
                  std::vector<const Codelet*>& codelets) {
  for (uint64_t i = 0, n = r.Count("codelet count"); r.ok() && i < n; ++i) {
    std::string name = r.Str("codelet name");
    if (!r.ok()) break;
    const Codelet* codelet = nullptr;
    if (compiler::CompilerCodelets::IsCompilerCodeletName(name)) {
      auto made = compiler_codelets.FromName(name);
      if (made) codelet = *made;
    } else {
      codelet = FindCodelet(name);
    }
    if (codelet == nullptr) r.Fail("codelet name", fmt::format("unknown codelet '{}'", name));
    codelets.push_back(codelet);
  }
}

// One vertex: its codelet, compute set, name and tile, its connected
// fields, parameters and performance estimate. `params` and `values` are
// scratch space reused from one vertex to the next; `last_name` is the
// previous vertex's name, which a 0 length repeats.
void ReadVertex(Reader& r, Graph& graph, const std::vector<const Codelet*>& codelets,
                std::vector<std::optional<uint32_t>>& params, std::vector<uint32_t>& values,
                std::string_view& last_name) {
  const Codelet* codelet =
      codelets.empty() ? nullptr : codelets[r.Below(codelets.size(), "vertex codelet")];
  if (codelet == nullptr) {
    r.Fail("vertex codelet", "no codelets");
    return;
  }
  const uint32_t compute_set = r.U32Var("vertex compute set");
  if (const uint64_t size = r.Var("vertex name"); size != 0) {
    const auto bytes = r.Bytes(size - 1, "vertex name");
    last_name = {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }
  const std::string_view debug_name = last_name;
  const uint64_t tile = r.Below(uint64_t{1} << 32, "vertex tile");
  if (!r.ok()) return;
  auto vertex = graph.AddVertex(compute_set, *codelet, debug_name);
  if (!vertex) {
    r.Fail("vertex", vertex.error().message());
    return;
  }
  Status status;
  if (tile != 0) status = graph.SetTileMapping(*vertex, static_cast<uint32_t>(tile - 1));
  for (size_t f = 0; f < codelet->fields().size(); ++f) {
    if (!status || !r.ok()) break;
    if (r.U8("field connected") == 0) continue;
    const ElementType type = r.FieldRuns("field tensor");
    if (r.ok()) status = graph.ConnectRuns(*vertex, f, type, r.shape(), r.runs());
  }
  // Parameters in codelet order. A compiled graph sets all of them, and
  // they are set at once; only a partial set goes name by name.
  params.clear();
  for (size_t i = 0; status && r.ok() && i < codelet->params().size(); ++i) {
    params.push_back(r.U8("parameter set") == 0 ? std::nullopt
                                                : std::optional(r.U32Var("parameter value")));
  }
  if (status && r.ok()) {
    if (std::all_of(params.begin(), params.end(), [](const auto& p) { return p.has_value(); })) {
      values.resize(params.size());
      std::transform(params.begin(), params.end(), values.begin(),
                     [](const auto& p) { return *p; });
      status = graph.SetInitialValues(*vertex, values);
    } else {
      for (size_t i = 0; status && i < params.size(); ++i) {
        if (params[i]) status = graph.SetInitialValue((*vertex)[codelet->params()[i]], *params[i]);
      }
    }
  }
  if (status && r.U8("perf estimate set") != 0) {
    const uint64_t cycles = r.Var("perf estimate");
    if (r.ok()) status = graph.SetPerfEstimate(*vertex, cycles);
  }
  if (!status) r.Fail("vertex", status.error().message());
}

void ReadVertices(Reader& r, Graph& graph, const std::vector<const Codelet*>& codelets) {
  const uint64_t num_vertices = r.Count("vertex count", 4);
  // Reserved up to 4 Mi (about 0.5 GB): a count the payload could hold but
  // does not (a crafted file behind a valid checksum) then costs no more
  // than the vertices it does hold.
  if (r.ok()) graph.ReserveVertices(std::min<uint64_t>(num_vertices, uint64_t{1} << 22));
  std::vector<std::optional<uint32_t>> params;  // reused: one vertex at a time
  std::vector<uint32_t> values;
  std::string_view last_name;
  for (uint64_t id = 0; r.ok() && id < num_vertices; ++id)
    ReadVertex(r, graph, codelets, params, values, last_name);
}

void ReadStreams(Reader& r, Graph& graph) {
  for (uint64_t i = 0, n = r.Count("stream count", 4); r.ok() && i < n; ++i) {
    std::string name = r.Str("stream name");
    ElementType type = r.Type("stream type");
    uint64_t elements = r.Var("stream elements");
    uint64_t direction = r.Below(2, "stream direction");
    if (!r.ok()) break;
    auto stream = direction == 0 ? graph.AddHostToDeviceFifo(name, type, elements)
                                 : graph.AddDeviceToHostFifo(name, type, elements);
    if (!stream) r.Fail("stream", stream.error().message());
  }
}

Status ReadGraph(Reader& outer, compiler::CompileResult& result,
                 compiler::CompilerCodelets& compiler_codelets,
                 std::vector<const Codelet*>& codelets) {
  Graph& graph = *result.graph;
  Reader r = outer.Sub(Section::kGraph, "graph section");
  ReadVariables(r, result);
  ReadCodelets(r, compiler_codelets, codelets);
  for (uint64_t i = 0, n = r.Count("compute set count"); r.ok() && i < n; ++i) {
    graph.AddComputeSet(r.Str("compute set name"));
  }
  ReadVertices(r, graph, codelets);
  ReadStreams(r, graph);
  r.End("graph section");
  outer.Adopt(r);
  if (!outer.ok()) return Error(outer.error());
  return {};
}

// A node of the program being rebuilt, with what the limits need.
struct LoadedNode {
  program::Program program;
  uint64_t depth = 1;
  uint64_t expanded = 1;  // steps when every shared sub-program is unrolled
};

class ProgramBuilder {
 public:
  // Programs have no public constructor from a kind; each kind is built with
  // its own class, children looked up among the nodes read so far.
  Expected<program::Sequence> Read(Reader& outer) {
    Reader r = outer.Sub(Section::kProgram, "program section");
    const uint64_t count = r.Count("program node count", 2);
    if (r.ok() && count == 0) r.Fail("program node count", "a program has at least one node");
    for (uint64_t i = 0; r.ok() && i < count; ++i) {
      ReadNode(r);
    }
    r.End("program section");
    outer.Adopt(r);
    if (!outer.ok()) return Error(outer.error());
    const program::Program& root = nodes_.back().program;
    if (root.kind() != program::ProgramKind::kSequence)
      return Error("program: the root is not a Sequence");
    // The root is a Sequence node; rewrap its handle as a Sequence.
    program::Sequence sequence;
    for (const program::Program& step : root.steps()) sequence.Add(step);
    return sequence;
  }

 private:
  const LoadedNode& Child(Reader& r, std::string_view field) {
    static const LoadedNode kEmpty{program::Sequence(), 1, 1};
    const uint64_t index = r.Below(nodes_.size(), field);
    return r.ok() ? nodes_[index] : kEmpty;
  }

  void ReadNode(Reader& r) {
    using program::ProgramKind;
    const auto kind = static_cast<ProgramKind>(r.Below(8, "program node kind"));
    LoadedNode node{program::Sequence(), 1, 1};
    std::vector<const LoadedNode*> children;
    switch (kind) {
      case ProgramKind::kSequence: {
        program::Sequence sequence;
        for (uint64_t i = 0, n = r.Count("sequence steps"); r.ok() && i < n; ++i) {
          const LoadedNode& child = Child(r, "sequence step");
          sequence.Add(child.program);
          children.push_back(&child);
        }
        node.program = sequence;
        break;
      }
      case ProgramKind::kExecute:
        node.program = program::Execute(r.U32Var("compute set"));
        break;
      case ProgramKind::kCopy: {
        Tensor source = r.TensorValue("copy source");
        Tensor destination = r.TensorValue("copy destination");
        node.program = program::Copy(source, destination);
        break;
      }
      case ProgramKind::kCopyFromStream: {
        DataStream stream{r.U32Var("stream")};
        node.program = program::Copy(stream, r.TensorValue("copy destination"));
        break;
      }
      case ProgramKind::kCopyToStream: {
        Tensor source = r.TensorValue("copy source");
        node.program = program::Copy(source, DataStream{r.U32Var("stream")});
        break;
      }
      case ProgramKind::kRepeat: {
        const uint32_t times = r.U32Var("repeat count");
        const LoadedNode& body = Child(r, "repeat body");
        node.program = program::Repeat(times, body.program);
        children.push_back(&body);
        break;
      }
      case ProgramKind::kRepeatWhileTrue: {
        const LoadedNode& condition = Child(r, "while condition");
        Tensor predicate = r.TensorValue("while predicate");
        const LoadedNode& body = Child(r, "while body");
        node.program = program::RepeatWhileTrue(condition.program, predicate, body.program);
        children = {&condition, &body};
        break;
      }
      case ProgramKind::kIf: {
        Tensor predicate = r.TensorValue("if predicate");
        const LoadedNode& then_body = Child(r, "if then");
        const LoadedNode& else_body = Child(r, "if else");
        node.program = program::If(predicate, then_body.program, else_body.program);
        children = {&then_body, &else_body};
        break;
      }
    }
    for (const LoadedNode* child : children) {
      node.depth = std::max(node.depth, child->depth + 1);
      node.expanded = std::min(kMaxExpandedSteps + 1, node.expanded + child->expanded);
    }
    if (r.ok() && node.depth > kMaxProgramDepth)
      r.Fail("program node", fmt::format("programs nest deeper than {}", kMaxProgramDepth));
    if (r.ok() && node.expanded > kMaxExpandedSteps)
      r.Fail("program node",
             fmt::format("the unrolled program has more than {} steps", kMaxExpandedSteps));
    if (r.ok()) nodes_.push_back(std::move(node));
  }

  // ReadNode holds references into this vector only until its push_back.
  std::vector<LoadedNode> nodes_;
};

// GraphStats::by_codelet as stored: codelets by name until the graph that
// owns them is rebuilt.
struct NamedCodeletUsage {
  std::string name;
  CodeletUsage usage;
};

void ReadLowering(Reader& outer, compiler::CompileResult& result,
                  std::vector<NamedCodeletUsage>& by_codelet) {
  compiler::LoweringStats& s = result.lowering;
  Reader r = outer.Sub(Section::kLowering, "lowering section");
  s.instructions = r.Var("instructions");
  s.opaque_ops = r.Var("opaque ops");
  s.exchanges = r.Var("exchanges");
  s.program_steps = r.Var("program steps");
  for (uint64_t i = 0, n = r.Count("opaque opcodes"); r.ok() && i < n; ++i)
    s.opaque_opcodes.push_back(r.Str("opaque opcode"));
  for (uint64_t i = 0, n = r.Count("valueless constants"); r.ok() && i < n; ++i)
    s.constants_without_values.push_back(r.Str("valueless constant"));
  result.tiles_out_of_memory = r.Var("tiles out of memory");
  GraphStats& g = result.graph_stats;
  for (uint64_t* value :
       {&g.num_variables, &g.num_constants, &g.variable_bytes, &g.constant_bytes,
        &g.num_compute_sets, &g.num_vertices, &g.num_edges, &g.num_streams, &g.edge_pointer_bytes,
        &g.internal_state_bytes, &g.vertex_code_bytes, &g.tiles_used})
    *value = r.Var("graph statistics");
  for (uint64_t i = 0, n = r.Count("codelet usage count", 5); r.ok() && i < n; ++i) {
    NamedCodeletUsage named;
    named.name = r.Str("codelet usage name");
    named.usage.vertices = r.Var("codelet usage vertices");
    named.usage.edges = r.Var("codelet usage edges");
    named.usage.state_bytes = r.Var("codelet usage state bytes");
    named.usage.tiles = r.Var("codelet usage tiles");
    by_codelet.push_back(std::move(named));
  }
  r.End("lowering section");
  outer.Adopt(r);
}

// `r` is the report section's own reader.
Expected<report::CompilationReport> ReadReport(Reader& r, std::string_view source) {
  auto bytes = r.Bytes(r.remaining(), "report");
  if (!r.ok()) return Error(r.error());
  TILEPROF_ASSIGN_OR_RETURN(
      report::ReportDocument document,
      report::ReadCborReport(bytes, fmt::format("{} (embedded report)", source)));
  if (!document.compilation) return Error("the embedded report has no compilation part");
  return std::move(*document.compilation);
}

}  // namespace

Status VerifyExecutable(std::span<const uint8_t> bytes, std::string_view source) {
  TILEPROF_ASSIGN_OR_RETURN(Header header, ReadHeader(bytes, source));
  (void)header;
  return {};
}

Expected<ExecutableInfo> ReadExecutableInfo(std::span<const uint8_t> bytes, std::string_view source,
                                            bool verify_checksum) {
  TILEPROF_ASSIGN_OR_RETURN(
      Header header,
      ReadHeader(bytes, source, verify_checksum ? format::Verify::kAll : format::Verify::kNone));
  Reader r(header.payload, kExecutableHeaderBytes);
  ExecutableInfo info = ReadInfo(r, header);
  if (!r.ok()) return Error(fmt::format("{}: corrupted executable: {}", source, r.error()));
  return info;
}

Expected<Executable> format::DeserializePayload(const Header& header, std::string_view source,
                                                LoadParts parts) {
  const auto corrupted = [&](const Error& error) {
    return Error(fmt::format("{}: corrupted executable: {}", source, error.message()));
  };
  Reader r(header.payload, kExecutableHeaderBytes);
  ExecutableInfo info = ReadInfo(r, header);
  if (!r.ok()) return corrupted(Error(r.error()));
  auto target = Target::Create(info.target);
  if (!target) return corrupted(target.error().Within("target"));

  compiler::CompileResult result;
  std::vector<NamedCodeletUsage> by_codelet;
  ReadLowering(r, result, by_codelet);
  if (!r.ok()) return corrupted(Error(r.error()));
  // The report decodes on another thread while the graph is rebuilt.
  Reader report_reader = r.Sub(Section::kReport, "report section");
  if (!r.ok()) return corrupted(Error(r.error()));
  const bool graph = parts == LoadParts::kAll ||
                     (parts == LoadParts::kRunnable && result.tiles_out_of_memory == 0);
  std::future<Expected<report::CompilationReport>> report =
      std::async(graph ? std::launch::async : std::launch::deferred,
                 [&report_reader, source] { return ReadReport(report_reader, source); });
  if (graph) {
    result.graph = std::make_unique<Graph>(*target);
    compiler::CompilerCodelets compiler_codelets(*result.graph);
    std::vector<const Codelet*> codelets;
    Status built = ReadGraph(r, result, compiler_codelets, codelets);
    if (built) {
      auto program = ProgramBuilder().Read(r);
      if (program)
        result.program = std::move(*program);
      else
        built = program.error();
    }
    if (built && r.U8("end marker") != static_cast<uint8_t>(Section::kEnd))
      r.Fail("end marker", "missing");
    r.End("end marker");
    if (built && !r.ok()) built = Error(r.error());
    if (built) built = program::ValidateProgram(*result.graph, result.program);
    // The stored statistics, with their codelets resolved in the new graph
    // (Graph::Stats() would walk every vertex again).
    for (const NamedCodeletUsage& named : by_codelet) {
      if (!built) break;
      auto it = std::find_if(codelets.begin(), codelets.end(),
                             [&](const Codelet* codelet) { return codelet->name() == named.name; });
      if (it == codelets.end()) {
        built =
            Error(fmt::format("graph statistics: codelet '{}' is not in the graph", named.name));
        break;
      }
      result.graph_stats.by_codelet.push_back(named.usage);
      result.graph_stats.by_codelet.back().codelet = *it;
    }
    if (!built) {
      report.wait();
      return corrupted(built.error());
    }
  }
  Expected<report::CompilationReport> decoded = report.get();
  if (!decoded) return corrupted(decoded.error());
  result.report = std::move(*decoded);
  Executable executable{std::move(info), std::move(result), *target};
  return executable;
}

Expected<Executable> DeserializeExecutable(std::span<const uint8_t> bytes, std::string_view source,
                                           LoadParts parts) {
  TILEPROF_ASSIGN_OR_RETURN(
      Header header,
      ReadHeader(bytes, source,
                 parts == LoadParts::kReport ? format::Verify::kHead : format::Verify::kAll));
  return format::DeserializePayload(header, source, parts);
}

}  // namespace tileprof::engine::exec
