#include "analyzer/hlo_align.h"

#include <algorithm>
#include <deque>
#include <map>
#include <string>

#include <fmt/format.h>

#include "engine/hlo/attributes.h"
#include "engine/hlo/canonical.h"
#include "engine/hlo/shape.h"

namespace tileprof::analyzer {
namespace {

using hlo::Computation;
using hlo::Instruction;

std::string OpName(const Instruction* i) {
  const hlo::Attribute* attr = i->FindAttribute("metadata");
  if (!attr) return "";
  auto metadata = hlo::ParseMetadata(attr->value());
  return metadata ? metadata->op_name : "";
}

class Aligner {
 public:
  Aligner(const hlo::Module& a, const hlo::Module& b) : a_(a), b_(b) {
    out_.a_to_b = InstructionPairs(a);
    out_.b_to_a = InstructionPairs(b);
    out_.comp_a_to_b = ComputationPairs(a);
    out_.comp_b_to_a = ComputationPairs(b);
  }

  Alignment Run() {
    if (a_.entry() && b_.entry()) PairComputations(a_.entry(), b_.entry());
    Drain();
    // Computations no call site paired: by name without the ".N" suffix.
    std::multimap<std::string_view, const Computation*> by_name;
    for (const Computation* c : b_.computations())
      if (!out_.comp_b_to_a.Has(c)) by_name.emplace(hlo::StripNumericSuffix(c->name()), c);
    for (const Computation* c : a_.computations()) {
      if (out_.comp_a_to_b.Has(c)) continue;
      auto [lo, hi] = by_name.equal_range(hlo::StripNumericSuffix(c->name()));
      for (auto it = lo; it != hi; ++it) {
        if (!out_.comp_b_to_a.Has(it->second)) {
          PairComputations(c, it->second);
          break;
        }
      }
    }
    Drain();
    // Renamed computations nothing calls: by their sequence of opcodes.
    auto signature = [](const Computation* c) {
      std::string key;
      for (const Instruction* i : c->instructions())
        key.append(hlo::OpcodeName(i->opcode())).append(",");
      return key;
    };
    std::map<std::string, std::deque<const Computation*>> left_b;
    for (const Computation* c : b_.computations())
      if (!out_.comp_b_to_a.Has(c)) left_b[signature(c)].push_back(c);
    for (const Computation* c : a_.computations()) {
      if (out_.comp_a_to_b.Has(c)) continue;
      auto& queue = left_b[signature(c)];
      while (!queue.empty() && out_.comp_b_to_a.Has(queue.front())) queue.pop_front();
      if (queue.empty()) continue;
      PairComputations(c, queue.front());
      queue.pop_front();
      Drain();
    }
    return std::move(out_);
  }

 private:
  void PairComputations(const Computation* ca, const Computation* cb) {
    out_.comp_a_to_b.Set(ca, cb);
    out_.comp_b_to_a.Set(cb, ca);
    out_.computations.emplace_back(ca, cb);
    pending_.emplace_back(ca, cb);
  }

  void Drain() {
    while (!pending_.empty()) {
      auto [ca, cb] = pending_.front();
      pending_.pop_front();
      AlignComputation(*ca, *cb);
    }
  }

  bool MatchedA(const Instruction* x) const { return out_.a_to_b.Has(x); }
  bool MatchedB(const Instruction* y) const { return out_.b_to_a.Has(y); }

  void Match(const Instruction* x, const Instruction* y) {
    out_.a_to_b.Set(x, y);
    out_.b_to_a.Set(y, x);
    work_.emplace_back(x, y);
    // Calls pair their computations positionally (to_apply, body, branches).
    auto ca = x->called_computations();
    auto cb = y->called_computations();
    for (size_t i = 0; i < std::min(ca.size(), cb.size()); ++i) {
      if (!out_.comp_a_to_b.Has(ca[i]) && !out_.comp_b_to_a.Has(cb[i]))
        PairComputations(ca[i], cb[i]);
    }
  }

  // By instruction index: (user, operand slot).
  using Users = std::vector<std::vector<std::pair<const Instruction*, size_t>>>;

  static Users UsersOf(const Computation& c) {
    Users users(c.instructions().size());
    for (const Instruction* i : c.instructions())
      for (size_t k = 0; k < i->operand_count(); ++k)
        users[i->operand(k)->index()].emplace_back(i, k);
    return users;
  }

  // Unmatched users keyed by (opcode, slot), sorted by key, in user order
  // within a key.
  using Keyed = std::vector<std::pair<std::pair<int, size_t>, const Instruction*>>;
  template <typename MatchedFn>
  static void KeyUsers(const std::vector<std::pair<const Instruction*, size_t>>& users,
                       MatchedFn matched, Keyed& keyed) {
    keyed.clear();
    for (auto [u, k] : users)
      if (!matched(u)) keyed.push_back({{static_cast<int>(u->opcode()), k}, u});
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& l, const auto& r) { return l.first < r.first; });
  }

  // Follows operand and user edges from matched pairs. With `relaxed`,
  // operands in the same slot pair even when their opcodes differ.
  void Propagate(const Users& users_a, const Users& users_b, bool relaxed) {
    while (!work_.empty()) {
      auto [x, y] = work_.front();
      work_.pop_front();
      if (x->operand_count() == y->operand_count()) {
        for (size_t k = 0; k < x->operand_count(); ++k) {
          const Instruction* ox = x->operand(k);
          const Instruction* oy = y->operand(k);
          if (MatchedA(ox) || MatchedB(oy)) continue;
          if (relaxed || ox->opcode() == oy->opcode()) Match(ox, oy);
        }
      }
      // Users: pair when exactly one unmatched user of each side has the
      // same opcode and uses the pair in the same operand slot.
      const auto& ua = users_a[x->index()];
      const auto& ub = users_b[y->index()];
      if (ua.empty() || ub.empty()) continue;
      KeyUsers(
          ua, [&](const Instruction* u) { return MatchedA(u); }, keyed_a_);
      KeyUsers(
          ub, [&](const Instruction* u) { return MatchedB(u); }, keyed_b_);
      // Keys held by exactly one user on each side, walked in key order.
      size_t j = 0;
      for (size_t i = 0; i < keyed_a_.size();) {
        size_t i_end = i + 1;
        while (i_end < keyed_a_.size() && keyed_a_[i_end].first == keyed_a_[i].first) ++i_end;
        while (j < keyed_b_.size() && keyed_b_[j].first < keyed_a_[i].first) ++j;
        size_t j_end = j;
        while (j_end < keyed_b_.size() && keyed_b_[j_end].first == keyed_a_[i].first) ++j_end;
        const Instruction* u = keyed_a_[i].second;
        if (i_end - i == 1 && j_end - j == 1 && !MatchedA(u) && !MatchedB(keyed_b_[j].second))
          Match(u, keyed_b_[j].second);
        i = i_end;
        j = j_end;
      }
    }
  }

  template <typename KeyFn>
  void PairLeftovers(const Computation& ca, const Computation& cb, KeyFn key) {
    std::multimap<std::string, const Instruction*> left_b;
    for (const Instruction* y : cb.instructions())
      if (!MatchedB(y)) {
        std::string k = key(y);
        if (!k.empty()) left_b.emplace(std::move(k), y);
      }
    if (left_b.empty()) return;
    std::map<std::string, int> count_a;
    for (const Instruction* x : ca.instructions())
      if (!MatchedA(x)) ++count_a[key(x)];
    for (const Instruction* x : ca.instructions()) {
      if (MatchedA(x)) continue;
      std::string k = key(x);
      if (k.empty() || count_a[k] != 1 || left_b.count(k) != 1) continue;
      const Instruction* y = left_b.find(k)->second;
      if (!MatchedB(y)) Match(x, y);
    }
  }

  // Pairs unmatched instructions with equal keys in order of appearance; for
  // interchangeable ones (identical dead constants) any order is right.
  template <typename KeyFn>
  void PairLeftoversInOrder(const Computation& ca, const Computation& cb, KeyFn key) {
    std::map<std::string, std::deque<const Instruction*>> left_b;
    for (const Instruction* y : cb.instructions())
      if (!MatchedB(y)) {
        std::string k = key(y);
        if (!k.empty()) left_b[k].push_back(y);
      }
    if (left_b.empty()) return;
    for (const Instruction* x : ca.instructions()) {
      if (MatchedA(x)) continue;
      std::string k = key(x);
      if (k.empty()) continue;
      auto it = left_b.find(k);
      while (it != left_b.end() && !it->second.empty() && MatchedB(it->second.front()))
        it->second.pop_front();
      if (it == left_b.end() || it->second.empty()) continue;
      Match(x, it->second.front());
      it->second.pop_front();
    }
  }

  void AlignComputation(const Computation& ca, const Computation& cb) {
    Users users_a = UsersOf(ca), users_b = UsersOf(cb);
    auto pa = ca.parameters();
    auto pb = cb.parameters();
    for (size_t n = 0; n < std::min(pa.size(), pb.size()); ++n)
      if (pa[n] && pb[n] && !MatchedA(pa[n]) && !MatchedB(pb[n])) Match(pa[n], pb[n]);
    if (ca.root() && cb.root() && !MatchedA(ca.root()) && !MatchedB(cb.root()))
      Match(ca.root(), cb.root());
    Propagate(users_a, users_b, false);
    auto same_name = [](const Instruction* i) {
      return std::string(hlo::OpcodeName(i->opcode())) + " " + std::string(i->name());
    };
    PairLeftovers(ca, cb, same_name);
    Propagate(users_a, users_b, false);
    auto stripped_name = [](const Instruction* i) {
      return std::string(hlo::OpcodeName(i->opcode())) + " " +
             std::string(hlo::StripNumericSuffix(i->name()));
    };
    PairLeftovers(ca, cb, stripped_name);
    Propagate(users_a, users_b, false);
    auto op_name = [](const Instruction* i) {
      std::string name = OpName(i);
      return name.empty() ? name : std::string(hlo::OpcodeName(i->opcode())) + " " + name;
    };
    PairLeftovers(ca, cb, op_name);
    Propagate(users_a, users_b, false);
    // Instructions nothing reaches (dead constants JAX leaves behind) and
    // renamed ones without metadata: by content, when it is unique.
    auto content = [](const Instruction* i) {
      std::string key = std::string(hlo::OpcodeName(i->opcode())) + " " +
                        hlo::ShapeToString(i->shape()) + " " + std::string(i->literal());
      for (const hlo::Attribute& attr : i->attributes())
        if (attr.kind() == hlo::AttributeKind::kRaw && attr.name() != "metadata")
          key.append(" ").append(attr.name()).append("=").append(attr.value());
      return key;
    };
    PairLeftovers(ca, cb, content);
    Propagate(users_a, users_b, false);
    auto leaf_content = [&](const Instruction* i) {
      return i->operand_count() == 0 ? content(i) : std::string();
    };
    PairLeftoversInOrder(ca, cb, leaf_content);
    Propagate(users_a, users_b, false);
    // Dead chains above those leaves: content plus already-paired operands,
    // a layer per round.
    auto with_operands = [&](const Instruction* i) {
      std::string key = content(i);
      for (const Instruction* o : i->operands()) {
        const Instruction* in_b = o;
        if (i->parent() == &ca) {
          in_b = out_.a_to_b.Find(o);
          if (!in_b) return std::string();
        } else if (!out_.b_to_a.Has(o)) {
          return std::string();
        }
        key += fmt::format(" {}", static_cast<const void*>(in_b));
      }
      return key;
    };
    for (size_t before = out_.a_to_b.size(), round = 0; round < 64; ++round) {
      PairLeftoversInOrder(ca, cb, with_operands);
      Propagate(users_a, users_b, false);
      if (out_.a_to_b.size() == before) break;
      before = out_.a_to_b.size();
    }
    // Last: whatever sits in the same operand slot of a matched pair, even
    // with another opcode (an add that became a subtract).
    for (const Instruction* x : ca.instructions())
      if (MatchedA(x)) work_.emplace_back(x, out_.a_to_b.Find(x));
    Propagate(users_a, users_b, true);
  }

  const hlo::Module& a_;
  const hlo::Module& b_;
  Alignment out_;
  std::deque<std::pair<const Computation*, const Computation*>> pending_;
  std::deque<std::pair<const Instruction*, const Instruction*>> work_;
  Keyed keyed_a_, keyed_b_;  // scratch of Propagate
};

}  // namespace

InstructionPairs::InstructionPairs(const hlo::Module& from) {
  offsets_.reserve(from.computations().size());
  size_t total = 0;
  for (const Computation* c : from.computations()) {
    offsets_.push_back(total);
    total += c->instructions().size();
  }
  to_.assign(total, nullptr);
}

void InstructionPairs::Set(const Instruction* x, const Instruction* y) {
  const Instruction*& slot = to_[Slot(x)];
  if (!slot) ++size_;
  slot = y;
}

Alignment Align(const hlo::Module& a, const hlo::Module& b) { return Aligner(a, b).Run(); }

}  // namespace tileprof::analyzer
