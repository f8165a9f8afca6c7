// Control flow: while loops become RepeatWhileTrue over the lowered
// condition and body, conditionals become (nested) If programs. Each runs on
// fixed state tensors: the loop state (copied in from the init value, and
// back from the body's result each iteration) and the conditional's result
// (each branch copies its result there), as Poplar programs need one
// tensor per value whatever path ran.
#include <fmt/format.h>

#include <functional>
#include <unordered_map>

#include "engine/codelets/codelets.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

const hlo::Computation* Called(const hlo::Instruction& instruction, std::string_view attribute) {
  const hlo::Attribute* found = instruction.FindAttribute(attribute);
  if (found == nullptr || found->kind() != hlo::AttributeKind::kComputation ||
      found->count() != 1 || found->first() >= instruction.called_computations().size()) {
    return nullptr;
  }
  return instruction.called_computations()[found->first()];
}

bool SameElements(const Tensor& a, const Tensor& b) {
  return a.NumElements() == b.NumElements() && a.regions().size() == b.regions().size() &&
         std::equal(a.regions().begin(), a.regions().end(), b.regions().begin());
}

// A new tensor like a destination leaf, to hold a source leaf while the
// destinations are written.
using MakeTemporary = std::function<Expected<Tensor>(const Tensor& like, size_t leaf)>;

// The source leaves whose copy must go through a temporary: those that read
// a destination leaf other than their own, or their own in another element
// order. The copies run one after another, so such a leaf would otherwise be
// read after an earlier copy overwrote it: a loop body that returns its state
// permuted (JAX's rolled threefry rotates its three key-schedule words and
// two rotation tables every iteration) got the new value of a word where it
// needed the old one. Conservative per variable: a leaf reading any element
// of a written variable is saved first.
std::vector<bool> LeavesToSave(std::span<const Tensor> source, std::span<const Tensor> destination,
                               const std::vector<bool>& skipped) {
  constexpr size_t kSeveral = SIZE_MAX;
  std::unordered_map<VariableId, size_t> written;  // variable -> the leaf writing it
  for (size_t i = 0; i < destination.size(); ++i) {
    if (skipped[i]) continue;
    for (const TensorRegion& region : destination[i].regions()) {
      auto [it, inserted] = written.emplace(region.variable, i);
      if (!inserted && it->second != i) it->second = kSeveral;
    }
  }
  std::vector<bool> save(source.size(), false);
  for (size_t i = 0; i < source.size(); ++i) {
    if (skipped[i]) continue;
    for (const TensorRegion& region : source[i].regions()) {
      auto it = written.find(region.variable);
      if (it != written.end() && (it->second != i || !SameElements(source[i], destination[i]))) {
        save[i] = true;
        break;
      }
    }
  }
  return save;
}

// Temporaries named after the instruction, mapped like the leaf they stand for.
MakeTemporary TemporaryLike(Lowering& lowering, std::string_view name) {
  return [&lowering, name](const Tensor& like, size_t leaf) -> Expected<Tensor> {
    TILEPROF_ASSIGN_OR_RETURN(Tensor saved,
                              lowering.NewTensor(like.element_type(), like.shape(),
                                                 fmt::format("{}.saved{}", name, leaf), false));
    TILEPROF_RETURN_IF_ERROR(lowering.mapper().MapLike(saved, like));
    return saved;
  };
}

// Copies every leaf of `from` to the same leaf of `to`, as one parallel
// assignment: leaves that already are the same elements are skipped, and a
// leaf that reads what another copy writes is saved to a temporary first.
Status CopyLeaves(const Value& from, const Value& to, program::Sequence& program,
                  const MakeTemporary& temporary) {
  std::vector<Tensor> source = from.Leaves();
  std::vector<Tensor> destination = to.Leaves();
  if (source.size() != destination.size()) {
    return MakeError("result has {} arrays, the state has {}", source.size(), destination.size());
  }
  std::vector<bool> skipped(source.size(), false);
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i].NumElements() != destination[i].NumElements() ||
        source[i].element_type() != destination[i].element_type()) {
      return MakeError("result {} does not match state {}", source[i].ShapeString(),
                       destination[i].ShapeString());
    }
    skipped[i] = source[i].NumElements() == 0 || SameElements(source[i], destination[i]);
  }
  const std::vector<bool> save = LeavesToSave(source, destination, skipped);
  for (size_t i = 0; i < source.size(); ++i) {
    if (!save[i]) continue;
    TILEPROF_ASSIGN_OR_RETURN(Tensor saved, temporary(destination[i], i));
    TILEPROF_ASSIGN_OR_RETURN(saved, saved.Reshape(source[i].shape()));
    program.Add(program::Copy(source[i], saved));
    source[i] = std::move(saved);
  }
  for (size_t i = 0; i < source.size(); ++i) {
    if (!skipped[i]) program.Add(program::Copy(source[i], destination[i]));
  }
  return {};
}

}  // namespace

Expected<Value> Lowering::LowerWhile(const hlo::Instruction& instruction, const Value& operand,
                                     program::Sequence& program) {
  const hlo::Computation* condition = Called(instruction, "condition");
  const hlo::Computation* body = Called(instruction, "body");
  if (condition == nullptr || body == nullptr)
    return MakeError("while without condition= and body=");
  TILEPROF_ASSIGN_OR_RETURN(Value state, NewValue(instruction.shape(), instruction.name(), false));
  std::vector<Tensor> init = operand.Leaves();
  std::vector<Tensor> leaves = state.Leaves();
  if (init.size() != leaves.size()) return MakeError("init value does not match the loop state");
  for (size_t i = 0; i < leaves.size(); ++i)
    TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(leaves[i], init[i]));
  const MakeTemporary temporary = TemporaryLike(*this, instruction.name());
  TILEPROF_RETURN_IF_ERROR(CopyLeaves(operand, state, program, temporary));
  program::Sequence condition_program;
  Value predicate;
  TILEPROF_RETURN_IF_ERROR(
      LowerComputation(*condition, {&state, 1}, condition_program, &predicate));
  if (predicate.is_tuple || !predicate.tensor.valid() || predicate.tensor.NumElements() != 1 ||
      predicate.tensor.element_type() != ElementType::kPred) {
    return MakeError("condition '{}' does not give a pred scalar", condition->name());
  }
  program::Sequence body_program;
  Value result;
  TILEPROF_RETURN_IF_ERROR(LowerComputation(*body, {&state, 1}, body_program, &result));
  if (auto status = CopyLeaves(result, state, body_program, temporary); !status) {
    return status.error().Within(fmt::format("body '{}'", body->name()));
  }
  program.Add(program::RepeatWhileTrue(condition_program, predicate.tensor, body_program));
  return state;
}

Expected<Value> Lowering::LowerConditional(const hlo::Instruction& instruction,
                                           std::span<const Value> operands,
                                           program::Sequence& program) {
  std::vector<const hlo::Computation*> branches;
  const hlo::Computation* on_true = Called(instruction, "true_computation");
  const hlo::Computation* on_false = Called(instruction, "false_computation");
  const bool is_predicated = on_true != nullptr && on_false != nullptr;
  if (is_predicated) {
    branches = {on_true, on_false};
  } else {
    for (const hlo::Computation* branch : instruction.called_computations())
      branches.push_back(branch);
  }
  if (branches.empty() || operands.size() != branches.size() + 1 || operands[0].is_tuple ||
      !operands[0].tensor.valid() || operands[0].tensor.NumElements() != 1) {
    return MakeError("conditional needs a scalar selector and one operand per branch");
  }
  const Tensor& selector = operands[0].tensor;
  TILEPROF_ASSIGN_OR_RETURN(Value result, NewValue(instruction.shape(), instruction.name(), true));
  std::vector<program::Sequence> programs(branches.size());
  for (size_t i = 0; i < branches.size(); ++i) {
    Value branch_result;
    TILEPROF_RETURN_IF_ERROR(
        LowerComputation(*branches[i], {&operands[i + 1], 1}, programs[i], &branch_result));
    if (auto status = CopyLeaves(branch_result, result, programs[i],
                                 TemporaryLike(*this, instruction.name()));
        !status) {
      return status.error().Within(fmt::format("branch '{}'", branches[i]->name()));
    }
  }
  if (is_predicated) {
    if (selector.element_type() != ElementType::kPred) return MakeError("predicate is not pred");
    program.Add(program::If(selector, programs[0], programs[1]));
    return result;
  }
  // Index form: branch i when index == i, the last branch otherwise (XLA
  // runs the last branch for an out-of-range index).
  Expected<const Codelet*> equal = GetBinaryOpCodelet(BinaryOp::kEqual, selector.element_type());
  if (!equal) return equal.error();
  program::Program chain = programs.back();
  std::vector<std::pair<Tensor, size_t>> predicates;
  for (size_t i = 0; i + 1 < branches.size(); ++i) {
    const int64_t index = static_cast<int64_t>(i);
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor constant,
        graph_.AddConstantFromInts(selector.element_type(), {}, {&index, 1},
                                   fmt::format("{}.case{}", instruction.name(), i)));
    TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(constant, selector));
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor predicate,
        NewTensor(ElementType::kPred, {}, fmt::format("{}.is{}", instruction.name(), i), false));
    TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(predicate, selector));
    const ComputeSetId cs = AddComputeSet(fmt::format("{}.is{}", instruction.name(), i), program);
    const FieldInput inputs[] = {{"in1", selector, Access::kSame},
                                 {"in2", constant, Access::kSame}};
    TILEPROF_RETURN_IF_ERROR(
        EmitPerTile(cs, **equal, "out", predicate, inputs, instruction.name()));
    predicates.emplace_back(predicate, i);
  }
  for (auto it = predicates.rbegin(); it != predicates.rend(); ++it) {
    chain = program::If(it->first, programs[it->second], chain);
  }
  program.Add(chain);
  return result;
}

}  // namespace tileprof::engine::compiler
