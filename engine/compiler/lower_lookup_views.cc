// Gathers of whole table rows written out, as HLO of their own, as the
// gather on a view of the table that the lookup plans of lower_lookup.cc
// or the unplanned gather serve well, and lowered like a call:
//
// * Flat rows. A gather whose index vector has several components
//   (`table[lang, token]` in JAX: collapsed_slice_dims={0,1},
//   start_index_map={0,1}) is the one-component lookup on the table viewed
//   as [d0 x ... x dk-1, row], behind the index arithmetic XLA's semantics
//   give it. Each component is clamped to its own dimension first (XLA
//   clamps a start index per dimension, to [0, d - slice size]), so an
//   out-of-range id picks the row XLA picks, never a neighbouring row of
//   the flat view; then row = sum of clamped component x stride.
//   Unplanned, each tile run of its result read the box of the table its
//   run could touch for any index pair: every row, in its columns
//   (samples/oom's former 2 MiB table, ~1 MiB onto each of two tiles).
// * Columns. A one-component lookup whose result runs are shorter than a
//   row, with more lookups than the partial lookup plan takes, is the
//   gather of the transposed table, [row, rows], transposed back: each
//   tile run of [row, lookups] then reads every row in the columns of its
//   run (one or two when a run is shorter than the lookups), where a run
//   of [lookups, row] read every row in all the columns it crosses (a JAX init step's 1,000 lookups
//   into a [200, 785] table put the whole table on each of 1,472 tiles). This is popops' multiSlice
//   split over the unsliced dimension and the lookups.
// The inner gather is named as the op, so its tensors and exchange
// buffers are the op's in reports.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <string>
#include <vector>

#include "engine/compiler/expansion_text.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

std::string Dims(std::span<const int64_t> dims) {
  std::string text;
  for (int64_t d : dims) text += fmt::format("{}{}", text.empty() ? "" : ",", d);
  return text;
}

// The largest value of integer type `type`, or 0 for other types.
uint64_t IntegerMax(hlo::PrimitiveType type) {
  const int bits = hlo::BitWidth(type);
  if (bits <= 0 || bits > 64) return 0;
  if (hlo::IsSignedIntegerType(type)) return (uint64_t{1} << (bits - 1)) - 1;
  if (hlo::IsUnsignedIntegerType(type))
    return bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  return 0;
}

// The table's HLO shape, of the type its value has: XLA's mixed precision
// converts a float table to the gather's float type first
// (MatchPrecision), so the expansion's parameter is of that type (a TPU
// DLRM's bf16 gather of an f32 table had its expansion reshape f32 rows
// into bf16 ones, opaque).
hlo::Shape TableShape(const hlo::Instruction& instruction) {
  hlo::Shape table = instruction.operand(0)->shape();
  const hlo::Shape& result = instruction.shape();
  if (table.IsArray() && result.IsArray() && hlo::IsFloatingPointType(table.element_type) &&
      hlo::IsFloatingPointType(result.element_type))
    table.element_type = result.element_type;
  return table;
}

// An expansion of gather `name`: a table and ids parameter, then what is
// added, whose last instruction is %name (Finish reshapes it to the result).
class Expansion : public ExpansionText {
 public:
  Expansion(std::string_view name, const hlo::Shape& table, const hlo::Shape& ids)
      : ExpansionText(name) {
    Parameter("table", ShapeText(table));
    Parameter("ids", ShapeText(ids));
  }
  std::string Text(const hlo::Shape& result) const {
    return Finish(ShapeText(result), fmt::format("reshape({})", Ref("")));
  }
};

// The index dimensions but the index vector's, in order.
std::vector<int64_t> BatchDims(const hlo::Shape& ids, uint32_t ivd) {
  std::vector<int64_t> batch;
  for (size_t d = 0; d < ids.dimensions.size(); ++d)
    if (d != ivd) batch.push_back(ids.dimensions[d]);
  return batch;
}

// Gathers of a tile run of the result this many bytes or fewer stay as
// they are: the copies a view costs would outweigh what it saves.
constexpr uint64_t kMinColumnLookupBytes = 16 * 1024;

}  // namespace

Expected<std::optional<Value>> Lowering::LowerFlatLookup(const hlo::Instruction& instruction,
                                                         std::span<const Value> operands,
                                                         const LookupForm& form, uint32_t ivd,
                                                         program::Sequence& program) {
  const hlo::Shape table = TableShape(instruction);
  const hlo::Shape& ids = instruction.operand(1)->shape();
  const size_t k = form.components, rank = table.dimensions.size();
  const uint64_t id_max = IntegerMax(ids.element_type);
  if (k < 2 || k > rank || ivd >= ids.dimensions.size() || id_max == 0 ||
      !instruction.shape().IsArray()) {
    return std::optional<Value>();
  }
  // The form: the first k dimensions each chosen by a component (any
  // order), the others taken whole.
  uint64_t rows = 1;
  std::vector<size_t> dim_of(k, rank);
  for (size_t j = 0; j < rank; ++j) {
    const uint64_t d = static_cast<uint64_t>(table.dimensions[j]);
    if (j < k) {
      if (form.start[j] == 0 || form.slice_sizes[j] != 1 || d == 0 || d - 1 > id_max)
        return std::optional<Value>();
      dim_of[form.start[j] - 1] = j;
      rows = SaturatingMul(rows, d);
    } else if (form.start[j] != 0 || static_cast<uint64_t>(form.slice_sizes[j]) != d) {
      return std::optional<Value>();
    }
  }
  // The flat view's rows are a vertex parameter of the gather it becomes
  // (a llama2 loss step's [4193280, 32000] pick of target logits would be
  // 1.3e11 rows); the op as it is keeps dimensions that fit.
  if (rows > UINT32_MAX || !IsLookupMajor(form.dims, form.res_src, rank)) {
    return std::optional<Value>();
  }
  for (size_t j : dim_of) {
    if (j == rank) return std::optional<Value>();
  }

  // One slice, clamp and scale per component, their sum, the one-component
  // gather and a reshape to the op's shape.
  const std::string_view t = hlo::PrimitiveTypeName(table.element_type);
  const std::string_view it = hlo::PrimitiveTypeName(ids.element_type);
  const std::string_view ct =
      rows - 1 <= uint64_t{std::numeric_limits<int32_t>::max()} ? "s32" : "s64";  // u32 rows
  const std::vector<int64_t> batch = BatchDims(ids, ivd);
  const std::vector<int64_t> rest(table.dimensions.begin() + static_cast<std::ptrdiff_t>(k),
                                  table.dimensions.end());
  std::vector<int64_t> flat_dims{static_cast<int64_t>(rows)};
  flat_dims.insert(flat_dims.end(), rest.begin(), rest.end());
  std::vector<int64_t> gathered = batch;
  gathered.insert(gathered.end(), rest.begin(), rest.end());
  const std::string b = Dims(batch);
  Expansion e(instruction.name(), table, ids);
  e.Add("rows", fmt::format("{}[{}]", t, Dims(flat_dims)),
        fmt::format("reshape({})", e.Ref("table")));
  // Row-major strides of the first k dimensions in the flat view.
  std::vector<uint64_t> strides(k);
  uint64_t stride = 1;
  for (size_t j = k; j-- > 0;) {
    strides[j] = stride;
    stride *= static_cast<uint64_t>(table.dimensions[j]);
  }
  std::string sum;
  for (size_t c = 0; c < k; ++c) {
    const size_t j = dim_of[c];
    std::string ranges;
    for (size_t d = 0; d < ids.dimensions.size(); ++d) {
      const int64_t lo = d == ivd ? static_cast<int64_t>(c) : 0;
      const int64_t hi = d == ivd ? lo + 1 : ids.dimensions[d];
      ranges += fmt::format("{}[{}:{}]", ranges.empty() ? "" : ", ", lo, hi);
    }
    std::vector<int64_t> one = ids.dimensions;
    one[ivd] = 1;
    const std::string id = fmt::format("id{}", c);
    const std::string vec = fmt::format("{}[{}]", it, b);
    e.Add(id + "_slice", fmt::format("{}[{}]", it, Dims(one)),
          fmt::format("slice({}), slice={{{}}}", e.Ref("ids"), ranges));
    e.Add(id, vec, fmt::format("reshape({})", e.Ref(id + "_slice")));
    e.Add(id + "_lo", fmt::format("{}[]", it), "constant(0)");
    e.Add(id + "_hi", fmt::format("{}[]", it),
          fmt::format("constant({})", table.dimensions[j] - 1));
    for (std::string_view bound : {"_lo", "_hi"}) {
      e.Add(fmt::format("{}{}_b", id, bound), vec,
            fmt::format("broadcast({}), dimensions={{}}", e.Ref(id + std::string(bound))));
    }
    e.Add(id + "_clamped", vec,
          fmt::format("clamp({}, {}, {})", e.Ref(id + "_lo_b"), e.Ref(id), e.Ref(id + "_hi_b")));
    std::string term = id + "_clamped";
    if (ct != it) {
      e.Add(id + "_wide", fmt::format("{}[{}]", ct, b), fmt::format("convert({})", e.Ref(term)));
      term = id + "_wide";
    }
    if (strides[j] != 1) {
      e.Add(id + "_stride", fmt::format("{}[]", ct), fmt::format("constant({})", strides[j]));
      e.Add(id + "_stride_b", fmt::format("{}[{}]", ct, b),
            fmt::format("broadcast({}), dimensions={{}}", e.Ref(id + "_stride")));
      e.Add(id + "_scaled", fmt::format("{}[{}]", ct, b),
            fmt::format("multiply({}, {})", e.Ref(term), e.Ref(id + "_stride_b")));
      term = id + "_scaled";
    }
    if (sum.empty()) {
      sum = term;
    } else {
      const std::string next = fmt::format("row{}", c);
      e.Add(next, fmt::format("{}[{}]", ct, b),
            fmt::format("add({}, {})", e.Ref(sum), e.Ref(term)));
      sum = next;
    }
  }
  std::string offset_dims;
  for (size_t r = 0; r < rest.size(); ++r)
    offset_dims += fmt::format("{}{}", r == 0 ? "" : ",", batch.size() + r);
  e.Add("", fmt::format("{}[{}]", t, Dims(gathered)),
        fmt::format("gather({}, {}), offset_dims={{{}}}, collapsed_slice_dims={{0}}, "
                    "start_index_map={{0}}, index_vector_dim={}, slice_sizes={{1{}{}}}",
                    e.Ref("rows"), e.Ref(sum), offset_dims, batch.size(), rest.empty() ? "" : ",",
                    Dims(rest)));
  TILEPROF_ASSIGN_OR_RETURN(
      Value value, LowerExpansion(instruction, e.Text(instruction.shape()), operands, program));
  return std::optional(std::move(value));
}

std::optional<uint64_t> Lowering::ColumnLookupElements(const hlo::Instruction& instruction,
                                                       std::span<const Value> operands,
                                                       const LookupForm& form) {
  const Tensor& table = operands[0].tensor;
  if (!TakesWholeRows(table, form.start, form.slice_sizes, form.components) ||
      !IsLookupMajor(form.dims, form.res_src, table.Rank()) || !instruction.shape().IsArray() ||
      table.NumElements() == 0) {
    return std::nullopt;
  }
  const uint64_t rows = table.shape()[0], width = table.NumElements() / rows;
  const uint64_t lookups = operands[1].tensor.NumElements();
  if (lookups == 0 || width < 2) return std::nullopt;
  // Elements a tile's run of the result reads, at most, as the gather is
  // and on the transposed table: every row in the columns the run covers,
  // the run's own columns of [lookups, row] (up to the row), against the
  // columns of [row, lookups] it covers plus the run itself received back.
  const ElementType type = table.element_type();
  const uint64_t run = mapper_.ChunkElements(SaturatingMul(lookups, width), type);
  const uint64_t direct = SaturatingMul(rows, std::min(width, run));
  const uint64_t columns = SaturatingMul(rows, (run + lookups - 1) / lookups + 1) + run;
  if (SaturatingMul(direct, SizeOf(type)) <= kMinColumnLookupBytes ||
      SaturatingMul(columns, 4) > direct) {
    return std::nullopt;
  }
  return columns;
}

Expected<std::optional<Value>> Lowering::LowerSliceGather(const hlo::Instruction& instruction,
                                                          std::span<const Value> operands,
                                                          std::span<const int64_t> start_map,
                                                          std::span<const int64_t> slice_sizes,
                                                          uint32_t ivd,
                                                          program::Sequence& program) {
  const hlo::Shape table = TableShape(instruction);
  const hlo::Shape& ids = instruction.operand(1)->shape();
  for (size_t d = 0; d < ids.dimensions.size(); ++d) {
    if (d != ivd && ids.dimensions[d] != 1) return std::optional<Value>();
  }
  const size_t components = ivd < ids.dimensions.size() ? ids.dimensions[ivd] : 1;
  if (components != start_map.size() ||
      !(hlo::IsSignedIntegerType(ids.element_type) ||
        hlo::IsUnsignedIntegerType(ids.element_type)) ||
      slice_sizes.size() != table.dimensions.size()) {
    return std::optional<Value>();
  }
  // Only a block at a run-time offset: slices of one element in every
  // dimension an index chooses are the row lookups of lower_lookup.cc (and
  // what a dynamic-slice of a row is written out as, lower_dynamic_lookup.cc).
  bool block = false;
  for (int64_t d : start_map) {
    if (d < 0 || static_cast<size_t>(d) >= slice_sizes.size()) return std::optional<Value>();
    block = block || slice_sizes[static_cast<size_t>(d)] > 1;
  }
  if (!block) return std::optional<Value>();
  // The result is the slice's elements in the operand's order: gather puts
  // the offset dimensions in operand order, and the others have size 1.
  const std::string_view t = hlo::PrimitiveTypeName(table.element_type);
  const std::string_view s = hlo::PrimitiveTypeName(ids.element_type);
  Expansion e(instruction.name(), table, ids);
  e.Add("flat", fmt::format("{}[{}]", s, components), fmt::format("reshape({})", e.Ref("ids")));
  e.Add("zero", fmt::format("{}[]", s), "constant(0)");
  std::vector<std::string> starts(table.dimensions.size(), e.Ref("zero"));
  for (size_t k = 0; k < components; ++k) {
    const std::string part = fmt::format("part{}", k), start = fmt::format("start{}", k);
    e.Add(part, fmt::format("{}[1]", s),
          fmt::format("slice({}), slice={{[{}:{}]}}", e.Ref("flat"), k, k + 1));
    e.Add(start, fmt::format("{}[]", s), fmt::format("reshape({})", e.Ref(part)));
    starts[static_cast<size_t>(start_map[k])] = e.Ref(start);
  }
  e.Add("", fmt::format("{}[{}]", t, Dims(slice_sizes)),
        fmt::format("dynamic-slice({}, {}), dynamic_slice_sizes={{{}}}", e.Ref("table"),
                    fmt::join(starts, ", "), Dims(slice_sizes)));
  TILEPROF_ASSIGN_OR_RETURN(
      Value value, LowerExpansion(instruction, e.Text(instruction.shape()), operands, program));
  return std::optional(std::move(value));
}

Expected<std::optional<Value>> Lowering::LowerColumnLookup(const hlo::Instruction& instruction,
                                                           std::span<const Value> operands,
                                                           const LookupForm& form, uint32_t ivd,
                                                           program::Sequence& program) {
  // LowerGather estimated the plan into form.rival; unset, it does not apply.
  if (form.rival == UINT64_MAX) return std::optional<Value>();
  const hlo::Shape table = TableShape(instruction);
  const hlo::Shape& ids = instruction.operand(1)->shape();
  const uint64_t rows = operands[0].tensor.shape()[0];
  const uint64_t width = operands[0].tensor.NumElements() / rows;
  const std::string_view t = hlo::PrimitiveTypeName(table.element_type);
  const std::vector<int64_t> batch = BatchDims(ids, ivd);
  const int64_t r = static_cast<int64_t>(rows), w = static_cast<int64_t>(width);
  Expansion e(instruction.name(), table, ids);
  e.Add("rows", fmt::format("{}[{},{}]", t, r, w), fmt::format("reshape({})", e.Ref("table")));
  e.Add("columns", fmt::format("{}[{},{}]", t, w, r),
        fmt::format("transpose({}), dimensions={{1,0}}", e.Ref("rows")));
  std::vector<int64_t> picked{w};
  picked.insert(picked.end(), batch.begin(), batch.end());
  e.Add("picked", fmt::format("{}[{}]", t, Dims(picked)),
        fmt::format("gather({}, {}), offset_dims={{0}}, collapsed_slice_dims={{1}}, "
                    "start_index_map={{1}}, index_vector_dim={}, slice_sizes={{{},1}}",
                    e.Ref("columns"), e.Ref("ids"), ivd, w));
  std::vector<int64_t> order, lookup_major = batch;
  for (size_t d = 1; d <= batch.size(); ++d) order.push_back(static_cast<int64_t>(d));
  order.push_back(0);
  lookup_major.push_back(w);
  e.Add("", fmt::format("{}[{}]", t, Dims(lookup_major)),
        fmt::format("transpose({}), dimensions={{{}}}", e.Ref("picked"), Dims(order)));
  TILEPROF_ASSIGN_OR_RETURN(
      Value value, LowerExpansion(instruction, e.Text(instruction.shape()), operands, program));
  return std::optional(std::move(value));
}

}  // namespace tileprof::engine::compiler
