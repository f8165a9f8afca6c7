// Reading the linear-algebra custom calls' descriptors, attributes and
// layouts. See linalg_descriptor.h.
#include "engine/compiler/linalg_descriptor.h"

#include <array>
#include <charconv>

#include <fmt/format.h>

#include "engine/compiler/scalar_eval.h"

namespace tileprof::engine::compiler::linalg {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;

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

Expected<int64_t> Attribute(const Attributes& attributes, std::string_view name) {
  if (auto it = attributes.find(name); it != attributes.end()) return it->second;
  return MakeError("backend_config has no attribute '{}'", name);
}

}  // namespace

const TargetInfo* FindTarget(std::string_view name) {
  for (const TargetInfo& t : kTargets) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

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

Status CheckTypeCode(int64_t code, ElementType type) {
  const int64_t want = type == ElementType::kF32 ? 0 : 1;
  if (code == want) return {};
  return MakeError("descriptor type {} does not match {} matrices", code, HloName(type));
}

}  // namespace tileprof::engine::compiler::linalg
