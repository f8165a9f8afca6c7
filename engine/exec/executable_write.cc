// Serialising executables. See executable.h for the layout.
#include <fmt/format.h>

#include <unordered_map>

#include "engine/exec/executable.h"
#include "engine/exec/executable_format.h"
#include "reports/cbor_codec.h"

namespace tileprof::engine::exec {
namespace {

using format::Section;
using format::VariableKind;

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
  void Shape(std::span<const uint64_t> shape) {
    Var(shape.size());
    for (uint64_t dim : shape) Var(dim);
  }
  // A Tensor or a FieldView.
  template <typename T>
  void TensorValue(const T& tensor) {
    U8(static_cast<uint8_t>(tensor.element_type()));
    Shape(tensor.shape());
    Var(tensor.regions().size());
    for (const TensorRegion& region : tensor.regions()) {
      Var(region.variable);
      Var(region.begin);
      Var(region.end - region.begin);
    }
  }
  // A vertex field as the graph keeps it: its runs of equally spaced
  // regions (a row-per-region view is one run, not a region per row).
  void FieldRuns(const FieldView& field) {
    U8(static_cast<uint8_t>(field.element_type()));
    Shape(field.shape());
    const std::span<const StridedRegion> runs = field.regions().runs();
    Var(runs.size());
    for (const StridedRegion& run : runs) {
      Var(run.variable);
      Var(run.begin);
      Var(run.length);
      Var(run.count);
      // Zigzag, so that a small negative stride is a short number.
      Var((static_cast<uint64_t>(run.stride) << 1) ^ static_cast<uint64_t>(run.stride >> 63));
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

// The kind byte of a variable (VariableKind): the valueless constants are
// graph variables, told apart only by the compile result's lists.
std::vector<uint8_t> VariableKinds(const compiler::CompileResult& result) {
  const Graph& graph = *result.graph;
  std::vector<uint8_t> kinds(graph.num_variables(), uint8_t(VariableKind::kVariable));
  for (VariableId id = 0; id < graph.num_variables(); ++id)
    if (graph.variable(id).is_constant) kinds[id] = uint8_t(VariableKind::kConstant);
  for (VariableId id : result.valueless_constants) kinds[id] = uint8_t(VariableKind::kValueless);
  for (VariableId id : result.elided_constants) kinds[id] = uint8_t(VariableKind::kElided);
  return kinds;
}

void WriteGraph(Writer& w, const compiler::CompileResult& result) {
  const Graph& graph = *result.graph;
  const std::vector<uint8_t> kinds = VariableKinds(result);
  const size_t section = w.BeginSection(Section::kGraph);
  w.Var(graph.num_variables());
  for (VariableId id = 0; id < graph.num_variables(); ++id) {
    const VariableInfo& v = graph.variable(id);
    w.Str(v.name);
    w.U8(static_cast<uint8_t>(v.type));
    w.Shape(v.shape);
    w.U8(kinds[id]);
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
    // 0 for the previous vertex's name (an op's vertices come together and
    // share it), else its length + 1 and the name.
    if (id > 0 && v.debug_name == graph.vertex(id - 1).debug_name) {
      w.Var(0);
    } else {
      w.Var(v.debug_name.size() + 1);
      w.Raw(v.debug_name.data(), v.debug_name.size());
    }
    w.Var(v.tile ? uint64_t{*v.tile} + 1 : 0);
    for (const FieldView& field : graph.fields(id)) {
      w.U8(field.connected() ? 1 : 0);
      if (field.connected()) w.FieldRuns(field);
    }
    for (const std::optional<uint32_t>& param : graph.params(id)) {
      w.U8(param ? 1 : 0);
      if (param) w.Var(*param);
    }
    const std::optional<uint64_t> estimate = graph.PerfEstimate(id);
    w.U8(estimate ? 1 : 0);
    if (estimate) w.Var(*estimate);
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
      case ProgramKind::kRepeat:
        Visit(p.body());
        break;
      case ProgramKind::kRepeatWhileTrue:
        Visit(p.condition());
        Visit(p.body());
        break;
      case ProgramKind::kIf:
        Visit(p.then_body());
        Visit(p.else_body());
        break;
      default:
        break;
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
      case ProgramKind::kExecute:
        w_.Var(p.compute_set());
        break;
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
  for (uint64_t value :
       {g.num_variables, g.num_constants, g.variable_bytes, g.constant_bytes, g.num_compute_sets,
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

}  // namespace

std::string SerializeExecutable(const ExecutableInfo& given,
                                const compiler::CompileResult& result) {
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
  w.Fixed64(0);  // head checksum, patched below
  WriteInfo(w, info);
  WriteLowering(w, result);
  const size_t report_section = w.BeginSection(Section::kReport);
  const std::string cbor = report::WriteCborReport(
      report::ReportDocument{.compilation = result.report, .execution = {}});
  w.Raw(cbor.data(), cbor.size());
  w.EndSection(report_section);
  WriteGraph(w, result);
  ProgramWriter(w).Write(result.program);
  w.U8(static_cast<uint8_t>(Section::kEnd));

  std::string& bytes = w.bytes();
  format::Seal({reinterpret_cast<uint8_t*>(bytes.data()), bytes.size()});
  return std::move(bytes);
}

}  // namespace tileprof::engine::exec
