// The linear-algebra custom calls compiled and run (engine/compiler/
// lower_linalg.cc, linalg_call.h): JAX's GPU LU with its pivots-to-
// permutation call (the form of the corpus' module_0337), a batched LU
// spread over tiles, a Cholesky solve with LAPACK's legacy and FFI forms,
// the errors of malformed calls and the forms that stay opaque.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;

// The message of a compilation that must fail.
std::string CompileError(const std::string& text) {
  Expected<hlo::Module> module = hlo::ParseModule(text, {.source_name = "test.hlo"});
  if (!module) return "parse error: " + module.error().message();
  Expected<compiler::CompileResult> result =
      compiler::CompileModule(*module, *Target::FromPreset("ipu2", 1, 8), {});
  return result ? "compiled" : result.error().message();
}

// A module with one custom call on f32[3,3] `a` returning it (and the
// call's text spliced in).
std::string LuModule(std::string_view call) {
  return fmt::format(R"(
HloModule lu
ENTRY main {{
  a = f32[3,3]{{1,0}} parameter(0)
  one = s32[] constant(1)
  {}
}})",
                     call);
}

constexpr std::string_view kGetrfDescriptor =
    R"(backend_config="\000\000\000\000\001\000\000\000\003\000\000\000\003\000\000\000")";

TEST(SimLinalg, GpuLuAndPermutationAsJaxLowersThem) {
  Compiled compiled = CompileText(LuModule(fmt::format(R"(
  lu = (f32[3,3]{{0,1}}, s32[3]{{0}}, s32[], f32[64]{{0}}) custom-call(a), custom_call_target="cusolver_getrf", operand_layout_constraints={{f32[3,3]{{0,1}}}}, api_version=API_VERSION_STATUS_RETURNING, {}
  lu.0 = f32[3,3]{{0,1}} get-tuple-element(lu), index=0
  lu.1 = s32[3]{{0}} get-tuple-element(lu), index=1
  lu.2 = s32[] get-tuple-element(lu), index=2
  ones = s32[3]{{0}} broadcast(one), dimensions={{}}
  pivots = s32[3]{{0}} subtract(lu.1, ones)
  perm = s32[3]{{0}} custom-call(pivots), custom_call_target="cuda_lu_pivots_to_permutation", operand_layout_constraints={{s32[3]{{0}}}}, backend_config="\001\000\000\000\000\000\000\000\003\000\000\000\003\000\000\000"
  ROOT out = (f32[3,3]{{0,1}}, s32[3]{{0}}, s32[], s32[3]{{0}}) tuple(lu.0, lu.1, lu.2, perm))",
                                                       kGetrfDescriptor)));
  auto simulator = MustCreate(compiled);
  // [[1, 2, 0], [3, 4, 0], [0, 0, 2]]: rows 1 and 2 swap, l = 1/3, u = 2/3.
  sim::HostData out = MustRun(*simulator, {{"a", Encode<float>({1, 2, 0, 3, 4, 0, 0, 0, 2})}});
  EXPECT_THAT(Decode<float>(out["out.0"]),
              ElementsAre(3, 4, 0, FloatEq(1.0f / 3), FloatEq(2.0f / 3), 0, 0, 0, 2));
  EXPECT_THAT(Decode<int32_t>(out["out.1"]), ElementsAre(2, 2, 3));
  EXPECT_THAT(Decode<int32_t>(out["out.2"]), ElementsAre(0));
  EXPECT_THAT(Decode<int32_t>(out["out.3"]), ElementsAre(1, 0, 2));
}

TEST(SimLinalg, BatchedLuSpreadsItsMatricesOverTiles) {
  // 40 diagonal 2x2 matrices diag(b, -1), b = 0..39: no swap while |b| >=
  // 1; b = 0 has a zero pivot (info 1) and the next column's pivot -1.
  Compiled compiled = CompileText(R"(
HloModule lub
ENTRY main {
  a = f32[40,2,2]{2,1,0} parameter(0)
  lu = (f32[40,2,2]{1,2,0}, s32[40,2]{1,0}, s32[40]{0}, s8[320]{0}) custom-call(a), custom_call_target="cublas_getrf_batched", operand_layout_constraints={f32[40,2,2]{1,2,0}}, backend_config="\000\000\000\000\050\000\000\000\002\000\000\000"
  lu.0 = f32[40,2,2]{1,2,0} get-tuple-element(lu), index=0
  lu.1 = s32[40,2]{1,0} get-tuple-element(lu), index=1
  lu.2 = s32[40]{0} get-tuple-element(lu), index=2
  ROOT out = (f32[40,2,2]{1,2,0}, s32[40,2]{1,0}, s32[40]{0}) tuple(lu.0, lu.1, lu.2)
})");
  std::vector<float> a;
  for (int b = 0; b < 40; ++b) a.insert(a.end(), {static_cast<float>(b), 0, 0, -1});
  auto simulator = MustCreate(compiled);
  sim::HostData out = MustRun(*simulator, {{"a", Encode<float>(a)}});
  EXPECT_EQ(Decode<float>(out["out.0"]), a);
  const std::vector<int32_t> ipiv = Decode<int32_t>(out["out.1"]);
  const std::vector<int32_t> info = Decode<int32_t>(out["out.2"]);
  EXPECT_THAT(std::vector<int32_t>(ipiv.begin(), ipiv.begin() + 4), ElementsAre(1, 2, 1, 2));
  EXPECT_EQ(info[0], 1);
  EXPECT_EQ(std::count(info.begin(), info.end(), 0), 39);
  // 40 matrices of 16 bytes, at least 128 bytes (8 matrices) per tile: 5
  // tiles of 6 vertices (one per worker context), beside the 8 seed ones.
  EXPECT_EQ(compiled.result.graph->num_vertices(), 5u * 6u + 8u);
}

TEST(SimLinalg, CholeskySolveInLapackLegacyAndFfiForms) {
  // S = [[4, 2], [2, 5]] = L L^T, L = [[2, 0], [1, 2]]; x with S x = [8, 9]:
  // L y = b (legacy blas_dtrsm), then L^T x = y (FFI, no alpha).
  Compiled compiled = CompileText(R"(
HloModule cho
ENTRY main {
  s = f64[2,2]{1,0} parameter(0)
  b = f64[2,1]{1,0} parameter(1)
  zero = s32[] constant(0)
  one = s32[] constant(1)
  two = s32[] constant(2)
  alpha = f64[] constant(1)
  ch = (f64[2,2]{0,1}, s32[]) custom-call(one, one, two, s), custom_call_target="lapack_dpotrf", operand_layout_constraints={s32[], s32[], s32[], f64[2,2]{0,1}}
  l = f64[2,2]{0,1} get-tuple-element(ch), index=0
  info = s32[] get-tuple-element(ch), index=1
  y = f64[2,1]{0,1} custom-call(one, one, zero, zero, two, one, one, alpha, l, b), custom_call_target="blas_dtrsm", operand_layout_constraints={s32[], s32[], s32[], s32[], s32[], s32[], s32[], f64[], f64[2,2]{0,1}, f64[2,1]{0,1}}
  x = f64[2,1]{0,1} custom-call(l, y), custom_call_target="blas_dtrsm_ffi", operand_layout_constraints={f64[2,2]{0,1}, f64[2,1]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}
  ROOT out = (f64[2,2]{0,1}, s32[], f64[2,1]{0,1}) tuple(l, info, x)
})");
  auto simulator = MustCreate(compiled);
  sim::HostData out =
      MustRun(*simulator, {{"s", Encode<double>({4, 2, 2, 5})}, {"b", Encode<double>({8, 9})}});
  EXPECT_THAT(Decode<double>(out["out.0"]), ElementsAre(2, 2, 1, 2));  // upper kept
  EXPECT_THAT(Decode<int32_t>(out["out.1"]), ElementsAre(0));
  // S x = [8, 9]: x = [(40 - 18) / 16, (36 - 16) / 16] = [1.375, 1.25].
  EXPECT_THAT(Decode<double>(out["out.2"]),
              ElementsAre(DoubleNear(1.375, 1e-15), DoubleNear(1.25, 1e-15)));
}

TEST(SimLinalg, MalformedCallsAreErrorsNamingThem) {
  const auto getrf = [](std::string_view operands, std::string_view config) {
    return LuModule(fmt::format(
        R"(ROOT lu = (f32[3,3]{{0,1}}, s32[3]{{0}}, s32[], f32[64]{{0}}) custom-call({}), custom_call_target="cusolver_getrf", {})",
        operands, config));
  };
  EXPECT_THAT(CompileError(getrf("a", kGetrfDescriptor)), "compiled");
  EXPECT_THAT(CompileError(getrf("a, a", kGetrfDescriptor)),
              HasSubstr("lu (custom-call): cusolver_getrf: takes 1 operand(s), not 2"));
  EXPECT_THAT(CompileError(getrf("a", R"(backend_config="\000\000\000\000")")),
              HasSubstr("cusolver_getrf: descriptor has 4 bytes, expected 16"));
  EXPECT_THAT(CompileError(getrf("a", "api_version=API_VERSION_STATUS_RETURNING")),
              HasSubstr("has no kernel descriptor"));
  EXPECT_THAT(
      CompileError(getrf(
          "a",
          R"(backend_config="\000\000\000\000\002\000\000\000\003\000\000\000\003\000\000\000")")),
      HasSubstr("batch is 2, but the shapes say 1"));
  EXPECT_THAT(
      CompileError(getrf(
          "a",
          R"(backend_config="\001\000\000\000\001\000\000\000\003\000\000\000\003\000\000\000")")),
      HasSubstr("descriptor type 1 does not match f32 matrices"));
  EXPECT_THAT(
      CompileError(LuModule(
          R"(ROOT lu = (f32[3,3], s32[]) custom-call(a, a, a, a), custom_call_target="lapack_spotrf")")),
      HasSubstr("lu (custom-call): lapack_spotrf: operand 1 (batch) is not an s32 constant"));
  EXPECT_THAT(
      CompileError(LuModule(
          R"(ROOT lu = (f32[3,3], s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi", backend_config={uplo = 1 : ui8})")),
      HasSubstr("uplo is 1, expected 76 or 85"));
  EXPECT_THAT(
      CompileError(LuModule(
          R"(ROOT x = f32[3,3] custom-call(a, a), custom_call_target="blas_strsm_ffi", backend_config={side = 76 : ui8})")),
      HasSubstr("blas_strsm_ffi: backend_config has no attribute 'uplo'"));
  EXPECT_THAT(
      CompileError(LuModule(
          R"(ROOT x = f32[2,3] custom-call(a, a), custom_call_target="blas_strsm_ffi", backend_config={side = 76 : ui8, uplo = 76 : ui8, trans_x = 78 : ui8, diag = 78 : ui8})")),
      HasSubstr("x is f32[2,3], expected f32[3,3]"));
  EXPECT_THAT(
      CompileError(LuModule(
          R"(ROOT p = s32[2] custom-call(one), custom_call_target="cu_lu_pivots_to_permutation")")),
      HasSubstr("takes s32[..., k] pivots to s32[..., size]"));
}

TEST(SimLinalg, ComplexTypesAndOtherLayoutsStayOpaque) {
  for (
      std::string_view call :
      {R"(ROOT lu = (c64[3,3]{0,1}, s32[3]{0}, s32[]) custom-call(c), custom_call_target="lapack_cgetrf_ffi", api_version=API_VERSION_TYPED_FFI)",
       R"(ROOT lu = (f32[3,3]{1,0}, s32[3]{0}, s32[]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", operand_layout_constraints={f32[3,3]{1,0}}, api_version=API_VERSION_TYPED_FFI)"}) {
    SCOPED_TRACE(call);
    Compiled compiled = CompileText(fmt::format(R"(
HloModule opaque
ENTRY main {{
  a = f32[3,3]{{1,0}} parameter(0)
  c = c64[3,3]{{1,0}} parameter(1)
  {}
}})",
                                                call));
    auto simulator =
        sim::Simulator::Create(compiled.result, {.threads = 1, .module = &compiled.module});
    ASSERT_FALSE(simulator.has_value());
    EXPECT_THAT(simulator.error().message(), HasSubstr("lu (custom-call lapack_"));
  }
}

// A Cholesky too large for a tile (200 x 200 f32 on an ipu1: 320 KB in and
// out, over half of 256 KiB) is blocked over tiles, not left opaque on one:
// tridiagonal A = tridiag(-1, 4, -1) in the lower triangle, garbage above
// (only the lower triangle is read), factored lower; info 0; the upper
// triangle of the result is the input's. tests/oracle/modules/
// cholesky_blocked.hlo compares it with NumPy on random matrices.
TEST(SimLinalg, CholeskyTooLargeForATileIsBlockedOverTiles) {
  Compiled compiled = CompileText(R"(
HloModule big
ENTRY main {
  a = f32[200,200]{1,0} parameter(0)
  l = f32[200,200]{1,0} cholesky(a), lower=true
  ROOT out = (f32[200,200]{1,0}) tuple(l)
})",
                                  "ipu1", 1216);
  EXPECT_EQ(compiled.result.tiles_out_of_memory, 0u);
  auto simulator = MustCreate(compiled, 2);
  constexpr size_t n = 200;
  std::vector<float> a(n * n, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    a[i * n + i] = 4;
    if (i > 0) a[i * n + i - 1] = -1;
    for (size_t j = i + 1; j < n; ++j) a[i * n + j] = 7;  // not read
  }
  sim::HostData out = MustRun(*simulator, {{"a", Encode<float>(a)}});
  const std::vector<float> l = Decode<float>(out["out.0"]);
  ASSERT_EQ(l.size(), n * n);
  // L L^T = A on and below the diagonal; above it, the input.
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (j > i) {
        EXPECT_EQ(l[i * n + j], 7.0f) << i << "," << j;
        continue;
      }
      double sum = 0;
      for (size_t k = 0; k <= j; ++k) sum += double{l[i * n + k]} * l[j * n + k];
      EXPECT_NEAR(sum, a[i * n + j], 1e-4) << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace tileprof::engine::sim_test
