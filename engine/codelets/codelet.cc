// The Codelet base class: field lookup, state sizes and the checked Run.
#include "engine/codelets/codelet.h"

#include <array>
#include <bit>
#include <cstring>
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

Expected<size_t> Codelet::FieldNumber(std::string_view field) const {
  if (const std::optional<size_t> index = FindField(field)) return *index;
  return MakeError("codelet {} has no field '{}'", name_, field);
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

Status Codelet::Check(const VertexIo& io) const {
  if (io.fields.size() != fields_.size()) {
    return MakeError("{}: {} field spans given, the codelet has {} fields", name_, io.fields.size(),
                     fields_.size());
  }
  if (!io.rows.empty() && io.rows.size() != fields_.size()) {
    return MakeError("{}: {} field layouts given, the codelet has {} fields", name_, io.rows.size(),
                     fields_.size());
  }
  if (io.params.size() != params_.size()) {
    return MakeError("{}: {} parameters given, the codelet has {}", name_, io.params.size(),
                     params_.size());
  }
  // Every vertex execution comes here: no allocation for the usual few fields.
  std::array<uint64_t, 8> few{};
  std::vector<uint64_t> many;
  if (fields_.size() > few.size()) many.resize(fields_.size());
  const std::span<uint64_t> elements =
      many.empty() ? std::span(few).first(fields_.size()) : std::span(many);
  for (size_t i = 0; i < fields_.size(); ++i) {
    const FieldSpec& field = fields_[i];
    const uint64_t size = SizeOf(field.type);
    if (const FieldRows* rows = io.Rows(i)) {
      const bool blocks_apart =
          rows->block_rows == 0 ||
          rows->block_stride >= (rows->block_rows - 1) * rows->stride + rows->row_bytes;
      if (field.IsWritten() || !ReadsRows(i) || rows->row_bytes % size != 0 ||
          rows->stride < rows->row_bytes || !blocks_apart || rows->extent() > io.fields[i].size()) {
        return MakeError("{}: field '{}' cannot be given as {} rows of {} bytes, {} apart, in {}",
                         name_, field.name, rows->rows, rows->row_bytes, rows->stride,
                         io.fields[i].size());
      }
    }
    // Element sizes are powers of two: a shift and a mask, not two 64-bit
    // divisions per field of every vertex run.
    const uint64_t bytes = io.Bytes(i);
    if ((bytes & (size - 1)) != 0) {
      return MakeError("{}: field '{}' has {} bytes, not a whole number of {} elements", name_,
                       field.name, bytes, HloName(field.type));
    }
    elements[i] = bytes >> std::countr_zero(size);
    if (field.kind == FieldKind::kScalar && elements[i] != 1) {
      return MakeError("{}: scalar field '{}' has {} elements", name_, field.name, elements[i]);
    }
  }
  if (auto status = CheckShape({elements, io.params}); !status) {
    return status.error().Within(name_);
  }
  return {};
}

std::span<const std::byte> DenseField(const VertexIo& io, size_t field) {
  const FieldRows* rows = io.Rows(field);
  if (rows == nullptr) return io.fields[field];
  thread_local std::vector<std::vector<std::byte>> buffers;
  if (buffers.size() <= field) buffers.resize(field + 1);
  std::vector<std::byte>& buffer = buffers[field];
  buffer.resize(rows->bytes());
  for (uint64_t r = 0; r < rows->rows; ++r) {
    std::memcpy(buffer.data() + r * rows->row_bytes, io.fields[field].data() + rows->Offset(r),
                rows->row_bytes);
  }
  return buffer;
}

Status CheckSameSize(const Codelet& codelet, const VertexShape& shape, size_t a, size_t b) {
  if (shape.field_elements[a] == shape.field_elements[b]) return {};
  const auto fields = codelet.fields();
  return MakeError("field '{}' has {} elements, '{}' has {}", fields[b].name,
                   shape.field_elements[b], fields[a].name, shape.field_elements[a]);
}

}  // namespace tileprof::engine
