#include "engine/session/instruction_info.h"

#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/hlo/attributes.h"

namespace tileprof::engine {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool IsDotLike(Opcode op) { return op == Opcode::kDot || op == Opcode::kConvolution; }

bool MovesData(Opcode op) {
  switch (op) {
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kReverse:
    case Opcode::kBroadcast:
    case Opcode::kBitcastConvert:
      return true;
    default:
      return false;
  }
}

// The entry parameter `value` is, through data-movement ops, or null.
const Instruction* SourceParameter(const Instruction* value) {
  for (int depth = 0; value != nullptr && depth < 64; ++depth) {
    if (value->opcode() == Opcode::kParameter) return value;
    if (!MovesData(value->opcode()) || value->operand_count() != 1) return nullptr;
    value = value->operand(0);
  }
  return nullptr;
}

std::string DebugName(const Instruction& instruction) {
  std::string op_name;
  if (const hlo::Attribute* metadata = instruction.FindAttribute("metadata")) {
    if (auto parsed = hlo::ParseMetadata(metadata->value())) op_name = parsed->op_name;
  }
  return op_name + "/" + std::string(instruction.name());
}

// Every instruction of `computation` and the computations it calls, mapped
// to `site` (the entry instruction whose data flow they share).
void MapCalled(const hlo::Computation& computation, const Instruction* site,
               std::unordered_map<const Instruction*, const Instruction*>& sites, int depth) {
  if (depth > 64) return;
  for (const Instruction* instruction : computation.instructions()) {
    if (!sites.emplace(instruction, site).second) continue;
    for (const hlo::Computation* called : instruction->called_computations())
      MapCalled(*called, site, sites, depth + 1);
  }
}

// Weights are entry parameters that an output of the form `w - u` or `w + u`
// (of w's shape) updates; `updates` gets each u.
void FindWeights(const hlo::Computation& entry, std::unordered_set<const Instruction*>& weights,
                 std::vector<const Instruction*>& updates) {
  std::vector<const Instruction*> outputs;
  if (const Instruction* root = entry.root()) {
    if (root->opcode() == Opcode::kTuple)
      outputs.assign(root->operands().begin(), root->operands().end());
    else
      outputs.push_back(root);
  }
  for (const Instruction* out : outputs) {
    if ((out->opcode() != Opcode::kSubtract && out->opcode() != Opcode::kAdd) ||
        out->operand_count() != 2)
      continue;
    for (size_t side = 0; side < 2; ++side) {
      const Instruction* parameter = SourceParameter(out->operand(side));
      if (parameter != nullptr && parameter->shape().CompatibleWith(out->shape())) {
        weights.insert(parameter);
        updates.push_back(out->operand(1 - side));
        break;
      }
    }
  }
}

// Every instruction of `roots` and everything upstream of them.
std::unordered_set<const Instruction*> UpstreamOf(std::span<const Instruction* const> roots) {
  std::unordered_set<const Instruction*> seen;
  std::vector<const Instruction*> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    const Instruction* at = stack.back();
    stack.pop_back();
    if (!seen.insert(at).second) continue;
    for (const Instruction* operand : at->operands()) stack.push_back(operand);
  }
  return seen;
}

// Whether `from` is upstream of `to` in the entry computation.
bool IsUpstream(const Instruction* from, const Instruction* to) {
  std::unordered_set<const Instruction*> seen;
  std::vector<const Instruction*> work{to};
  while (!work.empty()) {
    const Instruction* at = work.back();
    work.pop_back();
    if (!seen.insert(at).second) continue;
    for (const Instruction* operand : at->operands()) {
      if (operand == from) return true;
      work.push_back(operand);
    }
  }
  return false;
}

}  // namespace

report::InstructionInfo ClassifyMlTypes(const hlo::Module& module) {
  report::InstructionInfo info;
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return info;

  std::unordered_set<const Instruction*> weights;
  std::vector<const Instruction*> updates;
  FindWeights(*entry, weights, updates);

  // Entry sites of every instruction, entry instructions in order.
  std::unordered_map<const Instruction*, const Instruction*> sites;
  for (const Instruction* instruction : entry->instructions())
    sites.emplace(instruction, instruction);
  for (const Instruction* instruction : entry->instructions())
    for (const hlo::Computation* called : instruction->called_computations())
      MapCalled(*called, instruction, sites, 0);

  const std::unordered_set<const Instruction*> feeds_update = UpstreamOf(updates);

  // The weights each site reads.
  auto weights_read = [&](const Instruction* site) {
    std::vector<const Instruction*> read;
    for (const Instruction* operand : site->operands()) {
      const Instruction* parameter = SourceParameter(operand);
      if (parameter != nullptr && weights.contains(parameter)) read.push_back(parameter);
    }
    return read;
  };
  std::unordered_map<const Instruction*, std::vector<const Instruction*>>
      readers;  // weight -> sites
  std::vector<const Instruction*> dot_likes;
  for (const hlo::Computation* computation : module.computations()) {
    for (const Instruction* instruction : computation->instructions()) {
      if (!IsDotLike(instruction->opcode())) continue;
      dot_likes.push_back(instruction);
      auto site = sites.find(instruction);
      if (site == sites.end() || weights.empty()) continue;  // unreachable from the entry
      for (const Instruction* weight : weights_read(site->second))
        readers[weight].push_back(site->second);
    }
  }

  for (const Instruction* instruction : dot_likes) {
    report::MlType type = report::MlType::kInferenceFwd;
    auto site_it = sites.find(instruction);
    if (!weights.empty() && site_it != sites.end()) {
      const Instruction* site = site_it->second;
      std::vector<const Instruction*> read = weights_read(site);
      if (read.empty()) {
        type = feeds_update.contains(site) ? report::MlType::kTrainingWu
                                           : report::MlType::kTrainingFwd;
      } else {
        type = report::MlType::kTrainingFwd;
        for (const Instruction* weight : read) {
          for (const Instruction* other : readers[weight]) {
            if (other != site && IsUpstream(other, site)) type = report::MlType::kTrainingBwd;
          }
        }
      }
    }
    info.ml_types.emplace_back(DebugName(*instruction), type);
  }
  return info;
}

}  // namespace tileprof::engine
