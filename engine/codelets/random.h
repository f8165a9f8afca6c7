// Random numbers from the tile's PRNG state (TileState::prng, seeded by the
// SetSeed vertices), created on demand by the HLO compiler for rng:
//
//   tileprof::RngUniform<T>  a, b (scalars), out: XLA's RNG_UNIFORM,
//                            uniform in [a, b) (integers: a + x mod (b - a);
//                            b <= a gives a).
//   tileprof::RngNormal<T>   a (mean), b (standard deviation), out:
//                            RNG_NORMAL by the Box-Muller transform.
//
// The generator is xoroshiro128+ on the two state words; a vertex draws its
// elements in order, and the simulator runs a tile's vertices in program
// order, so results depend on the seed and the mapping only, never on the
// simulator's thread count. The values are tileprof's own: XLA leaves rng's
// algorithm to the implementation.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

// Code bytes: the generator step (a few 64-bit shifts and xors on 32-bit
// registers) and the scaling, 160 B; the normal variant adds the logarithm,
// square root and cosine calls, 384 B.
inline constexpr uint32_t kRngUniformCodeBytes = 160;
inline constexpr uint32_t kRngNormalCodeBytes = 384;
// Worker cycles per element: the generator step on 32-bit halves (~8) and
// the conversion and scaling (4); Box-Muller adds a log, a sqrt and a cos
// per element (~40, the transcendental costs of the cost model's kComplex
// class for f32 are of this order).
inline constexpr uint64_t kRngUniformCyclesPerElement = 12;
inline constexpr uint64_t kRngNormalCyclesPerElement = 52;

std::string RngCodeletName(ElementType type, bool normal);
// Errors: pred or a type without arithmetic; normal of an integer type.
Expected<std::unique_ptr<Codelet>> MakeRngCodelet(ElementType type, bool normal);

}  // namespace tileprof::engine
