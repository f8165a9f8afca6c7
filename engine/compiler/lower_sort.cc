// Sort (engine/codelets/sort.h): one vertex per tile run of the first
// result; every result is mapped like the first, so a vertex writes the
// same run of each, reading the box of every operand that holds the whole
// lines its run touches (lines along the innermost dimension are mapped
// whole to a tile, MapSortLines; lines too long for a tile are spread over
// several, lower_sort_spread.cc). The comparator must be one of the forms
// sort.h lists; others stay opaque, and the simulator then
// refuses the program naming the sort.
#include <bit>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "engine/codelets/sort.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/scalar_eval.h"
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

struct Comparator {
  uint32_t key = 0;
  SortOrder order = SortOrder::kLt;
};

void UsedParameters(const Instruction* i, std::set<int64_t>& used,
                    std::set<const Instruction*>& seen) {
  if (!seen.insert(i).second) return;
  if (i->opcode() == Opcode::kParameter) used.insert(i->parameter_number());
  for (const Instruction* o : i->operands()) UsedParameters(o, used, seen);
}

// The order a candidate stands for, on probe values (as doubles).
bool Matches(SortOrder order, double x, double y) {
  const auto total = [](double v) {
    const auto bits = std::bit_cast<int64_t>(v);
    return bits < 0 ? bits ^ INT64_MAX : bits;
  };
  const auto nan_last = [&](double v) {
    if (std::isnan(v)) v = std::copysign(std::numeric_limits<double>::quiet_NaN(), 1.0);
    if (v == 0) v = 0.0;
    return total(v);
  };
  switch (order) {
    case SortOrder::kLt:
      return x < y;
    case SortOrder::kGt:
      return x > y;
    case SortOrder::kLtTotal:
      return total(x) < total(y);
    case SortOrder::kGtTotal:
      return total(x) > total(y);
    case SortOrder::kLtNanLast:
      return nan_last(x) < nan_last(y);
    case SortOrder::kGtNanLast:
      return nan_last(x) > nan_last(y);
  }
  return false;
}

std::vector<Scalar> Probes(hlo::PrimitiveType type) {
  using P = hlo::PrimitiveType;
  std::vector<Scalar> probes;
  if (type == P::kF32 || type == P::kF64) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const double tiny = type == P::kF32 ? std::numeric_limits<float>::denorm_min()
                                        : std::numeric_limits<double>::denorm_min();
    const double big =
        type == P::kF32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    for (double v : {nan, -nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, tiny, -tiny, big, -big,
                     1e-30, -3.0}) {
      probes.push_back(type == P::kF32 ? Scalar::F32(static_cast<float>(v)) : Scalar::F64(v));
    }
  } else if (type == P::kPred) {
    probes = {Scalar::Int(type, 0), Scalar::Int(type, 1)};
  } else if (hlo::IsSignedIntegerType(type) && hlo::BitWidth(type) >= 8) {
    const int w = hlo::BitWidth(type);
    const int64_t max = w == 64 ? INT64_MAX : (int64_t{1} << (w - 1)) - 1;
    for (int64_t v : {-max - 1, int64_t{-7}, int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{7}, max})
      probes.push_back(Scalar::Int(type, v));
  } else if (hlo::IsUnsignedIntegerType(type) && hlo::BitWidth(type) >= 8) {
    for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{-2}, int64_t{-1}})
      probes.push_back(Scalar::Int(type, v));  // -1, -2: the largest values
  }
  return probes;
}

double ProbeValue(const Scalar& s) {
  using P = hlo::PrimitiveType;
  if (s.type == P::kF32) return std::bit_cast<float>(static_cast<uint32_t>(s.bits));
  if (s.type == P::kF64) return std::bit_cast<double>(s.bits);
  if (hlo::IsSignedIntegerType(s.type)) {
    const int w = hlo::BitWidth(s.type);
    if (w >= 64) return static_cast<double>(static_cast<int64_t>(s.bits));
    const uint64_t sign = uint64_t{1} << (w - 1);
    return static_cast<double>(static_cast<int64_t>((s.bits ^ sign) - sign));
  }
  return static_cast<double>(s.bits);  // u64 above 2^53 rounds, keeping the order
}

// The comparator's order: it must read only the parameters of one operand
// k (2k and 2k + 1). compare(p2k, p2k+1) LT/GT is read directly (any element
// type); anything else is evaluated on probe values of the key's type and
// must agree with one of the orders of engine/codelets/sort.h on all of
// them (jax's select/bitcast-convert float comparator is the common case).
std::optional<Comparator> ComparatorOf(const hlo::Computation& computation,
                                       std::span<const hlo::PrimitiveType> types) {
  const Instruction* root = computation.root();
  if (root == nullptr) return std::nullopt;
  std::set<int64_t> used;
  std::set<const Instruction*> seen;
  UsedParameters(root, used, seen);
  if (used.empty() || *used.begin() < 0) return std::nullopt;
  const int64_t k = *used.begin() / 2;
  if (*used.rbegin() > 2 * k + 1 || static_cast<size_t>(k) >= types.size()) return std::nullopt;
  const int64_t p = 2 * k;
  Comparator c{static_cast<uint32_t>(k), SortOrder::kLt};
  const hlo::PrimitiveType type = types[static_cast<size_t>(k)];
  const bool is_float = hlo::IsFloatingPointType(type);
  if (root->opcode() == Opcode::kCompare && root->operand_count() == 2) {
    const Instruction* a = root->operands()[0];
    const Instruction* b = root->operands()[1];
    const std::string_view direction = AttributeText(*root, "direction");
    const bool direct = IsParam(a, p) && IsParam(b, p + 1);
    const bool swapped = IsParam(a, p + 1) && IsParam(b, p);
    if ((direct || swapped) && (direction == "LT" || direction == "GT")) {
      const bool ascending = (direction == "LT") == direct;
      const bool total = AttributeText(*root, "type") == "TOTALORDER" && is_float;
      if (total)
        c.order = ascending ? SortOrder::kLtTotal : SortOrder::kGtTotal;
      else
        c.order = ascending ? SortOrder::kLt : SortOrder::kGt;
      return c;
    }
  }
  const std::vector<Scalar> probes = Probes(type);
  if (probes.empty()) return std::nullopt;
  std::vector<Scalar> params(types.size() * 2);
  for (size_t i = 0; i < params.size(); ++i) params[i] = Scalar::Int(types[i / 2], 0);
  std::vector<SortOrder> candidates = {SortOrder::kLt, SortOrder::kGt};
  if (is_float) {
    candidates.insert(candidates.end(), {SortOrder::kLtTotal, SortOrder::kGtTotal,
                                         SortOrder::kLtNanLast, SortOrder::kGtNanLast});
  }
  for (const Scalar& x : probes) {
    for (const Scalar& y : probes) {
      params[static_cast<size_t>(p)] = x;
      params[static_cast<size_t>(p) + 1] = y;
      const std::optional<Scalar> r = EvaluateScalar(*root, params);
      if (!r || r->type != hlo::PrimitiveType::kPred) return std::nullopt;
      std::erase_if(candidates, [&](SortOrder order) {
        return Matches(order, ProbeValue(x), ProbeValue(y)) != (r->bits != 0);
      });
      if (candidates.empty()) return std::nullopt;
    }
  }
  c.order = candidates.front();
  return c;
}

// The element types of a sort's operands, or nullopt when one is not an
// array of the first one's shape (lowered opaque).
std::optional<std::vector<ElementType>> SortOperandTypes(const hlo::Instruction& instruction,
                                                         std::span<const Value> operands) {
  std::vector<ElementType> types;
  for (size_t k = 0; k < operands.size(); ++k) {
    const Value& v = operands[k];
    const hlo::Shape& shape = instruction.operands()[k]->shape();
    if (v.is_tuple || !v.tensor.valid() || !shape.IsArray() ||
        v.tensor.Rank() != static_cast<size_t>(shape.rank()) ||
        v.tensor.shape() != operands[0].tensor.shape()) {
      return std::nullopt;
    }
    types.push_back(v.tensor.element_type());
  }
  return types;
}

// The sort's value: its one result, or a tuple of them.
Value SortResult(const std::vector<Tensor>& outs) {
  if (outs.size() == 1) return Value::Array(outs[0]);
  Value tuple;
  tuple.is_tuple = true;
  for (const Tensor& t : outs) tuple.elements.push_back(Value::Array(t));
  return tuple;
}

// Connects a sort vertex to run [start, start + count) of each flat result
// (mapped to `tile`, the first already is) and to the box `run` of each
// operand.
Status ConnectSortRun(Graph& graph, VertexRef vertex, std::span<const Value> operands,
                      const std::vector<Tensor>& flat,
                      std::span<const std::pair<uint64_t, uint64_t>> run, uint64_t start,
                      uint64_t count, uint32_t tile) {
  const std::vector<uint64_t>& shape = operands[0].tensor.shape();
  for (size_t k = 0; k < flat.size(); ++k) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor part, flat[k].Slice(start, start + count));
    if (k > 0) TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(part, tile));
    Tensor box = operands[k].tensor;
    for (size_t d = 0; d < run.size(); ++d) {
      if (run[d].first == 0 && run[d].second + 1 == shape[d]) continue;
      TILEPROF_ASSIGN_OR_RETURN(box, box.Slice(run[d].first, run[d].second + 1, d));
    }
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex[fmt::format("in{}", k)], box));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex[fmt::format("out{}", k)], part));
  }
  return {};
}

// A sort vertex's parameters: its first element, the operands' sizes, the
// sorted dimension and the box it reads.
Status SetSortParams(Graph& graph, VertexRef vertex, const hlo::Instruction& instruction,
                     uint64_t start, std::span<const uint64_t> shape, size_t dimension,
                     std::span<const std::pair<uint64_t, uint64_t>> run) {
  if (start > UINT32_MAX) return MakeError("{}: too many elements", Describe(instruction));
  TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex["first"], static_cast<uint32_t>(start)));
  for (size_t d = 0; d < shape.size(); ++d) {
    TILEPROF_RETURN_IF_ERROR(
        graph.SetInitialValue(vertex[fmt::format("size{}", d)], static_cast<uint32_t>(shape[d])));
  }
  TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex["dim"], static_cast<uint32_t>(dimension)));
  for (size_t d = 0; d < run.size(); ++d) {
    TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex[fmt::format("boxLo{}", d)],
                                                   static_cast<uint32_t>(run[d].first)));
    TILEPROF_RETURN_IF_ERROR(
        graph.SetInitialValue(vertex[fmt::format("boxSize{}", d)],
                              static_cast<uint32_t>(run[d].second - run[d].first + 1)));
  }
  return {};
}

}  // namespace

Expected<Value> Lowering::LowerSort(const hlo::Instruction& instruction,
                                    std::span<const Value> operands, program::Sequence& program) {
  const auto opaque = [&] { return LowerOpaque(instruction, operands, program); };
  if (operands.empty() || instruction.called_computations().size() != 1) return opaque();
  const std::optional<std::vector<ElementType>> types = SortOperandTypes(instruction, operands);
  if (!types) return opaque();
  const Tensor& first = operands[0].tensor;
  if (first.Rank() == 0) return opaque();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> dimension,
                            hlo::ParseIntList(AttributeText(instruction, "dimensions")));
  if (dimension.size() != 1 || dimension[0] < 0 ||
      static_cast<size_t>(dimension[0]) >= first.Rank()) {
    return MakeError("{}: sort needs one dimension inside rank {}", Describe(instruction),
                     first.Rank());
  }
  std::vector<hlo::PrimitiveType> hlo_types;
  for (const hlo::Instruction* operand : instruction.operands()) {
    hlo_types.push_back(operand->shape().element_type);
  }
  const std::optional<Comparator> comparator =
      ComparatorOf(*instruction.called_computations()[0], hlo_types);
  if (!comparator) return opaque();
  for (uint64_t d : first.shape()) {
    if (d > UINT32_MAX) return MakeError("{}: dimension {} too large", Describe(instruction), d);
  }
  // A line too long for one tile is sorted in blocks over several.
  const uint64_t blocks = SortBlocks(first, static_cast<size_t>(dimension[0]), *types);
  if (blocks > 1) {
    TILEPROF_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                              LowerSpreadSort(instruction, operands, *types, comparator->key,
                                              comparator->order, blocks, program));
    return SortResult(outs);
  }
  // Results: the first mapped linearly (in whole lines when the lines are
  // the innermost dimension), the others like it.
  std::vector<Tensor> outs;
  for (size_t k = 0; k < operands.size(); ++k) {
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor out, NewTensor((*types)[k], first.shape(),
                              operands.size() == 1 ? instruction.name()
                                                   : fmt::format("{}.{}", instruction.name(), k),
                              false));
    outs.push_back(std::move(out));
  }
  TILEPROF_RETURN_IF_ERROR(MapSortLines(outs[0], static_cast<size_t>(dimension[0])));
  if (first.NumElements() == 0) return SortResult(outs);
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            codelets_.Sort(static_cast<uint32_t>(first.Rank()), comparator->key,
                                           comparator->order, *types));
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
    auto run = FlatRunBox(first.shape(), start, count);
    run[static_cast<size_t>(dimension[0])] = {0,
                                              first.shape()[static_cast<size_t>(dimension[0])] - 1};
    TILEPROF_RETURN_IF_ERROR(
        ConnectSortRun(graph_, vertex, operands, flat, run, start, count, *piece.tile));
    TILEPROF_RETURN_IF_ERROR(SetSortParams(graph_, vertex, instruction, start, first.shape(),
                                           static_cast<size_t>(dimension[0]), run));
  }
  return SortResult(outs);
}

Status Lowering::MapSortLines(const Tensor& out, size_t dimension) {
  const uint64_t n = out.NumElements();
  const uint64_t line = out.Rank() == 0 ? 1 : out.shape()[dimension];
  if (n == 0 || dimension + 1 != out.Rank() || line <= 1) return mapper_.Map(out);
  // Each vertex reads the whole lines its run touches: a line split across
  // tiles is received whole by each of them (an argsort over a 65,536-word
  // vocabulary: 512 KiB on every tile). Whole lines per tile instead; a
  // line too long for that is spread by LowerSpreadSort.
  const uint64_t lines = n / line;
  const uint64_t tiles = graph_.target().NumTiles();
  const uint64_t chunk = mapper_.ChunkElements(n, out.element_type());
  const uint64_t per_tile =
      std::max<uint64_t>((lines + tiles - 1) / tiles, std::max<uint64_t>(1, chunk / line));
  const uint64_t used = (lines + per_tile - 1) / per_tile;
  const uint32_t first_tile = mapper_.TakeTiles(used);
  const Tensor flat = out.Flatten();
  for (uint64_t i = 0; i < used; ++i) {
    const uint64_t begin = i * per_tile * line, end = std::min(n, (i + 1) * per_tile * line);
    TILEPROF_ASSIGN_OR_RETURN(Tensor piece, flat.Slice(begin, end));
    TILEPROF_RETURN_IF_ERROR(
        graph_.SetTileMapping(piece, static_cast<uint32_t>((first_tile + i) % tiles)));
  }
  return {};
}

}  // namespace tileprof::engine::compiler
