// Rebuilding an executable's graph and program from its bytes, through the
// graph's and the program's public APIs (every mapping, edge and parameter
// checked as the compiler's own calls are). See executable_reader.h.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "engine/codelets/codelets.h"
#include "engine/exec/executable_reader.h"

namespace tileprof::engine::exec::read_internal {
namespace {

using format::VariableKind;

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

}  // namespace

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

Expected<program::Sequence> ReadProgram(Reader& outer) { return ProgramBuilder().Read(outer); }

}  // namespace tileprof::engine::exec::read_internal
