#include "engine/session/precompile.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "engine/hlo/attributes.h"

namespace tileprof::engine {
namespace {

// XLA's own custom-call targets: their meaning is fixed by XLA, not by user
// code, so they never make a module uncacheable.
constexpr std::array<std::string_view, 10> kXlaTargets = {"Sharding",
                                                          "SPMDFullToShardShape",
                                                          "SPMDShardToFullShape",
                                                          "SliceToDynamic",
                                                          "PadToStatic",
                                                          "SetBound",
                                                          "AllocateBuffer",
                                                          "annotate_device_placement",
                                                          "LayoutConstraint",
                                                          "MoveToHost"};
constexpr std::array<std::string_view, 2> kHostTransferTargets = {"SendToHost", "RecvFromHost"};

bool IsTrue(std::string_view text) { return text == "true" || text == "True" || text == "1"; }

bool MarkedHashable(const hlo::Instruction& instruction, const hlo::CustomCall& call) {
  if (call.backend_config && call.backend_config->json && call.backend_config->json->is_object()) {
    const auto& json = *call.backend_config->json;
    if (auto it = json.find("is_hashable"); it != json.end()) {
      if (it->is_boolean()) return it->get<bool>();
      if (it->is_string()) return IsTrue(it->get<std::string>());
    }
  }
  if (const hlo::Attribute* attribute = instruction.FindAttribute("frontend_attributes")) {
    auto entries = hlo::ParseFrontendAttributes(attribute->value());
    if (entries) {
      for (const auto& [key, value] : *entries) {
        if (key == "is_hashable") return IsTrue(value);
      }
    }
  }
  return false;
}

template <typename F>
void ForEachInstruction(const hlo::Module& module, F&& f) {
  for (const hlo::Computation* computation : module.computations())
    for (const hlo::Instruction* instruction : computation->instructions()) f(*instruction);
}

bool IsCustomCall(const hlo::Instruction& instruction) {
  return instruction.opcode() == hlo::Opcode::kCustomCall ||
         instruction.async_wrapped_opcode() == hlo::Opcode::kCustomCall;
}

}  // namespace

std::vector<std::string> NonHashableUserOps(const hlo::Module& module) {
  std::vector<std::string> names;
  ForEachInstruction(module, [&](const hlo::Instruction& instruction) {
    if (!IsCustomCall(instruction)) return;
    auto call = hlo::GetCustomCall(instruction);
    // An unreadable custom call cannot be shown to be safe.
    if (call &&
        (std::ranges::find(kXlaTargets, call->target) != kXlaTargets.end() ||
         std::ranges::find(kHostTransferTargets, call->target) != kHostTransferTargets.end() ||
         MarkedHashable(instruction, *call)))
      return;
    names.emplace_back(instruction.name());
  });
  return names;
}

std::vector<std::string> HostTransferOps(const hlo::Module& module) {
  std::vector<std::string> names;
  ForEachInstruction(module, [&](const hlo::Instruction& instruction) {
    bool host = false;
    switch (instruction.opcode()) {
      case hlo::Opcode::kSend:
      case hlo::Opcode::kSendDone:
      case hlo::Opcode::kRecv:
      case hlo::Opcode::kRecvDone:
        if (const hlo::Attribute* attribute = instruction.FindAttribute("is_host_transfer"))
          host = IsTrue(attribute->value());
        break;
      default:
        if (IsCustomCall(instruction)) {
          auto call = hlo::GetCustomCall(instruction);
          host = call && std::ranges::find(kHostTransferTargets, call->target) !=
                             kHostTransferTargets.end();
        }
        break;
    }
    if (host) names.emplace_back(instruction.name());
  });
  return names;
}

Status CheckPrecompilable(const hlo::Module& module) {
  if (std::vector<std::string> ops = NonHashableUserOps(module); !ops.empty()) {
    return MakeError(
        "IPU devices have been configured for pre-compilation, however the program contains custom "
        "user operation "
        "{} which cannot be safely pre-compiled. If it is safe to pre-compile this custom user "
        "operation, set "
        "\"is_hashable\": true in its backend_config or is_hashable=\"true\" in its "
        "frontend_attributes.",
        ops.front());
  }
  if (!HostTransferOps(module).empty())
    return Error(std::string(kPrecompileOutsideCompilationMessage));
  return {};
}

Status CheckPrecompileCachePath(std::string_view cache_path) {
  if (cache_path.empty()) return Error(std::string(kPrecompileWithoutCachePathMessage));
  return {};
}

std::string PrecompiledSavedMessage(std::string_view path) {
  return fmt::format("A pre-compiled Poplar program has been saved to {}", path);
}

}  // namespace tileprof::engine
