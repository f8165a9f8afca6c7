// Expression fusion: chains of elementwise HLO ops become one fused vertex
// per tile (tileprof::MapExpr, engine/codelets/map_expr.h), as the
// TensorFlow IPU backend fuses them into popops::map expressions. An
// elementwise op whose one user is another elementwise op of the same
// length is computed inside its user's expression, never stored; a
// broadcast scalar whose users are all elementwise is read by each as a
// scalar, never filled into a tensor. What is fused changes memory, cycles
// and code, never a number: the fused codelet runs the same operations.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {
namespace {

using hlo::Opcode;

bool IsScalarBroadcast(const hlo::Instruction& instruction) {
  return instruction.opcode() == Opcode::kBroadcast && instruction.operand_count() == 1 &&
         instruction.shape().IsArray() && IsNative(instruction.shape()) &&
         instruction.operand(0)->shape().IsArray() && instruction.operand(0)->shape().rank() == 0 &&
         instruction.operand(0)->shape().element_type == instruction.shape().element_type;
}

// A broadcast of more than one element: copied where each expression that
// reads it lies (FusionRole::kSpread). Materialised on its own, it was mapped
// from the next free tile as any new tensor, so that a fused op reading it
// and a tensor of its shape received all of one of them (a batch norm's
// per-feature factors spread over a [N,C,H,W] activation).
bool IsSpreadBroadcast(const hlo::Instruction& instruction) {
  if (instruction.opcode() != Opcode::kBroadcast || instruction.operand_count() != 1 ||
      !instruction.shape().IsArray() || !IsNative(instruction.shape()))
    return false;
  const hlo::Shape& in = instruction.operand(0)->shape();
  if (!in.IsArray() || in.element_type != instruction.shape().element_type) return false;
  const int64_t from = in.ElementCount().value_or(0);
  const int64_t to = instruction.shape().ElementCount().value_or(0);
  return from > 1 && from < to;
}

std::optional<ElementType> TypeOf(const hlo::Shape& shape) {
  if (!shape.IsArray() || !IsNative(shape)) return std::nullopt;
  Expected<StorageType> storage = StorageOf(shape.element_type);
  if (!storage || storage->per_element != 1 || !storage->native) return std::nullopt;
  return storage->type;
}

// The expression node an instruction is, when it is an elementwise op the
// fused codelet can compute on its operands' types (its operands' nodes
// filled in later), or nullopt.
std::optional<MapNode> NodeOf(const hlo::Instruction& instruction) {
  const std::optional<ElementType> out = TypeOf(instruction.shape());
  if (!out) return std::nullopt;
  std::vector<ElementType> in;
  for (const hlo::Instruction* operand : instruction.operands()) {
    const std::optional<ElementType> t = TypeOf(operand->shape());
    if (!t) return std::nullopt;
    in.push_back(*t);
  }
  MapNode node;
  const Opcode op = instruction.opcode();
  if (in.size() == 1 && op == Opcode::kConvert) {
    if (in[0] == *out || !GetCastCodelet(in[0], *out)) return std::nullopt;
    node.kind = MapNode::Kind::kConvert;
    node.type = *out;
    return node;
  }
  if (in.size() == 1) {
    const std::optional<UnaryOp> unary = UnaryOpOf(op, in[0]);
    if (!unary || !Supports(*unary, in[0]) || UnaryOutputType(*unary, in[0]) != *out)
      return std::nullopt;
    node.kind = MapNode::Kind::kUnary;
    node.op = static_cast<uint8_t>(*unary);
    return node;
  }
  if (in.size() == 2) {
    const std::optional<BinaryOp> binary = BinaryOpOf(instruction);
    if (!binary || in[0] != in[1] || !Supports(*binary, in[0]) ||
        (IsComparison(*binary) ? ElementType::kPred : in[0]) != *out)
      return std::nullopt;
    node.kind = MapNode::Kind::kBinary;
    node.op = static_cast<uint8_t>(*binary);
    return node;
  }
  if (in.size() == 3 && (op == Opcode::kSelect || op == Opcode::kClamp)) {
    const bool select = op == Opcode::kSelect;
    if (select ? (in[0] != ElementType::kPred || in[1] != *out || in[2] != *out)
               : (in[0] != *out || in[1] != *out || in[2] != *out))
      return std::nullopt;
    if (!(select ? GetSelectCodelet(*out) : GetClampCodelet(*out))) return std::nullopt;
    node.kind = select ? MapNode::Kind::kSelect : MapNode::Kind::kClamp;
    return node;
  }
  return std::nullopt;
}

uint64_t Elements(const hlo::Instruction& instruction) {
  return static_cast<uint64_t>(
      std::max<int64_t>(instruction.shape().ElementCount().value_or(-1), 0));
}

void CutLargeExpressions(const hlo::Computation& computation, Fusion& fusion) {
  // An expression has at most kMaxMapExprNodes nodes (each op, and each
  // leaf read): an inner op whose subtree passes a third of that becomes a
  // root of its own, stored and read by its user as a leaf, so a tree of
  // ternary ops stays within the limit (torax's long polynomial chains made
  // 256-node trees). Post-order with an explicit stack: chains can be long.
  const std::span<hlo::Instruction* const> instructions = computation.instructions();
  const size_t n = instructions.size();
  auto here = [&](const hlo::Instruction* i) { return InComputation(computation, i); };
  std::vector<uint64_t> size(n, 0);
  for (size_t start = 0; start < n; ++start) {
    if (size[start] != 0) continue;
    std::vector<std::pair<size_t, bool>> stack = {{start, false}};
    while (!stack.empty()) {
      const auto [i, expanded] = stack.back();
      stack.pop_back();
      if (size[i] != 0) continue;
      const auto inner = [&](const hlo::Instruction* operand) {
        return here(operand) && fusion.role[operand->index()] == FusionRole::kInner;
      };
      if (!expanded) {
        stack.push_back({i, true});
        for (const hlo::Instruction* operand : instructions[i]->operands())
          if (inner(operand) && size[operand->index()] == 0)
            stack.push_back({operand->index(), false});
        continue;
      }
      uint64_t total = 1;
      for (const hlo::Instruction* operand : instructions[i]->operands())
        total += inner(operand) ? size[operand->index()] : 1;
      if (fusion.role[i] == FusionRole::kInner && total > kMaxMapExprNodes / 3) {
        fusion.role[i] = FusionRole::kRoot;
        total = 1;  // as its user counts it: one leaf
      }
      size[i] = std::max<uint64_t>(total, 1);
    }
  }
}

}  // namespace

bool InComputation(const hlo::Computation& computation, const hlo::Instruction* i) {
  const std::span<hlo::Instruction* const> instructions = computation.instructions();
  return i->parent() == &computation && i->index() < instructions.size() &&
         instructions[i->index()] == i;
}

Fusion AnalyseFusion(const hlo::Computation& computation) {
  const std::span<hlo::Instruction* const> instructions = computation.instructions();
  const size_t n = instructions.size();
  Fusion fusion;
  fusion.role.assign(n, FusionRole::kNone);
  std::vector<std::vector<uint32_t>> users(n);
  auto here = [&](const hlo::Instruction* i) { return InComputation(computation, i); };
  for (size_t i = 0; i < n; ++i) {
    for (const hlo::Instruction* operand : instructions[i]->operands())
      if (here(operand)) users[operand->index()].push_back(static_cast<uint32_t>(i));
  }
  std::vector<bool> node(n, false);
  for (size_t i = 0; i < n; ++i) node[i] = NodeOf(*instructions[i]).has_value();
  // As the TensorFlow IPU backend outlines expressions: only ops with
  // exactly one user take part, the expression's root included, since
  // popops maps are trees and a result read twice is stored anyway. The
  // computation's root has no user, so `out = (a + b) + (a + c)` stays three
  // ops (seed 004 shows its four compute sets).
  const hlo::Instruction* root = computation.root();
  std::vector<bool> eligible(n, false);
  for (size_t i = 0; i < n; ++i)
    eligible[i] = node[i] && users[i].size() == 1 && instructions[i] != root;
  for (size_t i = 0; i < n; ++i) {
    const hlo::Instruction& instruction = *instructions[i];
    if (&instruction == root || users[i].empty()) continue;
    auto fusible_user = [&](uint32_t u) {
      return eligible[u] && Elements(*instructions[u]) == Elements(instruction);
    };
    if (IsScalarBroadcast(instruction)) {
      // Read as a scalar by every user, when all of them are fused ops.
      bool all = true;
      // (popops' binary ops take a scalar operand: an op reading one is not
      // an outlined expression, so any elementwise user will do.)
      for (uint32_t u : users[i]) all = all && node[u];
      if (all) fusion.role[i] = FusionRole::kScalar;
    } else if (IsSpreadBroadcast(instruction)) {
      bool all = true;
      for (uint32_t u : users[i])
        all = all && node[u] && Elements(*instructions[u]) == Elements(instruction);
      if (all) fusion.role[i] = FusionRole::kSpread;
    } else if (eligible[i] && fusible_user(users[i][0])) {
      // Not a repeated use by its one user either (x * x reads x twice).
      const hlo::Instruction& user = *instructions[users[i][0]];
      if (std::count(user.operands().begin(), user.operands().end(), &instruction) == 1)
        fusion.role[i] = FusionRole::kInner;
    }
  }
  // An op is an expression's root when it is a node not inside another and
  // reads at least one inner op (then it is eligible itself) or a scalar or
  // spread broadcast (any node): a lone op keeps its own codelet.
  for (size_t i = 0; i < n; ++i) {
    if (!node[i] || fusion.role[i] != FusionRole::kNone) continue;
    for (const hlo::Instruction* operand : instructions[i]->operands()) {
      if (!here(operand)) continue;
      const FusionRole r = fusion.role[operand->index()];
      if (r == FusionRole::kScalar || r == FusionRole::kSpread ||
          (r == FusionRole::kInner && eligible[i])) {
        fusion.role[i] = FusionRole::kRoot;
        break;
      }
    }
  }
  CutLargeExpressions(computation, fusion);
  return fusion;
}

namespace {

// The expression rooted at a fused root, built in post-order over its inner
// ops: the nodes, and per input the leaf's tensor (read by the fused
// vertex) and value (for MarkRead).
class FusedExpression {
 public:
  FusedExpression(const hlo::Instruction& root, const Fusion& fusion, const Scope& scope)
      : root_(root), fusion_(fusion), scope_(scope), n_(Elements(root)) {}

  // Adds the nodes of `instruction` and its inner operands; returns the
  // node of `instruction`.
  Expected<uint32_t> Build(const hlo::Instruction& instruction);

  std::vector<MapInput> inputs;
  std::vector<MapNode> nodes;
  std::vector<Tensor> leaves;  // a spread leaf's once LowerFused copies it
  std::vector<Value> read;     // for MarkRead
  // The inputs that are spread broadcasts, with the broadcast.
  std::vector<std::pair<uint32_t, const hlo::Instruction*>> spreads;

 private:
  FusionRole Role(const hlo::Instruction* i) const {
    const hlo::Computation& computation = *root_.parent();
    return i->parent() == &computation && i->index() < fusion_.role.size()
               ? fusion_.role[i->index()]
               : FusionRole::kNone;
  }
  // A leaf: the input holding `value` (a scalar when it has one element and
  // the expression more).
  Expected<uint32_t> Leaf(const hlo::Instruction* source, const Value& value);
  // The leaf of `operand`'s value in the scope.
  Expected<uint32_t> ScopeLeaf(const hlo::Instruction* operand);
  // The leaf of a spread broadcast, its tensor made later.
  Expected<uint32_t> SpreadLeaf(const hlo::Instruction* broadcast);

  const hlo::Instruction& root_;
  const Fusion& fusion_;
  const Scope& scope_;
  const uint64_t n_;
  std::unordered_map<const hlo::Instruction*, uint32_t> input_of_;
};

Expected<uint32_t> FusedExpression::Leaf(const hlo::Instruction* source, const Value& value) {
  if (auto it = input_of_.find(source); it != input_of_.end()) {
    nodes.push_back({MapNode::Kind::kInput, 0, ElementType::kF32, it->second});
    return static_cast<uint32_t>(nodes.size() - 1);
  }
  if (value.is_tuple || !value.tensor.valid())
    return MakeError("{}: operand {} has no tensor", Describe(root_), source->name());
  const Tensor& tensor = value.tensor;
  const bool scalar = tensor.NumElements() == 1 && n_ != 1;
  if (!scalar && tensor.NumElements() != n_)
    return MakeError("{}: operand {} has {} elements, the expression {}", Describe(root_),
                     source->name(), tensor.NumElements(), n_);
  const auto index = static_cast<uint32_t>(inputs.size());
  inputs.push_back({tensor.element_type(), scalar});
  leaves.push_back(tensor);
  read.push_back(value);
  input_of_.emplace(source, index);
  nodes.push_back({MapNode::Kind::kInput, 0, ElementType::kF32, index});
  return static_cast<uint32_t>(nodes.size() - 1);
}

Expected<uint32_t> FusedExpression::ScopeLeaf(const hlo::Instruction* operand) {
  auto it = scope_.find(operand);
  if (it == scope_.end())
    return MakeError("{}: {} is not defined", Describe(root_), operand->name());
  return Leaf(operand, it->second);
}

Expected<uint32_t> FusedExpression::SpreadLeaf(const hlo::Instruction* broadcast) {
  if (auto it = input_of_.find(broadcast); it != input_of_.end()) {
    nodes.push_back({MapNode::Kind::kInput, 0, ElementType::kF32, it->second});
    return static_cast<uint32_t>(nodes.size() - 1);
  }
  auto it = scope_.find(broadcast->operand(0));
  if (it == scope_.end() || it->second.is_tuple || !it->second.tensor.valid())
    return MakeError("{}: {} is not defined", Describe(root_), broadcast->operand(0)->name());
  if (Elements(*broadcast) != n_)
    return MakeError("{}: operand {} has {} elements, the expression {}", Describe(root_),
                     broadcast->name(), Elements(*broadcast), n_);
  const auto index = static_cast<uint32_t>(inputs.size());
  inputs.push_back({it->second.tensor.element_type(), false});
  leaves.emplace_back();
  read.push_back(it->second);
  spreads.emplace_back(index, broadcast);
  input_of_.emplace(broadcast, index);
  nodes.push_back({MapNode::Kind::kInput, 0, ElementType::kF32, index});
  return static_cast<uint32_t>(nodes.size() - 1);
}

Expected<uint32_t> FusedExpression::Build(const hlo::Instruction& instruction) {
  std::optional<MapNode> node = NodeOf(instruction);
  if (!node) return MakeError("{} cannot be fused", Describe(instruction));
  std::vector<uint32_t> args;
  for (const hlo::Instruction* operand : instruction.operands()) {
    switch (Role(operand)) {
      case FusionRole::kInner: {
        TILEPROF_ASSIGN_OR_RETURN(uint32_t a, Build(*operand));
        args.push_back(a);
        break;
      }
      case FusionRole::kScalar: {
        TILEPROF_ASSIGN_OR_RETURN(uint32_t a, ScopeLeaf(operand->operand(0)));
        args.push_back(a);
        break;
      }
      case FusionRole::kSpread: {
        TILEPROF_ASSIGN_OR_RETURN(uint32_t a, SpreadLeaf(operand));
        args.push_back(a);
        break;
      }
      default: {
        TILEPROF_ASSIGN_OR_RETURN(uint32_t a, ScopeLeaf(operand));
        args.push_back(a);
      }
    }
  }
  node->a = args[0];
  if (args.size() > 1) node->b = args[1];
  if (args.size() > 2) node->c = args[2];
  nodes.push_back(*node);
  return static_cast<uint32_t>(nodes.size() - 1);
}

}  // namespace

Expected<Value> Lowering::LowerFused(const hlo::Instruction& root, const Fusion& fusion,
                                     const Scope& scope, program::Sequence& program) {
  const uint64_t n = Elements(root);
  FusedExpression expression(root, fusion, scope);
  TILEPROF_RETURN_IF_ERROR(expression.Build(root));
  std::vector<MapInput>& inputs = expression.inputs;
  const std::vector<MapNode>& nodes = expression.nodes;
  std::vector<Tensor>& leaves = expression.leaves;
  if (nodes.size() > kMaxMapExprNodes) {
    return MakeError("{}: an expression of {} nodes (at most {})", Describe(root), nodes.size(),
                     kMaxMapExprNodes);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(root.shape(), root.name(), false));
  // Spread broadcasts that are views (copies of long runs) are read as
  // views, as they were before fusion; those along a block of dimensions
  // are read by the vertices as spread inputs (their vector's elements
  // under each vertex's outputs); any other is copied once the result is
  // mapped, onto its tiles.
  std::vector<std::pair<uint32_t, const hlo::Instruction*>> copies;
  std::vector<std::pair<uint32_t, SpreadForm>> spread_inputs;
  for (const auto& [index, broadcast] : expression.spreads) {
    const Value& operand = scope.at(broadcast->operand(0));
    TILEPROF_ASSIGN_OR_RETURN(std::optional<Tensor> view, BroadcastAsView(*broadcast, operand));
    if (view) {
      leaves[index] = std::move(*view);
    } else if (const std::optional<SpreadForm> form = SpreadFormOf(*broadcast)) {
      inputs[index].spread = true;
      leaves[index] = operand.tensor.Flatten();
      spread_inputs.emplace_back(index, *form);
    } else {
      copies.emplace_back(index, broadcast);
    }
  }
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, codelets_.MapExpr(inputs, nodes));
  // Mapped like the first vector input that holds data of its own. A
  // leader in many runs a tile (a planned convolution's output boxes) would
  // make each copy, and each vertex reading a spread input (one per run of
  // the result), many a tile: the result is then mapped linearly, and only
  // the leader moves.
  std::vector<const Tensor*> vectors;
  for (size_t i = 0; i < leaves.size(); ++i)
    if (!inputs[i].scalar && !inputs[i].spread && leaves[i].valid()) vectors.push_back(&leaves[i]);
  const bool spreads = !copies.empty() || !spread_inputs.empty();
  if (vectors.empty() || (spreads && Fragmented(Leader(graph_, vectors)))) {
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(out));
  } else {
    TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(out, Leader(graph_, vectors)));
  }
  for (const auto& [index, broadcast] : copies) {
    const Value& operand = scope.at(broadcast->operand(0));
    TILEPROF_ASSIGN_OR_RETURN(Value spread, LowerBroadcast(*broadcast, operand, program, &out));
    if (spread.is_tuple || !spread.tensor.valid() || spread.tensor.NumElements() != n)
      return MakeError("{}: {} is not an array of {} elements", Describe(root), broadcast->name(),
                       n);
    leaves[index] = spread.tensor;
  }
  ++stats_.fused_expressions;
  stats_.fused_ops +=
      static_cast<uint64_t>(std::count_if(nodes.begin(), nodes.end(), [](const MapNode& m) {
        return m.kind != MapNode::Kind::kInput;
      }));
  if (!unread_.empty()) MarkRead(expression.read, Value::Array(out));
  if (n == 0) return Value::Array(out);
  const ComputeSetId cs = AddComputeSet(root.name(), program);
  if (!spread_inputs.empty()) {
    TILEPROF_RETURN_IF_ERROR(
        EmitSpreadRuns(cs, *codelet, out, inputs, leaves, spread_inputs, root.name()));
    return Value::Array(out);
  }
  std::vector<FieldInput> fields;
  for (size_t i = 0; i < leaves.size(); ++i) {
    fields.push_back(
        {fmt::format("in{}", i), leaves[i], inputs[i].scalar ? Access::kWhole : Access::kSame});
  }
  TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, *codelet, "out", out, fields, root.name()));
  return Value::Array(out);
}

}  // namespace tileprof::engine::compiler
