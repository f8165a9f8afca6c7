// Random-number codelets. See random.h.
#include "engine/codelets/random.h"

#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"

namespace tileprof::engine {
namespace {

// xoroshiro128+ (Blackman and Vigna): one 64-bit output per step.
uint64_t Next(std::array<uint64_t, 2>& s) {
  const uint64_t s0 = s[0];
  uint64_t s1 = s[1];
  const uint64_t result = s0 + s1;
  s1 ^= s0;
  s[0] = ((s0 << 24) | (s0 >> 40)) ^ s1 ^ (s1 << 16);
  s[1] = (s1 << 37) | (s1 >> 27);
  return result;
}

// Uniform in [0, 1) with 53 random bits (the generator's high bits, its
// best ones).
double Unit(std::array<uint64_t, 2>& s) { return static_cast<double>(Next(s) >> 11) * 0x1.0p-53; }

class RngCodelet final : public Codelet {
 public:
  RngCodelet(ElementType type, bool normal)
      : Codelet(RngCodeletName(type, normal), ExecutionKind::kWorker,
                {ScalarIn("a", type), ScalarIn("b", type), Out("out", type, VectorLayout::kSpan)},
                {}, normal ? kRngNormalCodeBytes : kRngUniformCodeBytes),
        type_(type),
        normal_(normal) {}

  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return cost::WorkerLoop(shape.field_elements[2], 1,
                            normal_ ? kRngNormalCyclesPerElement : kRngUniformCyclesPerElement);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    if (io.tile_state == nullptr) return MakeError("{}: no tile state (PRNG)", name());
    std::array<uint64_t, 2>& state = io.tile_state->prng;
    if (state[0] == 0 && state[1] == 0) {
      return MakeError("{}: the tile's PRNG was never seeded (no SetSeed vertex ran)", name());
    }
    const uint64_t count = Count(io, 2);
    return numeric::Dispatch(type_, [&](auto tag) -> Status {
      constexpr ElementType kType = decltype(tag)::value;
      using C = typename numeric::Traits<kType>::Compute;
      const C a = numeric::Get<kType>(io.fields[0], 0), b = numeric::Get<kType>(io.fields[1], 0);
      if constexpr (numeric::kIsFloat<C>) {
        for (uint64_t i = 0; i < count; ++i) {
          C value{};
          if (normal_) {
            // Box-Muller; 1 - u is in (0, 1], so the logarithm is finite.
            const double u = 1.0 - Unit(state), v = Unit(state);
            const double z = std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
            value = static_cast<C>(static_cast<double>(a) + static_cast<double>(b) * z);
          } else {
            // Rounding to the element type can reach b, which [a, b)
            // excludes: such a draw is redrawn (unbiased, and rare).
            do {
              value =
                  static_cast<C>(static_cast<double>(a) +
                                 (static_cast<double>(b) - static_cast<double>(a)) * Unit(state));
              numeric::Put<kType>(io.fields[2], i, value);
            } while (b > a && numeric::Get<kType>(io.fields[2], i) >= b);
            continue;
          }
          numeric::Put<kType>(io.fields[2], i, value);
        }
        return {};
      } else if constexpr (numeric::kIsInt<C>) {
        if (normal_) return MakeError("{}: a normal distribution of integers", name());
        for (uint64_t i = 0; i < count; ++i) {
          C value = a;
          if (b > a) {
            const auto range =
                static_cast<uint64_t>(static_cast<__int128>(b) - static_cast<__int128>(a));
            value = static_cast<C>(static_cast<__int128>(a) +
                                   static_cast<__int128>(Next(state) % range));
          }
          numeric::Put<kType>(io.fields[2], i, value);
        }
        return {};
      } else {
        return MakeError("{}: random pred", name());
      }
    });
  }

 private:
  ElementType type_;
  bool normal_;
};

}  // namespace

std::string RngCodeletName(ElementType type, bool normal) {
  return fmt::format("tileprof::{}<{}>", normal ? "RngNormal" : "RngUniform", PoplarName(type));
}

Expected<std::unique_ptr<Codelet>> MakeRngCodelet(ElementType type, bool normal) {
  if (type == ElementType::kPred) return MakeError("rng of pred");
  const bool is_float = type == ElementType::kF16 || type == ElementType::kBF16 ||
                        type == ElementType::kF32 || type == ElementType::kF64;
  if (normal && !is_float) return MakeError("RNG_NORMAL of {}", HloName(type));
  return std::unique_ptr<Codelet>(new RngCodelet(type, normal));
}

}  // namespace tileprof::engine
