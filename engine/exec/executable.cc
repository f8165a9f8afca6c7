// Serialising and rebuilding executables. See executable.h for the layout.
#include "engine/exec/executable.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <unordered_map>

#include "common/file.h"
#include "common/hash.h"
#include "common/mapped_file.h"
#include "engine/codelets/codelets.h"
#include "engine/compiler/opaque.h"
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

enum class Section : uint8_t { kInfo = 1, kGraph, kProgram, kLowering, kReport, kEnd };

// ---------------------------------------------------------------------------
// Writing.

class Writer {
 public:
  void U8(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void Var(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  void Str(std::string_view text) {
    Var(text.size());
    out_.append(text);
  }
  void Raw(const void* data, size_t size) { out_.append(static_cast<const char*>(data), size); }
  void Fixed64(uint64_t value) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
  void Fixed32(uint32_t value) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
  void Shape(const std::vector<uint64_t>& shape) {
    Var(shape.size());
    for (uint64_t dim : shape) Var(dim);
  }
  void TensorValue(const Tensor& tensor) {
    U8(static_cast<uint8_t>(tensor.element_type()));
    Shape(tensor.shape());
    Var(tensor.regions().size());
    for (const TensorRegion& region : tensor.regions()) {
      Var(region.variable);
      Var(region.begin);
      Var(region.end - region.begin);
    }
  }
  // A section: its tag and an 8-byte length patched by EndSection, so a
  // reader can skip what it does not need.
  size_t BeginSection(Section section) {
    U8(static_cast<uint8_t>(section));
    Fixed64(0);
    return out_.size();
  }
  void EndSection(size_t start) {
    const uint64_t size = out_.size() - start;
    for (int i = 0; i < 8; ++i) out_[start - 8 + i] = static_cast<char>((size >> (8 * i)) & 0xff);
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

void WriteInfo(Writer& w, const ExecutableInfo& info) {
  const size_t section = w.BeginSection(Section::kInfo);
  w.Str(info.tool_version);
  w.Str(info.module_name);
  w.Fixed64(info.fingerprint);
  w.Str(info.target.preset);
  w.Var(info.target.num_ipus);
  w.Var(info.target.tiles_per_ipu.value_or(0));
  w.Str(info.key_text);
  w.Var(info.input_streams.size());
  for (const std::string& name : info.input_streams) w.Str(name);
  w.Var(info.output_streams.size());
  for (const std::string& name : info.output_streams) w.Str(name);
  w.EndSection(section);
}

void WriteGraph(Writer& w, const Graph& graph) {
  const size_t section = w.BeginSection(Section::kGraph);
  w.Var(graph.num_variables());
  for (VariableId id = 0; id < graph.num_variables(); ++id) {
    const VariableInfo& v = graph.variable(id);
    w.Str(v.name);
    w.U8(static_cast<uint8_t>(v.type));
    w.Shape(v.shape);
    w.U8(v.is_constant ? 1 : 0);
    if (v.is_constant) {
      w.Var(v.constant_data.size());
      w.Raw(v.constant_data.data(), v.constant_data.size());
    }
    std::vector<TileRun> runs = graph.TileMapping(id);
    w.Var(runs.size());
    uint64_t previous_end = 0;
    for (const TileRun& run : runs) {
      w.Var(run.begin - previous_end);  // runs are ascending and disjoint
      w.Var(run.end - run.begin);
      w.Var(run.tile);
      previous_end = run.end;
    }
  }
  // Codelets by first use; vertices refer to them by index.
  std::unordered_map<const Codelet*, uint32_t> codelet_index;
  std::vector<const Codelet*> codelets;
  for (VertexId id = 0; id < graph.num_vertices(); ++id) {
    const Codelet* codelet = graph.vertex(id).codelet;
    if (codelet_index.emplace(codelet, codelets.size()).second) codelets.push_back(codelet);
  }
  w.Var(codelets.size());
  for (const Codelet* codelet : codelets) w.Str(codelet->name());
  w.Var(graph.num_compute_sets());
  for (ComputeSetId id = 0; id < graph.num_compute_sets(); ++id) w.Str(graph.compute_set(id).name);
  w.Var(graph.num_vertices());
  for (VertexId id = 0; id < graph.num_vertices(); ++id) {
    const VertexInfo& v = graph.vertex(id);
    w.Var(codelet_index.at(v.codelet));
    w.Var(v.compute_set);
    w.Str(v.debug_name);
    w.Var(v.tile ? uint64_t{*v.tile} + 1 : 0);
    for (const std::optional<Tensor>& field : v.fields) {
      w.U8(field ? 1 : 0);
      if (field) w.TensorValue(*field);
    }
    for (const std::optional<uint32_t>& param : v.params) {
      w.U8(param ? 1 : 0);
      if (param) w.Var(*param);
    }
    w.U8(v.perf_estimate ? 1 : 0);
    if (v.perf_estimate) w.Var(*v.perf_estimate);
  }
  w.Var(graph.num_streams());
  for (StreamId id = 0; id < graph.num_streams(); ++id) {
    const StreamInfo& s = graph.stream(id);
    w.Str(s.name);
    w.U8(static_cast<uint8_t>(s.type));
    w.Var(s.num_elements);
    w.U8(static_cast<uint8_t>(s.direction));
  }
  w.EndSection(section);
}

// Nodes in post-order, each written once however often it is used; children
// are referred to by their index, which is always smaller than the parent's.
class ProgramWriter {
 public:
  explicit ProgramWriter(Writer& w) : w_(w) {}

  void Write(const program::Program& root) {
    Visit(root);
    const size_t section = w_.BeginSection(Section::kProgram);
    w_.Var(nodes_.size());
    for (const program::Program& node : nodes_) WriteNode(node);
    w_.EndSection(section);
  }

 private:
  uint32_t Visit(const program::Program& p) {
    if (auto it = index_.find(p.id()); it != index_.end()) return it->second;
    using program::ProgramKind;
    switch (p.kind()) {
      case ProgramKind::kSequence:
        for (const program::Program& step : p.steps()) Visit(step);
        break;
      case ProgramKind::kRepeat: Visit(p.body()); break;
      case ProgramKind::kRepeatWhileTrue:
        Visit(p.condition());
        Visit(p.body());
        break;
      case ProgramKind::kIf:
        Visit(p.then_body());
        Visit(p.else_body());
        break;
      default: break;
    }
    const auto index = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(p);
    index_.emplace(p.id(), index);
    return index;
  }

  uint32_t Index(const program::Program& p) const { return index_.at(p.id()); }

  void WriteNode(const program::Program& p) {
    using program::ProgramKind;
    w_.U8(static_cast<uint8_t>(p.kind()));
    switch (p.kind()) {
      case ProgramKind::kSequence:
        w_.Var(p.steps().size());
        for (const program::Program& step : p.steps()) w_.Var(Index(step));
        break;
      case ProgramKind::kExecute: w_.Var(p.compute_set()); break;
      case ProgramKind::kCopy:
        w_.TensorValue(p.source());
        w_.TensorValue(p.destination());
        break;
      case ProgramKind::kCopyFromStream:
        w_.Var(p.stream().id);
        w_.TensorValue(p.destination());
        break;
      case ProgramKind::kCopyToStream:
        w_.TensorValue(p.source());
        w_.Var(p.stream().id);
        break;
      case ProgramKind::kRepeat:
        w_.Var(p.count());
        w_.Var(Index(p.body()));
        break;
      case ProgramKind::kRepeatWhileTrue:
        w_.Var(Index(p.condition()));
        w_.TensorValue(p.predicate());
        w_.Var(Index(p.body()));
        break;
      case ProgramKind::kIf:
        w_.TensorValue(p.predicate());
        w_.Var(Index(p.then_body()));
        w_.Var(Index(p.else_body()));
        break;
    }
  }

  Writer& w_;
  std::vector<program::Program> nodes_;
  std::unordered_map<const void*, uint32_t> index_;
};

void WriteLowering(Writer& w, const compiler::CompileResult& result) {
  const compiler::LoweringStats& s = result.lowering;
  const size_t section = w.BeginSection(Section::kLowering);
  w.Var(s.instructions);
  w.Var(s.opaque_ops);
  w.Var(s.exchanges);
  w.Var(s.program_steps);
  w.Var(s.opaque_opcodes.size());
  for (const std::string& op : s.opaque_opcodes) w.Str(op);
  w.Var(s.constants_without_values.size());
  for (const std::string& name : s.constants_without_values) w.Str(name);
  w.Var(result.tiles_out_of_memory);
  const GraphStats& g = result.graph_stats;
  for (uint64_t value : {g.num_variables, g.num_constants, g.variable_bytes, g.constant_bytes, g.num_compute_sets,
                         g.num_vertices, g.num_edges, g.num_streams, g.edge_pointer_bytes, g.internal_state_bytes,
                         g.vertex_code_bytes, g.tiles_used})
    w.Var(value);
  w.Var(g.by_codelet.size());
  for (const CodeletUsage& usage : g.by_codelet) {
    w.Str(usage.codelet->name());
    w.Var(usage.vertices);
    w.Var(usage.edges);
    w.Var(usage.state_bytes);
    w.Var(usage.tiles);
  }
  w.EndSection(section);
}

uint64_t Checksum(std::span<const uint8_t> header32, std::span<const uint8_t> payload) {
  Hasher hasher;
  hasher.Add(std::string_view(reinterpret_cast<const char*>(header32.data()), header32.size()));
  hasher.Add(std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()));
  return hasher.Digest();
}

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
    if (ok() && value >= limit) Fail(field, fmt::format("{} is out of range (limit {})", value, limit));
    return ok() ? value : 0;
  }
  uint32_t U32Var(std::string_view field) { return static_cast<uint32_t>(Below(uint64_t{1} << 32, field)); }
  // A count of items each taking at least `min_bytes`, so that a huge count
  // in a small file is an error before anything is allocated.
  uint64_t Count(std::string_view field, uint64_t min_bytes = 1) {
    uint64_t count = Var(field);
    if (ok() && count > remaining() / min_bytes)
      Fail(field, fmt::format("count {} exceeds what the remaining {} bytes can hold", count, remaining()));
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
  std::string Str(std::string_view field) {
    uint64_t size = Var(field);
    auto bytes = Bytes(size, field);
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
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
    uint64_t rank = Var(field);
    if (ok() && rank > kMaxRank) Fail(field, fmt::format("rank {} is above {}", rank, kMaxRank));
    std::vector<uint64_t> shape;
    for (uint64_t i = 0; ok() && i < rank; ++i) shape.push_back(Var(field));
    return shape;
  }
  Tensor TensorValue(std::string_view field) {
    ElementType type = Type(field);
    std::vector<uint64_t> shape = Shape(field);
    uint64_t count = Count(field, 3);
    regions_.clear();
    for (uint64_t i = 0; ok() && i < count; ++i) {
      TensorRegion region;
      region.variable = U32Var(field);
      region.begin = Var(field);
      uint64_t size = Var(field);
      if (ok() && size > UINT64_MAX - region.begin) Fail(field, "run end overflows");
      region.end = region.begin + size;
      regions_.push_back(region);
    }
    if (!ok()) return Tensor();
    auto tensor = Tensor::FromRegions(type, std::move(shape), regions_);
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
    if (ok() && remaining() != 0) Fail(name, fmt::format("{} unexpected bytes at the end of the section", remaining()));
  }
  void Adopt(const Reader& sub) {
    if (ok() && !sub.ok()) error_ = sub.error_;
  }

 private:
  std::span<const uint8_t> data_;
  uint64_t base_;
  uint64_t pos_ = 0;
  std::string error_;
  std::vector<TensorRegion> regions_;  // reused by TensorValue
};

struct Header {
  uint32_t version = 0;
  uint64_t key = 0;
  std::span<const uint8_t> payload;
};

uint64_t LoadLe(const uint8_t* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{p[i]} << (8 * i);
  return value;
}

// Magic, version and payload size, from the first bytes of a file of
// `file_size` bytes (`head` may be shorter than the header only when the
// file is).
Expected<Header> CheckHeader(std::span<const uint8_t> head, uint64_t file_size, std::string_view source) {
  const auto fail = [&](std::string what) { return Error(fmt::format("{}: {}", source, what)); };
  if (head.size() < kExecutableMagic.size() ||
      std::memcmp(head.data(), kExecutableMagic.data(), kExecutableMagic.size()) != 0) {
    return fail("not a tileprof executable (bad magic)");
  }
  if (file_size < kExecutableHeaderBytes || head.size() < kExecutableHeaderBytes) {
    return fail(fmt::format("truncated executable: {} bytes, the header alone is {}", file_size,
                            kExecutableHeaderBytes));
  }
  Header header;
  header.version = static_cast<uint32_t>(LoadLe(head.data() + 8, 4));
  if (header.version != kExecutableFormatVersion) {
    return fail(fmt::format("executable format version {}, this tileprof reads version {}", header.version,
                            kExecutableFormatVersion));
  }
  header.key = LoadLe(head.data() + 16, 8);
  const uint64_t payload_size = LoadLe(head.data() + 24, 8);
  const uint64_t actual = file_size - kExecutableHeaderBytes;
  if (payload_size != actual) {
    return fail(fmt::format("{} executable: the header says {} bytes of payload, the file has {}",
                            actual < payload_size ? "truncated" : "corrupted", payload_size, actual));
  }
  return header;
}

Error ChecksumMismatch(std::string_view source, uint64_t stored, uint64_t computed) {
  return Error(fmt::format("{}: corrupted executable: checksum mismatch (stored {:#018x}, computed {:#018x})", source,
                           stored, computed));
}

Expected<Header> ReadHeader(std::span<const uint8_t> bytes, std::string_view source, bool verify_checksum = true) {
  TILEPROF_ASSIGN_OR_RETURN(Header header, CheckHeader(bytes, bytes.size(), source));
  header.payload = bytes.subspan(kExecutableHeaderBytes);
  if (!verify_checksum) return header;
  const uint64_t stored = LoadLe(bytes.data() + 32, 8);
  const uint64_t computed = Checksum(bytes.first(32), header.payload);
  if (computed != stored) return ChecksumMismatch(source, stored, computed);
  return header;
}

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

Status ReadGraph(Reader& outer, Graph& graph, compiler::CompilerCodelets& compiler_codelets,
                 std::vector<const Codelet*>& codelets) {
  Reader r = outer.Sub(Section::kGraph, "graph section");
  const uint64_t num_variables = r.Count("variable count", 4);
  for (uint64_t id = 0; r.ok() && id < num_variables; ++id) {
    std::string name = r.Str("variable name");
    ElementType type = r.Type("variable type");
    std::vector<uint64_t> shape = r.Shape("variable shape");
    const bool is_constant = r.U8("variable kind") != 0;
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
    const Tensor flat = tensor->Flatten();
    const uint64_t elements = flat.NumElements();
    uint64_t position = 0;
    for (uint64_t i = 0, n = r.Count("tile runs", 3); r.ok() && i < n; ++i) {
      const uint64_t gap = r.Var("tile run start");
      const uint64_t size = r.Var("tile run size");
      const uint32_t tile = r.U32Var("tile run tile");
      if (!r.ok()) break;
      if (gap > elements - position || size > elements - position - gap || size == 0) {
        r.Fail("tile run", fmt::format("run does not fit {}", graph.DescribeVariable(static_cast<VariableId>(id))));
        break;
      }
      position += gap;
      auto piece = flat.Slice(position, position + size);
      Status mapped = piece ? graph.SetTileMapping(*piece, tile) : Status(piece.error());
      if (!mapped) r.Fail("tile run", mapped.error().message());
      position += size;
    }
  }
  // Codelets: the catalogue's, or the compiler's own (recreated by name).
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
  for (uint64_t i = 0, n = r.Count("compute set count"); r.ok() && i < n; ++i) {
    graph.AddComputeSet(r.Str("compute set name"));
  }
  const uint64_t num_vertices = r.Count("vertex count", 4);
  for (uint64_t id = 0; r.ok() && id < num_vertices; ++id) {
    const Codelet* codelet = codelets.empty() ? nullptr : codelets[r.Below(codelets.size(), "vertex codelet")];
    if (codelet == nullptr) {
      r.Fail("vertex codelet", "no codelets");
      break;
    }
    const uint32_t compute_set = r.U32Var("vertex compute set");
    std::string debug_name = r.Str("vertex name");
    const uint64_t tile = r.Below(uint64_t{1} << 32, "vertex tile");
    if (!r.ok()) break;
    auto vertex = graph.AddVertex(compute_set, *codelet, debug_name);
    if (!vertex) {
      r.Fail("vertex", vertex.error().message());
      break;
    }
    Status status;
    if (tile != 0) status = graph.SetTileMapping(*vertex, static_cast<uint32_t>(tile - 1));
    for (const FieldSpec& field : codelet->fields()) {
      if (!status || !r.ok()) break;
      if (r.U8("field connected") == 0) continue;
      Tensor tensor = r.TensorValue("field tensor");
      if (r.ok()) status = graph.Connect((*vertex)[field.name], tensor);
    }
    for (const std::string& param : codelet->params()) {
      if (!status || !r.ok()) break;
      if (r.U8("parameter set") == 0) continue;
      const uint32_t value = r.U32Var("parameter value");
      if (r.ok()) status = graph.SetInitialValue((*vertex)[param], value);
    }
    if (status && r.U8("perf estimate set") != 0) {
      const uint64_t cycles = r.Var("perf estimate");
      if (r.ok()) status = graph.SetPerfEstimate(*vertex, cycles);
    }
    if (!status) r.Fail("vertex", status.error().message());
  }
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
    if (root.kind() != program::ProgramKind::kSequence) return Error("program: the root is not a Sequence");
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
      case ProgramKind::kExecute: node.program = program::Execute(r.U32Var("compute set")); break;
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
      r.Fail("program node", fmt::format("the unrolled program has more than {} steps", kMaxExpandedSteps));
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

void ReadLowering(Reader& outer, compiler::CompileResult& result, std::vector<NamedCodeletUsage>& by_codelet) {
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
  for (uint64_t* value : {&g.num_variables, &g.num_constants, &g.variable_bytes, &g.constant_bytes,
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
  TILEPROF_ASSIGN_OR_RETURN(report::ReportDocument document,
                            report::ReadCborReport(bytes, fmt::format("{} (embedded report)", source)));
  if (!document.compilation) return Error("the embedded report has no compilation part");
  return std::move(*document.compilation);
}

}  // namespace

std::string SerializeExecutable(const ExecutableInfo& given, const compiler::CompileResult& result) {
  ExecutableInfo info = given;
  info.input_streams.clear();
  info.output_streams.clear();
  for (StreamId id = 0; id < result.graph->num_streams(); ++id) {
    const StreamInfo& stream = result.graph->stream(id);
    (stream.direction == StreamDirection::kHostToDevice ? info.input_streams : info.output_streams)
        .push_back(stream.name);
  }
  Writer w;
  w.Raw(kExecutableMagic.data(), kExecutableMagic.size());
  w.Fixed32(kExecutableFormatVersion);
  w.Fixed32(0);
  w.Fixed64(info.key);
  w.Fixed64(0);  // payload size, patched below
  w.Fixed64(0);  // checksum, patched below
  WriteInfo(w, info);
  WriteLowering(w, result);
  const size_t report_section = w.BeginSection(Section::kReport);
  const std::string cbor = report::WriteCborReport(report::ReportDocument{.compilation = result.report, .execution = {}});
  w.Raw(cbor.data(), cbor.size());
  w.EndSection(report_section);
  WriteGraph(w, *result.graph);
  ProgramWriter(w).Write(result.program);
  w.U8(static_cast<uint8_t>(Section::kEnd));

  std::string& bytes = w.bytes();
  const uint64_t payload_size = bytes.size() - kExecutableHeaderBytes;
  for (int i = 0; i < 8; ++i) bytes[24 + i] = static_cast<char>((payload_size >> (8 * i)) & 0xff);
  auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint64_t checksum =
      Checksum({data, 32}, {data + kExecutableHeaderBytes, static_cast<size_t>(payload_size)});
  for (int i = 0; i < 8; ++i) bytes[32 + i] = static_cast<char>((checksum >> (8 * i)) & 0xff);
  return std::move(bytes);
}

Status VerifyExecutable(std::span<const uint8_t> bytes, std::string_view source) {
  TILEPROF_ASSIGN_OR_RETURN(Header header, ReadHeader(bytes, source));
  (void)header;
  return {};
}

Expected<ExecutableInfo> ReadExecutableInfo(std::span<const uint8_t> bytes, std::string_view source,
                                            bool verify_checksum) {
  TILEPROF_ASSIGN_OR_RETURN(Header header, ReadHeader(bytes, source, verify_checksum));
  Reader r(header.payload, kExecutableHeaderBytes);
  ExecutableInfo info = ReadInfo(r, header);
  if (!r.ok()) return Error(fmt::format("{}: corrupted executable: {}", source, r.error()));
  return info;
}

namespace {

// Everything after the header checks. With kReport, header.payload need
// only reach the end of the report section.
Expected<Executable> DeserializePayload(const Header& header, std::string_view source, LoadParts parts) {
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
  std::future<Expected<report::CompilationReport>> report =
      std::async(parts == LoadParts::kAll ? std::launch::async : std::launch::deferred,
                 [&report_reader, source] { return ReadReport(report_reader, source); });
  if (parts == LoadParts::kAll) {
    result.graph = std::make_unique<Graph>(*target);
    compiler::CompilerCodelets compiler_codelets(*result.graph);
    std::vector<const Codelet*> codelets;
    Status built = ReadGraph(r, *result.graph, compiler_codelets, codelets);
    if (built) {
      auto program = ProgramBuilder().Read(r);
      if (program) result.program = std::move(*program);
      else built = program.error();
    }
    if (built && r.U8("end marker") != static_cast<uint8_t>(Section::kEnd)) r.Fail("end marker", "missing");
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
        built = Error(fmt::format("graph statistics: codelet '{}' is not in the graph", named.name));
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

}  // namespace

Expected<Executable> DeserializeExecutable(std::span<const uint8_t> bytes, std::string_view source,
                                           LoadParts parts) {
  TILEPROF_ASSIGN_OR_RETURN(Header header, ReadHeader(bytes, source));
  return DeserializePayload(header, source, parts);
}

namespace {

// kReport from a file: the whole file is checksummed through one small
// buffer, and only the sections before the graph are kept, so a report-only
// load neither maps nor copies the bulk of a large executable (and a file
// truncated meanwhile is a short read, not a SIGBUS).
Expected<Executable> ReadReportStreaming(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Error(fmt::format("{}: not a regular file", path));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  // Exactly `length` bytes at `offset`, or nothing (short file).
  const auto read_at = [&](uint64_t offset, uint64_t length) -> std::optional<std::string> {
    std::string out(length, '\0');
    uint64_t done = 0;
    while (done < length) {
      ssize_t n = ::pread(fd, out.data() + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      done += static_cast<uint64_t>(n);
    }
    return out;
  };
  const auto as_bytes = [](const std::string& text) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  };
  const auto whole_file = [&]() -> Expected<Executable> {
    // Odd files: the in-memory path's checks name the problem.
    TILEPROF_ASSIGN_OR_RETURN(std::string whole, ReadFile(path));
    return DeserializeExecutable(as_bytes(whole), path, LoadParts::kReport);
  };
  if (size < kExecutableHeaderBytes) return whole_file();
  // The sections before the graph: info, lowering, report (tag + 8-byte length each).
  uint64_t end = kExecutableHeaderBytes;
  for (int section = 0; section < 3; ++section) {
    if (size - end < 9) return whole_file();
    auto tag_and_length = read_at(end, 9);
    if (!tag_and_length) return whole_file();
    const uint64_t length = LoadLe(reinterpret_cast<const uint8_t*>(tag_and_length->data()) + 1, 8);
    if (length > size - end - 9) return whole_file();
    end += 9 + length;
  }
  auto prefix = read_at(0, end);
  if (!prefix) return whole_file();
  // The checksum covers bytes [0, 32) and [40, end of file).
  Hasher hasher;
  hasher.Add(std::string_view(*prefix).substr(0, 32));
  std::vector<char> buffer(1 << 20);
  uint64_t offset = kExecutableHeaderBytes;
  while (offset < size) {
    ssize_t n = ::pread(fd, buffer.data(), std::min<uint64_t>(buffer.size(), size - offset), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return whole_file();  // shrank meanwhile
    hasher.Add(std::string_view(buffer.data(), static_cast<size_t>(n)));
    offset += static_cast<uint64_t>(n);
  }
  TILEPROF_ASSIGN_OR_RETURN(Header header, CheckHeader(as_bytes(*prefix), size, path));
  const uint64_t stored = LoadLe(reinterpret_cast<const uint8_t*>(prefix->data()) + 32, 8);
  if (const uint64_t computed = hasher.Digest(); computed != stored) return ChecksumMismatch(path, stored, computed);
  header.payload = as_bytes(*prefix).subspan(kExecutableHeaderBytes);
  return DeserializePayload(header, path, LoadParts::kReport);
}
}  // namespace

Expected<Executable> ReadExecutableFile(const std::string& path, LoadParts parts) {
  if (parts == LoadParts::kReport) return ReadReportStreaming(path);
  // Read, not mapped: a file truncated under a mapping would raise SIGBUS.
  TILEPROF_ASSIGN_OR_RETURN(std::string whole, ReadFile(path));
  return DeserializeExecutable({reinterpret_cast<const uint8_t*>(whole.data()), whole.size()}, path, parts);
}

}  // namespace tileprof::engine::exec
