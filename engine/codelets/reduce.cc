// Reductions: popops::Reduce<popops::ReduceOP,T,T,isUpdate,0> and
// popops::ContinuousReduce<popops::ReduceOP,T,T,isUpdate>, and
// popops::Reduce<popops::ReduceAdd,float,T,false,0> for T = f16 and bf16,
// which adds f32 partial sums and rounds once to T: how a dot or
// convolution with a 16-bit float result split over tiles adds its partials
// (XLA accumulates such sums in f32, dot_kernels.h).
//
// Fields: `partials` (in, P x M elements) and `out` (M elements). Reduce
// takes the partials partial-major: out[j] = op over k of partials[k * M + j],
// k = 0 .. P-1, in that order. ContinuousReduce takes them output-major, each
// output's P partials one contiguous run: out[j] = op over k of
// partials[j * P + k], which is a reduction over the innermost dimensions
// read in place (no rearrangement into partial-major order first). With
// isUpdate the old value of out is combined first, which is how an HLO
// reduce with a non-identity init value lowers: fill out with init, then
// reduce with update. Reducing a whole region to one value is M = 1.
// f16 and bf16 accumulate in f32 and round once; integers wrap; max and min
// propagate NaN (XLA's maximum/minimum).
#include "engine/codelets/codelets.h"
#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"
#include "engine/codelets/reduce_combine.h"

namespace tileprof::engine {
namespace {

using numeric::Get;
using numeric::Put;

class ReduceCodelet final : public Codelet {
 public:
  ReduceCodelet(ReduceOp op, ElementType partials_type, ElementType type, bool is_update,
                bool continuous)
      : Codelet(continuous ? ContinuousReduceCodeletName(op, type, is_update)
                           : ReduceCodeletName(op, partials_type, type, is_update),
                ExecutionKind::kWorker,
                {In("partials", partials_type, VectorLayout::kSpan),
                 is_update ? InOut("out", type, VectorLayout::kSpan)
                           : Out("out", type, VectorLayout::kSpan)},
                {}, cost::kReduceCodeBytes),
        op_(op),
        partials_type_(partials_type),
        type_(type),
        is_update_(is_update),
        continuous_(continuous) {}

  // The partials are often every tile's partial sums of one block of
  // outputs: rows of a larger tensor, read where they lie.
  bool ReadsRows(size_t field) const override { return field == 0; }

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t partials = shape.field_elements[0];
    const uint64_t outputs = shape.field_elements[1];
    if (outputs == 0 || partials % outputs != 0) {
      return MakeError(
          "field 'partials' has {} elements, not a multiple of the {} "
          "elements of 'out'",
          partials, outputs);
    }
    return {};
  }

  // Reduce: kWorkerOverhead + ceil(M / width) * (P * (load + op) + store
  //                                             [+ load + op when isUpdate]).
  // ContinuousReduce vectorises along the partials instead, then folds the
  // vector's lanes: kWorkerOverhead + M * (ceil(P / width) * (load + op)
  //                               + (width - 1) * op + store [+ load + op]).
  // Width and op are those of the partials' type (f32 partials are added as
  // f32 vectors whatever the output type).
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint64_t outputs = shape.field_elements[1];
    const uint64_t partials = outputs == 0 ? 0 : shape.field_elements[0] / outputs;
    const uint64_t op = cost::OpCycles(cost::OpClass::kSimple, partials_type_);
    const uint64_t step = cost::kMemoryAccessCycles + op;
    if (continuous_) {
      const uint32_t width = cost::Width(target, partials_type_);
      const uint64_t per_output = cost::CeilDiv(partials, width) * step + (width - 1) * op +
                                  cost::kMemoryAccessCycles + (is_update_ ? step : 0);
      return cost::WorkerLoop(outputs, 1, per_output);
    }
    const uint64_t per_vector =
        partials * step + cost::kMemoryAccessCycles + (is_update_ ? step : 0);
    return cost::WorkerLoop(outputs, cost::Width(target, partials_type_), per_vector);
  }

 private:
  // Combines in the output's compute type (f32 for f16 and bf16), rounding
  // once on store. Each output still combines its partials in k order; the
  // partial-major form walks them a partial at a time over every output (a
  // contiguous row, which vectorises) instead of an output at a time down a
  // strided column. The op is a template argument, so the combine is not a
  // switch per element.
  template <ReduceOp kOp, ElementType kPartials, ElementType kOut>
  Status Accumulate(const VertexIo& io) const {
    using C = typename numeric::Traits<kOut>::Compute;
    const uint64_t outputs = Count(io, 1);
    const uint64_t partials = Count(io, 0) / outputs;
    const auto combine = [](C a, C b) { return ReduceCombine(kOp, a, b); };
    // The partials as rows (an output's partials, or a partial of every
    // output): read in place when given as rows of that length.
    const uint64_t row_bytes = (continuous_ ? partials : outputs) * SizeOf(kPartials);
    const FieldRows* given = io.Rows(0);
    const bool in_place = given == nullptr || given->Fits(row_bytes, 1, false);
    const std::span<const std::byte> all = in_place ? io.fields[0] : DenseField(io, 0);
    const uint64_t pitch = given != nullptr && in_place ? given->stride : row_bytes;
    auto row = [&](uint64_t r) { return all.subspan(r * pitch, row_bytes); };
    if (continuous_) {
      for (uint64_t j = 0; j < outputs; ++j) {
        C acc = is_update_ ? Get<kOut>(io.fields[1], j) : ReduceIdentity<C>(kOp);
        const std::span<const std::byte> mine = row(j);
        for (uint64_t k = 0; k < partials; ++k)
          acc = combine(acc, static_cast<C>(Get<kPartials>(mine, k)));
        Put<kOut>(io.fields[1], j, acc);
      }
      return {};
    }
    // pred accumulates in bytes (a std::vector<bool> has no data()).
    using A = std::conditional_t<numeric::kIsPred<C>, uint8_t, C>;
    A* acc = numeric::Scratch<A, 0>(outputs);
    for (uint64_t j = 0; j < outputs; ++j)
      acc[j] = is_update_ ? Get<kOut>(io.fields[1], j) : ReduceIdentity<C>(kOp);
    for (uint64_t k = 0; k < partials; ++k) {
      const std::span<const std::byte> partial = row(k);
      // (The accumulators are scratch, never the field: GCC may vectorise
      // the loop without a run-time overlap test. Clang's equivalent warns,
      // an error under -Werror, for the types it cannot vectorise.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC ivdep
#endif
      for (uint64_t j = 0; j < outputs; ++j)
        acc[j] = combine(static_cast<C>(acc[j]), static_cast<C>(Get<kPartials>(partial, j)));
    }
    for (uint64_t j = 0; j < outputs; ++j) Put<kOut>(io.fields[1], j, static_cast<C>(acc[j]));
    return {};
  }

  template <ElementType kPartials, ElementType kOut>
  Status Accumulate(const VertexIo& io) const {
    switch (op_) {
      case ReduceOp::kAdd:
        return Accumulate<ReduceOp::kAdd, kPartials, kOut>(io);
      case ReduceOp::kMul:
        return Accumulate<ReduceOp::kMul, kPartials, kOut>(io);
      case ReduceOp::kMax:
        return Accumulate<ReduceOp::kMax, kPartials, kOut>(io);
      case ReduceOp::kMin:
        return Accumulate<ReduceOp::kMin, kPartials, kOut>(io);
      case ReduceOp::kAnd:
        return Accumulate<ReduceOp::kAnd, kPartials, kOut>(io);
      case ReduceOp::kOr:
        return Accumulate<ReduceOp::kOr, kPartials, kOut>(io);
    }
    return MakeError("unknown reduce op");
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    if (partials_type_ == type_) {
      return numeric::Dispatch(type_, [&](auto tag) -> Status {
        constexpr ElementType kT = decltype(tag)::value;
        return Accumulate<kT, kT>(io);
      });
    }
    // f32 partials, a 16-bit float output (AddReduceCodelets has no other).
    if (type_ == ElementType::kF16) return Accumulate<ElementType::kF32, ElementType::kF16>(io);
    return Accumulate<ElementType::kF32, ElementType::kBF16>(io);
  }

 private:
  ReduceOp op_;
  ElementType partials_type_;
  ElementType type_;
  bool is_update_;
  bool continuous_;
};

constexpr ReduceOp kReduceOps[] = {ReduceOp::kAdd, ReduceOp::kMul, ReduceOp::kMax,
                                   ReduceOp::kMin, ReduceOp::kAnd, ReduceOp::kOr};

}  // namespace

void AddReduceCodelets(CodeletList& out) {
  for (ElementType type : kAllElementTypes) {
    for (ReduceOp op : kReduceOps) {
      if (!Supports(op, type)) continue;
      for (bool continuous : {false, true}) {
        out.push_back(std::make_unique<ReduceCodelet>(op, type, type, false, continuous));
        out.push_back(std::make_unique<ReduceCodelet>(op, type, type, true, continuous));
      }
    }
  }
  for (ElementType type : {ElementType::kF16, ElementType::kBF16})
    out.push_back(
        std::make_unique<ReduceCodelet>(ReduceOp::kAdd, ElementType::kF32, type, false, false));
}

}  // namespace tileprof::engine
