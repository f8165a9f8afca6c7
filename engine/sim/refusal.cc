#include "engine/sim/refusal.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include <fmt/format.h>

#include "engine/hlo/attributes.h"

namespace tileprof::engine::sim {
namespace {

const hlo::Instruction* FindInstruction(const hlo::Module* module, const std::string& name) {
  if (module == nullptr) return nullptr;
  for (const hlo::Computation* computation : module->computations()) {
    for (const hlo::Instruction* instruction : computation->instructions()) {
      if (instruction->name() == name) return instruction;
    }
  }
  return nullptr;
}

// "gather.3 (gather)" when the module has the instruction, else the name.
std::string Describe(const hlo::Instruction* instruction, const std::string& name) {
  if (instruction == nullptr) return name;
  // A custom call is known by its target: "custom-call.4 (custom-call
  // lapack_spotrf)" says which library function is missing.
  if (instruction->opcode() == hlo::Opcode::kCustomCall) {
    if (Expected<hlo::CustomCall> call = hlo::GetCustomCall(*instruction)) {
      return fmt::format("{} (custom-call {})", name, call->target);
    }
  }
  return fmt::format("{} ({})", name, hlo::OpcodeName(instruction->opcode()));
}

// The devices a collective spans and where that comes from: its first
// replica group, else every replica and partition the module was compiled
// for (as the lowering counts them, engine/compiler/lower_custom_call.cc).
std::string CollectiveMembers(const hlo::Module& module, const hlo::Instruction& instruction) {
  if (const hlo::Attribute* groups = instruction.FindAttribute("replica_groups")) {
    auto list = hlo::ParseReplicaGroups(groups->value());
    if (list && !list->empty())
      return fmt::format("{} devices (its replica groups)", list->front().size());
  }
  if (const hlo::Attribute* pairs = instruction.FindAttribute("source_target_pairs")) {
    int64_t devices = 1;
    if (auto list = hlo::ParseIntListList(pairs->value())) {
      for (const auto& pair : *list)
        for (int64_t device : pair) devices = std::max(devices, device + 1);
    }
    if (devices > 1) return fmt::format("{} devices (its source_target_pairs)", devices);
  }
  return fmt::format(
      "{} devices (replica_count {} x num_partitions {})",
      std::max<int64_t>(module.replica_count(), 1) * std::max<int64_t>(module.num_partitions(), 1),
      module.replica_count(), module.num_partitions());
}

// Why an instruction that talks to other devices or the host cannot run,
// or empty for any other.
std::string DeviceReason(const hlo::Module* module, const hlo::Instruction* instruction) {
  if (module == nullptr || instruction == nullptr) return {};
  using hlo::Opcode;
  switch (instruction->opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute: {
      return fmt::format(
          "a collective among {}: tileprof simulates one device, and the other devices' data "
          "is not in this program",
          CollectiveMembers(*module, *instruction));
    }
    case Opcode::kAllReduceStart:
    case Opcode::kAllGatherStart:
    case Opcode::kCollectivePermuteStart:
      return "an asynchronous collective (a -start/-done pair), which tileprof does not simulate";
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
      return "a transfer through the host's infeed/outfeed queues, which tileprof does not feed";
    case Opcode::kSend:
    case Opcode::kRecv:
      return "a transfer to or from another program (send/recv), not in this one";
    default:
      return {};
  }
}

}  // namespace

Error RefusalError(const std::vector<Refusal>& refusals, const hlo::Module* module) {
  // Each line once: the reasons given for the device (below) replace the
  // planner's, which differ by codelet (an infeed's tuple leaves).
  std::vector<std::string> lines;
  std::unordered_set<std::string> seen;
  for (const Refusal& refusal : refusals) {
    const hlo::Instruction* instruction = FindInstruction(module, refusal.instruction);
    const std::string device = DeviceReason(module, instruction);
    std::string line = fmt::format("{}: {}", Describe(instruction, refusal.instruction),
                                   device.empty() ? refusal.reason : device);
    if (seen.insert(line).second) lines.push_back(std::move(line));
  }
  // At most this many are listed; the count says how many more there are.
  constexpr size_t kListed = 10;
  std::string text = fmt::format(
      "cannot run: {} instruction(s) cannot be executed by the simulator", lines.size());
  for (size_t i = 0; i < lines.size() && i < kListed; ++i) text += "\n  " + lines[i];
  if (lines.size() > kListed) text += fmt::format("\n  ... and {} more", lines.size() - kListed);
  return Error(std::move(text));
}

}  // namespace tileprof::engine::sim
