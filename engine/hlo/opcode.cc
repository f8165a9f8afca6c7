// Opcode names; see opcode.h.
#include "engine/hlo/opcode.h"

#include <algorithm>
#include <array>
#include <utility>

namespace tileprof::hlo {
namespace {

constexpr std::array<std::string_view, kOpcodeCount> kNames = {
#define TILEPROF_HLO_OPCODE_NAME(name, text) text,
    TILEPROF_HLO_OPCODES(TILEPROF_HLO_OPCODE_NAME)
#undef TILEPROF_HLO_OPCODE_NAME
};

// (name, opcode) sorted by name for binary search.
const std::array<std::pair<std::string_view, Opcode>, kOpcodeCount>& SortedNames() {
  static const auto table = [] {
    std::array<std::pair<std::string_view, Opcode>, kOpcodeCount> sorted;
    for (int i = 0; i < kOpcodeCount; ++i) sorted[i] = {kNames[i], static_cast<Opcode>(i)};
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  }();
  return table;
}

}  // namespace

std::string_view OpcodeName(Opcode opcode) {
  auto index = static_cast<size_t>(opcode);
  return index < kNames.size() ? kNames[index] : std::string_view("<invalid>");
}

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  const auto& table = SortedNames();
  auto it =
      std::lower_bound(table.begin(), table.end(), name,
                       [](const auto& entry, std::string_view key) { return entry.first < key; });
  if (it == table.end() || it->first != name) return std::nullopt;
  return it->second;
}

std::optional<Opcode> ParseOpcodeWithAsyncSugar(std::string_view name,
                                                std::optional<Opcode>* wrapped) {
  *wrapped = std::nullopt;
  if (auto opcode = OpcodeFromName(name)) return opcode;
  static constexpr std::pair<std::string_view, Opcode> kSuffixes[] = {
      {"-start", Opcode::kAsyncStart},
      {"-update", Opcode::kAsyncUpdate},
      {"-done", Opcode::kAsyncDone},
  };
  for (const auto& [suffix, async_opcode] : kSuffixes) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      if (auto base = OpcodeFromName(name.substr(0, name.size() - suffix.size()))) {
        *wrapped = base;
        return async_opcode;
      }
    }
  }
  return std::nullopt;
}

}  // namespace tileprof::hlo
