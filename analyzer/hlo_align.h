// Aligns the instructions and computations of two HLO modules structurally:
// entry with entry, parameters by number, roots, then along operand and user
// edges; what structure leaves open is paired by name and then by op_name.
// Internal to hlo_diff.cc; visible for testing.
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/hlo/module.h"

namespace tileprof::analyzer {

struct Alignment {
  std::unordered_map<const hlo::Instruction*, const hlo::Instruction*> a_to_b, b_to_a;
  std::unordered_map<const hlo::Computation*, const hlo::Computation*> comp_a_to_b, comp_b_to_a;
  // Paired computations, entry first, in the order they were paired.
  std::vector<std::pair<const hlo::Computation*, const hlo::Computation*>> computations;
};

Alignment Align(const hlo::Module& a, const hlo::Module& b);

}  // namespace tileprof::analyzer
