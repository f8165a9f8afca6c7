#include "analyzer/hlo_align.h"

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
  Aligner(const hlo::Module& a, const hlo::Module& b) : a_(a), b_(b) {}

  Alignment Run() {
    if (a_.entry() && b_.entry()) PairComputations(a_.entry(), b_.entry());
    Drain();
    // Computations no call site paired: by name without the ".N" suffix.
    std::multimap<std::string_view, const Computation*> by_name;
    for (const Computation* c : b_.computations())
      if (!out_.comp_b_to_a.count(c)) by_name.emplace(hlo::StripNumericSuffix(c->name()), c);
    for (const Computation* c : a_.computations()) {
      if (out_.comp_a_to_b.count(c)) continue;
      auto [lo, hi] = by_name.equal_range(hlo::StripNumericSuffix(c->name()));
      for (auto it = lo; it != hi; ++it) {
        if (!out_.comp_b_to_a.count(it->second)) {
          PairComputations(c, it->second);
          break;
        }
      }
    }
    Drain();
    // Renamed computations nothing calls: by their sequence of opcodes.
    auto signature = [](const Computation* c) {
      std::string key;
      for (const Instruction* i : c->instructions()) key.append(hlo::OpcodeName(i->opcode())).append(",");
      return key;
    };
    std::map<std::string, std::deque<const Computation*>> left_b;
    for (const Computation* c : b_.computations())
      if (!out_.comp_b_to_a.count(c)) left_b[signature(c)].push_back(c);
    for (const Computation* c : a_.computations()) {
      if (out_.comp_a_to_b.count(c)) continue;
      auto& queue = left_b[signature(c)];
      while (!queue.empty() && out_.comp_b_to_a.count(queue.front())) queue.pop_front();
      if (queue.empty()) continue;
      PairComputations(c, queue.front());
      queue.pop_front();
      Drain();
    }
    return std::move(out_);
  }

 private:
  void PairComputations(const Computation* ca, const Computation* cb) {
    out_.comp_a_to_b[ca] = cb;
    out_.comp_b_to_a[cb] = ca;
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

  bool Matched(const Instruction* x) const {
    return out_.a_to_b.count(x) || out_.b_to_a.count(x);
  }

  void Match(const Instruction* x, const Instruction* y) {
    out_.a_to_b[x] = y;
    out_.b_to_a[y] = x;
    work_.emplace_back(x, y);
    // Calls pair their computations positionally (to_apply, body, branches).
    auto ca = x->called_computations();
    auto cb = y->called_computations();
    for (size_t i = 0; i < std::min(ca.size(), cb.size()); ++i) {
      if (!out_.comp_a_to_b.count(ca[i]) && !out_.comp_b_to_a.count(cb[i]))
        PairComputations(ca[i], cb[i]);
    }
  }

  using Users = std::unordered_map<const Instruction*, std::vector<std::pair<const Instruction*, size_t>>>;

  static Users UsersOf(const Computation& c) {
    Users users;
    for (const Instruction* i : c.instructions())
      for (size_t k = 0; k < i->operand_count(); ++k) users[i->operand(k)].emplace_back(i, k);
    return users;
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
          if (Matched(ox) || Matched(oy)) continue;
          if (relaxed || ox->opcode() == oy->opcode()) Match(ox, oy);
        }
      }
      // Users: pair when exactly one unmatched user of each side has the
      // same opcode and uses the pair in the same operand slot.
      auto ua = users_a.find(x);
      auto ub = users_b.find(y);
      if (ua == users_a.end() || ub == users_b.end()) continue;
      std::map<std::pair<int, size_t>, std::vector<const Instruction*>> ka, kb;
      for (auto [u, k] : ua->second)
        if (!Matched(u)) ka[{static_cast<int>(u->opcode()), k}].push_back(u);
      for (auto [u, k] : ub->second)
        if (!Matched(u)) kb[{static_cast<int>(u->opcode()), k}].push_back(u);
      for (auto& [key, list] : ka) {
        auto it = kb.find(key);
        if (it != kb.end() && list.size() == 1 && it->second.size() == 1 && !Matched(list[0]) &&
            !Matched(it->second[0]))
          Match(list[0], it->second[0]);
      }
    }
  }

  template <typename KeyFn>
  void PairLeftovers(const Computation& ca, const Computation& cb, KeyFn key) {
    std::multimap<std::string, const Instruction*> left_b;
    for (const Instruction* y : cb.instructions())
      if (!Matched(y)) {
        std::string k = key(y);
        if (!k.empty()) left_b.emplace(std::move(k), y);
      }
    std::map<std::string, int> count_a;
    for (const Instruction* x : ca.instructions())
      if (!Matched(x)) ++count_a[key(x)];
    for (const Instruction* x : ca.instructions()) {
      if (Matched(x)) continue;
      std::string k = key(x);
      if (k.empty() || count_a[k] != 1 || left_b.count(k) != 1) continue;
      const Instruction* y = left_b.find(k)->second;
      if (!Matched(y)) Match(x, y);
    }
  }

  // Pairs unmatched instructions with equal keys in order of appearance; for
  // interchangeable ones (identical dead constants) any order is right.
  template <typename KeyFn>
  void PairLeftoversInOrder(const Computation& ca, const Computation& cb, KeyFn key) {
    std::map<std::string, std::deque<const Instruction*>> left_b;
    for (const Instruction* y : cb.instructions())
      if (!Matched(y)) {
        std::string k = key(y);
        if (!k.empty()) left_b[k].push_back(y);
      }
    for (const Instruction* x : ca.instructions()) {
      if (Matched(x)) continue;
      std::string k = key(x);
      if (k.empty()) continue;
      auto it = left_b.find(k);
      while (it != left_b.end() && !it->second.empty() && Matched(it->second.front())) it->second.pop_front();
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
      if (pa[n] && pb[n] && !Matched(pa[n]) && !Matched(pb[n])) Match(pa[n], pb[n]);
    if (ca.root() && cb.root() && !Matched(ca.root()) && !Matched(cb.root()))
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
      std::string key = std::string(hlo::OpcodeName(i->opcode())) + " " + hlo::ShapeToString(i->shape()) +
                        " " + std::string(i->literal());
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
          auto it = out_.a_to_b.find(o);
          if (it == out_.a_to_b.end()) return std::string();
          in_b = it->second;
        } else if (!out_.b_to_a.count(o)) {
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
      if (Matched(x)) work_.emplace_back(x, out_.a_to_b.at(x));
    Propagate(users_a, users_b, true);
  }

  const hlo::Module& a_;
  const hlo::Module& b_;
  Alignment out_;
  std::deque<std::pair<const Computation*, const Computation*>> pending_;
  std::deque<std::pair<const Instruction*, const Instruction*>> work_;
};

}  // namespace

Alignment Align(const hlo::Module& a, const hlo::Module& b) { return Aligner(a, b).Run(); }

}  // namespace tileprof::analyzer
