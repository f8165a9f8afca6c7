// The seed-setting vertex and the vertices of the seed's listings:
//   poprand::SetSeedSupervisor  seed (2 x u32) -> the tile's PRNG state;
//                               parameters seedModifierUser, seedModifierHw.
//                               The original graph places one on every tile
//                               (seed 004's report: 1,216 of them on a Mk1).
//   SumVertex                   in (f32 vector) -> out = sum (f32 scalar);
//                               seed 003 listing 4.2.
//   AdderVertex                 x, y (f32) -> sum = x + y; listing 4.3.
//   DotProductVertex            a, b (f32 vectors) -> out = a . b (f32
//                               scalar); Poplar tutorials 6 and 7.
//   ReduceVertex                in (f32 vector) -> out = sum; tutorial 7.
#include <array>

#include "engine/codelets/codelets.h"
#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"

namespace tileprof::engine {
namespace {

using numeric::Get;
using numeric::Put;
constexpr ElementType kF32 = ElementType::kF32;

// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mix,
// so distinct (seed, modifier) inputs give distinct states.
uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The hardware's seed hashing is not public: tileprof mixes the 64-bit seed
// with the two modifiers into the two 64-bit PRNG state words, so that the
// same seed gives different streams on different tiles (the compiler sets
// seedModifierHw to the tile id) and a state that is never all zero.
class SetSeedCodelet final : public Codelet {
 public:
  SetSeedCodelet()
      : Codelet(std::string(kSetSeedCodeletName), ExecutionKind::kSupervisor,
                {In("seed", ElementType::kU32)}, {"seedModifierUser", "seedModifierHw"},
                cost::kSetSeedCodeBytes) {}

  Status CheckShape(const VertexShape& shape) const override {
    if (shape.field_elements[0] != 2) {
      return MakeError("field 'seed' has {} elements, expected 2 (a 64-bit seed)",
                       shape.field_elements[0]);
    }
    return {};
  }
  // kSupervisorOverhead + kSetSeedCycles: independent of the input.
  uint64_t EstimateCycles(const VertexShape&, const Target&) const override {
    return cost::kSupervisorOverhead + cost::kSetSeedCycles;
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    if (io.tile_state == nullptr) return MakeError("{}: no tile state to seed", name());
    constexpr ElementType kU32 = ElementType::kU32;
    const uint64_t seed = (uint64_t{Get<kU32>(io.fields[0], 1)} << 32) | Get<kU32>(io.fields[0], 0);
    const uint64_t modifiers = (uint64_t{io.params[0]} << 32) | io.params[1];
    const uint64_t s0 = Mix64(seed ^ Mix64(modifiers));
    const uint64_t s1 = Mix64(s0 ^ 0x9e3779b97f4a7c15ULL);
    io.tile_state->prng = {s0, s1 != 0 ? s1 : 1};
    return {};
  }
};

class SumVertexCodelet final : public Codelet {
 public:
  explicit SumVertexCodelet(std::string_view name = kSumVertexCodeletName)
      : Codelet(std::string(name), ExecutionKind::kWorker,
                {In("in", kF32, VectorLayout::kSpan), ScalarOut("out", kF32)}, {},
                cost::kSumVertexCodeBytes) {}
  // kWorkerOverhead + n * (load + add) + store: a scalar loop, as the
  // listing's plain C++ compute() compiles to.
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    const uint64_t step = cost::kMemoryAccessCycles + cost::OpCycles(cost::OpClass::kSimple, kF32);
    return cost::kWorkerOverhead + shape.field_elements[0] * step + cost::kMemoryAccessCycles;
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t n = Count(io, 0);
    float sum = 0;
    for (uint64_t i = 0; i < n; ++i) sum += Get<kF32>(io.fields[0], i);
    Put<kF32>(io.fields[1], 0, sum);
    return {};
  }
};

class AdderVertexCodelet final : public Codelet {
 public:
  AdderVertexCodelet()
      : Codelet(std::string(kAdderVertexCodeletName), ExecutionKind::kWorker,
                {ScalarIn("x", kF32), ScalarIn("y", kF32), ScalarOut("sum", kF32)}, {},
                cost::kAdderVertexCodeBytes) {}
  // kWorkerOverhead + 2 loads + 1 add + 1 store.
  uint64_t EstimateCycles(const VertexShape&, const Target&) const override {
    return cost::kWorkerOverhead + cost::CyclesPerVector(cost::OpClass::kSimple, kF32, 2, 1);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    Put<kF32>(io.fields[2], 0, Get<kF32>(io.fields[0], 0) + Get<kF32>(io.fields[1], 0));
    return {};
  }
};

class DotProductVertexCodelet final : public Codelet {
 public:
  DotProductVertexCodelet()
      : Codelet(std::string(kDotProductVertexCodeletName), ExecutionKind::kWorker,
                {In("a", kF32, VectorLayout::kSpan), In("b", kF32), ScalarOut("out", kF32)}, {},
                cost::kSumVertexCodeBytes) {}
  Status CheckShape(const VertexShape& shape) const override {
    if (shape.field_elements[0] != shape.field_elements[1]) {
      return MakeError("a has {} elements, b {}", shape.field_elements[0], shape.field_elements[1]);
    }
    return {};
  }
  // kWorkerOverhead + n * (2 loads + multiply-add) + store: the tutorial's
  // plain C++ loop, compiled without vectorisation (its hardware run, A10,
  // shows compute far above the 2-MACs-per-cycle perf estimate it sets).
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    const uint64_t step =
        2 * cost::kMemoryAccessCycles + cost::OpCycles(cost::OpClass::kSimple, kF32);
    return cost::kWorkerOverhead + shape.field_elements[0] * step + cost::kMemoryAccessCycles;
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t n = Count(io, 0);
    float sum = 0;
    for (uint64_t i = 0; i < n; ++i) sum += Get<kF32>(io.fields[0], i) * Get<kF32>(io.fields[1], i);
    Put<kF32>(io.fields[2], 0, sum);
    return {};
  }
};

}  // namespace

void AddMiscCodelets(CodeletList& out) {
  out.push_back(std::make_unique<SetSeedCodelet>());
  out.push_back(std::make_unique<SumVertexCodelet>());
  out.push_back(std::make_unique<AdderVertexCodelet>());
  out.push_back(std::make_unique<DotProductVertexCodelet>());
  // Tutorial 7's ReduceVertex sums its input like the seed's SumVertex.
  out.push_back(std::make_unique<SumVertexCodelet>(kReduceVertexCodeletName));
}

}  // namespace tileprof::engine
