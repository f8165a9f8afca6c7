// Graph building: data, compute sets, vertices, edges, tile mapping, streams.
// Validation and statistics are in graph_check.cc.
#include "engine/graph/graph.h"

#include <fmt/format.h>

#include "engine/codelets/codelets.h"

namespace tileprof::engine {
namespace {

std::string_view DirectionName(FieldDirection direction) {
  switch (direction) {
    case FieldDirection::kInput:
      return "input";
    case FieldDirection::kOutput:
      return "output";
    case FieldDirection::kInOut:
      return "in/out";
  }
  return "?";
}

std::string FieldList(const Codelet& codelet) {
  std::string list;
  for (const FieldSpec& field : codelet.fields()) {
    list += list.empty() ? field.name : ", " + field.name;
  }
  return list.empty() ? "none" : list;
}

}  // namespace

std::string FieldView::ShapeString() const { return engine::ShapeString(type_, shape()); }

Graph::Graph(Target target) : target_(std::move(target)) {}

Expected<Tensor> Graph::AddData(ElementType type, std::vector<uint64_t> shape,
                                std::string_view name, bool is_constant,
                                std::vector<std::byte> data) {
  const char* kind = is_constant ? "constant" : "variable";
  auto count = ElementCount(shape);
  if (!count) return count.error().Within(fmt::format("{} '{}'", kind, name));
  if (is_constant && data.size() != *count * SizeOf(type)) {
    return MakeError("constant '{}' ({}{}): {} bytes of data, expected {} ({} x {})", name,
                     HloName(type), fmt::format("[{}]", fmt::join(shape, ",")), data.size(),
                     *count * SizeOf(type), *count, SizeOf(type));
  }
  if (variables_.size() >= UINT32_MAX) return MakeError("too many variables");
  const auto id = static_cast<VariableId>(variables_.size());
  Tensor tensor = Tensor::OfVariable(id, type, shape);
  variables_.push_back(VariableInfo{std::string(name), type, std::move(shape), *count, is_constant,
                                    std::move(data)});
  tile_maps_.emplace_back();
  return tensor;
}

Expected<Tensor> Graph::AddVariable(ElementType type, std::vector<uint64_t> shape,
                                    std::string_view name) {
  return AddData(type, std::move(shape), name, false, {});
}

Expected<Tensor> Graph::AddConstant(ElementType type, std::vector<uint64_t> shape,
                                    std::vector<std::byte> data, std::string_view name) {
  return AddData(type, std::move(shape), name, true, std::move(data));
}

Expected<Tensor> Graph::AddConstantFromDoubles(ElementType type, std::vector<uint64_t> shape,
                                               std::span<const double> values,
                                               std::string_view name) {
  std::vector<std::byte> data(values.size() * SizeOf(type));
  for (size_t i = 0; i < values.size(); ++i) {
    StoreFromDouble(type, values[i], data.data() + i * SizeOf(type));
  }
  return AddConstant(type, std::move(shape), std::move(data), name);
}

Expected<Tensor> Graph::AddConstantFromInts(ElementType type, std::vector<uint64_t> shape,
                                            std::span<const int64_t> values,
                                            std::string_view name) {
  std::vector<std::byte> data(values.size() * SizeOf(type));
  for (size_t i = 0; i < values.size(); ++i) {
    StoreFromInt64(type, values[i], data.data() + i * SizeOf(type));
  }
  return AddConstant(type, std::move(shape), std::move(data), name);
}

Status Graph::CheckTensorRegions(const Tensor& tensor) const {
  if (!tensor.valid()) return MakeError("invalid tensor");
  TILEPROF_RETURN_IF_ERROR(CheckRegions(tensor.element_type(), tensor.shape(), tensor.regions()));
  return {};
}

Expected<uint64_t> Graph::CheckRegions(ElementType type, std::span<const uint64_t> shape,
                                       std::span<const TensorRegion> regions) const {
  TILEPROF_ASSIGN_OR_RETURN(uint64_t count, ElementCount(shape));
  uint64_t total = 0;
  for (const TensorRegion& region : regions) {
    if (region.variable >= variables_.size()) {
      return MakeError("tensor refers to variable {}, which this graph does not have",
                       region.variable);
    }
    const VariableInfo& info = variables_[region.variable];
    if (region.begin > region.end || region.end > info.num_elements || info.type != type) {
      return MakeError("tensor {} refers to elements [{}, {}) of {}, which do not match it",
                       ShapeString(type, shape), region.begin, region.end,
                       DescribeVariable(region.variable));
    }
    if (region.size() > count - total) {
      return MakeError("tensor {}: its runs hold more than its {} elements",
                       ShapeString(type, shape), count);
    }
    total += region.size();
  }
  if (total != count) {
    return MakeError("tensor {}: its runs hold {} elements, its shape {}", ShapeString(type, shape),
                     total, count);
  }
  return count;
}

Status Graph::CheckTensor(const Tensor& tensor, std::string_view what) const {
  if (auto status = CheckTensorRegions(tensor); !status) return status.error().Within(what);
  return {};
}

Status Graph::SetTileMapping(const Tensor& tensor, uint32_t tile) {
  TILEPROF_RETURN_IF_ERROR(CheckTensor(tensor, "set tile mapping"));
  if (!target_.IsValidTile(tile)) {
    return target_.CheckTile(tile, fmt::format("set tile mapping of {}", tensor.ShapeString()));
  }
  for (const TensorRegion& region : tensor.regions()) {
    tile_maps_[region.variable].Assign(region.begin, region.end, tile);
  }
  return {};
}

Status Graph::SetTileMapping(VariableId variable, uint64_t begin, uint64_t end, uint32_t tile) {
  if (variable >= variables_.size()) {
    return MakeError("set tile mapping: no variable {} (graph has {})", variable,
                     variables_.size());
  }
  if (begin > end || end > variables_[variable].num_elements) {
    return MakeError("set tile mapping: elements [{}, {}) are not in {}", begin, end,
                     DescribeVariable(variable));
  }
  if (!target_.IsValidTile(tile)) {
    return target_.CheckTile(tile,
                             fmt::format("set tile mapping of {}", DescribeVariable(variable)));
  }
  tile_maps_[variable].Assign(begin, end, tile);
  return {};
}

ComputeSetId Graph::AddComputeSet(std::string_view name) {
  compute_sets_.push_back({std::string(name), {}});
  return static_cast<ComputeSetId>(compute_sets_.size() - 1);
}

Expected<VertexRef> Graph::AddVertex(ComputeSetId compute_set, std::string_view codelet,
                                     std::string_view debug_name) {
  const Codelet* found = nullptr;
  if (auto it = custom_codelets_.find(std::string(codelet)); it != custom_codelets_.end()) {
    found = it->second.get();
  } else {
    found = FindCodelet(codelet);
  }
  if (found == nullptr) {
    return MakeError("add vertex '{}': unknown codelet '{}'", debug_name, codelet);
  }
  return AddVertex(compute_set, *found, debug_name);
}

Expected<VertexRef> Graph::AddVertex(ComputeSetId compute_set, const Codelet& codelet,
                                     std::string_view debug_name) {
  if (compute_set >= compute_sets_.size()) {
    return MakeError("add vertex '{}' ({}): no compute set {} (graph has {})", debug_name,
                     codelet.name(), compute_set, compute_sets_.size());
  }
  if (vertices_.size() >= UINT32_MAX) return MakeError("too many vertices");
  VertexInfo info;
  info.codelet = &codelet;
  info.compute_set = compute_set;
  if (!debug_name.empty()) {
    // Consecutive vertices mostly come from one op: check the last name first.
    if (vertices_.empty() || vertices_.back().debug_name != debug_name) {
      info.debug_name = *debug_names_.emplace(debug_name).first;
    } else {
      info.debug_name = vertices_.back().debug_name;
    }
  }
  info.fields = field_slots_.Allocate(codelet.fields().size()).data();
  info.params = param_slots_.Allocate(codelet.params().size()).data();
  const auto id = static_cast<VertexId>(vertices_.size());
  vertices_.push_back(std::move(info));
  compute_sets_[compute_set].vertices.push_back(id);
  return VertexRef{id};
}

Status Graph::Connect(const FieldRef& ref, const Tensor& tensor) {
  if (ref.vertex >= vertices_.size()) {
    return MakeError("connect field '{}': no vertex {} (graph has {})", ref.field, ref.vertex,
                     vertices_.size());
  }
  const Codelet& codelet = *vertices_[ref.vertex].codelet;
  const auto index = codelet.FindField(ref.field);
  if (!index) {
    if (codelet.FindParam(ref.field)) {
      return MakeError("{}: '{}' is a parameter, not a field; use SetInitialValue",
                       DescribeVertex(ref.vertex), ref.field);
    }
    return MakeError("{}: no field '{}' (fields: {})", DescribeVertex(ref.vertex), ref.field,
                     FieldList(codelet));
  }
  return Connect(VertexRef{ref.vertex}, *index, tensor);
}

Status Graph::Connect(VertexRef ref, size_t index, const Tensor& tensor) {
  if (!tensor.valid()) {
    if (ref.id < vertices_.size() && index < vertices_[ref.id].codelet->fields().size()) {
      return MakeError("{}: field '{}': invalid tensor", DescribeVertex(ref.id),
                       vertices_[ref.id].codelet->fields()[index].name);
    }
    return MakeError("connect field {} of vertex {}: invalid tensor", index, ref.id);
  }
  return ConnectRegions(ref, index, tensor.element_type(), tensor.shape(), tensor.regions());
}

Expected<FieldView*> Graph::UnconnectedField(VertexRef ref, size_t index) {
  if (ref.id >= vertices_.size()) {
    return MakeError("connect field {}: no vertex {} (graph has {})", index, ref.id,
                     vertices_.size());
  }
  VertexInfo& vertex = vertices_[ref.id];
  if (index >= vertex.codelet->fields().size()) {
    return MakeError("{}: no field {} (fields: {})", DescribeVertex(ref.id), index,
                     FieldList(*vertex.codelet));
  }
  FieldView& slot = vertex.fields[index];
  if (slot.connected_) return MakeError("{} is already connected", FieldPlace(ref, index));
  return &slot;
}

std::string Graph::FieldPlace(VertexRef ref, size_t index) const {
  return fmt::format("{}: field '{}'", DescribeVertex(ref.id),
                     vertices_[ref.id].codelet->fields()[index].name);
}

Status Graph::CheckFieldTensor(VertexRef ref, size_t index, ElementType type,
                               std::span<const uint64_t> shape, uint64_t elements) const {
  const FieldSpec& field = vertices_[ref.id].codelet->fields()[index];
  if (type != field.type) {
    return MakeError("{} is {} ({}), the tensor is {}", FieldPlace(ref, index),
                     PoplarName(field.type), HloName(field.type), ShapeString(type, shape));
  }
  if (field.kind == FieldKind::kScalar && elements != 1) {
    return MakeError("{} is a scalar, the tensor {} has {} elements", FieldPlace(ref, index),
                     ShapeString(type, shape), elements);
  }
  if (elements == 0) {
    return MakeError("{}: the tensor {} is empty", FieldPlace(ref, index),
                     ShapeString(type, shape));
  }
  if (shape.size() > UINT8_MAX) {
    return MakeError("{}: the tensor {} has too many dimensions", FieldPlace(ref, index),
                     ShapeString(type, shape));
  }
  return {};
}

Error Graph::WriteError(VertexRef ref, size_t index, std::optional<VariableId> constant) const {
  const FieldSpec& field = vertices_[ref.id].codelet->fields()[index];
  if (constant) {
    return MakeError("{} is {} but the tensor includes {}", FieldPlace(ref, index),
                     DirectionName(field.direction), DescribeVariable(*constant));
  }
  return MakeError("{} is {} but the tensor repeats elements", FieldPlace(ref, index),
                   DirectionName(field.direction));
}

void Graph::StoreField(VertexRef ref, FieldView& slot, ElementType type,
                       std::span<const uint64_t> shape, uint64_t elements,
                       std::span<const StridedRegion> runs, uint64_t regions) {
  std::span<uint64_t> stored_dims;
  if (shape.size() != 1) {
    stored_dims = field_dims_.Allocate(shape.size());
    std::copy(shape.begin(), shape.end(), stored_dims.begin());
  }
  slot.runs_ = runs.data();
  slot.num_runs_ = static_cast<uint32_t>(runs.size());
  slot.num_regions_ = static_cast<uint32_t>(regions);
  slot.dims_ = stored_dims.data();
  slot.rank_ = static_cast<uint8_t>(shape.size());
  slot.elements_ = elements;
  slot.type_ = type;
  slot.connected_ = true;
  ++vertices_[ref.id].num_edges;
}

Status Graph::ConnectRegions(VertexRef ref, size_t index, ElementType type,
                             std::span<const uint64_t> shape,
                             std::span<const TensorRegion> regions) {
  TILEPROF_ASSIGN_OR_RETURN(FieldView * slot, UnconnectedField(ref, index));
  const Expected<uint64_t> elements = CheckRegions(type, shape, regions);
  if (!elements) return elements.error().Within(FieldPlace(ref, index));
  TILEPROF_RETURN_IF_ERROR(CheckFieldTensor(ref, index, type, shape, *elements));
  const FieldSpec& field = vertices_[ref.id].codelet->fields()[index];
  if (field.IsWritten()) {
    for (const TensorRegion& region : regions) {
      if (variables_[region.variable].is_constant) return WriteError(ref, index, region.variable);
    }
    if (HasAliases(regions)) return WriteError(ref, index, std::nullopt);
  }
  if (regions.size() > UINT32_MAX) {
    return MakeError("{}: the tensor {} has too many runs", FieldPlace(ref, index),
                     ShapeString(type, shape));
  }
  const std::span<StridedRegion> stored_runs = field_runs_.Allocate(CountStridedRuns(regions));
  size_t used = 0;
  for (const TensorRegion& region : regions) AppendStrided(stored_runs.data(), used, region);
  StoreField(ref, *slot, type, shape, *elements, stored_runs.first(used), regions.size());
  return {};
}

std::span<const FieldView> Graph::fields(VertexId id) const {
  const VertexInfo& vertex = vertices_.at(id);
  return {vertex.fields, vertex.codelet->fields().size()};
}

std::span<const std::optional<uint32_t>> Graph::params(VertexId id) const {
  const VertexInfo& vertex = vertices_.at(id);
  return {vertex.params, vertex.codelet->params().size()};
}

std::vector<uint64_t> Graph::FieldElements(VertexId id) const {
  std::vector<uint64_t> elements;
  for (const FieldView& field : fields(id)) elements.push_back(field.NumElements());
  return elements;
}

std::vector<uint32_t> Graph::ParamValues(VertexId id) const {
  std::vector<uint32_t> values;
  for (const std::optional<uint32_t>& param : params(id)) values.push_back(param.value_or(0));
  return values;
}

Status Graph::SetInitialValue(const FieldRef& ref, uint32_t value) {
  if (ref.vertex >= vertices_.size()) {
    return MakeError("set initial value of '{}': no vertex {} (graph has {})", ref.field,
                     ref.vertex, vertices_.size());
  }
  VertexInfo& vertex = vertices_[ref.vertex];
  const auto index = vertex.codelet->FindParam(ref.field);
  if (!index) {
    return MakeError("{}: no parameter '{}'{}", DescribeVertex(ref.vertex), ref.field,
                     vertex.codelet->FindField(ref.field) ? " (it is a field; use Connect)" : "");
  }
  vertex.params[*index] = value;
  return {};
}

Status Graph::SetInitialValues(VertexRef ref, std::span<const uint32_t> values) {
  if (ref.id >= vertices_.size()) {
    return MakeError("set initial values: no vertex {} (graph has {})", ref.id, vertices_.size());
  }
  const VertexInfo& vertex = vertices_[ref.id];
  const size_t count = vertex.codelet->params().size();
  if (values.size() != count) {
    return MakeError("{}: {} initial values for {} parameters", DescribeVertex(ref.id),
                     values.size(), count);
  }
  std::copy(values.begin(), values.end(), vertex.params);
  return {};
}

Status Graph::SetTileMapping(VertexRef ref, uint32_t tile) {
  if (ref.id >= vertices_.size()) {
    return MakeError("set tile mapping: no vertex {} (graph has {})", ref.id, vertices_.size());
  }
  if (!target_.IsValidTile(tile)) return target_.CheckTile(tile, DescribeVertex(ref.id));
  vertices_[ref.id].tile = tile;
  return {};
}

Status Graph::SetPerfEstimate(VertexRef ref, uint64_t cycles) {
  if (ref.id >= vertices_.size()) {
    return MakeError("set perf estimate: no vertex {} (graph has {})", ref.id, vertices_.size());
  }
  perf_estimates_[ref.id] = cycles;
  return {};
}

std::optional<uint64_t> Graph::PerfEstimate(VertexId id) const {
  const auto it = perf_estimates_.find(id);
  if (it == perf_estimates_.end()) return std::nullopt;
  return it->second;
}

Status Graph::AddCodelet(std::shared_ptr<const Codelet> codelet) {
  if (codelet == nullptr) return MakeError("add codelet: null codelet");
  const std::string& name = codelet->name();
  if (custom_codelets_.count(name) != 0 || FindCodelet(name) != nullptr) {
    return MakeError("add codelet: a codelet named '{}' already exists", name);
  }
  custom_codelets_.emplace(name, std::move(codelet));
  return {};
}

Expected<DataStream> Graph::AddStream(std::string_view name, ElementType type,
                                      uint64_t num_elements, StreamDirection direction) {
  if (num_elements == 0) return MakeError("stream '{}': zero elements per copy", name);
  for (const StreamInfo& stream : streams_) {
    if (stream.name == name) return MakeError("stream '{}' already exists", name);
  }
  streams_.push_back({std::string(name), type, num_elements, direction});
  return DataStream{static_cast<StreamId>(streams_.size() - 1)};
}

Expected<DataStream> Graph::AddHostToDeviceFifo(std::string_view name, ElementType type,
                                                uint64_t num_elements) {
  return AddStream(name, type, num_elements, StreamDirection::kHostToDevice);
}

Expected<DataStream> Graph::AddDeviceToHostFifo(std::string_view name, ElementType type,
                                                uint64_t num_elements) {
  return AddStream(name, type, num_elements, StreamDirection::kDeviceToHost);
}

const std::vector<TileRun>& Graph::TileMapping(VariableId id) const {
  return tile_maps_.at(id).Runs();
}

std::vector<MappedRegion> Graph::MapRegions(const Tensor& tensor) const {
  std::vector<MappedRegion> pieces;
  ForEachMappedRegion(tensor, [&](const MappedRegion& piece) { pieces.push_back(piece); });
  return pieces;
}

uint64_t Graph::VertexCycles(VertexId id) const {
  const VertexInfo& vertex = vertices_.at(id);
  if (const std::optional<uint64_t> estimate = PerfEstimate(id)) return *estimate;
  const std::vector<uint64_t> elements = FieldElements(id);
  const std::vector<uint32_t> params = ParamValues(id);
  return vertex.codelet->EstimateCycles({elements, params}, target_);
}

std::string Graph::DescribeVertex(VertexId id) const {
  if (id >= vertices_.size()) return fmt::format("vertex {}", id);
  const VertexInfo& vertex = vertices_[id];
  if (vertex.debug_name.empty()) {
    return fmt::format("vertex {} ({})", id, vertex.codelet->name());
  }
  return fmt::format("vertex {} '{}' ({})", id, vertex.debug_name, vertex.codelet->name());
}

std::string Graph::DescribeVariable(VariableId id) const {
  if (id >= variables_.size()) return fmt::format("variable {}", id);
  const VariableInfo& info = variables_[id];
  return fmt::format("{} {} '{}' ({}[{}])", info.is_constant ? "constant" : "variable", id,
                     info.name, HloName(info.type), fmt::join(info.shape, ","));
}

}  // namespace tileprof::engine
