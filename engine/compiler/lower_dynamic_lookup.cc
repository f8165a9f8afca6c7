// A dynamic-slice that takes one row of a table at a start known only at
// run time (JAX's `positions[step]`, `xs[t]` in the body of a lax.scan, a
// layer's weights from a stack of them), or a row per index of whole
// leading dimensions (`cache[:, step]`), written out as the gather of those
// rows, so that the lookup plans of lower_lookup.cc serve it. As it is
// (lower_index.cc), each tile run of the result reads the box of the
// operand it could take for any start: every row, in its columns, so the
// one or two tiles of a small result received nearly the whole table
// (samples/oom's 4,096-row positional table: 512 KiB onto each of two
// 256 KiB tiles). As a lookup, the tiles holding the table's rows each
// write a partial of the result and the partials are summed. The gather
// clamps each start component to [0, dimension - 1] as dynamic-slice
// clamps its starts; the starts of whole dimensions are ignored by both.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "engine/compiler/expansion_text.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

// Dynamic-slices whose tile runs each read this many bytes or fewer stay
// as they are: the partials and their sum would cost more than they save.
constexpr uint64_t kMinDynamicLookupBytes = 16 * 1024;

}  // namespace

Expected<std::optional<Value>> Lowering::LowerDynamicLookup(const hlo::Instruction& instruction,
                                                            std::span<const Value> operands,
                                                            program::Sequence& program) {
  const hlo::Shape& result = instruction.shape();
  if (operands.empty() || !result.IsArray() || instruction.operand(0) == nullptr) {
    return std::optional<Value>();
  }
  const Tensor& table = operands[0].tensor;
  const size_t rank = table.Rank();
  // Scalar starts only (the old form's one start vector stays as it is).
  if (rank == 0 || operands.size() != 1 + rank || result.dimensions.size() != rank) {
    return std::optional<Value>();
  }
  // The form: dimension k (the last one sliced) cut to one element, each
  // dimension before it either cut to one element or whole (a batch of
  // rows: `cache[:, step]`), those after it whole.
  size_t k = rank;
  for (size_t d = rank; d-- > 0;) {
    if (static_cast<uint64_t>(result.dimensions[d]) != table.shape()[d]) {
      k = d;
      break;
    }
  }
  if (k == rank) return std::optional<Value>();
  uint64_t sliced_rows = 1, lookups = 1, width = 1;
  std::vector<uint64_t> batch;  // the whole dimensions before k
  for (size_t d = 0; d < rank; ++d) {
    const uint64_t extent = table.shape()[d];
    const bool whole = static_cast<uint64_t>(result.dimensions[d]) == extent;
    if (d > k) {
      width = SaturatingMul(width, extent);
    } else if (whole && d < k) {
      batch.push_back(extent);
      lookups = SaturatingMul(lookups, extent);
    } else if (result.dimensions[d] == 1) {
      sliced_rows = SaturatingMul(sliced_rows, extent);
    } else {
      return std::optional<Value>();
    }
  }
  // As a dynamic-slice, a tile run of the result (within one row) reads
  // its columns of every row the starts may select.
  const ElementType type = table.element_type();
  const uint64_t run = mapper_.ChunkElements(SaturatingMul(lookups, width), type);
  const uint64_t read =
      SaturatingMul(SaturatingMul(sliced_rows, std::min(width, run)), SizeOf(type));
  if (read <= kMinDynamicLookupBytes || lookups > UINT32_MAX) return std::optional<Value>();
  // A lookup's block holds a partial of every lookup (twice, when the sum
  // has two stages): with many lookups of long rows (a scan's layer of
  // stacked weights, `w[:, layer]`), that is more than the dynamic-slice
  // reads, and the gather it would fall back to reads every flat row.
  if (SaturatingMul(SaturatingMul(lookups, width), 2 * SizeOf(type)) >= read)
    return std::optional<Value>();
  // An iota of the starts' type counts each whole dimension.
  const hlo::PrimitiveType index_type = instruction.operand(1)->shape().element_type;
  const int bits = hlo::BitWidth(index_type);
  const int value_bits = hlo::IsSignedIntegerType(index_type) ? bits - 1 : bits;
  for (uint64_t extent : batch) {
    if (value_bits <= 0 || (value_bits < 64 && extent - 1 > (uint64_t{1} << value_bits) - 1))
      return std::optional<Value>();
  }

  // The starts of dimensions 0..k as one index vector per lookup (the
  // coordinates of a whole dimension counted by an iota), the gather of
  // those rows, and a reshape to the op's shape.
  ExpansionText text(instruction.name());
  const std::string_view it = hlo::PrimitiveTypeName(index_type);
  const std::string_view t = hlo::PrimitiveTypeName(instruction.operand(0)->shape().element_type);
  const std::string table_ref = text.Parameter("table", ShapeText(instruction.operand(0)->shape()));
  for (size_t d = 0; d < rank; ++d) text.Parameter(fmt::format("s{}", d), fmt::format("{}[]", it));
  std::string ids;
  size_t batch_dim = 0;
  for (size_t d = 0; d <= k; ++d) {
    // One component is the index vector itself.
    const std::string component = k == 0 ? "ids" : fmt::format("i{}", d);
    const std::string shape = fmt::format("{}[{},1]", it, lookups);
    if (d < k && static_cast<uint64_t>(result.dimensions[d]) == table.shape()[d]) {
      const std::string counted =
          text.Add(fmt::format("w{}", d), fmt::format("{}[{}]", it, fmt::join(batch, ",")),
                   fmt::format("iota(), iota_dimension={}", batch_dim++));
      text.Add(component, shape, fmt::format("reshape({})", counted));
    } else {
      text.Add(component, shape,
               fmt::format("broadcast({}), dimensions={{}}", text.Ref(fmt::format("s{}", d))));
    }
    ids += fmt::format("{}{}", ids.empty() ? "" : ", ", text.Ref(component));
  }
  if (k > 0) {
    text.Add("ids", fmt::format("{}[{},{}]", it, lookups, k + 1),
             fmt::format("concatenate({}), dimensions={{1}}", ids));
  }
  std::string collapsed, offset_dims, slice_sizes;
  for (size_t d = 0; d < rank; ++d) {
    if (d <= k) {
      collapsed += fmt::format("{}{}", d == 0 ? "" : ",", d);
      slice_sizes += fmt::format("{}1", d == 0 ? "" : ",");
    } else {
      offset_dims += fmt::format("{}{}", offset_dims.empty() ? "" : ",", d - k);
      slice_sizes += fmt::format(",{}", table.shape()[d]);
    }
  }
  const std::vector<uint64_t> rest(table.shape().begin() + static_cast<std::ptrdiff_t>(k) + 1,
                                   table.shape().end());
  const std::string gathered = text.Add(
      "", fmt::format("{}[{}{}{}]", t, lookups, rest.empty() ? "" : ",", fmt::join(rest, ",")),
      fmt::format("gather({}, {}), offset_dims={{{}}}, collapsed_slice_dims={{{}}}, "
                  "start_index_map={{{}}}, index_vector_dim=1, slice_sizes={{{}}}",
                  table_ref, text.Ref("ids"), offset_dims, collapsed, collapsed, slice_sizes));
  const std::string expansion =
      text.Finish(ShapeText(result), fmt::format("reshape({})", gathered));
  TILEPROF_ASSIGN_OR_RETURN(Value value, LowerExpansion(instruction, expansion, operands, program));
  return std::optional(std::move(value));
}

}  // namespace tileprof::engine::compiler
