// Reading the linear-algebra custom calls. See linalg_call.h; how each
// target passes its sizes and flags is read in linalg_descriptor.cc.
#include "engine/compiler/linalg_call.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string_view>
#include <tuple>
#include <utility>

#include "engine/compiler/linalg_descriptor.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;
using linalg::CheckTypeCode;
using linalg::Descriptor;
using linalg::FindTarget;
using linalg::Form;
using linalg::IsGpu;
using linalg::Reader;
using linalg::ReadPotrfLower;
using linalg::ReadTrsmFlags;
using linalg::TargetInfo;
using linalg::TrsmFlags;
// A call read, or nullopt: valid but not supported (lowered opaque).
using MaybeCall = std::optional<LinalgCall>;

std::vector<int64_t> Concat(std::vector<int64_t> dims, std::initializer_list<int64_t> more) {
  dims.insert(dims.end(), more);
  return dims;
}

// ---- Sizes -------------------------------------------------------------------

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// Error unless each (name, value) pair agrees with the shapes.
Status CheckSizes(std::initializer_list<std::tuple<std::string_view, int64_t, int64_t>> sizes) {
  for (const auto& [name, said, actual] : sizes) {
    if (said != actual) return MakeError("{} is {}, but the shapes say {}", name, said, actual);
  }
  return {};
}

LinalgCall Call(LinalgOp op, ElementType type, const std::vector<int64_t>& batch,
                std::vector<size_t> inputs, std::vector<size_t> outputs,
                std::vector<uint32_t> params) {
  LinalgCall call;
  call.op = op;
  call.type = type;
  call.batch = static_cast<uint64_t>(Product(batch));
  call.inputs = std::move(inputs);
  call.outputs = std::move(outputs);
  call.params = std::move(params);
  return call;
}

// ---- The operations ----------------------------------------------------------

Expected<MaybeCall> ReadGetrf(const Reader& r) {
  const Form form = r.target().form;
  const size_t a = form == Form::kScalars ? 3 : 0;
  TILEPROF_RETURN_IF_ERROR(r.ExpectOperands(a + 1));
  TILEPROF_RETURN_IF_ERROR(r.ExpectResults(IsGpu(form) ? 4 : 3));
  const Shape& in = r.Operand(a);
  TILEPROF_ASSIGN_OR_RETURN(std::optional<ElementType> type, r.MatrixType(in));
  if (!type) return MaybeCall();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> batch, r.BatchDims(in, "a"));
  const int64_t m = in.dimensions[batch.size()], n = in.dimensions[batch.size() + 1];
  TILEPROF_RETURN_IF_ERROR(r.Expect(r.Result(0), in.element_type, in.dimensions, "lu"));
  TILEPROF_RETURN_IF_ERROR(
      r.Expect(r.Result(1), PrimitiveType::kS32, Concat(batch, {std::min(m, n)}), "ipiv"));
  TILEPROF_RETURN_IF_ERROR(r.Expect(r.Result(2), PrimitiveType::kS32, batch, "info"));
  if (IsGpu(form)) {
    const bool batched = r.target().batched;
    TILEPROF_ASSIGN_OR_RETURN(Descriptor d, r.ReadDescriptor(batched ? 12 : 16));
    TILEPROF_RETURN_IF_ERROR(CheckTypeCode(d.I32(0), *type));
    TILEPROF_RETURN_IF_ERROR(CheckSizes({{"batch", d.I32(4), Product(batch)},
                                         {"m", d.I32(8), m},
                                         {"n", d.I32(batched ? 8 : 12), n}}));
  } else if (form == Form::kScalars) {
    TILEPROF_ASSIGN_OR_RETURN(int64_t b, r.ScalarOperand(0, "batch"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t sm, r.ScalarOperand(1, "m"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t sn, r.ScalarOperand(2, "n"));
    TILEPROF_RETURN_IF_ERROR(
        CheckSizes({{"batch", b, Product(batch)}, {"m", sm, m}, {"n", sn, n}}));
  }
  if (m == 0 || n == 0 || !r.Layouts({{a, 2}}, {{0, 2}, {1, 1}, {2, 0}})) return MaybeCall();
  return MaybeCall(Call(LinalgOp::kGetrf, *type, batch, {a}, {0, 1, 2},
                        {static_cast<uint32_t>(m), static_cast<uint32_t>(n)}));
}

Expected<MaybeCall> ReadPotrf(const Reader& r) {
  const Form form = r.target().form;
  const size_t a = form == Form::kScalars ? 3 : 0;
  TILEPROF_RETURN_IF_ERROR(r.ExpectOperands(a + 1));
  TILEPROF_RETURN_IF_ERROR(r.ExpectResults(IsGpu(form) ? 3 : 2));
  const Shape& in = r.Operand(a);
  TILEPROF_ASSIGN_OR_RETURN(std::optional<ElementType> type, r.MatrixType(in));
  if (!type) return MaybeCall();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> batch, r.BatchDims(in, "a"));
  const int64_t n = in.dimensions[batch.size()];
  TILEPROF_RETURN_IF_ERROR(r.Expect(in, in.element_type, Concat(batch, {n, n}), "a"));
  TILEPROF_RETURN_IF_ERROR(r.Expect(r.Result(0), in.element_type, in.dimensions, "l"));
  TILEPROF_RETURN_IF_ERROR(r.Expect(r.Result(1), PrimitiveType::kS32, batch, "info"));
  std::optional<Descriptor> d;
  if (IsGpu(form)) {
    TILEPROF_ASSIGN_OR_RETURN(d, r.ReadDescriptor(32));
    TILEPROF_RETURN_IF_ERROR(CheckTypeCode(d->I32(0), *type));
    TILEPROF_RETURN_IF_ERROR(
        CheckSizes({{"batch", d->I64(8), Product(batch)}, {"n", d->I64(16), n}}));
  } else if (form == Form::kScalars) {
    TILEPROF_ASSIGN_OR_RETURN(int64_t b, r.ScalarOperand(1, "batch"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t sn, r.ScalarOperand(2, "n"));
    TILEPROF_RETURN_IF_ERROR(CheckSizes({{"batch", b, Product(batch)}, {"n", sn, n}}));
  }
  TILEPROF_ASSIGN_OR_RETURN(bool lower, ReadPotrfLower(r, d ? &*d : nullptr));
  if (n == 0 || !r.Layouts({{a, 2}}, {{0, 2}, {1, 0}})) return MaybeCall();
  return MaybeCall(Call(LinalgOp::kPotrf, *type, batch, {a}, {0, 1},
                        {static_cast<uint32_t>(n), lower ? 1u : 0u}));
}

Expected<MaybeCall> ReadTrsm(const Reader& r) {
  const Form form = r.target().form;
  const size_t a = form == Form::kScalars ? 8 : 0;
  TILEPROF_RETURN_IF_ERROR(form == Form::kFfi ? r.ExpectOperands(2, 3) : r.ExpectOperands(a + 2));
  TILEPROF_RETURN_IF_ERROR(r.ExpectResults(IsGpu(form) ? 3 : 0));
  const Shape& b_shape = r.Operand(a + 1);
  TILEPROF_ASSIGN_OR_RETURN(std::optional<ElementType> type, r.MatrixType(b_shape));
  if (!type) return MaybeCall();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> batch, r.BatchDims(b_shape, "b"));
  const int64_t m = b_shape.dimensions[batch.size()], n = b_shape.dimensions[batch.size() + 1];
  std::optional<Descriptor> d;
  if (IsGpu(form)) {
    TILEPROF_ASSIGN_OR_RETURN(d, r.ReadDescriptor(32));
    TILEPROF_RETURN_IF_ERROR(CheckTypeCode(d->I32(0), *type));
    TILEPROF_RETURN_IF_ERROR(CheckSizes(
        {{"batch", d->I32(4), Product(batch)}, {"m", d->I32(8), m}, {"n", d->I32(12), n}}));
  } else if (form == Form::kScalars) {
    TILEPROF_ASSIGN_OR_RETURN(int64_t sm, r.ScalarOperand(4, "m"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t sn, r.ScalarOperand(5, "n"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t b, r.ScalarOperand(6, "batch"));
    TILEPROF_RETURN_IF_ERROR(
        CheckSizes({{"batch", b, Product(batch)}, {"m", sm, m}, {"n", sn, n}}));
  }
  TILEPROF_ASSIGN_OR_RETURN(TrsmFlags f, ReadTrsmFlags(r, d ? &*d : nullptr));
  const int64_t k = f.left ? m : n;
  TILEPROF_RETURN_IF_ERROR(
      r.Expect(r.Operand(a), b_shape.element_type, Concat(batch, {k, k}), "a"));
  TILEPROF_RETURN_IF_ERROR(r.Expect(r.Result(0), b_shape.element_type, b_shape.dimensions, "x"));
  std::optional<size_t> alpha;
  if (form == Form::kScalars) alpha = 7;
  if (form == Form::kFfi && r.OperandCount() == 3) alpha = 2;
  if (alpha) {
    TILEPROF_RETURN_IF_ERROR(r.Expect(r.Operand(*alpha), b_shape.element_type, {}, "alpha"));
  }
  if (m == 0 || n == 0 || !r.Layouts({{a, 2}, {a + 1, 2}}, {{0, 2}})) return MaybeCall();
  LinalgCall call = Call(
      LinalgOp::kTrsm, *type, batch, {a, a + 1}, {0},
      {static_cast<uint32_t>(m), static_cast<uint32_t>(n), f.left, f.lower, f.transpose, f.unit});
  call.alpha = alpha;
  return MaybeCall(std::move(call));
}

Expected<MaybeCall> ReadPivots(const Reader& r) {
  TILEPROF_RETURN_IF_ERROR(r.ExpectOperands(1));
  TILEPROF_RETURN_IF_ERROR(r.ExpectResults(0));
  const Shape& in = r.Operand(0);
  const Shape& out = r.Result(0);
  if (!in.IsArray() || in.rank() < 1 || in.element_type != PrimitiveType::kS32 ||
      out.rank() != in.rank()) {
    return MakeError("takes s32[..., k] pivots to s32[..., size], not {} to {}",
                     hlo::ShapeToString(in), hlo::ShapeToString(out));
  }
  const std::vector<int64_t> batch(in.dimensions.begin(), in.dimensions.end() - 1);
  const int64_t k = in.dimensions.back(), size = out.dimensions.back();
  TILEPROF_RETURN_IF_ERROR(
      r.Expect(out, PrimitiveType::kS32, Concat(batch, {size}), "permutation"));
  if (size < k || size > INT32_MAX) {
    return MakeError("a permutation of {} cannot take {} pivots", size, k);
  }
  if (r.HasDescriptor()) {
    TILEPROF_ASSIGN_OR_RETURN(Descriptor d, r.ReadDescriptor(16));
    TILEPROF_RETURN_IF_ERROR(CheckSizes({{"batch_size", d.I64(0), Product(batch)},
                                         {"pivot_size", d.I32(8), k},
                                         {"permutation_size", d.I32(12), size}}));
  }
  if (k == 0 || !r.Layouts({{0, 1}}, {{0, 1}})) return MaybeCall();
  return MaybeCall(Call(LinalgOp::kLuPivots, ElementType::kS32, batch, {0}, {0},
                        {static_cast<uint32_t>(k), static_cast<uint32_t>(size)}));
}

Expected<MaybeCall> ReadGeqrf(const Reader& r) {
  const Form form = r.target().form;
  const bool batched = r.target().batched;
  const size_t a = form == Form::kScalars ? 4 : 0;
  TILEPROF_RETURN_IF_ERROR(r.ExpectOperands(a + 1));
  TILEPROF_RETURN_IF_ERROR(form == Form::kFfi && r.ResultCount() == 2 ? Status{}
                                                                      : r.ExpectResults(4));
  const Shape& in = r.Operand(a);
  TILEPROF_ASSIGN_OR_RETURN(std::optional<ElementType> type, r.MatrixType(in));
  if (!type) return MaybeCall();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> batch, r.BatchDims(in, "a"));
  const int64_t m = in.dimensions[batch.size()], n = in.dimensions[batch.size() + 1];
  TILEPROF_RETURN_IF_ERROR(r.Expect(r.Result(0), in.element_type, in.dimensions, "qr"));
  TILEPROF_RETURN_IF_ERROR(
      r.Expect(r.Result(1), in.element_type, Concat(batch, {std::min(m, n)}), "tau"));
  const bool has_info = r.ResultCount() == 4 && !batched;
  if (has_info) TILEPROF_RETURN_IF_ERROR(r.Expect(r.Result(2), PrimitiveType::kS32, batch, "info"));
  if (IsGpu(form)) {
    TILEPROF_ASSIGN_OR_RETURN(Descriptor d, r.ReadDescriptor(batched ? 16 : 20));
    TILEPROF_RETURN_IF_ERROR(CheckTypeCode(d.I32(0), *type));
    TILEPROF_RETURN_IF_ERROR(
        CheckSizes({{"batch", d.I32(4), Product(batch)}, {"m", d.I32(8), m}, {"n", d.I32(12), n}}));
  } else if (form == Form::kScalars) {
    TILEPROF_ASSIGN_OR_RETURN(int64_t b, r.ScalarOperand(0, "batch"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t sm, r.ScalarOperand(1, "m"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t sn, r.ScalarOperand(2, "n"));
    TILEPROF_RETURN_IF_ERROR(
        CheckSizes({{"batch", b, Product(batch)}, {"m", sm, m}, {"n", sn, n}}));
  }
  if (m == 0 || n == 0 || !r.Layouts({{a, 2}}, {{0, 2}, {1, 1}})) return MaybeCall();
  LinalgCall call = Call(LinalgOp::kGeqrf, *type, batch, {a}, {0, 1},
                         {static_cast<uint32_t>(m), static_cast<uint32_t>(n)});
  if (has_info) call.outputs.push_back(2);
  call.scratch_info = !has_info;
  return MaybeCall(std::move(call));
}

Expected<MaybeCall> ReadOrgqr(const Reader& r) {
  const Form form = r.target().form;
  const size_t a = form == Form::kScalars ? 5 : 0;
  TILEPROF_RETURN_IF_ERROR(r.ExpectOperands(a + 2));
  TILEPROF_RETURN_IF_ERROR(form == Form::kFfi && r.ResultCount() == 0 ? Status{}
                                                                      : r.ExpectResults(3));
  const Shape& in = r.Operand(a);
  const Shape& tau = r.Operand(a + 1);
  TILEPROF_ASSIGN_OR_RETURN(std::optional<ElementType> type, r.MatrixType(in));
  if (!type) return MaybeCall();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> batch, r.BatchDims(in, "a"));
  const int64_t m = in.dimensions[batch.size()], n = in.dimensions[batch.size() + 1];
  const int64_t k = tau.rank() == in.rank() - 1 ? tau.dimensions.back() : -1;
  TILEPROF_RETURN_IF_ERROR(r.Expect(tau, in.element_type, Concat(batch, {k}), "tau"));
  if (n > m || k > n) return MakeError("needs m >= n >= k, not m {}, n {}, k {}", m, n, k);
  TILEPROF_RETURN_IF_ERROR(r.Expect(r.Result(0), in.element_type, in.dimensions, "q"));
  const bool has_info = r.ResultCount() == 3;
  if (has_info) TILEPROF_RETURN_IF_ERROR(r.Expect(r.Result(1), PrimitiveType::kS32, batch, "info"));
  if (IsGpu(form)) {
    TILEPROF_ASSIGN_OR_RETURN(Descriptor d, r.ReadDescriptor(24));
    TILEPROF_RETURN_IF_ERROR(CheckTypeCode(d.I32(0), *type));
    TILEPROF_RETURN_IF_ERROR(CheckSizes({{"batch", d.I32(4), Product(batch)},
                                         {"m", d.I32(8), m},
                                         {"n", d.I32(12), n},
                                         {"k", d.I32(16), k}}));
  } else if (form == Form::kScalars) {
    std::array<int64_t, 4> said{};
    constexpr std::string_view kNames[] = {"batch", "m", "n", "k"};
    for (size_t i = 0; i < 4; ++i) {
      TILEPROF_ASSIGN_OR_RETURN(said[i], r.ScalarOperand(i, kNames[i]));
    }
    TILEPROF_RETURN_IF_ERROR(CheckSizes({{"batch", said[0], Product(batch)},
                                         {"m", said[1], m},
                                         {"n", said[2], n},
                                         {"k", said[3], k}}));
  }
  if (n == 0 || k == 0 || !r.Layouts({{a, 2}, {a + 1, 1}}, {{0, 2}})) return MaybeCall();
  LinalgCall call =
      Call(LinalgOp::kOrgqr, *type, batch, {a, a + 1}, {0},
           {static_cast<uint32_t>(m), static_cast<uint32_t>(n), static_cast<uint32_t>(k)});
  if (has_info) call.outputs.push_back(1);
  call.scratch_info = !has_info;
  return MaybeCall(std::move(call));
}

Expected<MaybeCall> Read(const Reader& r) {
  switch (r.target().op) {
    case LinalgOp::kGetrf:
      return ReadGetrf(r);
    case LinalgOp::kPotrf:
      return ReadPotrf(r);
    case LinalgOp::kTrsm:
      return ReadTrsm(r);
    case LinalgOp::kLuPivots:
      return ReadPivots(r);
    case LinalgOp::kGeqrf:
      return ReadGeqrf(r);
    case LinalgOp::kOrgqr:
      return ReadOrgqr(r);
  }
  return MaybeCall();
}

// A pred attribute of an op (false when absent).
Expected<bool> BoolAttribute(const hlo::Instruction& instruction, std::string_view name) {
  const hlo::Attribute* attribute = instruction.FindAttribute(name);
  if (attribute == nullptr || attribute->value() == "false") return false;
  if (attribute->value() == "true") return true;
  return MakeError("{}={} is not true or false", name, attribute->value());
}

std::optional<ElementType> OpType(const Shape& shape) {
  if (shape.element_type == PrimitiveType::kF32) return ElementType::kF32;
  if (shape.element_type == PrimitiveType::kF64) return ElementType::kF64;
  return std::nullopt;
}

Expected<MaybeCall> ReadTriangularSolve(const hlo::Instruction& instruction) {
  if (instruction.operand_count() != 2) {
    return MakeError("takes 2 operands, not {}", instruction.operand_count());
  }
  const Shape& a = instruction.operands()[0]->shape();
  const Shape& b = instruction.operands()[1]->shape();
  TILEPROF_ASSIGN_OR_RETURN(bool left, BoolAttribute(instruction, "left_side"));
  TILEPROF_ASSIGN_OR_RETURN(bool lower, BoolAttribute(instruction, "lower"));
  TILEPROF_ASSIGN_OR_RETURN(bool unit, BoolAttribute(instruction, "unit_diagonal"));
  const hlo::Attribute* transpose = instruction.FindAttribute("transpose_a");
  const std::string_view mode = transpose == nullptr ? "NO_TRANSPOSE" : transpose->value();
  if (mode != "NO_TRANSPOSE" && mode != "TRANSPOSE" && mode != "ADJOINT") {
    return MakeError("transpose_a={} is not NO_TRANSPOSE, TRANSPOSE or ADJOINT", mode);
  }
  if (!b.IsArray() || b.rank() < 2 || !a.IsArray() || a.rank() != b.rank() ||
      a.element_type != b.element_type) {
    return MakeError("solves {} by {}: not matrices of one type", hlo::ShapeToString(a),
                     hlo::ShapeToString(b));
  }
  const std::vector<int64_t> batch(b.dimensions.begin(), b.dimensions.end() - 2);
  const int64_t m = b.dimensions[batch.size()], n = b.dimensions[batch.size() + 1];
  const int64_t k = left ? m : n;
  if (a.dimensions != Concat(batch, {k, k}) || instruction.shape().dimensions != b.dimensions ||
      m > INT32_MAX || n > INT32_MAX) {
    return MakeError(
        "a is {}, b {}, the result {}: a must be [..., {}, {}] and the result b's shape",
        hlo::ShapeToString(a), hlo::ShapeToString(b), hlo::ShapeToString(instruction.shape()), k,
        k);
  }
  const std::optional<ElementType> type = OpType(b);
  if (!type) return MaybeCall();
  LinalgCall call = Call(LinalgOp::kTrsm, *type, batch, {0, 1}, {0},
                         {static_cast<uint32_t>(m), static_cast<uint32_t>(n), left, lower,
                          mode != "NO_TRANSPOSE", unit});
  if (m * n == 0) call.batch = 0;
  return MaybeCall(std::move(call));
}

Expected<MaybeCall> ReadCholesky(const hlo::Instruction& instruction) {
  if (instruction.operand_count() != 1) {
    return MakeError("takes 1 operand, not {}", instruction.operand_count());
  }
  const Shape& a = instruction.operands()[0]->shape();
  TILEPROF_ASSIGN_OR_RETURN(bool lower, BoolAttribute(instruction, "lower"));
  const int64_t rank = a.rank();
  if (!a.IsArray() || rank < 2 || a.dimensions[rank - 1] != a.dimensions[rank - 2] ||
      a.dimensions[rank - 1] > INT32_MAX || instruction.shape().dimensions != a.dimensions) {
    return MakeError("factors {} into {}: not square matrices", hlo::ShapeToString(a),
                     hlo::ShapeToString(instruction.shape()));
  }
  const std::optional<ElementType> type = OpType(a);
  if (!type) return MaybeCall();
  const std::vector<int64_t> batch(a.dimensions.begin(), a.dimensions.end() - 2);
  const int64_t n = a.dimensions[rank - 1];
  LinalgCall call =
      Call(LinalgOp::kPotrf, *type, batch, {0}, {0}, {static_cast<uint32_t>(n), lower ? 1u : 0u});
  call.scratch_info = true;
  if (n == 0) call.batch = 0;
  return MaybeCall(std::move(call));
}

}  // namespace

Expected<MaybeCall> ReadLinalgOp(const hlo::Instruction& instruction) {
  return instruction.opcode() == hlo::Opcode::kCholesky ? ReadCholesky(instruction)
                                                        : ReadTriangularSolve(instruction);
}

bool IsLinalgTarget(std::string_view target) { return FindTarget(target) != nullptr; }

Expected<MaybeCall> ReadLinalgCall(const hlo::Instruction& instruction,
                                   const hlo::CustomCall& call) {
  // The lowering's errors are prefixed with the instruction; add the target.
  const TargetInfo* target = FindTarget(call.target);
  if (target == nullptr) return MakeError("{}: not a linear-algebra target", call.target);
  Expected<MaybeCall> read = Read(Reader(instruction, call, *target));
  if (!read) return read.error().Within(call.target);
  return read;
}

}  // namespace tileprof::engine::compiler
