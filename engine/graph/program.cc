// Programs and their validation. See program.h.
#include "engine/graph/program.h"

#include <cassert>
#include <set>

#include <fmt/format.h>

namespace tileprof::engine::program {

struct Program::Node {
  ProgramKind kind = ProgramKind::kSequence;
  std::vector<Program> children;  // steps, or body / condition / then / else
  ComputeSetId compute_set = 0;
  Tensor source;
  Tensor destination;
  Tensor predicate;
  DataStream stream;
  uint32_t count = 0;
};

namespace {

std::shared_ptr<Program::Node> MakeNode(ProgramKind kind) {
  auto node = std::make_shared<Program::Node>();
  node->kind = kind;
  return node;
}

}  // namespace

std::string_view KindName(ProgramKind kind) {
  switch (kind) {
    case ProgramKind::kSequence:
      return "Sequence";
    case ProgramKind::kExecute:
      return "Execute";
    case ProgramKind::kCopy:
      return "Copy";
    case ProgramKind::kCopyFromStream:
      return "CopyFromStream";
    case ProgramKind::kCopyToStream:
      return "CopyToStream";
    case ProgramKind::kRepeat:
      return "Repeat";
    case ProgramKind::kRepeatWhileTrue:
      return "RepeatWhileTrue";
    case ProgramKind::kIf:
      return "If";
  }
  return "?";
}

std::string StepName(const Graph& graph, const Program& program) {
  switch (program.kind()) {
    case ProgramKind::kExecute:
      return graph.compute_set(program.compute_set()).name;
    case ProgramKind::kCopy: {
      const auto regions = program.destination().regions();
      return regions.empty()
                 ? std::string("Copy")
                 : fmt::format("Copy to {}", graph.variable(regions.front().variable).name);
    }
    case ProgramKind::kCopyFromStream:
      return fmt::format("Host to device: {}", graph.stream(program.stream().id).name);
    case ProgramKind::kCopyToStream:
      return fmt::format("Device to host: {}", graph.stream(program.stream().id).name);
    case ProgramKind::kRepeat:
      return fmt::format("Repeat({})", program.count());
    default:
      return std::string(KindName(program.kind()));
  }
}

ProgramKind Program::kind() const { return node_->kind; }
std::span<const Program> Program::steps() const {
  assert(kind() == ProgramKind::kSequence);
  return node_->children;
}
ComputeSetId Program::compute_set() const { return node_->compute_set; }
const Tensor& Program::source() const { return node_->source; }
const Tensor& Program::destination() const { return node_->destination; }
DataStream Program::stream() const { return node_->stream; }
uint32_t Program::count() const { return node_->count; }
const Tensor& Program::predicate() const { return node_->predicate; }
// Child layout: Repeat {body}; RepeatWhileTrue {condition, body}; If {then, else}.
const Program& Program::body() const {
  assert(kind() == ProgramKind::kRepeat || kind() == ProgramKind::kRepeatWhileTrue);
  return node_->children.back();
}
const Program& Program::condition() const {
  assert(kind() == ProgramKind::kRepeatWhileTrue);
  return node_->children.front();
}
const Program& Program::then_body() const {
  assert(kind() == ProgramKind::kIf);
  return node_->children.front();
}
const Program& Program::else_body() const {
  assert(kind() == ProgramKind::kIf);
  return node_->children.back();
}

Sequence::Sequence() : Program(MakeNode(ProgramKind::kSequence)) {}
Sequence::Sequence(std::initializer_list<Program> steps) : Sequence() {
  node_->children.assign(steps.begin(), steps.end());
}
void Sequence::Add(Program step) { node_->children.push_back(std::move(step)); }
void Sequence::Clear() { node_->children.clear(); }

Execute::Execute(ComputeSetId compute_set) : Program(MakeNode(ProgramKind::kExecute)) {
  node_->compute_set = compute_set;
}

Copy::Copy(Tensor source, Tensor destination) : Program(MakeNode(ProgramKind::kCopy)) {
  node_->source = std::move(source);
  node_->destination = std::move(destination);
}
Copy::Copy(DataStream source, Tensor destination)
    : Program(MakeNode(ProgramKind::kCopyFromStream)) {
  node_->stream = source;
  node_->destination = std::move(destination);
}
Copy::Copy(Tensor source, DataStream destination) : Program(MakeNode(ProgramKind::kCopyToStream)) {
  node_->source = std::move(source);
  node_->stream = destination;
}

Repeat::Repeat(uint32_t count, Program body) : Program(MakeNode(ProgramKind::kRepeat)) {
  node_->count = count;
  node_->children.push_back(std::move(body));
}

RepeatWhileTrue::RepeatWhileTrue(Program condition, Tensor predicate, Program body)
    : Program(MakeNode(ProgramKind::kRepeatWhileTrue)) {
  node_->predicate = std::move(predicate);
  node_->children.push_back(std::move(condition));
  node_->children.push_back(std::move(body));
}

If::If(Tensor predicate, Program then_body, Program else_body)
    : Program(MakeNode(ProgramKind::kIf)) {
  node_->predicate = std::move(predicate);
  node_->children.push_back(std::move(then_body));
  node_->children.push_back(std::move(else_body));
}

namespace {

class Validator {
 public:
  explicit Validator(const Graph& graph) : graph_(graph) {}

  Status Visit(const Program& program, const std::string& path) {
    const std::string where = fmt::format("{} ({})", path, KindName(program.kind()));
    if (on_stack_.count(program.id()) != 0) {
      return MakeError("{}: the program contains itself", where);
    }
    if (validated_.count(program.id()) != 0) return {};
    on_stack_.insert(program.id());
    TILEPROF_RETURN_IF_ERROR(CheckNode(program, path, where));
    on_stack_.erase(program.id());
    validated_.insert(program.id());
    return {};
  }

 private:
  Status CheckNode(const Program& program, const std::string& path, const std::string& where) {
    switch (program.kind()) {
      case ProgramKind::kSequence: {
        const auto steps = program.steps();
        for (size_t i = 0; i < steps.size(); ++i) {
          TILEPROF_RETURN_IF_ERROR(Visit(steps[i], fmt::format("{}[{}]", path, i)));
        }
        return {};
      }
      case ProgramKind::kExecute:
        if (program.compute_set() >= graph_.num_compute_sets()) {
          return MakeError("{}: no compute set {} (graph has {})", where, program.compute_set(),
                           graph_.num_compute_sets());
        }
        return {};
      case ProgramKind::kCopy: {
        TILEPROF_RETURN_IF_ERROR(graph_.CheckTensor(program.source(), where + ": source"));
        TILEPROF_RETURN_IF_ERROR(CheckWritable(program.destination(), where));
        const Tensor& src = program.source();
        const Tensor& dst = program.destination();
        if (src.element_type() != dst.element_type() || src.NumElements() != dst.NumElements()) {
          return MakeError("{}: source {} and destination {} differ in type or size", where,
                           src.ShapeString(), dst.ShapeString());
        }
        return {};
      }
      case ProgramKind::kCopyFromStream:
        TILEPROF_RETURN_IF_ERROR(CheckWritable(program.destination(), where));
        return CheckStream(program.stream(), StreamDirection::kHostToDevice, program.destination(),
                           where);
      case ProgramKind::kCopyToStream:
        TILEPROF_RETURN_IF_ERROR(graph_.CheckTensor(program.source(), where + ": source"));
        return CheckStream(program.stream(), StreamDirection::kDeviceToHost, program.source(),
                           where);
      case ProgramKind::kRepeat:
        return Visit(program.body(), path + ".body");
      case ProgramKind::kRepeatWhileTrue:
        TILEPROF_RETURN_IF_ERROR(CheckPredicate(program.predicate(), where));
        TILEPROF_RETURN_IF_ERROR(Visit(program.condition(), path + ".condition"));
        return Visit(program.body(), path + ".body");
      case ProgramKind::kIf:
        TILEPROF_RETURN_IF_ERROR(CheckPredicate(program.predicate(), where));
        TILEPROF_RETURN_IF_ERROR(Visit(program.then_body(), path + ".then"));
        return Visit(program.else_body(), path + ".else");
    }
    return MakeError("{}: unknown program kind", where);
  }

  Status CheckWritable(const Tensor& tensor, const std::string& where) {
    TILEPROF_RETURN_IF_ERROR(graph_.CheckTensor(tensor, where + ": destination"));
    for (const TensorRegion& region : tensor.regions()) {
      if (graph_.variable(region.variable).is_constant) {
        return MakeError("{}: destination includes {}", where,
                         graph_.DescribeVariable(region.variable));
      }
    }
    if (tensor.HasAliases()) return MakeError("{}: destination repeats elements", where);
    return {};
  }

  Status CheckPredicate(const Tensor& predicate, const std::string& where) {
    TILEPROF_RETURN_IF_ERROR(graph_.CheckTensor(predicate, where + ": predicate"));
    const ElementType type = predicate.element_type();
    if (predicate.NumElements() != 1 || !(type == ElementType::kPred || IsInteger(type))) {
      return MakeError("{}: predicate {} must be one pred or integer element", where,
                       predicate.ShapeString());
    }
    return {};
  }

  Status CheckStream(DataStream stream, StreamDirection direction, const Tensor& tensor,
                     const std::string& where) {
    if (stream.id >= graph_.num_streams()) {
      return MakeError("{}: no stream {} (graph has {})", where, stream.id, graph_.num_streams());
    }
    const StreamInfo& info = graph_.stream(stream.id);
    if (info.direction != direction) {
      return MakeError("{}: stream '{}' is {}", where, info.name,
                       info.direction == StreamDirection::kHostToDevice
                           ? "host-to-device, used as a destination"
                           : "device-to-host, used as a source");
    }
    if (info.type != tensor.element_type() || info.num_elements != tensor.NumElements()) {
      return MakeError("{}: stream '{}' carries {}[{}], the tensor is {}", where, info.name,
                       HloName(info.type), info.num_elements, tensor.ShapeString());
    }
    return {};
  }

  const Graph& graph_;
  std::set<const void*> on_stack_;
  std::set<const void*> validated_;
};

void Count(const Program& program, uint64_t depth, ProgramStats& stats) {
  stats.steps += 1;
  stats.by_kind[static_cast<size_t>(program.kind())] += 1;
  if (depth > stats.max_depth) stats.max_depth = depth;
  switch (program.kind()) {
    case ProgramKind::kSequence:
      for (const Program& step : program.steps()) Count(step, depth + 1, stats);
      break;
    case ProgramKind::kRepeat:
      Count(program.body(), depth + 1, stats);
      break;
    case ProgramKind::kRepeatWhileTrue:
      Count(program.condition(), depth + 1, stats);
      Count(program.body(), depth + 1, stats);
      break;
    case ProgramKind::kIf:
      Count(program.then_body(), depth + 1, stats);
      Count(program.else_body(), depth + 1, stats);
      break;
    default:
      break;
  }
}

}  // namespace

Status ValidateProgram(const Graph& graph, const Program& program) {
  return Validator(graph).Visit(program, "program");
}

ProgramStats CountSteps(const Program& program) {
  ProgramStats stats;
  Count(program, 1, stats);
  return stats;
}

}  // namespace tileprof::engine::program
