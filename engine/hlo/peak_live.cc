// The peak-live bound; see peak_live.h for the rules.
#include "engine/hlo/peak_live.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace tileprof::hlo {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t Add(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kMax : sum;
}

bool IsView(Opcode op) {
  switch (op) {
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kAfterAll:
      return true;
    default:
      return false;
  }
}

// Whether the computations an instruction calls run as part of it with
// buffers of their own (not scalar reducers or comparators).
bool CallsBodies(Opcode op) {
  switch (op) {
    case Opcode::kCall:
    case Opcode::kFusion:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kAsyncStart:
    case Opcode::kCustomCall:
      return true;
    default:
      return false;
  }
}

int64_t Bytes(const Shape& shape) {
  const std::optional<int64_t> bytes = shape.ByteSize();
  return bytes ? std::max<int64_t>(*bytes, 0) : kMax;
}

class PeakFinder {
 public:
  explicit PeakFinder(const Module& module)
      : memo_(module.computations().size(), kUnknown), entry_(module.entry()) {}

  PeakLive Entry() {
    PeakLive result;
    if (entry_ == nullptr) return result;
    for (const Instruction* parameter : entry_->parameters()) {
      if (parameter != nullptr)
        result.parameter_bytes = Add(result.parameter_bytes, Bytes(parameter->shape()));
    }
    const Instruction* at = nullptr;
    std::vector<int64_t> step_live;
    const int64_t internal = Internal(*entry_, /*is_entry=*/true, &at, &step_live);
    result.bytes = Add(result.parameter_bytes, internal);
    if (at != nullptr && internal > 0) result.at = std::string(at->name());
    result.entry_index = entry_->index();
    result.entry_step_live.resize(step_live.size());
    result.called_from_live.assign(memo_.size(), -1);
    for (size_t i = 0; i < step_live.size(); ++i) {
      result.entry_step_live[i] = Add(result.parameter_bytes, step_live[i]);
      MarkCallees(*entry_->instructions()[i], result.entry_step_live[i], result.called_from_live);
    }
    return result;
  }

 private:
  static constexpr int64_t kUnknown = -1;

  // Raises the caller-step total of what `instruction` calls, and of what
  // those call, to `live` (a computation already at `live` or above is not
  // walked again, so call cycles end).
  static void MarkCallees(const Instruction& instruction, int64_t live,
                          std::vector<int64_t>& called_from) {
    for (const Computation* callee : instruction.called_computations()) {
      if (callee == nullptr || callee->index() >= called_from.size()) continue;
      int64_t& mark = called_from[callee->index()];
      if (mark >= live) continue;
      mark = live;
      for (const Instruction* inner : callee->instructions())
        if (inner != nullptr) MarkCallees(*inner, live, called_from);
    }
  }

  // The largest total of the computation's own values (its parameters
  // excluded) live at one step, with what it calls; memoised.
  int64_t Peak(const Computation& computation) {
    int64_t& memo = memo_[computation.index()];
    if (memo != kUnknown) return memo;
    memo = 0;  // a call cycle (invalid HLO) adds nothing more
    const int64_t peak = Internal(computation, false, nullptr, nullptr);
    return memo_[computation.index()] = peak;
  }

  // `step_live`, when given, gets each step's total (own values and what
  // the step calls).
  int64_t Internal(const Computation& computation, bool is_entry, const Instruction** at,
                   std::vector<int64_t>* step_live) {
    const std::span<Instruction* const> instructions = computation.instructions();
    const size_t n = instructions.size();
    // Last step using each instruction's value, through views.
    std::vector<size_t> last(n);
    for (size_t i = 0; i < n; ++i) last[i] = i;
    auto same_computation = [&](const Instruction* operand) {
      return operand->parent() == &computation && operand->index() < n &&
             instructions[operand->index()] == operand;
    };
    for (size_t i = 0; i < n; ++i) {
      for (const Instruction* operand : instructions[i]->operands()) {
        if (same_computation(operand)) last[operand->index()] = std::max(last[operand->index()], i);
      }
    }
    const Instruction* root = computation.root();
    if (is_entry && root != nullptr && same_computation(root)) last[root->index()] = n;
    // A view keeps what it views alive as long as itself: walked backwards,
    // a view's own last use is final when it is reached.
    for (size_t i = n; i-- > 0;) {
      if (!IsView(instructions[i]->opcode())) continue;
      for (const Instruction* operand : instructions[i]->operands()) {
        if (same_computation(operand))
          last[operand->index()] = std::max(last[operand->index()], last[i]);
      }
    }
    // Bytes allocated at each step and freed after it.
    std::vector<int64_t> freed(n + 1, 0);
    int64_t live = 0, peak = 0;
    for (size_t i = 0; i < n; ++i) {
      const Instruction& instruction = *instructions[i];
      const Opcode op = instruction.opcode();
      int64_t own = 0;
      if (op != Opcode::kParameter && !IsView(op)) own = Bytes(instruction.shape());
      live = Add(live, own);
      freed[std::min(last[i], n)] = Add(freed[std::min(last[i], n)], own);
      int64_t called = 0;
      if (CallsBodies(op)) {
        for (const Computation* callee : instruction.called_computations())
          called = std::max(called, Peak(*callee));
      }
      const int64_t here = Add(live, called);
      if (step_live != nullptr) step_live->push_back(here);
      if (here > peak) {
        peak = here;
        if (at != nullptr) *at = &instruction;
      }
      if (live != kMax) live -= freed[i];  // saturated: stays at the top
    }
    return peak;
  }

  std::vector<int64_t> memo_;
  const Computation* entry_;
};

}  // namespace

PeakLive ComputePeakLive(const Module& module) { return PeakFinder(module).Entry(); }

int64_t PeakLive::LiveAt(const Instruction& instruction) const {
  const Computation* computation = instruction.parent();
  if (computation == nullptr) return bytes;
  if (computation->index() == entry_index && instruction.index() < entry_step_live.size()) {
    return entry_step_live[instruction.index()];
  }
  if (computation->index() < called_from_live.size() &&
      called_from_live[computation->index()] >= 0) {
    return called_from_live[computation->index()];
  }
  return bytes;
}

}  // namespace tileprof::hlo
