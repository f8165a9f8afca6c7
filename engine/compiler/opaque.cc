#include "engine/compiler/opaque.h"

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/indexed.h"

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
  bool executable() const override { return false; }

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

Expected<const Codelet*> CompilerCodelets::Register(Expected<std::unique_ptr<Codelet>> made) {
  if (!made) return made.error();
  std::shared_ptr<const Codelet> codelet = std::move(*made);
  if (auto it = by_name_.find(codelet->name()); it != by_name_.end()) return it->second.get();
  TILEPROF_RETURN_IF_ERROR(graph_.AddCodelet(codelet));
  const Codelet* raw = codelet.get();
  by_name_.emplace(codelet->name(), std::move(codelet));
  return raw;
}

Expected<const Codelet*> CompilerCodelets::Rearrange(ElementType type, uint32_t in_rank,
                                                     uint32_t out_rank, bool padded) {
  if (auto it = by_name_.find(RearrangeCodeletName(type, in_rank, out_rank, padded));
      it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeRearrangeCodelet(type, in_rank, out_rank, padded));
}

Expected<const Codelet*> CompilerCodelets::DynamicSlice(ElementType type, ElementType index,
                                                        uint32_t rank, bool update) {
  const std::string name = update ? DynamicUpdateSliceCodeletName(type, index, rank)
                                  : DynamicSliceCodeletName(type, index, rank);
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second.get();
  return Register(update ? MakeDynamicUpdateSliceCodelet(type, index, rank)
                         : MakeDynamicSliceCodelet(type, index, rank));
}

Expected<const Codelet*> CompilerCodelets::Iota(ElementType type) {
  if (auto it = by_name_.find(IotaCodeletName(type)); it != by_name_.end()) return it->second.get();
  return Register(MakeIotaCodelet(type));
}

}  // namespace tileprof::engine::compiler
