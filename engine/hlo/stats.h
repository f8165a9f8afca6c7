// Summary numbers of a module for `tileprof hlo stats`: sizes, the opcode
// histogram, the entry signature and estimated FLOPs of dots and
// convolutions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/hlo/module.h"
#include "engine/hlo/peak_live.h"

namespace tileprof::hlo {

struct ModuleStats {
  std::string name;
  int64_t computations = 0;
  int64_t instructions = 0;
  // Opcode -> instructions, most frequent first, ties by name.
  std::vector<std::pair<std::string, int64_t>> opcodes;
  struct Parameter {
    int64_t number = 0;
    std::string name;
    std::string shape;
  };
  std::string entry;
  std::vector<Parameter> parameters;  // of the entry, by number
  std::string result;                 // the entry root's shape
  int64_t elided_constants = 0;       // constant({...}): values unknown
  // Multiply-adds count as 2 FLOPs. Each instruction counts once: calls
  // and loop bodies are not multiplied by how often they run.
  int64_t dots = 0;
  int64_t convolutions = 0;
  int64_t dot_flops = 0;
  int64_t convolution_flops = 0;
  // Dots and convolutions whose FLOPs could not be estimated (dynamic
  // dimensions, missing dim_labels, overflow).
  int64_t unestimated = 0;
  // The peak-live bound (peak_live.h).
  PeakLive peak_live;
};

ModuleStats ComputeStats(const Module& module);

// 2 x output elements x contracted elements per output, for a dot or a
// convolution; nullopt for other opcodes or when it cannot be computed.
//   dot:         2 * |result| * prod(lhs contracting dimension sizes)
//   convolution: 2 * |result| * prod(kernel spatial sizes) * kernel input features
std::optional<int64_t> EstimateFlops(const Instruction& instruction);

// The floating-point operations of one execution of an instruction, for
// the report's operations: dots and convolutions as EstimateFlops;
// floating-point elementwise arithmetic (compare and transcendentals
// included) one per output element, clamp two; reduce one reducer
// application per input element beyond the first of each output,
// reduce-window one per output and window
// element beyond the first, map one application per element, a fusion the
// sum of its body; data movement (copies, slices, gathers, converts,
// selects, ...) 0. Integer arithmetic is 0. nullopt for loops, calls,
// conditionals, sorts, scatters, custom calls and anything unknown.
std::optional<int64_t> EstimateOperationFlops(const Instruction& instruction);

}  // namespace tileprof::hlo
