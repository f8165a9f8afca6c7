// Reading the linear-algebra custom calls. See linalg_call.h.
#include "engine/compiler/linalg_call.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <map>
#include <string>

#include <fmt/format.h>

#include "engine/compiler/lower.h"
#include "engine/compiler/scalar_eval.h"

namespace tileprof::engine::compiler {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;
// A call read, or nullopt: valid but not supported (lowered opaque).
using MaybeCall = std::optional<LinalgCall>;
// A typed-FFI call's integer and boolean attributes by name.
using Attributes = std::map<std::string, int64_t, std::less<>>;

// How a target passes its sizes and flags.
enum class Form : uint8_t { kCuda, kHip, kScalars, kFfi };

struct TargetInfo {
  std::string_view name;
  LinalgOp op;
  Form form;
  // The element type its name says (LAPACK's s/d), else kInvalid.
  PrimitiveType type = PrimitiveType::kInvalid;
  bool batched = false;  // cuBLAS's batched getrf and geqrf: other descriptors
};

constexpr PrimitiveType kF32 = PrimitiveType::kF32, kF64 = PrimitiveType::kF64;
constexpr TargetInfo kTargets[] = {
    {"cusolver_getrf", LinalgOp::kGetrf, Form::kCuda},
    {"hipsolver_getrf", LinalgOp::kGetrf, Form::kHip},
    {"cublas_getrf_batched", LinalgOp::kGetrf, Form::kCuda, PrimitiveType::kInvalid, true},
    {"hipblas_getrf_batched", LinalgOp::kGetrf, Form::kHip, PrimitiveType::kInvalid, true},
    {"cusolver_getrf_ffi", LinalgOp::kGetrf, Form::kFfi},
    {"hipsolver_getrf_ffi", LinalgOp::kGetrf, Form::kFfi},
    {"lapack_sgetrf", LinalgOp::kGetrf, Form::kScalars, kF32},
    {"lapack_dgetrf", LinalgOp::kGetrf, Form::kScalars, kF64},
    {"lapack_sgetrf_ffi", LinalgOp::kGetrf, Form::kFfi, kF32},
    {"lapack_dgetrf_ffi", LinalgOp::kGetrf, Form::kFfi, kF64},
    {"cusolver_potrf", LinalgOp::kPotrf, Form::kCuda},
    {"hipsolver_potrf", LinalgOp::kPotrf, Form::kHip},
    {"cusolver_potrf_ffi", LinalgOp::kPotrf, Form::kFfi},
    {"hipsolver_potrf_ffi", LinalgOp::kPotrf, Form::kFfi},
    {"lapack_spotrf", LinalgOp::kPotrf, Form::kScalars, kF32},
    {"lapack_dpotrf", LinalgOp::kPotrf, Form::kScalars, kF64},
    {"lapack_spotrf_ffi", LinalgOp::kPotrf, Form::kFfi, kF32},
    {"lapack_dpotrf_ffi", LinalgOp::kPotrf, Form::kFfi, kF64},
    {"cublas_trsm_batched", LinalgOp::kTrsm, Form::kCuda},
    {"hipblas_trsm_batched", LinalgOp::kTrsm, Form::kHip},
    {"blas_strsm", LinalgOp::kTrsm, Form::kScalars, kF32},
    {"blas_dtrsm", LinalgOp::kTrsm, Form::kScalars, kF64},
    {"blas_strsm_ffi", LinalgOp::kTrsm, Form::kFfi, kF32},
    {"blas_dtrsm_ffi", LinalgOp::kTrsm, Form::kFfi, kF64},
    {"cusolver_geqrf", LinalgOp::kGeqrf, Form::kCuda},
    {"hipsolver_geqrf", LinalgOp::kGeqrf, Form::kHip},
    {"cublas_geqrf_batched", LinalgOp::kGeqrf, Form::kCuda, PrimitiveType::kInvalid, true},
    {"hipblas_geqrf_batched", LinalgOp::kGeqrf, Form::kHip, PrimitiveType::kInvalid, true},
    {"cusolver_geqrf_ffi", LinalgOp::kGeqrf, Form::kFfi},
    {"hipsolver_geqrf_ffi", LinalgOp::kGeqrf, Form::kFfi},
    {"lapack_sgeqrf", LinalgOp::kGeqrf, Form::kScalars, kF32},
    {"lapack_dgeqrf", LinalgOp::kGeqrf, Form::kScalars, kF64},
    {"lapack_sgeqrf_ffi", LinalgOp::kGeqrf, Form::kFfi, kF32},
    {"lapack_dgeqrf_ffi", LinalgOp::kGeqrf, Form::kFfi, kF64},
    {"cusolver_orgqr", LinalgOp::kOrgqr, Form::kCuda},
    {"hipsolver_orgqr", LinalgOp::kOrgqr, Form::kHip},
    {"cusolver_orgqr_ffi", LinalgOp::kOrgqr, Form::kFfi},
    {"hipsolver_orgqr_ffi", LinalgOp::kOrgqr, Form::kFfi},
    {"lapack_sorgqr", LinalgOp::kOrgqr, Form::kScalars, kF32},
    {"lapack_dorgqr", LinalgOp::kOrgqr, Form::kScalars, kF64},
    {"lapack_sorgqr_ffi", LinalgOp::kOrgqr, Form::kFfi, kF32},
    {"lapack_dorgqr_ffi", LinalgOp::kOrgqr, Form::kFfi, kF64},
    {"cuda_lu_pivots_to_permutation", LinalgOp::kLuPivots, Form::kCuda},
    {"cu_lu_pivots_to_permutation", LinalgOp::kLuPivots, Form::kCuda},
    {"hip_lu_pivots_to_permutation", LinalgOp::kLuPivots, Form::kHip},
};

const TargetInfo* FindTarget(std::string_view name) {
  for (const TargetInfo& t : kTargets) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

bool IsGpu(Form form) { return form == Form::kCuda || form == Form::kHip; }

// A kernel descriptor: fixed-offset little-endian integers.
class Descriptor {
 public:
  explicit Descriptor(std::string_view bytes) : bytes_(bytes) {}
  int64_t I32(size_t offset) const {
    int32_t v;
    std::memcpy(&v, bytes_.data() + offset, 4);
    return v;
  }
  int64_t I64(size_t offset) const {
    int64_t v;
    std::memcpy(&v, bytes_.data() + offset, 8);
    return v;
  }

 private:
  std::string_view bytes_;
};

// The attributes of a typed-FFI call, `{uplo = 76 : ui8, lower = true}`:
// integer and boolean values by name (a `: type` suffix dropped).
Expected<Attributes> ParseFfiAttributes(std::string_view text) {
  Attributes out;
  const auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '"')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '"')) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  if (!text.starts_with('{') || !text.ends_with('}')) {
    return MakeError("backend_config '{}' is not an attribute dictionary", text);
  }
  text = text.substr(1, text.size() - 2);
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '[' || c == '<' || c == '(' || c == '{') ++depth;
    if (c == ']' || c == '>' || c == ')' || c == '}') --depth;
    if (c != ',' || depth != 0) continue;
    const std::string_view item = text.substr(start, i - start);
    start = i + 1;
    const size_t equals = item.find('=');
    if (equals == std::string_view::npos) continue;  // a unit attribute
    const std::string_view key = trim(item.substr(0, equals));
    std::string_view value = trim(item.substr(equals + 1));
    value = trim(value.substr(0, value.find(':')));
    int64_t number = 0;
    if (value == "true" || value == "false") {
      number = value == "true";
    } else if (std::from_chars(value.data(), value.data() + value.size(), number).ptr !=
               value.data() + value.size()) {
      continue;  // not an integer: no attribute of ours
    }
    out.emplace(std::string(key), number);
  }
  return out;
}

// Column-major matrices (trailing 2), vectors (1) or per-matrix scalars (0)
// over batch dimensions in row-major order: the layouts JAX asks for,
// under which the library's matrix is the logical one. No layout written:
// nothing pins it, so the library's own is assumed.
bool LibraryLayout(const Shape& shape, int64_t trailing) {
  if (!shape.has_layout) return true;
  const int64_t rank = shape.rank();
  std::vector<int64_t> want;
  if (trailing == 2) want = {rank - 2, rank - 1};
  if (trailing == 1) want = {rank - 1};
  for (int64_t d = rank - trailing - 1; d >= 0; --d) want.push_back(d);
  return shape.layout.minor_to_major == want;
}

std::vector<int64_t> Concat(std::vector<int64_t> dims, std::initializer_list<int64_t> more) {
  dims.insert(dims.end(), more);
  return dims;
}

// One call being read: its operands, results and errors.
class Reader {
 public:
  Reader(const hlo::Instruction& instruction, const hlo::CustomCall& call, const TargetInfo& target)
      : instruction_(instruction), call_(call), target_(target) {}

  const TargetInfo& target() const { return target_; }
  const Shape& Operand(size_t i) const { return instruction_.operands()[i]->shape(); }
  size_t OperandCount() const { return instruction_.operand_count(); }
  // Whether a binary descriptor is given (the FFI forms carry attributes).
  bool HasDescriptor() const {
    return call_.backend_config && call_.backend_config->quoted &&
           !call_.backend_config->bytes.empty();
  }
  // Result leaves: a tuple's elements, 0 for an array.
  size_t ResultCount() const {
    const Shape& shape = instruction_.shape();
    return shape.IsTuple() ? shape.tuple_shapes.size() : 0;
  }
  // Result leaf i: a tuple element, or the result itself.
  const Shape& Result(size_t i) const {
    const Shape& shape = instruction_.shape();
    return shape.IsTuple() ? shape.tuple_shapes[i] : shape;
  }

  Status ExpectOperands(size_t count, size_t or_count = 0) const;
  // A tuple of `count` results, or one array when count is 0.
  Status ExpectResults(size_t count) const;
  // The matrices' element type: f32/f64, nullopt for complex ones (not
  // supported), an error for others or a type the target's name rules out.
  Expected<std::optional<ElementType>> MatrixType(const Shape& shape) const;
  // [batch..., rows, cols]: the batch dimensions and the matrix size.
  Expected<std::vector<int64_t>> BatchDims(const Shape& shape, std::string_view what) const;
  // Error unless `shape` is `type`[dims].
  Status Expect(const Shape& shape, PrimitiveType type, const std::vector<int64_t>& dims,
                std::string_view what) const;
  // Whether operand i (as the library receives it) and result leaves
  // (index, trailing dimensions) have the library's layouts.
  bool Layouts(std::initializer_list<std::pair<size_t, int64_t>> operands,
               std::initializer_list<std::pair<size_t, int64_t>> results) const;
  // The descriptor of `size` bytes (GPU forms).
  Expected<Descriptor> ReadDescriptor(size_t size) const;
  // An s32 constant scalar operand (the sizes and flags of the CPU forms).
  Expected<int64_t> ScalarOperand(size_t i, std::string_view what) const;
  Expected<Attributes> FfiAttributes() const;

 private:
  const hlo::Instruction& instruction_;
  const hlo::CustomCall& call_;
  const TargetInfo& target_;
};

Status Reader::ExpectOperands(size_t count, size_t or_count) const {
  const size_t n = instruction_.operand_count();
  if (n == count || (or_count != 0 && n == or_count)) return {};
  return MakeError("takes {}{} operand(s), not {}", count,
                   or_count != 0 ? fmt::format(" or {}", or_count) : "", n);
}

Status Reader::ExpectResults(size_t count) const {
  const Shape& shape = instruction_.shape();
  if (count == 0 ? shape.IsArray() : shape.IsTuple() && shape.tuple_shapes.size() == count) {
    return {};
  }
  return MakeError("gives {}, not {}", hlo::ShapeToString(shape),
                   count == 0 ? "an array" : fmt::format("a tuple of {} arrays", count));
}

Expected<std::optional<ElementType>> Reader::MatrixType(const Shape& shape) const {
  const PrimitiveType type = shape.element_type;
  if (type == PrimitiveType::kC64 || type == PrimitiveType::kC128) {
    return std::optional<ElementType>();
  }
  if ((type != kF32 && type != kF64) ||
      (target_.type != PrimitiveType::kInvalid && type != target_.type)) {
    return MakeError("matrices of {} (the target takes {})", hlo::ShapeToString(shape),
                     target_.type == PrimitiveType::kInvalid
                         ? "f32, f64, c64 or c128"
                         : hlo::PrimitiveTypeName(target_.type));
  }
  return std::optional<ElementType>(type == kF32 ? ElementType::kF32 : ElementType::kF64);
}

Expected<std::vector<int64_t>> Reader::BatchDims(const Shape& shape, std::string_view what) const {
  if (!shape.IsArray() || shape.rank() < 2) {
    return MakeError("{} is {}, not a matrix or a batch of them", what, hlo::ShapeToString(shape));
  }
  for (int64_t d : shape.dimensions) {
    if (d < 0 || d > INT32_MAX) {
      return MakeError("{} is {}: dimension {} out of range", what, hlo::ShapeToString(shape), d);
    }
  }
  return std::vector<int64_t>(shape.dimensions.begin(), shape.dimensions.end() - 2);
}

Status Reader::Expect(const Shape& shape, PrimitiveType type, const std::vector<int64_t>& dims,
                      std::string_view what) const {
  if (shape.IsArray() && shape.element_type == type && shape.dimensions == dims) return {};
  Shape want;
  want.element_type = type;
  want.dimensions = dims;
  want.dynamic_dimensions.assign(dims.size(), false);
  return MakeError("{} is {}, expected {}", what, hlo::ShapeToString(shape),
                   hlo::ShapeToString(want));
}

bool Reader::Layouts(std::initializer_list<std::pair<size_t, int64_t>> operands,
                     std::initializer_list<std::pair<size_t, int64_t>> results) const {
  const auto& constraints = call_.operand_layout_constraints;
  for (const auto& [i, trailing] : operands) {
    const Shape& seen = i < constraints.size() ? constraints[i] : Operand(i);
    if (!LibraryLayout(seen, trailing)) return false;
  }
  for (const auto& [i, trailing] : results) {
    if (!LibraryLayout(Result(i), trailing)) return false;
  }
  return true;
}

Expected<Descriptor> Reader::ReadDescriptor(size_t size) const {
  const auto& config = call_.backend_config;
  if (!config || !config->quoted) {
    return MakeError("has no kernel descriptor (a quoted backend_config of {} bytes)", size);
  }
  if (config->bytes.size() != size) {
    return MakeError("descriptor has {} bytes, expected {}", config->bytes.size(), size);
  }
  return Descriptor(config->bytes);
}

Expected<int64_t> Reader::ScalarOperand(size_t i, std::string_view what) const {
  const hlo::Instruction& operand = *instruction_.operands()[i];
  const std::optional<Scalar> value = EvaluateScalar(operand, {});
  if (!value || value->type != PrimitiveType::kS32) {
    return MakeError("operand {} ({}) is not an s32 constant", i, what);
  }
  return static_cast<int64_t>(static_cast<int32_t>(value->bits));
}

Expected<Attributes> Reader::FfiAttributes() const {
  if (!call_.backend_config) return Attributes{};
  return ParseFfiAttributes(call_.backend_config->bytes);
}

// ---- Flags ---------------------------------------------------------------

// The value of an enum that must be one of two: true for `yes`.
Expected<bool> Choice(int64_t value, int64_t yes, int64_t no, std::string_view what) {
  if (value == yes) return true;
  if (value == no) return false;
  return MakeError("{} is {}, expected {} or {}", what, value, yes, no);
}

// trans: N, T or C (C is T for real matrices).
Expected<bool> Transpose(int64_t value, int64_t n, int64_t t, int64_t c, std::string_view what) {
  if (value == c) return true;
  return Choice(value, t, n, what);
}

struct TrsmFlags {
  bool left = true, lower = true, transpose = false, unit = false;
};

Expected<int64_t> Attribute(const Attributes& attributes, std::string_view name) {
  if (auto it = attributes.find(name); it != attributes.end()) return it->second;
  return MakeError("backend_config has no attribute '{}'", name);
}

Expected<TrsmFlags> ReadTrsmFlags(const Reader& r, const Descriptor* descriptor) {
  TrsmFlags f;
  const Form form = r.target().form;
  if (form == Form::kScalars) {
    std::array<int64_t, 4> v{};
    constexpr std::string_view kNames[] = {"left_side", "lower", "trans_a", "diag"};
    for (size_t i = 0; i < 4; ++i) {
      TILEPROF_ASSIGN_OR_RETURN(v[i], r.ScalarOperand(i, kNames[i]));
    }
    TILEPROF_ASSIGN_OR_RETURN(f.transpose, Transpose(v[2], 0, 1, 2, "trans_a"));
    return TrsmFlags{v[0] != 0, v[1] != 0, f.transpose, v[3] != 0};
  }
  if (form == Form::kFfi) {
    TILEPROF_ASSIGN_OR_RETURN(auto attributes, r.FfiAttributes());
    TILEPROF_ASSIGN_OR_RETURN(int64_t side, Attribute(attributes, "side"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t uplo, Attribute(attributes, "uplo"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t trans, Attribute(attributes, "trans_x"));
    TILEPROF_ASSIGN_OR_RETURN(int64_t diag, Attribute(attributes, "diag"));
    TILEPROF_ASSIGN_OR_RETURN(f.left, Choice(side, 'L', 'R', "side"));
    TILEPROF_ASSIGN_OR_RETURN(f.lower, Choice(uplo, 'L', 'U', "uplo"));
    TILEPROF_ASSIGN_OR_RETURN(f.transpose, Transpose(trans, 'N', 'T', 'C', "trans_x"));
    TILEPROF_ASSIGN_OR_RETURN(f.unit, Choice(diag, 'U', 'N', "diag"));
    return f;
  }
  const bool hip = form == Form::kHip;
  const Descriptor& d = *descriptor;
  TILEPROF_ASSIGN_OR_RETURN(f.left, Choice(d.I32(16), hip ? 141 : 0, hip ? 142 : 1, "side"));
  TILEPROF_ASSIGN_OR_RETURN(f.lower, Choice(d.I32(20), hip ? 122 : 0, hip ? 121 : 1, "uplo"));
  TILEPROF_ASSIGN_OR_RETURN(
      f.transpose, Transpose(d.I32(24), hip ? 111 : 0, hip ? 112 : 1, hip ? 113 : 2, "trans"));
  TILEPROF_ASSIGN_OR_RETURN(f.unit, Choice(d.I32(28), hip ? 132 : 1, hip ? 131 : 0, "diag"));
  return f;
}

Expected<bool> ReadPotrfLower(const Reader& r, const Descriptor* descriptor) {
  const Form form = r.target().form;
  if (form == Form::kScalars) {
    TILEPROF_ASSIGN_OR_RETURN(int64_t lower, r.ScalarOperand(0, "lower"));
    return lower != 0;
  }
  if (form == Form::kFfi) {
    TILEPROF_ASSIGN_OR_RETURN(auto attributes, r.FfiAttributes());
    if (attributes.contains("lower")) return attributes.at("lower") != 0;
    TILEPROF_ASSIGN_OR_RETURN(int64_t uplo, Attribute(attributes, "uplo"));
    return Choice(uplo, 'L', 'U', "uplo");
  }
  const bool hip = form == Form::kHip;
  return Choice(descriptor->I32(4), hip ? 122 : 0, hip ? 121 : 1, "uplo");
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

// The descriptor's type code: 0 f32, 1 f64 (2, 3: complex, not read here).
Status CheckTypeCode(int64_t code, ElementType type) {
  const int64_t want = type == ElementType::kF32 ? 0 : 1;
  if (code == want) return {};
  return MakeError("descriptor type {} does not match {} matrices", code, HloName(type));
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
  if (shape.element_type == kF32) return ElementType::kF32;
  if (shape.element_type == kF64) return ElementType::kF64;
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
