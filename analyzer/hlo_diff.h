// Structural diff of two HLO modules: why would one recompile where the
// other was cached? The two graphs are aligned instruction by instruction
// (parameters by number, roots, operand edges, user edges, then names and
// op_names), not line by line, so renumbering and reordering never show up as
// changes. Differences are then sorted into root causes (a parameter shape, a
// constant, an attribute, an opcode, an edge, an added or removed
// instruction) and the fallout they cause downstream (instructions whose
// shape changed only because an operand's did), which is folded into a count.
// See ../shared/spec/hlo-text.md sections 8 and 11.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/hlo/module.h"

namespace tileprof::analyzer {

enum class ChangeKind {
  kSignature,       // module-level: entry_computation_layout, replica_count, ...
  kParameter,       // an entry parameter's shape
  kResult,          // the entry result's shape, when no parameter explains it
  kConstant,        // a constant's printed value
  kElidedConstant,  // constant({...}) on both sides: the text cannot tell
  kAttribute,       // an attribute value (dimensions=, backend_config=, ...)
  kOpcode,
  kOperands,     // an operand edge points elsewhere
  kShape,        // a shape change no operand explains
  kAdded,        // in B only
  kRemoved,      // in A only
  kComputation,  // a whole computation in one module only
};

std::string_view ChangeKindName(ChangeKind kind);

struct Change {
  ChangeKind kind;
  std::string computation;  // where, named as in B (A for removals)
  std::string instruction;  // the instruction's name in B (A for removals), or ""
  std::string opcode;
  std::string what;     // "f32[32,784] -> f32[16,784]", "dimensions: {1} -> {0}", ...
  std::string detail;   // "batch dimension 32 -> 16", "derived from the shape", ...
  std::string op_name;  // metadata op_name, B's if present else A's
  std::string source;   // "file:line" from metadata, or ""
  std::vector<std::string> dependents;  // names of the folded downstream changes
  // Where the first folded dependent with a source location came from: for
  // a parameter, the first user code that sees the new shape.
  std::string dependent_op_name, dependent_source;
};

struct ModuleDiff {
  // The lowest normalisation level (canonical.h) at which the modules print
  // the same: 0 identical text, 1 cosmetic, 2 names and metadata, 3 order
  // and numbering, 4 backend_config and float constants, 5 signature only;
  // nullopt when even the signatures differ.
  std::optional<int> equal_level;
  std::vector<Change> causes;         // root causes, in graph order
  int dependent_changes = 0;          // folded into causes[].dependents
  bool has_elided_constants = false;  // some constant({...}) could hide a change
  int matched = 0;                    // aligned instruction pairs
  std::vector<std::string> notes;
  // The modules were parsed with bodies left out (ParseOptions::skip_bodies)
  // and the alignment paired a left-out body with anything but its namesake:
  // nothing else is filled in, and the verdict needs both parsed in full.
  bool needs_full_parse = false;

  bool equal() const { return equal_level && *equal_level <= 3; }
};

// The lowest level at which `a` and `b` print the same, or nullopt.
std::optional<int> EqualLevel(const hlo::Module& a, const hlo::Module& b);

ModuleDiff DiffModules(const hlo::Module& a, const hlo::Module& b);

// One line for the level: "identical text", "cosmetic (print style, ...)", ...
std::string DescribeLevel(std::optional<int> level);

}  // namespace tileprof::analyzer
