// Canonical orders and level rules; see canonical.h.
#include "engine/hlo/canonical.h"

#include <algorithm>
#include <span>
#include <unordered_map>

#include "engine/hlo/attributes.h"
#include "engine/hlo/literal.h"
#include "engine/hlo/name_table.h"

namespace tileprof::hlo {
namespace {

uint64_t Combine(uint64_t seed, uint64_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
  return seed * 0xff51afd7ed558ccdull;
}

bool IsComputationReference(const Attribute& attribute) {
  return attribute.kind() == AttributeKind::kComputation ||
         attribute.kind() == AttributeKind::kComputationList;
}

int AttributeCategory(const Attribute& attribute) {
  std::string_view name = attribute.name();
  if (IsComputationReference(attribute)) return 1;
  if (name == "sharding") return 2;
  if (name == "frontend_attributes") return 3;
  if (name == "control-predecessors") return 4;
  if (name == "origin") return 5;
  if (name == "metadata") return 6;
  if (name == "backend_config") return 7;
  return 0;
}

// Content hashes that ignore names, used only to order what the graph
// leaves unordered (dead instructions, unreachable computations). Operands
// precede their users in the text, so one pass in text order hashes a
// computation; callees are hashed first, without recursion.
class ContentHasher {
 public:
  explicit ContentHasher(int level) : level_(level) {}

  uint64_t ComputationHash(const Computation& root) {
    if (auto it = computation_hashes_.find(&root); it != computation_hashes_.end())
      return it->second;
    // Post-order over the call graph (acyclic: the parser checks), so every
    // callee is hashed before its caller without recursion.
    struct Frame {
      const Computation* computation;
      std::vector<const Computation*> callees;
      size_t next;
    };
    auto callees_of = [](const Computation& computation) {
      std::vector<const Computation*> callees;
      for (const Instruction* instruction : computation.instructions())
        for (const Computation* callee : instruction->called_computations())
          callees.push_back(callee);
      return callees;
    };
    std::vector<Frame> stack;
    stack.push_back({&root, callees_of(root), 0});
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next < frame.callees.size()) {
        const Computation* callee = frame.callees[frame.next++];
        if (!computation_hashes_.count(callee)) stack.push_back({callee, callees_of(*callee), 0});
        continue;
      }
      const Computation* done = frame.computation;
      stack.pop_back();
      if (!computation_hashes_.count(done)) computation_hashes_[done] = HashBody(*done);
    }
    return computation_hashes_.at(&root);
  }

  // Hashes of every instruction of `computation` by index.
  const std::vector<uint64_t>& InstructionHashes(const Computation& computation) {
    Memo& memo = MemoOf(computation);
    if (!memo.complete) {
      HashWanted(computation.instructions(), memo);
      memo.complete = true;
    }
    return memo.hashes;
  }

  // The hash of one instruction, computing only what it depends on: dead
  // code is mostly constants, and hashing the live graph around them (with
  // every computation it calls) would cost a print of the module.
  uint64_t InstructionHash(const Instruction& instruction) {
    const Computation& computation = *instruction.parent();
    Memo& memo = MemoOf(computation);
    if (memo.done[instruction.index()]) return memo.hashes[instruction.index()];
    // The operands not hashed yet, transitively; marked done as found (the
    // hashing below fills them in), then hashed in text order.
    std::vector<const Instruction*> wanted = {&instruction};
    memo.done[instruction.index()] = true;
    for (size_t i = 0; i < wanted.size(); ++i)
      for (const Instruction* operand : wanted[i]->operands())
        if (!memo.done[operand->index()]) {
          memo.done[operand->index()] = true;
          wanted.push_back(operand);
        }
    std::sort(wanted.begin(), wanted.end(),
              [](const Instruction* a, const Instruction* b) { return a->index() < b->index(); });
    for (const Instruction* i : wanted) memo.done[i->index()] = false;
    HashWanted(wanted, memo);
    return memo.hashes[instruction.index()];
  }

 private:
  struct Memo {
    std::vector<uint64_t> hashes;  // by instruction index
    std::vector<bool> done;
    bool complete = false;
  };

  Memo& MemoOf(const Computation& computation) {
    Memo& memo = instruction_hashes_[&computation];
    if (memo.done.empty()) {
      memo.hashes.assign(computation.instructions().size(), 0);
      memo.done.assign(computation.instructions().size(), false);
    }
    return memo;
  }

  // Hashes the instructions not hashed yet, given in text order, where
  // operands precede their users (the parser checks).
  void HashWanted(std::span<const Instruction* const> instructions, Memo& memo) {
    std::string scratch;
    for (const Instruction* instruction : instructions) {
      if (memo.done[instruction->index()]) continue;
      // Callees first, by the non-recursive walk of ComputationHash.
      for (const Computation* callee : instruction->called_computations()) ComputationHash(*callee);
      uint64_t h = Combine(static_cast<uint64_t>(instruction->opcode()) + 1,
                           instruction->async_wrapped_opcode()
                               ? static_cast<uint64_t>(*instruction->async_wrapped_opcode()) + 1
                               : 0);
      scratch.clear();
      AppendShape(&scratch, instruction->shape());
      h = Combine(h, HashName(scratch));
      h = Combine(h, static_cast<uint64_t>(instruction->parameter_number() + 1));
      if (!instruction->literal().empty()) {
        Expected<Literal> literal = ParseLiteral(instruction->literal(), instruction->shape());
        scratch = literal ? LiteralToString(*literal, {.elide_floating = level_ >= kLevelConfig})
                          : std::string(instruction->literal());
        h = Combine(h, HashName(scratch));
      }
      for (const Attribute* attribute : CanonicalAttributeOrder(*instruction)) {
        if (!KeepsAttribute(attribute->name(), level_)) continue;
        h = Combine(h, HashName(attribute->name()));
        if (IsComputationReference(*attribute)) {
          for (uint32_t i = 0; i < attribute->count(); ++i)
            h = Combine(
                h, ComputationHash(*instruction->called_computations()[attribute->first() + i]));
        } else if (attribute->kind() == AttributeKind::kRaw) {
          h = Combine(h, HashName(NormalizeAttributeValue(attribute->value())));
        }
      }
      for (const Instruction* operand : instruction->operands())
        h = Combine(h, memo.hashes[operand->index()]);
      memo.hashes[instruction->index()] = h;
      memo.done[instruction->index()] = true;
    }
  }

  uint64_t HashBody(const Computation& computation) {
    // The same bytes in the module it is compared with: its name tells it.
    if (computation.body_skipped()) return HashName(computation.name());
    // The multiset of instruction hashes, so that text order does not count.
    std::vector<uint64_t> hashes = InstructionHashes(computation);
    uint64_t root = hashes[computation.root()->index()];
    std::sort(hashes.begin(), hashes.end());
    uint64_t h = hashes.size();
    for (uint64_t value : hashes) h = Combine(h, value);
    return Combine(h, root);
  }

  int level_;
  std::unordered_map<const Computation*, uint64_t> computation_hashes_;
  std::unordered_map<const Computation*, Memo> instruction_hashes_;
};

}  // namespace

std::string_view StripNumericSuffix(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return name;
  for (size_t i = dot + 1; i < name.size(); ++i)
    if (!IsDigit(name[i])) return name;
  return name.substr(0, dot);
}

bool KeepsAttribute(std::string_view name, int level) {
  if (level >= kLevelNames && (name == "metadata" || name == "origin")) return false;
  if (level >= kLevelConfig &&
      (name == "backend_config" || name == "infeed_config" || name == "outfeed_config"))
    return false;
  return true;
}

std::vector<const Attribute*> CanonicalAttributeOrder(const Instruction& instruction) {
  std::vector<const Attribute*> order;
  order.reserve(instruction.attributes().size());
  for (const Attribute& attribute : instruction.attributes()) order.push_back(&attribute);
  std::stable_sort(order.begin(), order.end(), [](const Attribute* a, const Attribute* b) {
    int ca = AttributeCategory(*a), cb = AttributeCategory(*b);
    if (ca != cb) return ca < cb;
    return ca <= 1 && a->name() < b->name();
  });
  return order;
}

namespace {

std::vector<const Instruction*> InstructionOrder(const Computation& computation, bool scheduled,
                                                 int level, ContentHasher& hasher) {
  const auto instructions = computation.instructions();
  std::vector<const Instruction*> order;
  order.reserve(instructions.size());
  if (scheduled || level < kLevelStructure) {
    order.assign(instructions.begin(), instructions.end());
    return order;
  }
  std::vector<bool> visited(instructions.size(), false);
  for (const Instruction* parameter : computation.parameters()) {
    visited[parameter->index()] = true;
    order.push_back(parameter);
  }
  // Iterative post-order over operands, then control predecessors.
  std::vector<std::pair<const Instruction*, size_t>> stack;
  auto visit = [&](const Instruction* start) {
    if (visited[start->index()]) return;
    visited[start->index()] = true;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      auto& [instruction, next] = stack.back();
      size_t operands = instruction->operand_count();
      size_t total = operands + instruction->control_predecessors().size();
      if (next == total) {
        order.push_back(instruction);
        stack.pop_back();
        continue;
      }
      const Instruction* child = next < operands
                                     ? instruction->operand(next)
                                     : instruction->control_predecessors()[next - operands];
      ++next;
      if (!visited[child->index()]) {
        visited[child->index()] = true;
        stack.push_back({child, 0});
      }
    }
  };
  if (computation.root()) visit(computation.root());
  if (order.size() < instructions.size()) {
    // Dead code: order the leftovers by content so that text order does not
    // leak into the canonical form.
    std::vector<std::pair<uint64_t, const Instruction*>> dead;
    for (const Instruction* instruction : instructions)
      if (!visited[instruction->index()])
        dead.push_back({hasher.InstructionHash(*instruction), instruction});
    std::stable_sort(dead.begin(), dead.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [hash, instruction] : dead) visit(instruction);
  }
  return order;
}

// Which computations (by index) the entry computation calls, directly or not.
std::vector<bool> ReachableFromEntry(const Module& module) {
  std::vector<bool> reachable(module.computations().size(), false);
  std::vector<const Computation*> work = {module.entry()};
  reachable[module.entry()->index()] = true;
  while (!work.empty()) {
    const Computation* computation = work.back();
    work.pop_back();
    for (const Instruction* instruction : computation->instructions())
      for (const Computation* callee : instruction->called_computations())
        if (!reachable[callee->index()]) {
          reachable[callee->index()] = true;
          work.push_back(callee);
        }
  }
  return reachable;
}

// Fills orders->computations and, for every computation, its instruction
// order; one content hasher serves them all, so callees shared by many
// computations with dead code are hashed once.
void ComputeOrders(const Module& module, int level, CanonicalOrders* orders) {
  const auto computations = module.computations();
  ContentHasher hasher(level);
  std::vector<const Computation*>& order = orders->computations;
  orders->instructions.assign(computations.size(), {});
  std::vector<bool> ordered(computations.size(), false);
  auto instruction_order =
      [&](const Computation* computation) -> const std::vector<const Instruction*>& {
    if (!ordered[computation->index()]) {
      orders->instructions[computation->index()] =
          InstructionOrder(*computation, module.is_scheduled(), level, hasher);
      ordered[computation->index()] = true;
    }
    return orders->instructions[computation->index()];
  };
  order.reserve(computations.size());
  if (level < kLevelStructure) {
    order.assign(computations.begin(), computations.end());
    for (const Computation* computation : order) instruction_order(computation);
    return;
  }
  std::vector<bool> visited(computations.size(), false);
  // Callees of a computation in canonical order: by canonical instruction
  // order, then canonical attribute order.
  auto callees_of = [&](const Computation* computation) {
    std::vector<const Computation*> callees;
    for (const Instruction* instruction : instruction_order(computation))
      for (const Attribute* attribute : CanonicalAttributeOrder(*instruction))
        if (IsComputationReference(*attribute))
          for (uint32_t i = 0; i < attribute->count(); ++i)
            callees.push_back(instruction->called_computations()[attribute->first() + i]);
    return callees;
  };
  auto visit = [&](const Computation* start) {
    if (visited[start->index()]) return;
    visited[start->index()] = true;
    std::vector<std::pair<const Computation*, std::vector<const Computation*>>> stack;
    stack.push_back({start, callees_of(start)});
    std::vector<size_t> next = {0};
    while (!stack.empty()) {
      auto& callees = stack.back().second;
      if (next.back() == callees.size()) {
        order.push_back(stack.back().first);
        stack.pop_back();
        next.pop_back();
        continue;
      }
      const Computation* callee = callees[next.back()++];
      if (!visited[callee->index()]) {
        visited[callee->index()] = true;
        stack.push_back({callee, callees_of(callee)});
        next.push_back(0);
      }
    }
  };
  // Which computations the entry reaches, to find the unreachable ones.
  const std::vector<bool> reachable = ReachableFromEntry(module);
  std::vector<const Computation*> unreachable;
  for (const Computation* computation : computations)
    if (!reachable[computation->index()]) unreachable.push_back(computation);
  if (!unreachable.empty()) {
    std::vector<std::pair<uint64_t, const Computation*>> keyed;
    for (const Computation* computation : unreachable)
      keyed.push_back({hasher.ComputationHash(*computation), computation});
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [hash, computation] : keyed) visit(computation);
  }
  visit(module.entry());
  for (const Computation* computation : order) instruction_order(computation);
}

}  // namespace

CanonicalOrders CanonicalModuleOrders(const Module& module, int level) {
  CanonicalOrders orders;
  ComputeOrders(module, level, &orders);
  return orders;
}

}  // namespace tileprof::hlo
