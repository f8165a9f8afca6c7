// Made-up values for the constants an HLO dump elides ("{...}"), for a run
// that asks for them (`tileprof run --elided-constants=zeros|random`).
// Without them a module that reads such a constant cannot run: the
// simulator refuses it by name (the default, kError).
//
// The fill is made when the run starts, not when the module compiles: the
// compiled program is the same whatever the choice (an elided constant is a
// variable the program never writes), so the executable cache holds one
// executable per module and a cache hit fills exactly as a fresh compile.
//
//   ElidedFill fill = FillElidedConstants(compiled.result, ElidedConstants::kRandom, seed);
//   for (const std::string& warning : fill.warnings) log.Warning("run_module.cc", warning);
//   auto sim = sim::Simulator::Create(compiled.result, {.filled_constants = &fill.values});
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/compiler/compiler.h"
#include "engine/sim/simulator.h"

namespace tileprof::engine {

enum class ElidedConstants : uint8_t {
  kError,   // leave them unknown: a run that reads one is refused
  kZeros,   // every element 0
  kRandom,  // RandomElements from the run's seed and the constant's name
};

// "error", "zeros", "random".
std::string_view ElidedConstantsName(ElidedConstants mode);
std::optional<ElidedConstants> ParseElidedConstants(std::string_view text);

struct ElidedFill {
  sim::FilledConstants values;  // empty for kError
  // One per filled constant, by name in graph order: what it is and what it
  // was filled with ("constant 'w' f32[2,3] is elided ({...}) in the HLO
  // text: filled with zeros (--elided-constants=zeros)").
  std::vector<std::string> warnings;
};

// Values for every constant of `compiled` whose values the HLO text elides
// and whose type the engine computes on (CompileResult::elided_constants).
// Floats are uniform in [-1, 1), integers in [0, 10), pred 0 or 1, as
// --inputs random; the values depend on `seed` and the constant's name only,
// so a constant lowered once per call of its computation gets the same
// values each time. Constants of other types, and tuple constants with
// values, are never filled. `compiled` must have its graph.
ElidedFill FillElidedConstants(const compiler::CompileResult& compiled, ElidedConstants mode,
                               uint64_t seed);

}  // namespace tileprof::engine
