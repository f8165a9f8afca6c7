// Normalisation levels and canonical orders (../shared/spec/hlo-text.md
// section 8.3). Each level removes one more kind of run-to-run noise; the
// lowest level at which two modules print the same says what kind of
// difference separates them:
//
//   0  as parsed: names, attribute text, literals and order as written
//   1  cosmetic: one print style, whitespace, comments, '%' and operand
//      shapes gone; attribute values re-spelled from their tokens,
//      attributes in a fixed order, literals in canonical decimal form
//   2  names and metadata: metadata=, origin= (also inside sharding) and the
//      stack-frame tables dropped; ".N" suffixes stripped from module,
//      computation and instruction names (re-uniquified in print order)
//   3  structure: instructions renamed tmp_N by position, computations comp_N,
//      module name dropped; computations in call-graph post-order from the
//      entry (unreachable ones first, by content), instructions of unscheduled
//      computations in operand post-order from the root (parameters first,
//      dead code by content)
//   4  config: backend_config=, infeed_config=, outfeed_config= dropped and
//      floating-point constants printed as {...} (XLA's fingerprint mode)
//   5  signature: only the entry computation's program shape
//
// The fingerprint (fingerprint.h) hashes level 3.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/hlo/module.h"

namespace tileprof::hlo {

inline constexpr int kLevelRaw = 0;
inline constexpr int kLevelCosmetic = 1;
inline constexpr int kLevelNames = 2;
inline constexpr int kLevelStructure = 3;
inline constexpr int kLevelConfig = 4;
inline constexpr int kLevelSignature = 5;
inline constexpr int kMaxLevel = 5;

// "add.12" -> "add", "jit__uniform.21" -> "jit__uniform"; names without a
// numeric suffix (or that are only one, ".5") are returned unchanged.
std::string_view StripNumericSuffix(std::string_view name);

// Whether an instruction attribute is printed at `level`.
bool KeepsAttribute(std::string_view name, int level);

// The order attributes print in from level 1 on: opcode-specific attributes
// by name, then called computations by name, then sharding,
// frontend_attributes, control-predecessors, origin, metadata and
// backend_config (XLA's print order for the last six).
std::vector<const Attribute*> CanonicalAttributeOrder(const Instruction& instruction);

// The canonical orders at `level` (level 3 and up: see the header comment):
// computations, and for each computation its instructions, which for an
// unscheduled module are parameters by number, then operand post-order from
// the root, then unreachable instructions ordered by content. One content
// hasher serves the whole module, so callees shared by many computations with
// dead code are hashed once. Below level 3 both are the text order.
struct CanonicalOrders {
  std::vector<const Computation*> computations;
  std::vector<std::vector<const Instruction*>> instructions;  // by computation index
};
CanonicalOrders CanonicalModuleOrders(const Module& module, int level);

}  // namespace tileprof::hlo
