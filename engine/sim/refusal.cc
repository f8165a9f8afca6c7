#include "engine/sim/refusal.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "engine/hlo/attributes.h"

namespace tileprof::engine::sim {
namespace {

// The module's instructions that `refusals` name, found in one pass.
std::unordered_map<std::string_view, const hlo::Instruction*> FindInstructions(
    const hlo::Module* module, const std::vector<Refusal>& refusals) {
  std::unordered_map<std::string_view, const hlo::Instruction*> found;
  if (module == nullptr) return found;
  for (const Refusal& refusal : refusals) found.emplace(refusal.instruction, nullptr);
  for (const hlo::Computation* computation : module->computations()) {
    for (const hlo::Instruction* instruction : computation->instructions()) {
      auto it = found.find(instruction->name());
      if (it != found.end() && it->second == nullptr) it->second = instruction;
    }
  }
  return found;
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
      auto span = hlo::CollectiveDevices(*instruction, *module);
      if (!span) return {};
      return fmt::format(
          "a collective among {} devices ({}): tileprof simulates one device, and the other "
          "devices' data is not in this program",
          span->devices, span->from);
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
    case Opcode::kCustomCall: {
      // XLA's dynamic shapes: a bounded dimension ("<=N") whose size is
      // data, packed into and out of the static buffer by these calls.
      Expected<hlo::CustomCall> call = hlo::GetCustomCall(*instruction);
      if (call && (call->target == "SliceToDynamic" || call->target == "PadToStatic")) {
        return fmt::format(
            "a dynamic shape ({}: a bounded dimension whose size is known only at run time); "
            "tileprof simulates static shapes",
            call->target);
      }
      return {};
    }
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
  const auto instructions = FindInstructions(module, refusals);
  for (const Refusal& refusal : refusals) {
    const auto it = instructions.find(refusal.instruction);
    const hlo::Instruction* instruction = it == instructions.end() ? nullptr : it->second;
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
