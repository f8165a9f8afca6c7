// Aligns the instructions and computations of two HLO modules structurally:
// entry with entry, parameters by number, roots, then along operand and user
// edges; what structure leaves open is paired by name and then by op_name.
// Internal to hlo_diff.cc; visible for testing.
#pragma once

#include <utility>
#include <vector>

#include "engine/hlo/module.h"

namespace tileprof::analyzer {

// Instructions or computations of one module -> their partners in the other,
// stored by position: the aligner and the differ look a partner up for every
// edge of two 10,000-instruction graphs, where hash maps cost as much as
// parsing. Look-ups take only members of the module given at construction.
class InstructionPairs {
 public:
  InstructionPairs() = default;
  explicit InstructionPairs(const hlo::Module& from);
  const hlo::Instruction* Find(const hlo::Instruction* x) const { return to_[Slot(x)]; }
  bool Has(const hlo::Instruction* x) const { return Find(x) != nullptr; }
  void Set(const hlo::Instruction* x, const hlo::Instruction* y);
  size_t size() const { return size_; }

 private:
  size_t Slot(const hlo::Instruction* x) const {
    return offsets_[x->parent()->index()] + x->index();
  }
  std::vector<size_t> offsets_;  // by computation index
  std::vector<const hlo::Instruction*> to_;
  size_t size_ = 0;
};

class ComputationPairs {
 public:
  ComputationPairs() = default;
  explicit ComputationPairs(const hlo::Module& from) : to_(from.computations().size(), nullptr) {}
  const hlo::Computation* Find(const hlo::Computation* c) const { return to_[c->index()]; }
  bool Has(const hlo::Computation* c) const { return Find(c) != nullptr; }
  void Set(const hlo::Computation* c, const hlo::Computation* d) { to_[c->index()] = d; }

 private:
  std::vector<const hlo::Computation*> to_;
};

struct Alignment {
  InstructionPairs a_to_b, b_to_a;
  ComputationPairs comp_a_to_b, comp_b_to_a;
  // Paired computations, entry first, in the order they were paired.
  std::vector<std::pair<const hlo::Computation*, const hlo::Computation*>> computations;
};

Alignment Align(const hlo::Module& a, const hlo::Module& b);

}  // namespace tileprof::analyzer
