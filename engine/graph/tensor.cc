// Tensor views. See tensor.h.
#include "engine/graph/tensor.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "common/checked.h"
#include "engine/graph/region_list.h"

namespace tileprof::engine {
namespace {

std::string ShapeText(std::span<const uint64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

// Finds, for a flat element index, the region holding it, using the prefix
// sums of the region sizes (binary search, so views of fragmented tensors
// stay O(n log r)).
class RegionIndex {
 public:
  // A tensor of one region (most views cut while lowering) needs no starts:
  // a vector of one was a malloc and a free per view.
  explicit RegionIndex(std::span<const TensorRegion> regions) : regions_(regions) {
    if (regions.size() <= 1) return;
    starts_.reserve(regions.size());
    uint64_t start = 0;
    for (const TensorRegion& region : regions) {
      starts_.push_back(start);
      start += region.size();
    }
  }

  // Appends flat elements [from, to) (within range) to `out`.
  void Append(uint64_t from, uint64_t to, std::vector<TensorRegion>& out) const {
    if (from >= to) return;
    if (starts_.empty()) {
      const TensorRegion& region = regions_[0];
      AppendRegion(out, region.variable, region.begin + from, region.begin + to);
      return;
    }
    auto it = std::upper_bound(starts_.begin(), starts_.end(), from);
    size_t index = static_cast<size_t>(it - starts_.begin()) - 1;
    while (from < to) {
      const TensorRegion& region = regions_[index];
      const uint64_t offset = from - starts_[index];
      const uint64_t take = std::min(region.size() - offset, to - from);
      AppendRegion(out, region.variable, region.begin + offset, region.begin + offset + take);
      from += take;
      ++index;
    }
  }

 private:
  std::span<const TensorRegion> regions_;
  std::vector<uint64_t> starts_;
};

// Per-dimension scratch (strides, positions) for the views cut millions of
// times while lowering: on the stack for the usual ranks, where a vector
// each was a malloc and a free per view.
class DimBuffer {
 public:
  explicit DimBuffer(size_t size, uint64_t value = 0) : size_(size) {
    if (size > kInline) heap_.resize(size);
    std::fill_n(data(), size, value);
  }
  uint64_t* data() { return size_ > kInline ? heap_.data() : inline_; }
  uint64_t& operator[](size_t i) { return data()[i]; }
  operator std::span<const uint64_t>() { return {data(), size_}; }

 private:
  static constexpr size_t kInline = 8;
  size_t size_;
  uint64_t inline_[kInline];
  std::vector<uint64_t> heap_;
};

uint64_t Product(std::span<const uint64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), uint64_t{1},
                         [](uint64_t a, uint64_t b) { return a * b; });
}

// The regions of the box [lo[d], lo[d] + size[d]) of a tensor of `shape`
// whose regions `index` indexes, where k is the innermost dimension the box
// does not take whole: each row of the box is then one contiguous run of
// size[k] slabs in the tensor's element order.
// Appends them to `regions` (merging with its last run).
void AppendBoxRegions(const RegionIndex& index, std::span<const uint64_t> shape,
                      std::span<const uint64_t> lo, std::span<const uint64_t> size, size_t k,
                      std::vector<TensorRegion>& regions) {
  if (Product(size) == 0) return;
  const size_t rank = shape.size();
  DimBuffer strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  const uint64_t run = size[k] * strides[k];
  const uint64_t rows = Product(size.first(k));
  regions.reserve(regions.size() + std::min<uint64_t>(rows, uint64_t{1} << 20));
  DimBuffer position(k);
  std::copy_n(lo.begin(), k, position.data());
  for (uint64_t row = 0; row < rows; ++row) {
    uint64_t flat = lo[k] * strides[k];
    for (size_t d = 0; d < k; ++d) flat += position[d] * strides[d];
    index.Append(flat, flat + run, regions);
    for (size_t d = k; d-- > 0;) {
      if (++position[d] < lo[d] + size[d]) break;
      position[d] = lo[d];
    }
  }
}

}  // namespace

Expected<uint64_t> ElementCount(std::span<const uint64_t> shape) {
  uint64_t count = 1;
  for (uint64_t dim : shape) {
    const auto next = CheckedMul(count, dim);
    if (!next) return MakeError("shape {} has too many elements", ShapeText(shape));
    count = *next;
  }
  return count;
}

Tensor Tensor::OfVariable(VariableId variable, ElementType type, std::vector<uint64_t> shape) {
  const uint64_t count = Product(shape);
  std::vector<TensorRegion> regions;
  AppendRegion(regions, {variable, 0, count});
  return Tensor(type, std::move(shape), std::move(regions));
}

Expected<Tensor> Tensor::FromRegions(ElementType type, std::vector<uint64_t> shape,
                                     std::span<const TensorRegion> regions) {
  TILEPROF_ASSIGN_OR_RETURN(uint64_t count, ElementCount(shape));
  uint64_t total = 0;
  std::vector<TensorRegion> runs;
  runs.reserve(regions.size());
  for (const TensorRegion& region : regions) {
    if (region.begin > region.end || region.end - region.begin > count - total) {
      return MakeError("tensor {}: run [{}, {}) of variable {} does not fit its {} elements",
                       ShapeText(shape), region.begin, region.end, region.variable, count);
    }
    total += region.end - region.begin;
    if (region.end > region.begin) AppendRegion(runs, region);
  }
  if (total != count) {
    return MakeError("tensor {}: runs hold {} elements, the shape {}", ShapeText(shape), total,
                     count);
  }
  return Tensor(type, std::move(shape), std::move(runs));
}

uint64_t Tensor::NumElements() const { return Product(shape_); }

bool Tensor::HasAliases() const { return engine::HasAliases(regions_); }

bool HasAliases(std::span<const TensorRegion> regions) {
  // Most written fields are runs in increasing order: no copy to sort then.
  bool ordered = true;
  for (size_t i = 1; ordered && i < regions.size(); ++i) {
    const TensorRegion& a = regions[i - 1];
    const TensorRegion& b = regions[i];
    ordered = a.variable < b.variable || (a.variable == b.variable && a.end <= b.begin);
  }
  if (ordered) return false;
  std::vector<TensorRegion> sorted(regions.begin(), regions.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.variable != b.variable ? a.variable < b.variable : a.begin < b.begin;
  });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].variable == sorted[i - 1].variable && sorted[i].begin < sorted[i - 1].end) {
      return true;
    }
  }
  return false;
}

Expected<Tensor> Tensor::Slice(uint64_t begin, uint64_t end, size_t dim) const {
  if (!valid_) return MakeError("slice of an invalid tensor");
  if (dim >= shape_.size()) {
    return MakeError("slice of dimension {} of {}: no such dimension", dim, ShapeString());
  }
  if (begin > end || end > shape_[dim]) {
    return MakeError("slice [{}, {}) of dimension {} out of range for {}", begin, end, dim,
                     ShapeString());
  }
  if (begin == 0 && end == shape_[dim]) return *this;  // whole: no walk over the rows
  DimBuffer lo(shape_.size());
  std::vector<uint64_t> shape = shape_;
  lo[dim] = begin;
  shape[dim] = end - begin;
  std::vector<TensorRegion> regions;
  AppendBoxRegions(RegionIndex(regions_), shape_, lo, shape, dim, regions);
  return Tensor(type_, std::move(shape), std::move(regions));
}

Expected<Tensor> Tensor::Index(uint64_t i) const {
  if (!valid_) return MakeError("index of an invalid tensor");
  if (shape_.empty()) return MakeError("cannot index scalar {}", ShapeString());
  if (i >= shape_[0]) {
    return MakeError("index {} out of range for {}", i, ShapeString());
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor sliced, Slice(i, i + 1, 0));
  sliced.shape_.erase(sliced.shape_.begin());
  return sliced;
}

Expected<Tensor> Tensor::Reshape(std::vector<uint64_t> shape) const {
  if (!valid_) return MakeError("reshape of an invalid tensor");
  TILEPROF_ASSIGN_OR_RETURN(uint64_t count, ElementCount(shape));
  if (count != NumElements()) {
    return MakeError("cannot reshape {} ({} elements) to {} ({} elements)", ShapeString(),
                     NumElements(), ShapeText(shape), count);
  }
  return Tensor(type_, std::move(shape), regions_);
}

Tensor Tensor::Flatten() const {
  if (!valid_) return Tensor();
  return Tensor(type_, {NumElements()}, regions_);
}

Expected<Tensor> Tensor::Dimshuffle(std::span<const size_t> permutation) const {
  if (!valid_) return MakeError("dimshuffle of an invalid tensor");
  const size_t rank = shape_.size();
  std::vector<bool> seen(rank, false);
  bool is_permutation = permutation.size() == rank;
  for (size_t i = 0; is_permutation && i < rank; ++i) {
    if (permutation[i] >= rank || seen[permutation[i]])
      is_permutation = false;
    else
      seen[permutation[i]] = true;
  }
  if (!is_permutation) {
    return MakeError("dimshuffle [{}] is not a permutation of the {} dimensions of {}",
                     fmt::join(permutation, ","), rank, ShapeString());
  }
  std::vector<uint64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * shape_[d];
  std::vector<uint64_t> out_shape(rank);
  std::vector<uint64_t> out_strides(rank);  // input stride of each output dim
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = shape_[permutation[i]];
    out_strides[i] = in_strides[permutation[i]];
  }
  const uint64_t count = NumElements();
  std::vector<TensorRegion> regions;
  if (count == 0) return Tensor(type_, std::move(out_shape), std::move(regions));
  // When the innermost dimension stays innermost, whole rows stay contiguous.
  const bool rows = rank > 0 && permutation[rank - 1] == rank - 1;
  const uint64_t run = rows ? out_shape[rank - 1] : 1;
  const size_t odometer_dims = rows ? rank - 1 : rank;
  std::vector<uint64_t> position(odometer_dims, 0);
  const RegionIndex index(regions_);
  for (uint64_t emitted = 0; emitted < count; emitted += run) {
    uint64_t flat = 0;
    for (size_t d = 0; d < odometer_dims; ++d) flat += position[d] * out_strides[d];
    index.Append(flat, flat + run, regions);
    for (size_t d = odometer_dims; d-- > 0;) {
      if (++position[d] < out_shape[d]) break;
      position[d] = 0;
    }
  }
  return Tensor(type_, std::move(out_shape), std::move(regions));
}

Expected<Tensor> Tensor::Concat(std::span<const Tensor> tensors, size_t dim) {
  if (tensors.empty()) return MakeError("concat of no tensors");
  const Tensor& first = tensors.front();
  if (!first.valid_) return MakeError("concat of an invalid tensor");
  if (dim >= first.Rank()) {
    return MakeError("concat along dimension {} of {}: no such dimension", dim,
                     first.ShapeString());
  }
  std::vector<uint64_t> shape = first.shape_;
  shape[dim] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    bool compatible = t.valid_ && t.type_ == first.type_ && t.Rank() == first.Rank();
    for (size_t d = 0; compatible && d < t.Rank(); ++d) {
      if (d != dim && t.shape_[d] != first.shape_[d]) compatible = false;
    }
    if (!compatible) {
      return MakeError("concat along dimension {}: operand {} is {}, operand 0 is {}", dim, i,
                       t.valid_ ? t.ShapeString() : "invalid", first.ShapeString());
    }
    shape[dim] += t.shape_[dim];
  }
  const std::span<const uint64_t> dims(first.shape_);
  const uint64_t outer = Product(dims.first(dim));
  const uint64_t inner = Product(dims.subspan(dim + 1));
  std::vector<RegionIndex> indexes;
  indexes.reserve(tensors.size());
  for (const Tensor& t : tensors) indexes.emplace_back(t.regions_);
  std::vector<TensorRegion> regions;
  for (uint64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      const uint64_t block = tensors[i].shape_[dim] * inner;
      indexes[i].Append(o * block, (o + 1) * block, regions);
    }
  }
  return Tensor(first.type_, std::move(shape), std::move(regions));
}

std::string Tensor::ShapeString() const { return engine::ShapeString(type_, shape_); }

std::string ShapeString(ElementType type, std::span<const uint64_t> shape) {
  return fmt::format("{}{}", HloName(type), ShapeText(shape));
}

class TensorIndex::Index : public RegionIndex {
 public:
  using RegionIndex::RegionIndex;
};

TensorIndex::TensorIndex(Tensor tensor)
    : tensor_(std::move(tensor)), index_(std::make_unique<Index>(tensor_.regions())) {}

TensorIndex::~TensorIndex() = default;

// The innermost dimension of the box not taken whole (the rank if none),
// after checking the box against the shape: each row of the box is then
// size[k] of its slabs, contiguous in the tensor's element order.
Expected<size_t> TensorIndex::CheckBox(std::span<const uint64_t> lo,
                                       std::span<const uint64_t> size) const {
  if (!tensor_.valid()) return MakeError("box of an invalid tensor");
  const std::vector<uint64_t>& shape = tensor_.shape();
  const size_t rank = shape.size();
  if (lo.size() != rank || size.size() != rank) {
    return MakeError("box of {} given {} starts and {} sizes", tensor_.ShapeString(), lo.size(),
                     size.size());
  }
  for (size_t d = 0; d < rank; ++d) {
    if (size[d] > shape[d] || lo[d] > shape[d] - size[d]) {
      return MakeError("box [{}, {}) of dimension {} out of range for {}", lo[d], lo[d] + size[d],
                       d, tensor_.ShapeString());
    }
  }
  for (size_t d = rank; d-- > 0;) {
    if (lo[d] != 0 || size[d] != shape[d]) return d;
  }
  return rank;
}

Expected<Tensor> TensorIndex::Box(std::span<const uint64_t> lo,
                                  std::span<const uint64_t> size) const {
  TILEPROF_ASSIGN_OR_RETURN(const size_t k, CheckBox(lo, size));
  if (k == tensor_.shape().size()) return tensor_;
  std::vector<TensorRegion> regions;
  AppendBoxRegions(*index_, tensor_.shape(), lo, size, k, regions);
  return Tensor(tensor_.element_type(), std::vector<uint64_t>(size.begin(), size.end()),
                std::move(regions));
}

Status TensorIndex::AppendBox(std::span<const uint64_t> lo, std::span<const uint64_t> size,
                              std::vector<TensorRegion>& regions) const {
  TILEPROF_ASSIGN_OR_RETURN(const size_t k, CheckBox(lo, size));
  if (k == tensor_.shape().size()) {
    for (const TensorRegion& region : tensor_.regions()) AppendRegion(regions, region);
    return {};
  }
  AppendBoxRegions(*index_, tensor_.shape(), lo, size, k, regions);
  return {};
}

Status TensorIndex::AppendBoxRuns(std::span<const uint64_t> lo, std::span<const uint64_t> size,
                                  std::vector<StridedRegion>& runs) const {
  TILEPROF_ASSIGN_OR_RETURN(const size_t k, CheckBox(lo, size));
  const std::span<const TensorRegion> regions = tensor_.regions();
  if (k == 0 || k == size.size() || regions.size() != 1) {
    // Few rows (k == 0: the box is one run; k == rank: the whole tensor),
    // or regions that may join across rows: region by region.
    std::vector<TensorRegion> cut;
    TILEPROF_RETURN_IF_ERROR(AppendBox(lo, size, cut));
    size_t used = runs.size();
    runs.resize(used + cut.size());
    for (const TensorRegion& region : cut) AppendStrided(runs.data(), used, region);
    runs.resize(used);
    return {};
  }
  if (Product(size) == 0) return {};
  // One region: a row of the box (size[k] slabs) never ends where the next
  // begins (dimension k is not whole), so AppendBox's regions are the rows,
  // and the rows along dimension k - 1 are one stride apart.
  const TensorRegion& whole = regions[0];
  const size_t rank = size.size();
  DimBuffer strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * tensor_.shape()[d];
  const size_t outer = k - 1;
  const uint64_t lines = Product(size.first(outer));
  DimBuffer position(outer);
  std::copy_n(lo.begin(), outer, position.data());
  for (uint64_t line = 0; line < lines; ++line) {
    uint64_t flat = lo[k] * strides[k] + lo[outer] * strides[outer];
    for (size_t d = 0; d < outer; ++d) flat += position[d] * strides[d];
    // At most UINT32_MAX rows a run.
    for (uint64_t row = 0; row < size[outer];) {
      const uint64_t count = std::min<uint64_t>(size[outer] - row, UINT32_MAX);
      AppendStridedRows(runs, {whole.begin + flat + row * strides[outer], size[k] * strides[k],
                               static_cast<int64_t>(strides[outer]), whole.variable,
                               static_cast<uint32_t>(count)});
      row += count;
    }
    for (size_t d = outer; d-- > 0;) {
      if (++position[d] < lo[d] + size[d]) break;
      position[d] = lo[d];
    }
  }
  return {};
}

struct ViewBuilder::Source {
  explicit Source(Tensor t) : tensor(std::move(t)), index(tensor.regions()) {}
  Tensor tensor;
  RegionIndex index;
};

ViewBuilder::ViewBuilder(ElementType type) : type_(type) {}
ViewBuilder::~ViewBuilder() = default;

Expected<size_t> ViewBuilder::AddSource(Tensor source) {
  if (!source.valid()) return MakeError("view source is an invalid tensor");
  if (source.element_type() != type_) {
    return MakeError("view of {} elements given a {} source", HloName(type_), source.ShapeString());
  }
  sources_.push_back(std::make_unique<Source>(std::move(source)));
  return sources_.size() - 1;
}

Status ViewBuilder::Append(size_t source, uint64_t begin, uint64_t end) {
  if (source >= sources_.size()) return MakeError("view source {} does not exist", source);
  const Tensor& tensor = sources_[source]->tensor;
  if (begin > end || end > tensor.NumElements()) {
    return MakeError("view elements [{}, {}) out of range for source {}", begin, end,
                     tensor.ShapeString());
  }
  sources_[source]->index.Append(begin, end, regions_);
  size_ += end - begin;
  return {};
}

Expected<Tensor> ViewBuilder::Finish(std::vector<uint64_t> shape) {
  TILEPROF_ASSIGN_OR_RETURN(uint64_t count, ElementCount(shape));
  if (count != size_) {
    return MakeError("view of {} elements cannot have shape {}", size_, ShapeText(shape));
  }
  size_ = 0;
  return Tensor(type_, std::move(shape), std::move(regions_));
}

}  // namespace tileprof::engine
