#include "engine/session/elided_fill.h"

#include <fmt/format.h>

#include <cassert>
#include <unordered_set>

#include "engine/session/host_io.h"

namespace tileprof::engine {

std::string_view ElidedConstantsName(ElidedConstants mode) {
  switch (mode) {
    case ElidedConstants::kError:
      return "error";
    case ElidedConstants::kZeros:
      return "zeros";
    case ElidedConstants::kRandom:
      return "random";
  }
  return "?";
}

std::optional<ElidedConstants> ParseElidedConstants(std::string_view text) {
  for (ElidedConstants mode :
       {ElidedConstants::kError, ElidedConstants::kZeros, ElidedConstants::kRandom})
    if (text == ElidedConstantsName(mode)) return mode;
  return std::nullopt;
}

ElidedFill FillElidedConstants(const compiler::CompileResult& compiled, ElidedConstants mode,
                               uint64_t seed) {
  ElidedFill fill;
  if (mode == ElidedConstants::kError) return fill;
  assert(compiled.graph != nullptr);
  const Graph& graph = *compiled.graph;
  const std::string what = mode == ElidedConstants::kZeros
                               ? std::string("zeros")
                               : fmt::format("random values of seed {}", seed);
  std::unordered_set<std::string_view> warned;
  for (VariableId id : compiled.elided_constants) {
    const VariableInfo& variable = graph.variable(id);
    const uint64_t bytes = variable.num_elements * SizeOf(variable.type);
    // Seeded by name: "constant " keeps them apart from a parameter's stream
    // of the same name.
    fill.values[id] = mode == ElidedConstants::kZeros
                          ? std::vector<std::byte>(bytes, std::byte{0})
                          : RandomElements(variable.type, variable.num_elements, seed,
                                           "constant " + variable.name);
    if (!warned.insert(variable.name).second) continue;  // lowered once per call
    fill.warnings.push_back(
        fmt::format("constant '{}' {} is elided ({{...}}) in the HLO text: filled with {} "
                    "(--elided-constants={})",
                    variable.name, ShapeString(variable.type, variable.shape), what,
                    ElidedConstantsName(mode)));
  }
  return fill;
}

}  // namespace tileprof::engine
