// Tensor map recording (../shared/spec/tensor-map.md): the tile mapping of
// every instruction output, resolved when the instruction's value is
// complete, without keeping every view alive until the end. The one
// exception is an entry parameter not read yet: a planned conv or dot lays
// it out on its cells when it first reads it (Lowering::IsUnread), so the
// tensors holding one are counted when lowering ends (samples/oom's 33 MB
// unembedding was listed on all 1,216 tiles, where it lies on 1,002).
#include <algorithm>

#include "engine/compiler/lower.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

std::string OpName(const hlo::Instruction& instruction) {
  const hlo::Attribute* metadata = instruction.FindAttribute("metadata");
  if (metadata == nullptr) return {};
  Expected<hlo::Metadata> parsed = hlo::ParseMetadata(metadata->value());
  return parsed ? parsed->op_name : std::string();
}

// The array leaves with their flattened output-tuple index: tokens and other
// data-less leaves take an index but produce no tensor, as in XLA's shape
// leaf numbering.
void IndexedLeaves(const Value& value, uint64_t& next,
                   std::vector<std::pair<uint64_t, const Tensor*>>& out) {
  if (value.is_tuple) {
    for (const Value& element : value.elements) IndexedLeaves(element, next, out);
    return;
  }
  if (value.tensor.valid()) out.emplace_back(next, &value.tensor);
  ++next;
}

// The tiles of `tensor` and its elements on each, in tile order.
void CountTiles(const Graph& graph, const Tensor& tensor, report::MappedTensor& mapped) {
  // Pieces come in element order, not tile order; a tensor touches few
  // tiles relative to its pieces, so sort once at the end.
  std::vector<report::TileElements>& tiles = mapped.tiles;
  for (const MappedRegion& piece : graph.MapRegions(tensor)) {
    if (!piece.tile) continue;  // unmapped elements have no tile to count on
    tiles.push_back({*piece.tile, piece.region.size()});
    mapped.total_elements += piece.region.size();
  }
  std::sort(tiles.begin(), tiles.end(),
            [](const auto& a, const auto& b) { return a.tile < b.tile; });
  size_t out = 0;
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (out > 0 && tiles[out - 1].tile == tiles[i].tile)
      tiles[out - 1].elements += tiles[i].elements;
    else
      tiles[out++] = tiles[i];
  }
  tiles.resize(out);
  tiles.shrink_to_fit();  // pieces can far outnumber tiles
}

}  // namespace

void Lowering::RecordOutputs(const hlo::Instruction& instruction, const Value& value) {
  if (tensor_map_ == nullptr || !recorded_.insert(instruction.name()).second) return;
  for (; valueless_seen_ < valueless_constants_.size(); ++valueless_seen_)
    constant_variables_.insert(valueless_constants_[valueless_seen_]);
  const hlo::Computation* computation = instruction.parent();
  auto& [computation_name, tensors] = recorded_tensors_[computation ? computation->index() : 0];
  if (computation != nullptr && computation_name.empty()) computation_name = computation->name();

  std::vector<std::pair<uint64_t, const Tensor*>> leaves;
  uint64_t next = 0;
  IndexedLeaves(value, next, leaves);
  if (leaves.empty()) return;
  std::string op_name = OpName(instruction);
  for (const auto& [index, tensor] : leaves) {
    report::MappedTensor mapped;
    mapped.instruction = std::string(instruction.name());
    mapped.output_index = index;
    mapped.shape = tensor->shape();
    mapped.type = std::string(PoplarName(tensor->element_type()));
    mapped.has_aliases = tensor->HasAliases();
    mapped.op_name = op_name;
    for (const TensorRegion& region : tensor->regions()) {
      if (graph_.variable(region.variable).is_constant ||
          constant_variables_.contains(region.variable)) {
        mapped.has_constant = true;
        break;
      }
    }
    const auto regions = tensor->regions();
    if (std::any_of(regions.begin(), regions.end(),
                    [&](const TensorRegion& r) { return unread_.contains(r.variable); })) {
      deferred_tiles_.push_back({computation ? computation->index() : 0, tensors.size(), *tensor});
    } else {
      CountTiles(graph_, *tensor, mapped);
    }
    tensors.emplace_back(instruction.index(), std::move(mapped));
  }
}

void Lowering::FinishTensorMap() {
  if (tensor_map_ == nullptr) return;
  tensor_map_->computations.clear();
  for (const DeferredTiles& deferred : deferred_tiles_) {
    CountTiles(graph_, deferred.tensor,
               recorded_tensors_[deferred.computation].second[deferred.position].second);
  }
  deferred_tiles_.clear();
  for (auto& [index, entry] : recorded_tensors_) {
    auto& [name, tensors] = entry;
    std::stable_sort(tensors.begin(), tensors.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    report::ComputationTensors computation{std::move(name), {}};
    computation.tensors.reserve(tensors.size());
    for (auto& [position, tensor] : tensors) computation.tensors.push_back(std::move(tensor));
    tensor_map_->computations.push_back(std::move(computation));
  }
  recorded_tensors_.clear();
}

}  // namespace tileprof::engine::compiler
