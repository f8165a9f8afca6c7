// Data lowering: constants, and the ops that move or view data (broadcast,
// transpose, slice, concatenate, copy, pad, reverse). Views cost nothing, as
// in Poplar, but a view that splits a tensor into very many runs would make
// every later vertex connect to thousands of pieces; past kMaxViewRegions
// the data is rearranged into a new tensor instead.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"
#include "engine/hlo/literal.h"

namespace tileprof::engine::compiler {
namespace {

// A broadcast is a view, as Poplar's Tensor::broadcast is, when each copy
// of the operand it repeats is a run of at least kMinViewRunBytes (a
// per-channel vector over NHWC activations: the run is the channels): a
// vertex reading its part of it then connects to a few runs, each the same
// vector, which its tile receives once. Shorter runs (an element repeated
// along an inner dimension) are rearranged into a new tensor instead.
// Past this many copies the view's region list itself (24 B a run) would
// be the cost: rearranged too.
constexpr uint64_t kMaxBroadcastRuns = uint64_t{1} << 22;

// `in` broadcast to `dims` along `mapped` (HLO's dimensions attribute) as a
// view, or nullopt when that view would be made of short runs.
Expected<std::optional<Tensor>> BroadcastView(const Tensor& in, std::span<const uint64_t> dims,
                                              std::span<const int64_t> mapped) {
  const size_t rank = dims.size();
  if (mapped.size() != in.Rank()) return std::optional<Tensor>();
  for (size_t j = 0; j < mapped.size(); ++j) {
    if (mapped[j] < 0 || static_cast<size_t>(mapped[j]) >= rank ||
        (j > 0 && mapped[j] <= mapped[j - 1]) ||
        in.shape()[j] != dims[static_cast<size_t>(mapped[j])])
      return std::optional<Tensor>();
  }
  // The run: the trailing output dimensions that are the operand's
  // trailing dimensions, in order.
  std::vector<bool> is_mapped(rank, false);
  for (int64_t d : mapped) is_mapped[static_cast<size_t>(d)] = true;
  uint64_t run = 1;
  size_t inner = rank;
  while (inner > 0 && is_mapped[inner - 1]) run *= dims[--inner];
  TILEPROF_ASSIGN_OR_RETURN(const uint64_t total, ElementCount(dims));
  if (run == 0 || total == 0 || run * SizeOf(in.element_type()) < kMinViewRunBytes ||
      total / run > kMaxBroadcastRuns)
    return std::optional<Tensor>();
  // Row-major strides of the operand for the outer output coordinates.
  std::vector<uint64_t> in_stride(rank, 0);
  uint64_t stride = run;
  for (size_t j = mapped.size(); j-- > 0;) {
    const auto d = static_cast<size_t>(mapped[j]);
    if (d >= inner) continue;
    in_stride[d] = stride;
    stride *= dims[d];
  }
  ViewBuilder builder(in.element_type());
  TILEPROF_ASSIGN_OR_RETURN(size_t source, builder.AddSource(in.Flatten()));
  builder.Reserve(total / run);  // a run a copy, or more where the operand is fragmented
  std::vector<uint64_t> coord(inner, 0);
  for (uint64_t copy = 0, copies = total / run; copy < copies; ++copy) {
    uint64_t start = 0;
    for (size_t d = 0; d < inner; ++d) start += coord[d] * in_stride[d];
    TILEPROF_RETURN_IF_ERROR(builder.Append(source, start, start + run));
    for (size_t d = inner; d-- > 0;) {
      if (++coord[d] < dims[d]) break;
      coord[d] = 0;
    }
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor view,
                            builder.Finish(std::vector<uint64_t>(dims.begin(), dims.end())));
  return std::optional<Tensor>(std::move(view));
}

// True when the literal is printed elided ("{...}", or braces holding a
// "..."): the dump left its values out.
bool IsElidedLiteral(std::string_view text, const hlo::Shape& shape) {
  Expected<hlo::Literal> literal = hlo::ParseLiteral(text, shape);
  return literal && literal->kind == hlo::Literal::Kind::kElided;
}

}  // namespace

Expected<Value> Lowering::LowerConstant(const hlo::Instruction& instruction) {
  const hlo::Shape& shape = instruction.shape();
  if (shape.IsArray() && IsNative(shape)) {
    Expected<hlo::Literal> literal = hlo::ParseLiteral(instruction.literal(), shape);
    if (literal && literal->kind == hlo::Literal::Kind::kArray) {
      TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
      TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> dims, StorageShape(shape));
      Expected<Tensor> tensor = Error("");
      if (!literal->reals.empty() || IsFloat(storage.type)) {
        tensor =
            graph_.AddConstantFromDoubles(storage.type, dims, literal->reals, instruction.name());
      } else if (!literal->unsigneds.empty()) {
        std::vector<int64_t> bits(literal->unsigneds.begin(), literal->unsigneds.end());
        tensor = graph_.AddConstantFromInts(storage.type, dims, bits, instruction.name());
      } else {
        tensor =
            graph_.AddConstantFromInts(storage.type, dims, literal->integers, instruction.name());
      }
      if (!tensor) return tensor.error();
      TILEPROF_RETURN_IF_ERROR(mapper_.Map(*tensor));
      return Value::Array(std::move(*tensor));
    }
  }
  // Values unknown: the memory is still needed, the contents are not
  // invented here. A run may fill a constant the text elides and whose type
  // the engine computes on (tileprof run --elided-constants); one of a type
  // the engine only stores, or a tuple constant with values, stays unknown.
  const bool elided = IsNative(shape) && IsElidedLiteral(instruction.literal(), shape);
  TILEPROF_ASSIGN_OR_RETURN(Value value, NewValue(shape, instruction.name(), true));
  for (const Tensor& leaf : value.Leaves()) {
    for (const TensorRegion& region : leaf.regions()) {
      valueless_constants_.push_back(region.variable);
      if (elided) elided_constants_.push_back(region.variable);
    }
  }
  stats_.constants_without_values.emplace_back(instruction.name());
  return value;
}

Expected<std::optional<Tensor>> Lowering::BroadcastAsView(const hlo::Instruction& instruction,
                                                          const Value& operand) {
  const hlo::Shape& shape = instruction.shape();
  if (!shape.IsArray() || !operand.IsArray()) return std::optional<Tensor>();
  const Tensor& in = operand.tensor;
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> dims, StorageShape(shape));
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  if (n == in.NumElements()) {
    // Only size-1 dimensions added: a reshape.
    TILEPROF_ASSIGN_OR_RETURN(Tensor view, in.Reshape(dims));
    return std::optional<Tensor>(std::move(view));
  }
  if (in.NumElements() == 1) return std::optional<Tensor>();
  if (const hlo::Attribute* attribute = instruction.FindAttribute("dimensions")) {
    Expected<std::vector<int64_t>> mapped = hlo::ParseIntList(attribute->value());
    if (mapped && dims.size() == static_cast<size_t>(shape.rank()))
      return BroadcastView(in, dims, *mapped);
  }
  return std::optional<Tensor>();
}

Expected<Value> Lowering::LowerBroadcast(const hlo::Instruction& instruction, const Value& operand,
                                         program::Sequence& program, const Tensor* like) {
  const hlo::Shape& shape = instruction.shape();
  if (!shape.IsArray() || !operand.IsArray()) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::optional<Tensor> view, BroadcastAsView(instruction, operand));
  if (view) return Value::Array(std::move(*view));
  const Tensor& in = operand.tensor;
  if (in.NumElements() == 1 && IsNative(shape)) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor out, Fill(in, shape, instruction.name(), program));
    return Value::Array(std::move(out));
  }
  return LowerBroadcastRearrange(instruction, operand, program, like);
}

Expected<Value> Lowering::LowerTranspose(const hlo::Instruction& instruction, const Value& operand,
                                         program::Sequence& program) {
  const hlo::Attribute* attribute = instruction.FindAttribute("dimensions");
  if (attribute == nullptr || !operand.IsArray()) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> permutation,
                            hlo::ParseIntList(attribute->value()));
  const Tensor& in = operand.tensor;
  std::vector<size_t> perm(permutation.begin(), permutation.end());
  // c128 storage has an extra innermost dimension that stays put.
  if (perm.size() + 1 == in.Rank()) perm.push_back(perm.size());
  if (perm.size() != in.Rank()) return LowerOpaque(instruction, {&operand, 1}, program);
  // Runs stay contiguous along the trailing dimensions the permutation keeps.
  uint64_t run = 1;
  for (size_t i = perm.size(); i-- > 0 && perm[i] == i;) run *= in.shape()[i];
  const uint64_t n = in.NumElements();
  if (run == 0 || n / std::max<uint64_t>(run, 1) <= kMaxViewRegions) {
    Expected<Tensor> view = in.Dimshuffle(perm);
    if (view) return Value::Array(std::move(*view));
  }
  return LowerTransposeRearrange(instruction, operand, perm, program);
}

Expected<Value> Lowering::LowerSlice(const hlo::Instruction& instruction, const Value& operand,
                                     program::Sequence& program) {
  const hlo::Attribute* attribute = instruction.FindAttribute("slice");
  if (attribute == nullptr || !operand.IsArray()) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<hlo::SliceDimension> slice,
                            hlo::ParseSlice(attribute->value()));
  const Tensor& in = operand.tensor;
  bool unit_strides = slice.size() <= in.Rank();
  for (const hlo::SliceDimension& d : slice) unit_strides = unit_strides && d.stride == 1;
  if (unit_strides) {
    uint64_t run = 1;
    uint64_t elements = 1;
    bool partial_seen = false;
    for (size_t i = in.Rank(); i-- > 0;) {
      const uint64_t size = in.shape()[i];
      const uint64_t taken =
          i < slice.size() ? static_cast<uint64_t>(slice[i].limit - slice[i].start) : size;
      elements *= taken;
      if (!partial_seen) {
        run *= taken;
        partial_seen = taken != size;
      }
    }
    if (run == 0 || elements / run <= kMaxViewRegions) {
      Tensor view = in;
      for (size_t i = 0; i < slice.size(); ++i) {
        Expected<Tensor> next = view.Slice(static_cast<uint64_t>(slice[i].start),
                                           static_cast<uint64_t>(slice[i].limit), i);
        if (!next) return next.error();
        view = std::move(*next);
      }
      return Value::Array(std::move(view));
    }
  }
  return LowerSliceRearrange(instruction, operand, slice, program);
}

namespace {

// Parts of one shape (a projection's q, k and v; an iota beside the
// labels it indexes): the result is the parts stacked as [k, R, w] (R rows
// before the dimension, w elements from it on) and transposed to [R, k, w],
// which Rearrange vertices compute, each reading the rows of its tile run
// from every part as one box. Copied into strided slabs instead, the
// copies listed a run per row of each part: GraphHelper's Llama-2 step held
// 2.6 GB of them in 26 concatenates. nullopt when the parts differ.
Expected<std::optional<Tensor>> ConcatenateEqualParts(Lowering& lowering,
                                                      std::span<const Tensor> parts, size_t dim,
                                                      std::string_view name,
                                                      program::Sequence& program) {
  if (parts.size() < 2) return std::optional<Tensor>();
  for (const Tensor& part : parts)
    if (part.shape() != parts[0].shape() || part.element_type() != parts[0].element_type())
      return std::optional<Tensor>();
  const std::vector<uint64_t>& shape = parts[0].shape();
  uint64_t rows = 1, width = 1;
  for (size_t d = 0; d < shape.size(); ++d) (d < dim ? rows : width) *= shape[d];
  if (rows == 0 || width == 0) return std::optional<Tensor>();
  std::vector<Tensor> blocks;
  for (const Tensor& part : parts) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor block, part.Reshape({1, rows, width}));
    blocks.push_back(std::move(block));
  }
  TILEPROF_ASSIGN_OR_RETURN(const Tensor source, Tensor::Concat(blocks, 0));
  // Result [R, k, w]: source dimension 0 (the part) is result dimension 1,
  // source dimension 1 (the row) result dimension 0.
  std::vector<SourceDim> map(3);
  for (uint32_t d = 0; d < 3; ++d) map[d].src = map[d].src2 = d;
  map[0].src = map[0].src2 = 1;
  map[1].src = map[1].src2 = 0;
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor out,
      lowering.EmitRearrange(source, map, nullptr, {rows, parts.size(), width}, name, program));
  std::vector<uint64_t> joined = shape;
  joined[dim] *= parts.size();
  TILEPROF_ASSIGN_OR_RETURN(Tensor result, out.Reshape(std::move(joined)));
  return std::optional<Tensor>(std::move(result));
}

}  // namespace

Expected<Value> Lowering::LowerConcatenate(const hlo::Instruction& instruction,
                                           std::span<const Value> operands,
                                           program::Sequence& program) {
  const hlo::Attribute* attribute = instruction.FindAttribute("dimensions");
  if (attribute == nullptr || operands.empty()) return LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, hlo::ParseIntList(attribute->value()));
  if (dims.size() != 1 || dims[0] < 0) return LowerOpaque(instruction, operands, program);
  const auto dim = static_cast<size_t>(dims[0]);
  const Expected<StorageType> storage = StorageOf(instruction.shape().element_type);
  std::vector<Tensor> parts;
  uint64_t regions = 0;
  for (const Value& operand : operands) {
    if (!operand.IsArray() || dim >= operand.tensor.Rank()) {
      return LowerOpaque(instruction, operands, program);
    }
    uint64_t run = 1;
    for (size_t i = dim; i < operand.tensor.Rank(); ++i) run *= operand.tensor.shape()[i];
    if (run > 0) regions += operand.tensor.NumElements() / run;
    // XLA concatenates floating-point operands of different precisions
    // (its shape inference ignores precision; TPU dumps after optimisation
    // have them): each is converted to the result's type first.
    if (storage && operand.tensor.element_type() != storage->type &&
        IsFloat(operand.tensor.element_type()) && IsFloat(storage->type)) {
      TILEPROF_ASSIGN_OR_RETURN(
          Tensor cast,
          Cast(operand.tensor, storage->type,
               fmt::format("{}/convert{}", instruction.name(), parts.size()), program));
      parts.push_back(std::move(cast));
      continue;
    }
    parts.push_back(operand.tensor);
  }
  if (regions <= kMaxViewRegions) {
    Expected<Tensor> view = Tensor::Concat(parts, dim);
    if (view) return Value::Array(std::move(*view));
  }
  TILEPROF_ASSIGN_OR_RETURN(std::optional<Tensor> stacked,
                            ConcatenateEqualParts(*this, parts, dim, instruction.name(), program));
  if (stacked) return Value::Array(std::move(*stacked));
  // Too fragmented for a view: copy each operand into its slab of a new,
  // linearly mapped tensor.
  TILEPROF_ASSIGN_OR_RETURN(Tensor joined, Tensor::Concat(parts, dim));
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor out, NewTensor(joined.element_type(), joined.shape(), instruction.name(), true));
  uint64_t offset = 0;
  for (const Tensor& part : parts) {
    const uint64_t size = part.shape()[dim];
    TILEPROF_ASSIGN_OR_RETURN(Tensor slab, out.Slice(offset, offset + size, dim));
    if (part.NumElements() > 0) program.Add(program::Copy(part, slab));
    offset += size;
  }
  return Value::Array(std::move(out));
}

Expected<Value> Lowering::LowerCopy(const hlo::Instruction& instruction, const Value& operand,
                                    program::Sequence& program) {
  if (!operand.IsArray()) {
    // Copying a tuple copies its leaves.
    TILEPROF_ASSIGN_OR_RETURN(Value out, NewValue(instruction.shape(), instruction.name(), false));
    std::vector<Tensor> from = operand.Leaves();
    std::vector<Tensor> to = out.Leaves();
    if (from.size() != to.size()) return LowerOpaque(instruction, {&operand, 1}, program);
    for (size_t i = 0; i < to.size(); ++i) {
      TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(to[i], from[i]));
      if (to[i].NumElements() > 0) program.Add(program::Copy(from[i], to[i]));
    }
    return out;
  }
  // XLA's mixed precision (TPU dumps after optimisation): a copy to
  // another float type converts, rounding once (an f32 parameter copied
  // into the bf16 layout a convolution reads).
  TILEPROF_ASSIGN_OR_RETURN(const StorageType result, StorageOf(instruction.shape().element_type));
  if (result.type != operand.tensor.element_type()) {
    if (!IsFloat(result.type) || !IsFloat(operand.tensor.element_type()))
      return LowerOpaque(instruction, {&operand, 1}, program);
    TILEPROF_ASSIGN_OR_RETURN(Tensor cast,
                              Cast(operand.tensor, result.type, instruction.name(), program));
    return Value::Array(std::move(cast));
  }
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor out,
      NewTensor(operand.tensor.element_type(), operand.tensor.shape(), instruction.name(), false));
  TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(out, operand.tensor));
  if (out.NumElements() > 0) program.Add(program::Copy(operand.tensor, out));
  return Value::Array(std::move(out));
}

Expected<Value> Lowering::LowerCopyStart(const hlo::Instruction& instruction, const Value& operand,
                                         program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  if (!operand.IsArray() || !shape.IsTuple() || shape.tuple_shapes.size() != 3)
    return LowerOpaque(instruction, {&operand, 1}, program);
  TILEPROF_ASSIGN_OR_RETURN(const StorageType copied,
                            StorageOf(shape.tuple_shapes[0].element_type));
  if (copied.type != operand.tensor.element_type())
    return LowerOpaque(instruction, {&operand, 1}, program);
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor out,
      NewTensor(operand.tensor.element_type(), operand.tensor.shape(), instruction.name(), false));
  TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(out, operand.tensor));
  if (out.NumElements() > 0) program.Add(program::Copy(operand.tensor, out));
  TILEPROF_ASSIGN_OR_RETURN(
      Value context,
      NewValue(shape.tuple_shapes[2], fmt::format("{}/context", instruction.name()), true));
  Value tuple;
  tuple.is_tuple = true;
  tuple.elements = {Value::Array(std::move(out)), operand, std::move(context)};
  return tuple;
}

}  // namespace tileprof::engine::compiler
