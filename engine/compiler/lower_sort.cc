// Sort (engine/codelets/sort.h): one vertex per tile run of the first
// result; every result is mapped like the first, so a vertex writes the
// same run of each. Vertices read the whole operands (a line along a
// non-minor dimension is strided across the tensor). The comparator must be
// one of the forms sort.h lists; others stay opaque, and the simulator then
// refuses the program naming the sort.
#include <fmt/format.h>

#include "engine/codelets/sort.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool IsParam(const Instruction* i, int64_t number) {
  return i->opcode() == Opcode::kParameter && i->parameter_number() == number;
}

std::string_view AttributeText(const Instruction& i, std::string_view name) {
  const hlo::Attribute* a = i.FindAttribute(name);
  return a == nullptr ? std::string_view{} : a->value();
}

// jax's float canonicalisation of parameter p (jnp.sort's comparator):
//   s = select(compare(x, x, NE), NaN bits, select(compare(x, 0, EQ), 0, bitcast(x)))
//   key = select(compare(s, 0, LT), bitcast(INT_MAX - bitcast<u>(x)), s)
// Checked structurally: the root's operands are selects whose inputs all
// come from parameter p (and constants), with a NaN test x != x. The
// resulting order is "NaNs last, -0 == +0, then by value".
bool UsesOnlyParam(const Instruction* i, int64_t p, int depth, bool& nan_test, bool& bitcast) {
  if (depth > 12) return false;
  switch (i->opcode()) {
    case Opcode::kParameter: return i->parameter_number() == p;
    case Opcode::kConstant: return true;
    case Opcode::kCompare:
      if (AttributeText(*i, "direction") == "NE" && i->operand_count() == 2 &&
          i->operands()[0] == i->operands()[1] && IsParam(i->operands()[0], p)) {
        nan_test = true;
      }
      break;
    case Opcode::kBitcastConvert: bitcast = true; break;
    case Opcode::kSelect: case Opcode::kSubtract: case Opcode::kConvert: break;
    default: return false;
  }
  for (const Instruction* o : i->operands())
    if (!UsesOnlyParam(o, p, depth + 1, nan_test, bitcast)) return false;
  return true;
}

struct Comparator {
  uint32_t key = 0;
  SortOrder order = SortOrder::kLt;
};

std::optional<Comparator> ComparatorOf(const hlo::Computation& computation, size_t operands,
                                       const std::vector<ElementType>& types) {
  const Instruction* root = computation.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || root->operand_count() != 2) {
    return std::nullopt;
  }
  const std::string_view direction = AttributeText(*root, "direction");
  bool lt = direction == "LT";
  if (!lt && direction != "GT") return std::nullopt;
  const Instruction* a = root->operands()[0];
  const Instruction* b = root->operands()[1];
  const bool total = AttributeText(*root, "type") == "TOTALORDER";
  for (size_t k = 0; k < operands; ++k) {
    const auto p = static_cast<int64_t>(2 * k);
    Comparator c{static_cast<uint32_t>(k), SortOrder::kLt};
    bool direct = IsParam(a, p) && IsParam(b, p + 1);
    const bool swapped = IsParam(a, p + 1) && IsParam(b, p);
    if (direct || swapped) {
      const bool ascending = lt == direct;
      const bool is_float = types[k] == ElementType::kF32 || types[k] == ElementType::kF16 ||
                            types[k] == ElementType::kF64 || types[k] == ElementType::kBF16;
      if (total && is_float) c.order = ascending ? SortOrder::kLtTotal : SortOrder::kGtTotal;
      else c.order = ascending ? SortOrder::kLt : SortOrder::kGt;
      return c;
    }
    // jax's canonicalised float keys: the same expression of p and p + 1.
    if (types[k] != ElementType::kF32 && types[k] != ElementType::kF64) continue;
    for (const bool forward : {true, false}) {
      bool nan_a = false, cast_a = false, nan_b = false, cast_b = false;
      if (a->opcode() == Opcode::kSelect && b->opcode() == Opcode::kSelect &&
          UsesOnlyParam(a, forward ? p : p + 1, 0, nan_a, cast_a) &&
          UsesOnlyParam(b, forward ? p + 1 : p, 0, nan_b, cast_b) && nan_a && nan_b && cast_a &&
          cast_b) {
        c.order = (lt == forward) ? SortOrder::kLtNanLast : SortOrder::kGtNanLast;
        return c;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

Expected<Value> Lowering::LowerSort(const hlo::Instruction& instruction,
                                    std::span<const Value> operands, program::Sequence& program) {
  const auto opaque = [&] { return LowerOpaque(instruction, operands, program); };
  if (operands.empty() || instruction.called_computations().size() != 1) return opaque();
  std::vector<ElementType> types;
  for (size_t k = 0; k < operands.size(); ++k) {
    const Value& v = operands[k];
    const hlo::Shape& shape = instruction.operands()[k]->shape();
    if (v.is_tuple || !v.tensor.valid() || !shape.IsArray() ||
        v.tensor.Rank() != static_cast<size_t>(shape.rank()) ||
        v.tensor.shape() != operands[0].tensor.shape()) {
      return opaque();
    }
    types.push_back(v.tensor.element_type());
  }
  const Tensor& first = operands[0].tensor;
  if (first.Rank() == 0) return opaque();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> dimension,
                            hlo::ParseIntList(AttributeText(instruction, "dimensions")));
  if (dimension.size() != 1 || dimension[0] < 0 ||
      static_cast<size_t>(dimension[0]) >= first.Rank()) {
    return MakeError("{}: sort needs one dimension inside rank {}", Describe(instruction),
                     first.Rank());
  }
  const std::optional<Comparator> comparator =
      ComparatorOf(*instruction.called_computations()[0], operands.size(), types);
  if (!comparator) return opaque();
  for (uint64_t d : first.shape()) {
    if (d > UINT32_MAX) return MakeError("{}: dimension {} too large", Describe(instruction), d);
  }
  // Results: the first mapped linearly, the others like it.
  std::vector<Tensor> outs;
  for (size_t k = 0; k < operands.size(); ++k) {
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor out, NewTensor(types[k], first.shape(),
                              operands.size() == 1 ? instruction.name()
                                                   : fmt::format("{}.{}", instruction.name(), k),
                              k == 0));
    outs.push_back(std::move(out));
  }
  const auto result = [&] {
    if (outs.size() == 1) return Value::Array(outs[0]);
    Value tuple;
    tuple.is_tuple = true;
    for (const Tensor& t : outs) tuple.elements.push_back(Value::Array(t));
    return tuple;
  };
  if (first.NumElements() == 0) return result();
  TILEPROF_ASSIGN_OR_RETURN(
      const Codelet* codelet,
      codelets_.Sort(static_cast<uint32_t>(first.Rank()), comparator->key, comparator->order, types));
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  std::vector<Tensor> flat;
  for (const Tensor& t : outs) flat.push_back(t.Flatten());
  uint64_t position = 0;
  for (const MappedRegion& piece : graph_.MapRegions(flat[0])) {
    const uint64_t start = position, count = piece.region.size();
    position += count;
    if (!piece.tile) return MakeError("{} is not mapped", outs[0].ShapeString());
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, *piece.tile));
    for (size_t k = 0; k < outs.size(); ++k) {
      TILEPROF_ASSIGN_OR_RETURN(Tensor part, flat[k].Slice(start, start + count));
      if (k > 0) TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(part, *piece.tile));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex[fmt::format("in{}", k)], operands[k].tensor));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex[fmt::format("out{}", k)], part));
    }
    if (start > UINT32_MAX) return MakeError("{}: too many elements", Describe(instruction));
    TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["first"], static_cast<uint32_t>(start)));
    for (size_t d = 0; d < first.Rank(); ++d) {
      TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex[fmt::format("size{}", d)],
                                                      static_cast<uint32_t>(first.shape()[d])));
    }
    TILEPROF_RETURN_IF_ERROR(
        graph_.SetInitialValue(vertex["dim"], static_cast<uint32_t>(dimension[0])));
  }
  return result();
}

}  // namespace tileprof::engine::compiler
