// A Cholesky factorisation too large for one tile (a potrf custom call or
// XLA's cholesky op on one matrix) written out as a blocked, right-looking
// factorisation in HLO and lowered like a call, as LAPACK's ?potrf blocks
// ?potf2 and poplin's cholesky spreads its blocks: the matrix, padded to a
// multiple of the block size b with the identity on the padded diagonal
// (chol([[A, 0], [0, I]]) = [[L, 0], [0, I]]), is factored one block
// column k at a time on its trailing matrix T (T_0 = A):
//   L_kk = cholesky(T[0:b, 0:b])                       one tile
//   L_ik = T_ik L_kk^-T for every block row i below     a batched
//          triangular-solve, one b x b solve per tile
//   T'   = T[b:, b:] - L_k L_k^T                        a planned dot
// Block column k of L is L_kk over L_k, with k b zero rows above it. b is
// the largest multiple of 8 whose three b x b matrices (a, b and x of a
// solve) fit half a tile, as a one-tile factorisation must.
//
// The result keeps the conventions of the one-tile codelet (engine/codelets/
// linalg.h, Potrf): the factor in the requested triangle, the other triangle
// the input's; info 0, or j + 1 for the first diagonal element of L that is
// not positive (the first non-positive pivot: every earlier one was
// positive and exact); workspace results zero. An upper factorisation is
// the lower one of the transpose, transposed back.
#include <cmath>

#include <fmt/format.h>

#include "engine/compiler/expansion_text.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

uint64_t BlockSize(const Target& target, uint64_t element_bytes, uint64_t n) {
  const auto fit = static_cast<uint64_t>(
      std::sqrt(static_cast<double>(target.BytesPerTile()) / (6.0 * element_bytes)));
  return std::min<uint64_t>(std::max<uint64_t>(8, fit / 8 * 8), (n + 7) / 8 * 8);
}

}  // namespace

Expected<std::optional<Value>> Lowering::LowerBlockedCholesky(const hlo::Instruction& instruction,
                                                              const Value& matrix, uint64_t n,
                                                              bool lower,
                                                              program::Sequence& program) {
  const hlo::Shape& result = instruction.shape();
  const hlo::Shape& l_shape = result.IsTuple() ? result.tuple_shapes[0] : result;
  if (!l_shape.IsArray() || l_shape.rank() != 2) return std::optional<Value>();  // batched: not yet
  const std::string_view t = hlo::PrimitiveTypeName(l_shape.element_type);
  const auto element = static_cast<uint64_t>(hlo::BitWidth(l_shape.element_type) / 8);
  if (element == 0) return std::optional<Value>();
  const uint64_t b = BlockSize(graph_.target(), element, n);
  const uint64_t blocks = (n + b - 1) / b, padded = blocks * b;
  const auto mat = [&](uint64_t rows, uint64_t cols) {
    return fmt::format("{}[{},{}]", t, rows, cols);
  };
  // Its instructions keep their bare names ("row", "l0", ...), which the
  // text below refers to.
  ExpansionText x("");
  x.ScalarComputation("min", "minimum", "s32");
  x.ScalarComputation("add", "add", t);
  std::string a = x.Parameter("a", mat(n, n));
  if (!lower) a = x.Add("at", fmt::format("{} transpose(a), dimensions={{1,0}}", mat(n, n)));
  // Only the lower triangle is read: the upper is made its mirror, so that
  // the trailing updates see a symmetric matrix whatever the input held.
  x.Add("row", fmt::format("s32[{},{}] iota(), iota_dimension=0", n, n));
  x.Add("col", fmt::format("s32[{},{}] iota(), iota_dimension=1", n, n));
  x.Add("on_lower", fmt::format("pred[{},{}] compare(row, col), direction=GE", n, n));
  x.Add("mirror", fmt::format("{} transpose({}), dimensions={{1,0}}", mat(n, n), a));
  std::string t0 = x.Add("sym", fmt::format("{} select(on_lower, {}, mirror)", mat(n, n), a));
  x.Add("zero", fmt::format("{}[] constant(0)", t));
  x.Add("one", fmt::format("{}[] constant(1)", t));
  if (padded > n) {
    const uint64_t p = padded - n;
    x.Add("padded", fmt::format("{} pad(sym, zero), padding=0_{}x0_{}", mat(padded, padded), p, p));
    x.Add("prow", fmt::format("s32[{},{}] iota(), iota_dimension=0", padded, padded));
    x.Add("pcol", fmt::format("s32[{},{}] iota(), iota_dimension=1", padded, padded));
    x.Add("pn", fmt::format("s32[] constant({})", n));
    x.Add("pnb", fmt::format("s32[{},{}] broadcast(pn), dimensions={{}}", padded, padded));
    x.Add("pdiag", fmt::format("pred[{},{}] compare(prow, pcol), direction=EQ", padded, padded));
    x.Add("pbeyond", fmt::format("pred[{},{}] compare(prow, pnb), direction=GE", padded, padded));
    x.Add("pident", fmt::format("pred[{},{}] and(pdiag, pbeyond)", padded, padded));
    x.Add("ones", fmt::format("{} broadcast(one), dimensions={{}}", mat(padded, padded)));
    t0 = x.Add("t0", fmt::format("{} select(pident, ones, padded)", mat(padded, padded)));
  }
  std::vector<std::string> columns;
  std::string trailing = t0;
  for (uint64_t k = 0; k < blocks; ++k) {
    const uint64_t m = padded - k * b, rest = m - b;
    const std::string akk =
        x.Add(fmt::format("a{}", k),
              fmt::format("{} slice({}), slice={{[0:{}], [0:{}]}}", mat(b, b), trailing, b, b));
    std::string column =
        x.Add(fmt::format("l{}", k), fmt::format("{} cholesky({}), lower=true", mat(b, b), akk));
    if (rest > 0) {
      const uint64_t below = rest / b;
      x.Add(fmt::format("p{}", k), fmt::format("{} slice({}), slice={{[{}:{}], [0:{}]}}",
                                               mat(rest, b), trailing, b, m, b));
      x.Add(fmt::format("pb{}", k), fmt::format("{}[{},{},{}] reshape(p{})", t, below, b, b, k));
      x.Add(fmt::format("lb{}", k),
            fmt::format("{}[{},{},{}] broadcast(l{}), dimensions={{1,2}}", t, below, b, b, k));
      x.Add(fmt::format("xb{}", k),
            fmt::format("{}[{},{},{}] triangular-solve(lb{}, pb{}), left_side=false, lower=true, "
                        "transpose_a=TRANSPOSE",
                        t, below, b, b, k, k));
      const std::string panel =
          x.Add(fmt::format("x{}", k), fmt::format("{} reshape(xb{})", mat(rest, b), k));
      column = x.Add(fmt::format("c{}", k),
                     fmt::format("{} concatenate(l{}, {}), dimensions={{0}}", mat(m, b), k, panel));
      x.Add(fmt::format("s{}", k), fmt::format("{} slice({}), slice={{[{}:{}], [{}:{}]}}",
                                               mat(rest, rest), trailing, b, m, b, m));
      x.Add(fmt::format("u{}", k),
            fmt::format("{} dot({}, {}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}",
                        mat(rest, rest), panel, panel));
      trailing = x.Add(fmt::format("t{}", k + 1),
                       fmt::format("{} subtract(s{}, u{})", mat(rest, rest), k, k));
    }
    if (k > 0) {
      column = x.Add(fmt::format("z{}", k), fmt::format("{} pad({}, zero), padding={}_0x0_0",
                                                        mat(padded, b), column, k * b));
    }
    columns.push_back(column);
  }
  std::string joined;
  for (const std::string& c : columns) joined += (joined.empty() ? "" : ", ") + c;
  std::string l =
      x.Add("lp", fmt::format("{} concatenate({}), dimensions={{1}}", mat(padded, padded), joined));
  if (padded > n) {
    l = x.Add("ln", fmt::format("{} slice(lp), slice={{[0:{}], [0:{}]}}", mat(n, n), n, n));
  }
  // info: the first diagonal element of L that is not positive (NaN
  // included), 1-based; 0 when there is none. Read from the diagonal
  // blocks alone: a vector, not a pass over the matrix.
  x.Add("brow", fmt::format("s32[{},{}] iota(), iota_dimension=0", b, b));
  x.Add("bcol", fmt::format("s32[{},{}] iota(), iota_dimension=1", b, b));
  x.Add("beye", fmt::format("pred[{},{}] compare(brow, bcol), direction=EQ", b, b));
  x.Add("bzeros", fmt::format("{} broadcast(zero), dimensions={{}}", mat(b, b)));
  x.Add("fzero", fmt::format("{}[] constant(0)", t));
  std::string diagonals;
  for (uint64_t k = 0; k < blocks; ++k) {
    x.Add(fmt::format("dm{}", k), fmt::format("{} select(beye, l{}, bzeros)", mat(b, b), k));
    x.Add(fmt::format("d{}", k), fmt::format("{}[{}] reduce(dm{}, fzero), dimensions={{1}}, "
                                             "to_apply=add",
                                             t, b, k));
    diagonals += fmt::format("{}d{}", diagonals.empty() ? "" : ", ", k);
  }
  x.Add("dp", fmt::format("{}[{}] concatenate({}), dimensions={{0}}", t, padded, diagonals));
  x.Add("dn", fmt::format("{}[{}] slice(dp), slice={{[0:{}]}}", t, n, n));
  x.Add("dzeros", fmt::format("{}[{}] broadcast(zero), dimensions={{}}", t, n));
  x.Add("positive", fmt::format("pred[{}] compare(dn, dzeros), direction=GT", n));
  x.Add("bad", fmt::format("pred[{}] not(positive)", n));
  x.Add("index", fmt::format("s32[{}] iota(), iota_dimension=0", n));
  x.Add("int_one", "s32[] constant(1)");
  x.Add("int_ones", fmt::format("s32[{}] broadcast(int_one), dimensions={{}}", n));
  x.Add("order", fmt::format("s32[{}] add(index, int_ones)", n));
  x.Add("none", "s32[] constant(2147483647)");
  x.Add("nones", fmt::format("s32[{}] broadcast(none), dimensions={{}}", n));
  x.Add("firsts", fmt::format("s32[{}] select(bad, order, nones)", n));
  x.Add("first", "s32[] reduce(firsts, none), dimensions={0}, to_apply=min");
  x.Add("izero", "s32[] constant(0)");
  x.Add("ok", "pred[] compare(first, none), direction=EQ");
  x.Add("info", "s32[] select(ok, izero, first)");
  // The factor in the requested triangle, the input's other triangle.
  std::string factor = x.Add("factor", fmt::format("{} select(on_lower, {}, {})", mat(n, n), l, a));
  if (!lower) {
    factor = x.Add("factor_t", fmt::format("{} transpose(factor), dimensions={{1,0}}", mat(n, n)));
  }
  std::string root_shape = mat(n, n), root;
  if (!result.IsTuple()) {
    root = fmt::format("copy({})", factor);
  } else {
    // (l, info, workspace...): info is a scalar here (batch 1).
    std::string elements = factor;
    std::string shapes = mat(n, n);
    for (size_t i = 1; i < result.tuple_shapes.size(); ++i) {
      const hlo::Shape& leaf = result.tuple_shapes[i];
      const std::string shape = hlo::ShapeToString(leaf);
      if (i == 1 && leaf.element_type == hlo::PrimitiveType::kS32 && leaf.rank() <= 1 &&
          (leaf.rank() == 0 || leaf.dimensions[0] == 1)) {
        elements += ", " + x.Add("info_out", fmt::format("{} reshape(info)", shape));
      } else {
        if (!leaf.IsArray()) return std::optional<Value>();
        const std::string zero =
            x.Add(fmt::format("w{}z", i),
                  fmt::format("{}[] constant(0)", hlo::PrimitiveTypeName(leaf.element_type)));
        elements += ", " + x.Add(fmt::format("w{}", i),
                                 fmt::format("{} broadcast({}), dimensions={{}}", shape, zero));
      }
      shapes += ", " + shape;
    }
    root_shape = fmt::format("({})", shapes);
    root = fmt::format("tuple({})", elements);
  }
  TILEPROF_ASSIGN_OR_RETURN(Value value, LowerExpansion(instruction, x.Finish(root_shape, root),
                                                        std::span(&matrix, 1), program));
  return std::optional<Value>(std::move(value));
}

}  // namespace tileprof::engine::compiler
