// reduce with several operands (XLA's variadic reduce, e.g. an argmax's
// (value, index) pairs) or a reducer computation that is not one binary op
// (a sum of squares): the reducer is translated into the expression program
// of tileprof::ReduceExpr (engine/codelets/reduce_expr.h), held in each
// vertex's parameters, and the vertices run on the outputs' tiles, each
// reading its outputs' inputs through the [F, outputs] view of every
// operand (reduced dimensions first), as the single-stage popops::Reduce
// plan does. A reducer using an operation the program lacks (or calls, or
// a type other than f32, s32, u32, pred) stays opaque.
#include <bit>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/codelets/codelets.h"
#include "engine/codelets/reduce_expr.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/literal.h"

namespace tileprof::engine::compiler {
namespace {

struct Program {
  std::vector<uint32_t> words;  // kExprWordsPerNode per node, then the results
  uint32_t nodes = 0;
};

std::optional<ElementType> ScalarType(const hlo::Shape& shape) {
  if (!shape.IsArray() || shape.rank() != 0) return std::nullopt;
  auto storage = StorageOf(shape.element_type);
  if (!storage || storage->per_element != 1) return std::nullopt;
  switch (storage->type) {
    case ElementType::kF32:
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kPred:
      return storage->type;
    default:
      return std::nullopt;
  }
}

std::optional<ExprOp> OpOf(hlo::Opcode opcode) {
  switch (opcode) {
    case hlo::Opcode::kAdd:
      return ExprOp::kAdd;
    case hlo::Opcode::kSubtract:
      return ExprOp::kSubtract;
    case hlo::Opcode::kMultiply:
      return ExprOp::kMultiply;
    case hlo::Opcode::kDivide:
      return ExprOp::kDivide;
    case hlo::Opcode::kMaximum:
      return ExprOp::kMaximum;
    case hlo::Opcode::kMinimum:
      return ExprOp::kMinimum;
    case hlo::Opcode::kAnd:
      return ExprOp::kAnd;
    case hlo::Opcode::kOr:
      return ExprOp::kOr;
    case hlo::Opcode::kXor:
      return ExprOp::kXor;
    case hlo::Opcode::kNot:
      return ExprOp::kNot;
    case hlo::Opcode::kNegate:
      return ExprOp::kNegate;
    case hlo::Opcode::kAbs:
      return ExprOp::kAbs;
    case hlo::Opcode::kCompare:
      return ExprOp::kCompare;
    case hlo::Opcode::kSelect:
      return ExprOp::kSelect;
    default:
      return std::nullopt;
  }
}

// Whether the codelet defines `op` with a result of `type` (pred has no
// add or subtract whose XLA meaning is settled; floats no bitwise ops).
bool DefinedFor(ExprOp op, ElementType type) {
  switch (op) {
    case ExprOp::kAnd:
    case ExprOp::kOr:
    case ExprOp::kXor:
    case ExprOp::kNot:
      return type != ElementType::kF32;
    case ExprOp::kAdd:
    case ExprOp::kSubtract:
    case ExprOp::kDivide:
    case ExprOp::kNegate:
    case ExprOp::kAbs:
      return type != ElementType::kPred;
    default:
      return true;
  }
}

std::optional<uint32_t> DirectionOf(std::string_view d) {
  static constexpr std::string_view kNames[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (uint32_t i = 0; i < std::size(kNames); ++i)
    if (d == kNames[i]) return i;
  return std::nullopt;
}

// The program of `computation` for k results, or nullopt when some
// instruction has no expression op.
std::optional<Program> Translate(const hlo::Computation& computation, size_t k) {
  Program program;
  std::unordered_map<const hlo::Instruction*, uint32_t> reg;
  for (const hlo::Instruction* instruction : computation.instructions()) {
    if (instruction->opcode() == hlo::Opcode::kTuple) continue;  // the root, below
    const std::optional<ElementType> type = ScalarType(instruction->shape());
    if (!type) return std::nullopt;
    uint32_t w[kExprWordsPerNode] = {0, static_cast<uint32_t>(*type), 0, 0, 0};
    if (instruction->opcode() == hlo::Opcode::kParameter) {
      if (instruction->parameter_number() < 0 ||
          static_cast<size_t>(instruction->parameter_number()) >= 2 * k) {
        return std::nullopt;
      }
      w[0] = static_cast<uint32_t>(ExprOp::kParameter);
      w[2] = static_cast<uint32_t>(instruction->parameter_number());
    } else if (instruction->opcode() == hlo::Opcode::kConstant) {
      Expected<hlo::Literal> literal =
          hlo::ParseLiteral(instruction->literal(), instruction->shape());
      if (!literal || literal->kind != hlo::Literal::Kind::kArray) return std::nullopt;
      w[0] = static_cast<uint32_t>(ExprOp::kConstant);
      if (*type == ElementType::kF32 && literal->reals.size() == 1) {
        w[2] = std::bit_cast<uint32_t>(static_cast<float>(literal->reals[0]));
      } else if (literal->integers.size() == 1) {
        w[2] = static_cast<uint32_t>(literal->integers[0]);
      } else if (literal->unsigneds.size() == 1) {
        w[2] = static_cast<uint32_t>(literal->unsigneds[0]);
      } else {
        return std::nullopt;
      }
    } else {
      const std::optional<ExprOp> op = OpOf(instruction->opcode());
      if (!op || !DefinedFor(*op, *type)) return std::nullopt;
      w[0] = static_cast<uint32_t>(*op);
      const size_t arity = *op == ExprOp::kSelect ? 3
                           : (*op == ExprOp::kNot || *op == ExprOp::kNegate || *op == ExprOp::kAbs)
                               ? 1
                               : 2;
      if (instruction->operand_count() != arity) return std::nullopt;
      for (size_t i = 0; i < arity; ++i) {
        auto it = reg.find(instruction->operand(i));
        if (it == reg.end()) return std::nullopt;
        w[2 + i] = it->second;
      }
      if (*op == ExprOp::kCompare) {
        const hlo::Attribute* direction = instruction->FindAttribute("direction");
        if (direction == nullptr) return std::nullopt;
        const std::optional<uint32_t> d = DirectionOf(direction->value());
        if (!d) return std::nullopt;
        w[4] = *d;
      }
    }
    reg[instruction] = program.nodes++;
    program.words.insert(program.words.end(), std::begin(w), std::end(w));
  }
  const hlo::Instruction* root = computation.root();
  if (root == nullptr) return std::nullopt;
  std::vector<const hlo::Instruction*> results;
  if (root->opcode() == hlo::Opcode::kTuple) {
    for (const hlo::Instruction* operand : root->operands()) results.push_back(operand);
  } else {
    results.push_back(root);
  }
  if (results.size() != k) return std::nullopt;
  for (const hlo::Instruction* result : results) {
    auto it = reg.find(result);
    if (it == reg.end()) return std::nullopt;
    program.words.push_back(it->second);
  }
  if (program.nodes == 0 || program.nodes > kMaxExprNodes) return std::nullopt;
  return program;
}

// The dimensions of `in0` with the reduced ones (`dims`, HLO's list) first,
// and the kept dimensions' sizes in `kept`.
Expected<std::vector<size_t>> ReducedFirst(const Tensor& in0, std::string_view dims,
                                           std::vector<uint64_t>& kept) {
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> reduced, hlo::ParseIntList(dims));
  std::vector<bool> is_reduced(in0.Rank(), false);
  for (int64_t d : reduced) {
    if (d < 0 || static_cast<size_t>(d) >= in0.Rank() || is_reduced[static_cast<size_t>(d)]) {
      return MakeError("reduce dimension {} invalid for rank {}", d, in0.Rank());
    }
    is_reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<size_t> order;
  for (size_t d = 0; d < in0.Rank(); ++d)
    if (is_reduced[d]) order.push_back(d);
  for (size_t d = 0; d < in0.Rank(); ++d) {
    if (!is_reduced[d]) {
      order.push_back(d);
      kept.push_back(in0.shape()[d]);
    }
  }
  return order;
}

// The result must be k arrays of the kept dimensions and operand types.
Status CheckResultShape(const hlo::Shape& shape, const std::vector<ElementType>& types,
                        const std::vector<uint64_t>& kept, std::string_view reduced_dims) {
  const size_t k = types.size();
  if (shape.IsTuple() ? shape.tuple_shapes.size() != k : k != 1) {
    return MakeError("result {} does not hold {} arrays", hlo::ShapeToString(shape), k);
  }
  for (size_t i = 0; i < k; ++i) {
    const hlo::Shape& leaf = shape.IsTuple() ? shape.tuple_shapes[i] : shape;
    auto storage = StorageOf(leaf.element_type);
    auto dims = StorageShape(leaf);
    if (!leaf.IsArray() || !storage || !dims || storage->type != types[i] || *dims != kept) {
      return MakeError("result {} is not {}[{}] (operand {} reduced over dimensions {})",
                       hlo::ShapeToString(leaf), HloName(types[i]), fmt::join(kept, ","), i,
                       reduced_dims);
    }
  }
  return {};
}

// One vertex per region of the first result, on its tile: the [F, outputs]
// views' columns in, each result's region out, the expression's words.
Status EmitReduceExprVertices(Graph& graph, ComputeSetId cs, const Codelet& codelet,
                              const Program& expr_program, const hlo::Instruction& instruction,
                              std::span<const Value> operands, const std::vector<Tensor>& views,
                              const std::vector<Tensor>& outs) {
  const size_t k = outs.size();
  const Program* expr = &expr_program;
  std::vector<Tensor> flat_outs;
  for (const Tensor& out : outs) flat_outs.push_back(out.Flatten());
  uint64_t position = 0;
  for (const MappedRegion& piece : graph.MapRegions(flat_outs[0])) {
    const uint64_t begin = position;
    position += piece.region.size();
    if (!piece.tile) return MakeError("{} is not mapped", outs[0].ShapeString());
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, *piece.tile));
    for (size_t i = 0; i < k; ++i) {
      TILEPROF_ASSIGN_OR_RETURN(Tensor partials, views[i].Slice(begin, position, 1));
      TILEPROF_ASSIGN_OR_RETURN(Tensor target, flat_outs[i].Slice(begin, position));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex[fmt::format("in{}", i)], partials));
      TILEPROF_RETURN_IF_ERROR(
          graph.Connect(vertex[fmt::format("init{}", i)], operands[k + i].tensor.Flatten()));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex[fmt::format("out{}", i)], target));
    }
    for (uint32_t n = 0; n < expr->nodes; ++n) {
      static constexpr const char* kWords[] = {"Op", "Type", "A", "B", "C"};
      for (uint32_t w = 0; w < kExprWordsPerNode; ++w) {
        TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(
            vertex[fmt::format("node{}{}", n, kWords[w])], expr->words[kExprWordsPerNode * n + w]));
      }
    }
    for (size_t i = 0; i < k; ++i) {
      TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(
          vertex[fmt::format("result{}", i)], expr->words[kExprWordsPerNode * expr->nodes + i]));
    }
  }
  return {};
}

// The types of the k reduced operands when the operands are k arrays of
// one shape and k scalar initial values of their types; else nullopt (the
// reduce is then lowered as an opaque op).
std::optional<std::vector<ElementType>> OperandTypes(std::span<const Value> operands, size_t k) {
  for (const Value& operand : operands) {
    if (operand.is_tuple || !operand.tensor.valid()) return std::nullopt;
  }
  std::vector<ElementType> types;
  for (size_t i = 0; i < k; ++i) {
    if (operands[k + i].tensor.NumElements() != 1 ||
        operands[k + i].tensor.element_type() != operands[i].tensor.element_type() ||
        operands[i].tensor.shape() != operands[0].tensor.shape()) {
      return std::nullopt;
    }
    types.push_back(operands[i].tensor.element_type());
  }
  return types;
}

}  // namespace

Expected<Value> Lowering::LowerReduceExpr(const hlo::Instruction& instruction,
                                          std::span<const Value> operands,
                                          program::Sequence& program) {
  const size_t k = operands.size() / 2;
  const hlo::Attribute* dims_attribute = instruction.FindAttribute("dimensions");
  if (k == 0 || operands.size() != 2 * k || instruction.called_computations().size() != 1 ||
      dims_attribute == nullptr) {
    return LowerOpaque(instruction, operands, program);
  }
  const std::optional<Program> expr = Translate(*instruction.called_computations()[0], k);
  const std::optional<std::vector<ElementType>> operand_types = OperandTypes(operands, k);
  if (!operand_types) return LowerOpaque(instruction, operands, program);
  const std::vector<ElementType>& types = *operand_types;
  Expected<const Codelet*> codelet = expr ? codelets_.ReduceExpr(types, expr->nodes)
                                          : Expected<const Codelet*>(MakeError("no program"));
  if (!codelet) return LowerOpaque(instruction, operands, program);
  const Tensor& in0 = operands[0].tensor;
  std::vector<uint64_t> kept;
  TILEPROF_ASSIGN_OR_RETURN(const std::vector<size_t> order,
                            ReducedFirst(in0, dims_attribute->value(), kept));
  uint64_t out_n = 1;
  for (uint64_t d : kept) out_n *= d;
  TILEPROF_RETURN_IF_ERROR(
      CheckResultShape(instruction.shape(), types, kept, dims_attribute->value()));
  const uint64_t in_n = in0.NumElements();
  // Results: one array per operand, of the kept dimensions.
  std::vector<Tensor> outs;
  for (size_t i = 0; i < k; ++i) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor out,
                              NewTensor(types[i], kept,
                                        k == 1 ? std::string(instruction.name())
                                               : fmt::format("{}.{}", instruction.name(), i),
                                        false));
    outs.push_back(std::move(out));
  }
  Value result;
  if (k == 1 && !instruction.shape().IsTuple()) {
    result = Value::Array(outs[0]);
  } else {
    result.is_tuple = true;
    for (const Tensor& out : outs) result.elements.push_back(Value::Array(out));
  }
  if (out_n == 0) return result;
  TILEPROF_RETURN_IF_ERROR(mapper_.Map(outs[0]));
  for (size_t i = 1; i < k; ++i) TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(outs[i], outs[0]));
  if (in_n == 0) {
    for (size_t i = 0; i < k; ++i) {
      TILEPROF_ASSIGN_OR_RETURN(const Codelet* fill, GetFillCodelet(types[i]));
      const ComputeSetId cs = AddComputeSet(fmt::format("{}/init", instruction.name()), program);
      const FieldInput in{"in", operands[k + i].tensor, Access::kWhole};
      TILEPROF_RETURN_IF_ERROR(
          EmitPerTile(cs, *fill, "out", outs[i], {&in, 1}, instruction.name()));
    }
    return result;
  }
  // The [F, outputs] view of every operand.
  const uint64_t factor = in_n / out_n;
  std::vector<Tensor> views;
  for (size_t i = 0; i < k; ++i) {
    const Tensor& in = operands[i].tensor;
    Tensor shuffled;
    if (EstimatedRuns(in.shape(), order) * std::max<size_t>(in.regions().size(), 1) >
        kMaxViewRegions) {
      std::vector<SourceDim> map(in.Rank());
      std::vector<uint64_t> dims(order.size());
      for (size_t j = 0; j < order.size(); ++j) {
        map[order[j]].src = map[order[j]].src2 = static_cast<uint32_t>(j);
        dims[j] = in.shape()[order[j]];
      }
      TILEPROF_ASSIGN_OR_RETURN(
          shuffled, EmitRearrange(in, map, nullptr, dims,
                                  fmt::format("{}/rearrange{}", instruction.name(), i), program));
    } else {
      TILEPROF_ASSIGN_OR_RETURN(shuffled, in.Dimshuffle(order));
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor view, shuffled.Reshape({factor, out_n}));
    views.push_back(std::move(view));
  }
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  TILEPROF_RETURN_IF_ERROR(
      EmitReduceExprVertices(graph_, cs, **codelet, *expr, instruction, operands, views, outs));
  return result;
}

}  // namespace tileprof::engine::compiler
