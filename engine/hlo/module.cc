// Lookups, locations and structural equality of the model; see module.h.
#include "engine/hlo/module.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "engine/hlo/attributes.h"
#include "engine/hlo/literal.h"

namespace tileprof::hlo {

const Attribute* Instruction::FindAttribute(std::string_view name) const {
  for (const Attribute& attribute : attributes())
    if (attribute.name() == name) return &attribute;
  return nullptr;
}

Instruction* Computation::FindInstruction(std::string_view name) const {
  for (Instruction* instruction : instructions_)
    if (instruction->name() == name) return instruction;
  return nullptr;
}

Computation* Module::FindComputation(std::string_view name) const {
  for (Computation* computation : computations_)
    if (computation->name() == name) return computation;
  return nullptr;
}

const Attribute* Module::FindAttribute(std::string_view name) const {
  for (const Attribute& attribute : attributes_)
    if (attribute.name() == name) return &attribute;
  return nullptr;
}

SourceLocation LocateOffset(std::string_view text, uint32_t offset) {
  size_t end = std::min<size_t>(offset, text.size());
  SourceLocation location{1, 1};
  size_t line_begin = 0;
  const char* data = text.data();
  for (const char* p = data;
       (p = static_cast<const char*>(std::memchr(p, '\n', data + end - p))) != nullptr; ++p) {
    ++location.line;
    line_begin = p - data + 1;
  }
  location.column = static_cast<int64_t>(end - line_begin) + 1;
  return location;
}

SourceLocation Module::Locate(uint32_t offset) const { return LocateOffset(source_, offset); }

namespace {

// Attribute values compare after whitespace normalisation, and literals
// after decoding, so that two spellings of the same module are equal.
bool SameValue(const Attribute& a, const Attribute& b) {
  if (a.value() == b.value()) return true;
  return NormalizeAttributeValue(a.value()) == NormalizeAttributeValue(b.value());
}

std::optional<std::string> CompareAttributes(std::span<const Attribute> a,
                                             std::span<const Attribute> b, std::string_view where) {
  if (a.size() != b.size())
    return fmt::format("{}: {} vs {} attributes", where, a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name() != b[i].name())
      return fmt::format("{}: attribute {} is '{}' vs '{}'", where, i, a[i].name(), b[i].name());
    if (a[i].kind() != AttributeKind::kRaw || b[i].kind() != AttributeKind::kRaw) {
      if (a[i].kind() != b[i].kind() || a[i].count() != b[i].count())
        return fmt::format("{}: attribute '{}' differs in kind", where, a[i].name());
      continue;  // the referenced names are compared separately
    }
    if (!SameValue(a[i], b[i]))
      return fmt::format("{}: attribute '{}' is {} vs {}", where, a[i].name(), a[i].value(),
                         b[i].value());
  }
  return std::nullopt;
}

std::optional<std::string> CompareInstructions(const Instruction& a, const Instruction& b,
                                               std::string_view where) {
  std::string here = fmt::format("{}: instruction {} '{}'", where, a.index(), a.name());
  if (a.name() != b.name()) return fmt::format("{} vs '{}'", here, b.name());
  if (a.opcode() != b.opcode() || a.async_wrapped_opcode() != b.async_wrapped_opcode())
    return fmt::format("{}: opcode {} vs {}", here, OpcodeName(a.opcode()), OpcodeName(b.opcode()));
  if (!(a.shape() == b.shape()))
    return fmt::format("{}: shape {} vs {}", here, ShapeToString(a.shape()),
                       ShapeToString(b.shape()));
  if (a.is_root() != b.is_root()) return fmt::format("{}: ROOT differs", here);
  if (a.parameter_number() != b.parameter_number())
    return fmt::format("{}: parameter {} vs {}", here, a.parameter_number(), b.parameter_number());
  if (a.literal() != b.literal()) {
    Expected<Literal> la = ParseLiteral(a.literal(), a.shape());
    Expected<Literal> lb = ParseLiteral(b.literal(), b.shape());
    if (!la || !lb || !(*la == *lb))
      return fmt::format("{}: literal {} vs {}", here, a.literal(), b.literal());
  }
  if (a.operand_count() != b.operand_count())
    return fmt::format("{}: {} vs {} operands", here, a.operand_count(), b.operand_count());
  for (size_t i = 0; i < a.operand_count(); ++i)
    if (a.operand(i)->name() != b.operand(i)->name())
      return fmt::format("{}: operand {} is '{}' vs '{}'", here, i, a.operand(i)->name(),
                         b.operand(i)->name());
  if (auto difference = CompareAttributes(a.attributes(), b.attributes(), here)) return difference;
  auto called_a = a.called_computations();
  auto called_b = b.called_computations();
  if (called_a.size() != called_b.size())
    return fmt::format("{}: called computations differ", here);
  for (size_t i = 0; i < called_a.size(); ++i)
    if (called_a[i]->name() != called_b[i]->name())
      return fmt::format("{}: calls '{}' vs '{}'", here, called_a[i]->name(), called_b[i]->name());
  auto control_a = a.control_predecessors();
  auto control_b = b.control_predecessors();
  if (control_a.size() != control_b.size())
    return fmt::format("{}: control predecessors differ", here);
  for (size_t i = 0; i < control_a.size(); ++i)
    if (control_a[i]->name() != control_b[i]->name())
      return fmt::format("{}: control predecessor '{}' vs '{}'", here, control_a[i]->name(),
                         control_b[i]->name());
  return std::nullopt;
}

}  // namespace

std::optional<std::string> FindDifference(const Module& a, const Module& b) {
  if (a.name() != b.name()) return fmt::format("module name '{}' vs '{}'", a.name(), b.name());
  if (auto difference = CompareAttributes(a.attributes(), b.attributes(), "module header"))
    return difference;
  if (!(a.stack_frames() == b.stack_frames())) return std::string("stack frame tables differ");
  if (a.computations().size() != b.computations().size())
    return fmt::format("{} vs {} computations", a.computations().size(), b.computations().size());
  for (size_t c = 0; c < a.computations().size(); ++c) {
    const Computation& ca = *a.computations()[c];
    const Computation& cb = *b.computations()[c];
    std::string where = fmt::format("computation {} '{}'", c, ca.name());
    if (ca.name() != cb.name()) return fmt::format("{} vs '{}'", where, cb.name());
    if (ca.is_entry() != cb.is_entry()) return fmt::format("{}: ENTRY differs", where);
    if (ca.execution_thread() != cb.execution_thread())
      return fmt::format("{}: execution thread '{}' vs '{}'", where, ca.execution_thread(),
                         cb.execution_thread());
    if (ca.instructions().size() != cb.instructions().size())
      return fmt::format("{}: {} vs {} instructions", where, ca.instructions().size(),
                         cb.instructions().size());
    for (size_t i = 0; i < ca.instructions().size(); ++i)
      if (auto difference =
              CompareInstructions(*ca.instructions()[i], *cb.instructions()[i], where))
        return difference;
  }
  return std::nullopt;
}

bool operator==(const Module& a, const Module& b) { return !FindDifference(a, b).has_value(); }

}  // namespace tileprof::hlo
