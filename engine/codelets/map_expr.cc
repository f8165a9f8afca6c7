// The fused elementwise expression codelet; see map_expr.h.
#include "engine/codelets/map_expr.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"

namespace tileprof::engine {
namespace {

constexpr std::string_view kPrefix = "tileprof::MapExpr<";

// A node's operation as a catalogue codelet, and its operand count.
struct Step {
  const Codelet* codelet = nullptr;
  ElementType type = ElementType::kF32;  // of the node's value
  cost::OpClass op_class = cost::OpClass::kSimple;
};

// Types every node and the catalogue codelet each operation node runs.
Expected<std::vector<Step>> Resolve(std::span<const MapInput> inputs,
                                    std::span<const MapNode> nodes) {
  if (inputs.empty() || nodes.empty() || nodes.size() > kMaxMapExprNodes)
    return MakeError("an expression needs 1 to {} nodes and an input", kMaxMapExprNodes);
  std::vector<Step> steps;
  steps.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const MapNode& node = nodes[i];
    auto operand = [&](uint32_t n) -> Expected<ElementType> {
      if (n >= i) return MakeError("node {} reads node {}, which is not before it", i, n);
      return steps[n].type;
    };
    Step step;
    switch (node.kind) {
      case MapNode::Kind::kInput:
        if (node.a >= inputs.size()) return MakeError("node {} reads input {}", i, node.a);
        step.type = inputs[node.a].type;
        break;
      case MapNode::Kind::kUnary: {
        TILEPROF_ASSIGN_OR_RETURN(ElementType t, operand(node.a));
        const auto op = static_cast<UnaryOp>(node.op);
        TILEPROF_ASSIGN_OR_RETURN(step.codelet, GetUnaryOpCodelet(op, t));
        step.type = UnaryOutputType(op, t);
        step.op_class = UnaryOpClass(op);
        break;
      }
      case MapNode::Kind::kBinary: {
        TILEPROF_ASSIGN_OR_RETURN(ElementType t, operand(node.a));
        TILEPROF_ASSIGN_OR_RETURN(ElementType u, operand(node.b));
        if (t != u) return MakeError("node {} combines {} and {}", i, HloName(t), HloName(u));
        const auto op = static_cast<BinaryOp>(node.op);
        TILEPROF_ASSIGN_OR_RETURN(step.codelet, GetBinaryOpCodelet(op, t));
        step.type = IsComparison(op) ? ElementType::kPred : t;
        step.op_class = BinaryOpClass(op, t);
        break;
      }
      case MapNode::Kind::kSelect:
      case MapNode::Kind::kClamp: {
        TILEPROF_ASSIGN_OR_RETURN(ElementType a, operand(node.a));
        TILEPROF_ASSIGN_OR_RETURN(ElementType b, operand(node.b));
        TILEPROF_ASSIGN_OR_RETURN(ElementType c, operand(node.c));
        const bool select = node.kind == MapNode::Kind::kSelect;
        if (select ? (a != ElementType::kPred || b != c) : (a != b || b != c))
          return MakeError("node {}: operands {}, {}, {} do not fit a {}", i, HloName(a),
                           HloName(b), HloName(c), select ? "select" : "clamp");
        step.type = b;
        TILEPROF_ASSIGN_OR_RETURN(step.codelet, select ? GetSelectCodelet(b) : GetClampCodelet(b));
        break;
      }
      case MapNode::Kind::kConvert: {
        TILEPROF_ASSIGN_OR_RETURN(ElementType t, operand(node.a));
        TILEPROF_ASSIGN_OR_RETURN(step.codelet, GetCastCodelet(t, node.type));
        step.type = node.type;
        break;
      }
    }
    steps.push_back(step);
  }
  return steps;
}

// The parameters: first, firstHi, then inner, size, lo per spread input.
std::vector<std::string> ParamNames(std::span<const MapInput> inputs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].spread) continue;
    if (names.empty()) names = {"first", "firstHi"};
    for (const char* p : {"inner", "size", "lo"}) names.push_back(fmt::format("{}{}", p, i));
  }
  return names;
}

// `out` filled with copies of `value` (out's size a multiple of value's):
// the filled part doubled at each copy, as a copy per element of a size
// known only at run time was a library call each, a third of a ReLU.
void Repeat(std::span<const std::byte> value, std::span<std::byte> out) {
  if (out.empty()) return;
  std::memcpy(out.data(), value.data(), value.size());
  for (size_t filled = value.size(); filled < out.size();) {
    const size_t count = std::min(filled, out.size() - filled);
    std::memcpy(out.data() + filled, out.data(), count);
    filled += count;
  }
}

class MapExprCodelet final : public Codelet {
 public:
  MapExprCodelet(std::string name, std::vector<FieldSpec> fields, std::vector<MapInput> inputs,
                 std::vector<MapNode> nodes, std::vector<Step> steps)
      : Codelet(
            std::move(name), ExecutionKind::kSupervisor, std::move(fields), ParamNames(inputs),
            kMapExprBaseCodeBytes + kMapExprCodeBytesPerNode * static_cast<uint32_t>(nodes.size())),
        inputs_(std::move(inputs)),
        nodes_(std::move(nodes)),
        steps_(std::move(steps)) {}

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t n = shape.field_elements[inputs_.size()];
    size_t param = 2;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].spread) {
        const uint32_t inner = shape.params[param], size = shape.params[param + 1],
                       lo = shape.params[param + 2];
        param += 3;
        if (inner == 0 || size == 0 || lo >= size || shape.field_elements[i] > size - lo)
          return MakeError("spread field 'in{}': {} elements from {} of {} (inner {})", i,
                           shape.field_elements[i], lo, size, inner);
        continue;
      }
      if (!inputs_[i].scalar && shape.field_elements[i] != n)
        return MakeError("field 'in{}' has {} elements, 'out' has {}", i, shape.field_elements[i],
                         n);
    }
    return {};
  }

  // One pass: a load per vector input and element vector, each node's
  // operation, a store.
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const ElementType out = steps_.back().type;
    uint64_t per_vector = cost::kMemoryAccessCycles;  // the store
    for (const MapInput& input : inputs_)
      if (!input.scalar) per_vector += cost::kMemoryAccessCycles;
    for (const Step& step : steps_)
      if (step.codelet != nullptr) per_vector += cost::OpCycles(step.op_class, step.type);
    return cost::SupervisorLoop(shape.field_elements[inputs_.size()], cost::Width(target, out),
                                per_vector, target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const size_t k = inputs_.size();
    const uint64_t n = io.fields[k].size() / SizeOf(steps_.back().type);
    // Each node's values, one buffer a node (the root writes `out`). The
    // buffers are the thread's, kept from vertex to vertex: a vertex's
    // allocations cost more than its arithmetic on the short runs most
    // tiles hold.
    thread_local std::vector<std::vector<std::byte>> buffers;
    thread_local std::vector<std::span<std::byte>> values;
    if (buffers.size() < nodes_.size()) buffers.resize(nodes_.size());
    values.assign(nodes_.size(), {});
    const auto buffer = [&](size_t i, size_t bytes) {
      buffers[i].resize(bytes);
      values[i] = buffers[i];
      return values[i];
    };
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const MapNode& node = nodes_[i];
      const size_t bytes = n * SizeOf(steps_[i].type);
      if (node.kind == MapNode::Kind::kInput) {
        const std::span<std::byte> in = io.fields[node.a];
        if (inputs_[node.a].spread) {
          TILEPROF_RETURN_IF_ERROR(Spread(io, node.a, n, buffer(i, bytes)));
          continue;
        }
        if (!inputs_[node.a].scalar) {
          values[i] = in;
          continue;
        }
        // A scalar repeated for the codelets, which take a vector.
        Repeat(in, buffer(i, bytes));
        continue;
      }
      if (i + 1 == nodes_.size()) {
        values[i] = io.fields[k];
      } else {
        buffer(i, bytes);
      }
      std::array<std::span<std::byte>, 4> fields;
      size_t count = 0;
      switch (node.kind) {
        case MapNode::Kind::kUnary:
        case MapNode::Kind::kConvert:
          fields = {values[node.a], values[i]};
          count = 2;
          break;
        case MapNode::Kind::kBinary:
          fields = {values[node.a], values[node.b], values[i]};
          count = 3;
          break;
        case MapNode::Kind::kSelect:  // Select: in1 on true, in2 on false, in3 the predicate
          fields = {values[node.b], values[node.c], values[node.a], values[i]};
          count = 4;
          break;
        case MapNode::Kind::kClamp:  // Clamp: in1 x, in2 low, in3 high
          fields = {values[node.b], values[node.a], values[node.c], values[i]};
          count = 4;
          break;
        case MapNode::Kind::kInput:
          break;
      }
      // Without the step codelet's checks: Resolve chose it for its
      // operands' types, and every value here is n elements of its node's
      // type (this vertex's own fields passed its Check), so they would
      // pass; checked at every node of every execution, they cost more
      // than a short vertex's arithmetic.
      TILEPROF_RETURN_IF_ERROR(steps_[i].codelet->RunChecked(
          VertexIo{std::span(fields).first(count), {}, io.tile_state}));
    }
    // A root that is an input (an expression of one leaf): copy it.
    if (nodes_.back().kind == MapNode::Kind::kInput) {
      const std::span<std::byte> root = values.back();
      if (root.size() != io.fields[k].size()) return MakeError("the root does not fill 'out'");
      std::copy(root.begin(), root.end(), io.fields[k].begin());
    }
    return {};
  }

 private:
  // The n values spread input `input` gives the vertex's outputs, a run of
  // each vector element at a time.
  Status Spread(const VertexIo& io, uint32_t input, uint64_t n, std::span<std::byte> out) const {
    size_t param = 2;
    for (uint32_t i = 0; i < input; ++i)
      if (inputs_[i].spread) param += 3;
    const uint64_t first = io.params[0] | uint64_t{io.params[1]} << 32;
    const uint64_t inner = io.params[param], size = io.params[param + 1], lo = io.params[param + 2];
    const std::span<const std::byte> in = io.fields[input];
    const size_t width = SizeOf(inputs_[input].type);
    const uint64_t held = in.size() / width;
    for (uint64_t e = 0; e < n;) {
      const uint64_t position = first + e;
      const uint64_t index = position / inner % size;
      const uint64_t run = std::min(n - e, inner - position % inner);
      if (index < lo || index - lo >= held)
        return MakeError("output {} reads element {} of the spread 'in{}', which holds {} from {}",
                         e, index, input, held, lo);
      Repeat(in.subspan((index - lo) * width, width), out.subspan(e * width, run * width));
      e += run;
    }
    return {};
  }

  std::vector<MapInput> inputs_;
  std::vector<MapNode> nodes_;
  std::vector<Step> steps_;
};

Expected<uint32_t> Number(std::string_view text) {
  uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return MakeError("'{}' is not a number", text);
  return value;
}

// "u17(3)" -> (17, {3}).
Expected<MapNode> ParseNode(std::string_view token) {
  MapNode node;
  if (token.size() > 1 && token[0] == 'i') {
    TILEPROF_ASSIGN_OR_RETURN(node.a, Number(token.substr(1)));
    return node;
  }
  const size_t open = token.find('('), close = token.rfind(')');
  if (open == std::string_view::npos || close != token.size() - 1 || open == 0)
    return MakeError("node '{}' is not of the form X(...)", token);
  const std::string_view head = token.substr(0, open);
  std::vector<uint32_t> args;
  for (std::string_view rest = token.substr(open + 1, close - open - 1); !rest.empty();) {
    const size_t comma = rest.find(',');
    TILEPROF_ASSIGN_OR_RETURN(uint32_t v, Number(rest.substr(0, comma)));
    args.push_back(v);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  auto need = [&](size_t count) -> Status {
    if (args.size() != count)
      return MakeError("node '{}' has {} operands, not {}", token, args.size(), count);
    return {};
  };
  switch (head[0]) {
    case 'u':
    case 'b': {
      node.kind = head[0] == 'u' ? MapNode::Kind::kUnary : MapNode::Kind::kBinary;
      TILEPROF_ASSIGN_OR_RETURN(uint32_t op, Number(head.substr(1)));
      if (op > 255) return MakeError("node '{}': no operation {}", token, op);
      node.op = static_cast<uint8_t>(op);
      TILEPROF_RETURN_IF_ERROR(need(node.kind == MapNode::Kind::kUnary ? 1 : 2));
      break;
    }
    case 's':
    case 'c':
      if (head.size() != 1) return MakeError("node '{}' is not a select or clamp", token);
      node.kind = head[0] == 's' ? MapNode::Kind::kSelect : MapNode::Kind::kClamp;
      TILEPROF_RETURN_IF_ERROR(need(3));
      break;
    case 'v': {
      const std::optional<ElementType> type = ParseHloElementType(head.substr(1));
      if (!type) return MakeError("node '{}': no type '{}'", token, head.substr(1));
      node.kind = MapNode::Kind::kConvert;
      node.type = *type;
      TILEPROF_RETURN_IF_ERROR(need(1));
      break;
    }
    default:
      return MakeError("node '{}' is not an expression node", token);
  }
  node.a = args[0];
  if (args.size() > 1) node.b = args[1];
  if (args.size() > 2) node.c = args[2];
  return node;
}

}  // namespace

bool IsMapExprCodeletName(std::string_view name) { return name.starts_with(kPrefix); }

std::string MapExprCodeletName(std::span<const MapInput> inputs, std::span<const MapNode> nodes) {
  std::string name(kPrefix);
  for (size_t i = 0; i < inputs.size(); ++i)
    name += fmt::format("{}{}{}", i ? "," : "", HloName(inputs[i].type),
                        inputs[i].scalar   ? "*"
                        : inputs[i].spread ? "~"
                                           : "");
  name += ';';
  for (size_t i = 0; i < nodes.size(); ++i) {
    const MapNode& n = nodes[i];
    if (i) name += ',';
    switch (n.kind) {
      case MapNode::Kind::kInput:
        name += fmt::format("i{}", n.a);
        break;
      case MapNode::Kind::kUnary:
        name += fmt::format("u{}({})", n.op, n.a);
        break;
      case MapNode::Kind::kBinary:
        name += fmt::format("b{}({},{})", n.op, n.a, n.b);
        break;
      case MapNode::Kind::kSelect:
        name += fmt::format("s({},{},{})", n.a, n.b, n.c);
        break;
      case MapNode::Kind::kClamp:
        name += fmt::format("c({},{},{})", n.a, n.b, n.c);
        break;
      case MapNode::Kind::kConvert:
        name += fmt::format("v{}({})", HloName(n.type), n.a);
        break;
    }
  }
  return name + '>';
}

Expected<std::unique_ptr<Codelet>> MakeMapExprCodelet(std::vector<MapInput> inputs,
                                                      std::vector<MapNode> nodes) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].scalar && inputs[i].spread)
      return MakeError("input {} is both a scalar and spread", i);
  TILEPROF_ASSIGN_OR_RETURN(std::vector<Step> steps, Resolve(inputs, nodes));
  std::vector<FieldSpec> fields;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string field = fmt::format("in{}", i);
    fields.push_back(inputs[i].scalar ? ScalarIn(field, inputs[i].type)
                                      : In(field, inputs[i].type));
  }
  fields.push_back(Out("out", steps.back().type, VectorLayout::kSpan));
  std::string name = MapExprCodeletName(inputs, nodes);
  return std::unique_ptr<Codelet>(std::make_unique<MapExprCodelet>(
      std::move(name), std::move(fields), std::move(inputs), std::move(nodes), std::move(steps)));
}

Expected<std::unique_ptr<Codelet>> MakeMapExprCodeletFromName(std::string_view name) {
  if (!IsMapExprCodeletName(name) || !name.ends_with('>'))
    return MakeError("'{}' is not a MapExpr codelet name", name);
  const std::string_view body = name.substr(kPrefix.size(), name.size() - kPrefix.size() - 1);
  const size_t semicolon = body.find(';');
  if (semicolon == std::string_view::npos) return MakeError("'{}' has no ';'", name);
  std::vector<MapInput> inputs;
  for (std::string_view rest = body.substr(0, semicolon); !rest.empty();) {
    const size_t comma = rest.find(',');
    std::string_view token = rest.substr(0, comma);
    MapInput input;
    input.scalar = token.ends_with('*');
    input.spread = token.ends_with('~');
    if (input.scalar || input.spread) token.remove_suffix(1);
    const std::optional<ElementType> type = ParseHloElementType(token);
    if (!type) return MakeError("'{}': no element type '{}'", name, token);
    input.type = *type;
    inputs.push_back(input);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  std::vector<MapNode> nodes;
  // Nodes are separated by commas outside parentheses.
  const std::string_view list = body.substr(semicolon + 1);
  size_t start = 0, depth = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      TILEPROF_ASSIGN_OR_RETURN(MapNode node, ParseNode(list.substr(start, i - start)));
      nodes.push_back(node);
      start = i + 1;
    } else if (list[i] == '(') {
      ++depth;
    } else if (list[i] == ')' && depth > 0) {
      --depth;
    }
  }
  return MakeMapExprCodelet(std::move(inputs), std::move(nodes));
}

}  // namespace tileprof::engine
