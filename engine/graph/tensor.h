// Tensor: a typed, shaped view of elements of one or more graph variables, in
// the spirit of the Poplar graph API (../shared/seeds/003_5bcbcef389f2c020.txt:
// `v1.slice(i, 4)`, `v2[i]`). A tensor owns no data; it lists, in row-major
// element order, the contiguous runs of variable elements it covers. Views
// (slice, index, reshape, dimshuffle, concat) only rearrange that list, so
// they are cheap and can be taken before or after tile mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/expected.h"
#include "engine/target/element_type.h"

namespace tileprof::engine {

using VariableId = uint32_t;

// Elements [begin, end) of one variable, in the variable's flat row-major
// order.
struct TensorRegion {
  VariableId variable = 0;
  uint64_t begin = 0;
  uint64_t end = 0;

  uint64_t size() const { return end - begin; }
  bool operator==(const TensorRegion&) const = default;
};

class Tensor {
 public:
  // An empty, invalid tensor (valid() is false); every view of it fails.
  Tensor() = default;

  // The whole of a variable. Used by Graph; visible for testing.
  static Tensor OfVariable(VariableId variable, ElementType type, std::vector<uint64_t> shape);
  // A tensor over explicit runs, for rebuilding a serialised graph
  // (engine/exec). Error unless every run has begin <= end and the runs hold
  // exactly as many elements as the shape. The graph checks the variables
  // when the tensor is used.
  static Expected<Tensor> FromRegions(ElementType type, std::vector<uint64_t> shape,
                                      std::span<const TensorRegion> regions);

  bool valid() const { return valid_; }
  ElementType element_type() const { return type_; }
  const std::vector<uint64_t>& shape() const { return shape_; }
  size_t Rank() const { return shape_.size(); }
  uint64_t NumElements() const;
  uint64_t NumBytes() const { return NumElements() * SizeOf(type_); }
  // The runs this tensor covers, coalesced (two adjacent runs never continue
  // one another), in element order. Their sizes sum to NumElements().
  std::span<const TensorRegion> regions() const { return regions_; }
  // True if the tensor is one run of one variable (or empty).
  bool IsContiguous() const { return regions_.size() <= 1; }
  // True if some variable element appears more than once (a broadcast-like
  // view); such a tensor cannot be written.
  bool HasAliases() const;

  // Elements [begin, end) along `dim`; the rank is kept. Poplar's
  // `t.slice(begin, end, dim)`. Error if begin > end or end > shape[dim].
  Expected<Tensor> Slice(uint64_t begin, uint64_t end, size_t dim = 0) const;
  // Element `index` of dimension 0, dropping that dimension (Poplar's
  // `t[index]`); indexing a rank-1 tensor gives a scalar (rank 0).
  Expected<Tensor> Index(uint64_t index) const;
  // Same elements, new shape; the element counts must agree.
  Expected<Tensor> Reshape(std::vector<uint64_t> shape) const;
  // Same elements as a rank-1 tensor.
  Tensor Flatten() const;
  // Permutes dimensions: result dimension i is input dimension
  // permutation[i] (Poplar's `dimShuffle`, HLO's `transpose`).
  Expected<Tensor> Dimshuffle(std::span<const size_t> permutation) const;
  // Joins tensors along `dim`; all must have the same element type, rank and
  // every other dimension.
  static Expected<Tensor> Concat(std::span<const Tensor> tensors, size_t dim = 0);

  // "f32[4,2]" (HLO style shape).
  std::string ShapeString() const;

 private:
  friend class ViewBuilder;
  friend class TensorIndex;
  Tensor(ElementType type, std::vector<uint64_t> shape, std::vector<TensorRegion> regions)
      : type_(type), shape_(std::move(shape)), regions_(std::move(regions)), valid_(true) {}

  ElementType type_ = ElementType::kF32;
  std::vector<uint64_t> shape_;
  std::vector<TensorRegion> regions_;
  bool valid_ = false;
};

// Many boxes of one tensor (a window per tile): the tensor's regions are
// indexed once, so a box costs O(rows log regions) where a Slice per
// dimension costs O(regions) each (and a fragmented source sliced once per
// tile made that quadratic).
struct StridedRegion;  // region_list.h

class TensorIndex {
 public:
  explicit TensorIndex(Tensor tensor);
  ~TensorIndex();
  TensorIndex(const TensorIndex&) = delete;
  TensorIndex& operator=(const TensorIndex&) = delete;

  const Tensor& tensor() const { return tensor_; }
  // Elements [lo[d], lo[d] + size[d]) of every dimension d; the rank is
  // kept. Error unless lo and size have one entry per dimension and the box
  // lies inside the shape.
  Expected<Tensor> Box(std::span<const uint64_t> lo, std::span<const uint64_t> size) const;
  // The box's regions appended to `regions` (merging with its last run),
  // with Box's checks: for callers that hand the runs on (Graph::
  // ConnectRegions) and would only take them out of a Tensor again.
  Status AppendBox(std::span<const uint64_t> lo, std::span<const uint64_t> size,
                   std::vector<TensorRegion>& regions) const;
  // The same regions as strided runs appended to `runs` (region_list.h:
  // exactly the runs AppendStrided makes of AppendBox's regions), for
  // Graph::ConnectRuns. A box of a one-region tensor is cut a line of rows
  // at a time, not a region per row.
  Status AppendBoxRuns(std::span<const uint64_t> lo, std::span<const uint64_t> size,
                       std::vector<StridedRegion>& runs) const;

 private:
  Expected<size_t> CheckBox(std::span<const uint64_t> lo, std::span<const uint64_t> size) const;
  class Index;
  Tensor tensor_;
  std::unique_ptr<Index> index_;
};

// Builds a view range by range from the flat elements of source tensors:
// a gather whose indices are known when the graph is built (a convolution's
// patches, a window with padding taken from a scalar). Each source is
// indexed once, so an append costs O(log regions) rather than a Slice's
// O(regions).
class ViewBuilder {
 public:
  explicit ViewBuilder(ElementType type);
  ~ViewBuilder();
  ViewBuilder(const ViewBuilder&) = delete;
  ViewBuilder& operator=(const ViewBuilder&) = delete;

  // Registers a source and returns its number. Error if it is invalid or of
  // another element type.
  // The source is kept (a temporary is moved in, not copied).
  Expected<size_t> AddSource(Tensor source);
  // Room for `regions` regions of the view (a caller that knows how many
  // runs it appends: no regrowth of a list of millions).
  void Reserve(uint64_t regions) { regions_.reserve(regions); }
  // Appends flat elements [begin, end) of source `source`. Error if out of
  // range.
  Status Append(size_t source, uint64_t begin, uint64_t end);
  uint64_t size() const { return size_; }
  // The view, as `shape` (whose element count must be size()): the
  // builder's regions move into it, so it is called once, last.
  Expected<Tensor> Finish(std::vector<uint64_t> shape);

 private:
  struct Source;
  ElementType type_;
  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<TensorRegion> regions_;
  uint64_t size_ = 0;
};

// Appends [begin, end) of `variable` to `regions`, merging it into the last
// run when it continues it. Field by field and inline: a region built on
// the stack and passed to an out-of-line call was reloaded in a way the
// store buffer could not forward (a third of the time of views cut from
// fragmented tensors).
inline void AppendRegion(std::vector<TensorRegion>& regions, VariableId variable, uint64_t begin,
                         uint64_t end) {
  if (begin == end) return;
  if (!regions.empty()) {
    TensorRegion& last = regions.back();
    if (last.variable == variable && last.end == begin) {
      last.end = end;
      return;
    }
  }
  regions.push_back(TensorRegion{variable, begin, end});
}
inline void AppendRegion(std::vector<TensorRegion>& regions, const TensorRegion& region) {
  AppendRegion(regions, region.variable, region.begin, region.end);
}

// True if some variable element appears in two of the runs.
bool HasAliases(std::span<const TensorRegion> regions);

// "f32[4,2]" (HLO style shape).
std::string ShapeString(ElementType type, std::span<const uint64_t> shape);

// Product of the dimensions, or an error naming the shape on overflow.
Expected<uint64_t> ElementCount(std::span<const uint64_t> shape);

}  // namespace tileprof::engine
