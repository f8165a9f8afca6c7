// Graph::ConnectRuns: a field connected to runs as the graph keeps them
// (region_list.h), as an executable file stores them. A field of a few runs
// can hold millions of regions (the rows of a transposed view), so every
// check here works on whole runs and never lists the regions.
#include <algorithm>

#include "engine/graph/graph.h"

namespace tileprof::engine {

Expected<std::pair<uint64_t, uint64_t>> Graph::CheckRuns(
    ElementType type, std::span<const uint64_t> shape, std::span<const StridedRegion> runs) const {
  TILEPROF_ASSIGN_OR_RETURN(uint64_t count, ElementCount(shape));
  uint64_t total = 0, regions = 0;
  for (const StridedRegion& run : runs) {
    if (run.variable >= variables_.size()) {
      return MakeError("tensor refers to variable {}, which this graph does not have",
                       run.variable);
    }
    const VariableInfo& info = variables_[run.variable];
    // 128-bit: a crafted stride times a count must not wrap into range.
    const __int128 first = run.begin;
    const __int128 last =
        run.count == 0 ? first : first + static_cast<__int128>(run.stride) * (run.count - 1);
    const __int128 low = std::min(first, last);
    const __int128 high = std::max(first, last) + run.length;
    if (run.count == 0 || info.type != type || low < 0 ||
        high > static_cast<__int128>(info.num_elements)) {
      return MakeError(
          "tensor {} refers to {} regions of {} elements from element {} of {}, {} apart, which "
          "do not match it",
          ShapeString(type, shape), run.count, run.length, run.begin,
          DescribeVariable(run.variable), run.stride);
    }
    const unsigned __int128 size = static_cast<unsigned __int128>(run.length) * run.count;
    if (size > count - total) {
      return MakeError("tensor {}: its runs hold more than its {} elements",
                       ShapeString(type, shape), count);
    }
    total += static_cast<uint64_t>(size);
    regions += run.count;
  }
  if (total != count) {
    return MakeError("tensor {}: its runs hold {} elements, its shape {}", ShapeString(type, shape),
                     total, count);
  }
  return std::pair{count, regions};
}

Status Graph::ConnectRuns(VertexRef ref, size_t index, ElementType type,
                          std::span<const uint64_t> shape, std::span<const StridedRegion> runs) {
  TILEPROF_ASSIGN_OR_RETURN(FieldView * slot, UnconnectedField(ref, index));
  const auto checked = CheckRuns(type, shape, runs);
  if (!checked) return checked.error().Within(FieldPlace(ref, index));
  const auto [elements, regions] = *checked;
  TILEPROF_RETURN_IF_ERROR(CheckFieldTensor(ref, index, type, shape, elements));
  if (vertices_[ref.id].codelet->fields()[index].IsWritten()) {
    for (const StridedRegion& run : runs) {
      if (variables_[run.variable].is_constant) return WriteError(ref, index, run.variable);
    }
    switch (RunsHaveAliases(runs)) {
      case Overlap::kNone:
        break;
      case Overlap::kRepeats:
        return WriteError(ref, index, std::nullopt);
      case Overlap::kTooManyToCheck:
        return MakeError("{}: its runs interleave over more than {} regions, too many to check",
                         FieldPlace(ref, index), kMaxInterleavedRegions);
    }
  }
  if (regions > UINT32_MAX || runs.size() > UINT32_MAX) {
    return MakeError("{}: the tensor {} has too many runs", FieldPlace(ref, index),
                     ShapeString(type, shape));
  }
  const std::span<StridedRegion> stored = field_runs_.Allocate(runs.size());
  std::copy(runs.begin(), runs.end(), stored.begin());
  StoreField(ref, *slot, type, shape, elements, stored, regions);
  return {};
}

Status Graph::SetTileMapping(std::span<const StridedRegion> runs, uint32_t tile) {
  for (const StridedRegion& run : runs) {
    for (uint32_t k = 0; k < run.count; ++k) {
      const TensorRegion region = run.At(k);
      TILEPROF_RETURN_IF_ERROR(SetTileMapping(region.variable, region.begin, region.end, tile));
    }
  }
  return {};
}

}  // namespace tileprof::engine
