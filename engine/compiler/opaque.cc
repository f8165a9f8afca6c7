#include "engine/compiler/opaque.h"

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"

namespace tileprof::engine::compiler {
namespace {

class AccountedCodelet final : public Codelet {
 public:
  AccountedCodelet(std::string name, std::vector<FieldSpec> fields, uint32_t code_bytes,
                   uint64_t cycles_per_element)
      : Codelet(std::move(name), ExecutionKind::kWorker, std::move(fields), {}, code_bytes),
        cycles_per_element_(cycles_per_element) {}

  // kWorkerOverhead + cycles per output element (the last field).
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    const uint64_t out = shape.field_elements.empty() ? 0 : shape.field_elements.back();
    return cost::WorkerLoop(out, 1, cycles_per_element_);
  }

 protected:
  Status Compute(const VertexIo&) const override {
    return MakeError("{}: executing this vertex is not supported by the simulator", name());
  }

 private:
  uint64_t cycles_per_element_;
};

}  // namespace

Expected<const Codelet*> CompilerCodelets::Get(std::string name, std::vector<ElementType> inputs,
                                               ElementType output, uint32_t code_bytes,
                                               uint64_t cycles) {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second.get();
  std::vector<FieldSpec> fields;
  for (size_t i = 0; i < inputs.size(); ++i) {
    fields.push_back(In(fmt::format("in{}", i), inputs[i], VectorLayout::kSpan));
  }
  fields.push_back(Out("out", output, VectorLayout::kSpan));
  auto codelet = std::make_shared<AccountedCodelet>(name, std::move(fields), code_bytes, cycles);
  TILEPROF_RETURN_IF_ERROR(graph_.AddCodelet(codelet));
  const Codelet* raw = codelet.get();
  by_name_.emplace(std::move(name), std::move(codelet));
  return raw;
}

Expected<const Codelet*> CompilerCodelets::Opaque(std::string_view opcode,
                                                  const std::vector<ElementType>& inputs,
                                                  ElementType output) {
  std::string name = fmt::format("tileprof::OpaqueOp<{},{}", opcode, PoplarName(output));
  for (ElementType type : inputs) name += fmt::format(",{}", PoplarName(type));
  name += ">";
  return Get(std::move(name), inputs, output, kOpaqueCodeBytes, kOpaqueCyclesPerElement);
}

Expected<const Codelet*> CompilerCodelets::Rearrange(ElementType type) {
  return Get(fmt::format("tileprof::Rearrange<{}>", PoplarName(type)), {type}, type,
             kRearrangeCodeBytes, kRearrangeCyclesPerElement);
}

namespace {
constexpr std::string_view kOpaquePrefix = "tileprof::OpaqueOp<";
constexpr std::string_view kRearrangePrefix = "tileprof::Rearrange<";
}  // namespace

bool CompilerCodelets::IsCompilerCodeletName(std::string_view name) {
  return name.starts_with(kOpaquePrefix) || name.starts_with(kRearrangePrefix);
}

Expected<const Codelet*> CompilerCodelets::FromName(std::string_view name) {
  const auto bad = [&] { return MakeError("'{}' is not a compiler codelet name", name); };
  if (!name.ends_with('>')) return bad();
  if (name.starts_with(kRearrangePrefix)) {
    std::string_view arg = name.substr(kRearrangePrefix.size());
    arg.remove_suffix(1);
    auto type = ParsePoplarElementType(arg);
    if (!type) return bad();
    return Rearrange(*type);
  }
  if (!name.starts_with(kOpaquePrefix)) return bad();
  std::string_view args = name.substr(kOpaquePrefix.size());
  args.remove_suffix(1);
  std::vector<std::string_view> parts;
  while (true) {
    size_t comma = args.find(',');
    parts.push_back(args.substr(0, comma));
    if (comma == std::string_view::npos) break;
    args.remove_prefix(comma + 1);
  }
  if (parts.size() < 2 || parts[0].empty()) return bad();
  auto output = ParsePoplarElementType(parts[1]);
  if (!output) return bad();
  std::vector<ElementType> inputs;
  for (size_t i = 2; i < parts.size(); ++i) {
    auto type = ParsePoplarElementType(parts[i]);
    if (!type) return bad();
    inputs.push_back(*type);
  }
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, Opaque(parts[0], inputs, *output));
  // The name must round-trip, or two names could stand for one codelet.
  if (codelet->name() != name) return bad();
  return codelet;
}

}  // namespace tileprof::engine::compiler
