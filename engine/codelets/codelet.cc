// The Codelet base class: field lookup, state sizes and the checked Run.
#include "engine/codelets/codelet.h"

#include <vector>

namespace tileprof::engine {

Codelet::Codelet(std::string name, ExecutionKind kind, std::vector<FieldSpec> fields,
                 std::vector<std::string> params, uint32_t code_bytes)
    : name_(std::move(name)),
      execution_kind_(kind),
      fields_(std::move(fields)),
      params_(std::move(params)),
      code_bytes_(code_bytes) {}

std::optional<size_t> Codelet::FindField(std::string_view field) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == field) return i;
  }
  return std::nullopt;
}

std::optional<size_t> Codelet::FindParam(std::string_view param) const {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i] == param) return i;
  }
  return std::nullopt;
}

uint32_t Codelet::edge_pointer_bytes() const {
  uint32_t bytes = 0;
  for (const FieldSpec& field : fields_) bytes += field.EdgePointerBytes();
  return bytes;
}

uint32_t Codelet::internal_state_bytes() const {
  uint32_t bytes = static_cast<uint32_t>(params_.size()) * kParamBytes;
  for (const FieldSpec& field : fields_) bytes += field.InternalStateBytes();
  return bytes;
}

Status Codelet::CheckShape(const VertexShape& /*shape*/) const { return {}; }

Status Codelet::Run(const VertexIo& io) const {
  if (io.fields.size() != fields_.size()) {
    return MakeError("{}: {} field spans given, the codelet has {} fields", name_, io.fields.size(),
                     fields_.size());
  }
  if (io.params.size() != params_.size()) {
    return MakeError("{}: {} parameters given, the codelet has {}", name_, io.params.size(),
                     params_.size());
  }
  std::vector<uint64_t> elements(fields_.size());
  for (size_t i = 0; i < fields_.size(); ++i) {
    const FieldSpec& field = fields_[i];
    const uint64_t size = SizeOf(field.type);
    if (io.fields[i].size() % size != 0) {
      return MakeError("{}: field '{}' has {} bytes, not a whole number of {} elements", name_,
                       field.name, io.fields[i].size(), HloName(field.type));
    }
    elements[i] = io.fields[i].size() / size;
    if (field.kind == FieldKind::kScalar && elements[i] != 1) {
      return MakeError("{}: scalar field '{}' has {} elements", name_, field.name, elements[i]);
    }
  }
  if (auto status = CheckShape({elements, io.params}); !status) {
    return status.error().Within(name_);
  }
  return Compute(io);
}

Status CheckSameSize(const Codelet& codelet, const VertexShape& shape, size_t a, size_t b) {
  if (shape.field_elements[a] == shape.field_elements[b]) return {};
  const auto fields = codelet.fields();
  return MakeError("field '{}' has {} elements, '{}' has {}", fields[b].name,
                   shape.field_elements[b], fields[a].name, shape.field_elements[a]);
}

}  // namespace tileprof::engine
