// Gather and scatter codelets. See gather.h.
#include "engine/codelets/gather.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/index_walk.h"
#include "engine/codelets/numeric.h"

namespace tileprof::engine {
namespace {

using index_walk::FirstElement;
using index_walk::IsIndexType;
using index_walk::LoadIndex;
using index_walk::Odometer;
using index_walk::Product;

constexpr uint32_t kMaxRank = 16;

uint64_t Flat(std::span<const uint32_t> dims, std::span<const uint64_t> coords) {
  uint64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + coords[d];
  return flat;
}

// The parameter layout shared by both codelets: named groups of per-dimension
// values, located by offset.
struct Layout {
  uint32_t op_rank, idx_rank, res_rank;  // res: the output (gather), updates (scatter)
  bool gather;
  // Offsets into the parameter list.
  size_t OutSize() const { return 1; }  // gather only
  size_t OpSize() const { return gather ? 1 + res_rank : 1; }
  size_t IdxSize() const { return OpSize() + op_rank; }
  size_t UpdSize() const { return IdxSize() + idx_rank; }  // scatter only
  size_t IndexVectorDim() const { return gather ? IdxSize() + idx_rank : UpdSize() + res_rank; }
  size_t ResSrc() const { return IndexVectorDim() + 1; }
  size_t Start() const { return ResSrc() + res_rank; }
  size_t SliceSize() const { return Start() + op_rank; }  // gather only
  // The box of the operand (gather) / updates (scatter) the vertex holds.
  size_t BoxRank() const { return gather ? op_rank : res_rank; }
  size_t BoxLo() const { return gather ? SliceSize() + op_rank : Start() + op_rank; }
  size_t BoxSize() const { return BoxLo() + BoxRank(); }
  // The box of the indices the vertex holds.
  size_t IdxBoxLo() const { return BoxSize() + BoxRank(); }
  size_t IdxBoxSize() const { return IdxBoxLo() + idx_rank; }

  std::vector<std::string> Names() const {
    std::vector<std::string> names = {"first"};
    const auto add = [&](std::string_view base, uint32_t n) {
      for (uint32_t i = 0; i < n; ++i) names.push_back(fmt::format("{}{}", base, i));
    };
    if (gather) add("outSize", res_rank);
    add("opSize", op_rank);
    add("idxSize", idx_rank);
    if (!gather) add("updSize", res_rank);
    names.push_back("indexVectorDim");
    add(gather ? "outSrc" : "updSrc", res_rank);
    add("start", op_rank);
    if (gather) add("sliceSize", op_rank);
    add(gather ? "opBoxLo" : "updBoxLo", BoxRank());
    add(gather ? "opBoxSize" : "updBoxSize", BoxRank());
    add("idxBoxLo", idx_rank);
    add("idxBoxSize", idx_rank);
    names.push_back("firstHigh");  // the high 32 bits of `first`
    return names;
  }
};

// Per-vertex decoding of the dimension numbers, checked.
struct Decoded {
  std::span<const uint32_t> res_dims, op_dims, idx_dims, res_src, start, box_lo, box_size;
  std::span<const uint32_t> idx_lo, idx_size;  // the indices' box
  std::vector<uint32_t> window;                // window / slice size per operand dimension
  uint32_t ivd = 0;
  uint64_t components = 1;  // entries of the index vector
};

Expected<Decoded> Decode(const Layout& l, std::span<const uint32_t> p) {
  Decoded d;
  d.res_dims = p.subspan(l.gather ? l.OutSize() : l.UpdSize(), l.res_rank);
  d.op_dims = p.subspan(l.OpSize(), l.op_rank);
  d.idx_dims = p.subspan(l.IdxSize(), l.idx_rank);
  d.res_src = p.subspan(l.ResSrc(), l.res_rank);
  d.start = p.subspan(l.Start(), l.op_rank);
  d.ivd = p[l.IndexVectorDim()];
  d.box_lo = p.subspan(l.BoxLo(), l.BoxRank());
  d.box_size = p.subspan(l.BoxSize(), l.BoxRank());
  d.idx_lo = p.subspan(l.IdxBoxLo(), l.idx_rank);
  d.idx_size = p.subspan(l.IdxBoxSize(), l.idx_rank);
  const auto boxed = l.gather ? d.op_dims : d.res_dims;
  for (size_t i = 0; i < l.BoxRank(); ++i) {
    if (static_cast<uint64_t>(d.box_lo[i]) + d.box_size[i] > boxed[i]) {
      return MakeError("box [{}, +{}) in dimension {} exceeds its {} elements", d.box_lo[i],
                       d.box_size[i], i, boxed[i]);
    }
  }
  for (size_t k = 0; k < l.idx_rank; ++k) {
    if (static_cast<uint64_t>(d.idx_lo[k]) + d.idx_size[k] > d.idx_dims[k]) {
      return MakeError("indices box [{}, +{}) in dimension {} exceeds its {} elements", d.idx_lo[k],
                       d.idx_size[k], k, d.idx_dims[k]);
    }
  }
  if (d.ivd > l.idx_rank) {
    return MakeError("indexVectorDim {} beyond the indices' rank {}", d.ivd, l.idx_rank);
  }
  if (d.ivd < l.idx_rank && (d.idx_lo[d.ivd] != 0 || d.idx_size[d.ivd] != d.idx_dims[d.ivd])) {
    return MakeError("indices box does not hold the whole index vector dimension {}", d.ivd);
  }
  d.components = d.ivd < l.idx_rank ? d.idx_dims[d.ivd] : 1;
  if (l.gather) {
    const auto slice = p.subspan(l.SliceSize(), l.op_rank);
    d.window.assign(slice.begin(), slice.end());
  } else {
    d.window.assign(l.op_rank, 1);
  }
  std::vector<bool> seen_op(l.op_rank, false), seen_idx(l.idx_rank, false);
  for (uint32_t r = 0; r < l.res_rank; ++r) {
    const uint32_t src = d.res_src[r];
    if (src < l.op_rank) {
      if (seen_op[src])
        return MakeError("operand dimension {} is the source of two dimensions", src);
      seen_op[src] = true;
      if (l.gather) {
        if (d.res_dims[r] != d.window[src]) {
          return MakeError("output dimension {} has {} elements, slice size {} is {}", r,
                           d.res_dims[r], src, d.window[src]);
        }
      } else {
        d.window[src] = d.res_dims[r];
      }
    } else if (src - l.op_rank < l.idx_rank && src - l.op_rank != d.ivd) {
      const uint32_t k = src - l.op_rank;
      if (seen_idx[k]) return MakeError("indices dimension {} is the source of two dimensions", k);
      seen_idx[k] = true;
      if (d.res_dims[r] != d.idx_dims[k]) {
        return MakeError("dimension {} has {} elements, indices dimension {} has {}", r,
                         d.res_dims[r], k, d.idx_dims[k]);
      }
    } else {
      return MakeError("dimension {} has source code {}, not an operand or batch dimension", r,
                       src);
    }
  }
  for (uint32_t k = 0; k < l.idx_rank; ++k) {
    if (k != d.ivd && !seen_idx[k]) return MakeError("indices dimension {} feeds no dimension", k);
  }
  for (uint32_t j = 0; j < l.op_rank; ++j) {
    if (d.window[j] > d.op_dims[j]) {
      return MakeError("window of {} in operand dimension {} of {}", d.window[j], j, d.op_dims[j]);
    }
    const uint32_t s = d.start[j];
    if (s >= kStartFromBatch) {
      const uint32_t k = s - kStartFromBatch;
      if (k >= l.idx_rank || k == d.ivd)
        return MakeError("start{} reads indices dimension {}", j, s);
    } else if (s > d.components) {
      return MakeError("start{} reads component {} of an index vector of {}", j, s - 1,
                       d.components);
    }
  }
  return d;
}

// The operand start of one index vector: idx holds the batch coordinates
// (the index vector dimension is set here), `indices` the indices' box.
// Error when a coordinate lies outside the box.
Status Starts(const Decoded& d, ElementType index, std::span<const std::byte> indices,
              std::vector<uint64_t>& idx, std::vector<uint64_t>& in_box,
              std::vector<int64_t>& start) {
  for (size_t j = 0; j < d.start.size(); ++j) {
    const uint32_t s = d.start[j];
    if (s == 0) {
      start[j] = 0;
    } else if (s >= kStartFromBatch) {
      start[j] = static_cast<int64_t>(idx[s - kStartFromBatch]);
    } else {
      if (d.ivd < idx.size()) idx[d.ivd] = s - 1;
      for (size_t k = 0; k < idx.size(); ++k) {
        if (idx[k] < d.idx_lo[k] || idx[k] - d.idx_lo[k] >= d.idx_size[k])
          return MakeError("reads indices outside the connected box in dimension {}", k);
        in_box[k] = idx[k] - d.idx_lo[k];
      }
      start[j] = LoadIndex(index, indices, Flat(d.idx_size, in_box));
    }
  }
  return {};
}

class GatherCodelet final : public Codelet {
 public:
  GatherCodelet(ElementType type, ElementType index, uint32_t op_rank, uint32_t idx_rank,
                uint32_t out_rank)
      : Codelet(GatherCodeletName(type, index, op_rank, idx_rank, out_rank), ExecutionKind::kWorker,
                {In("operand", type), In("indices", index), Out("out", type, VectorLayout::kSpan)},
                Layout{op_rank, idx_rank, out_rank, true}.Names(), kGatherCodeBytes),
        type_(type),
        index_(index),
        layout_{op_rank, idx_rank, out_rank, true} {}

  Status CheckShape(const VertexShape& shape) const override {
    TILEPROF_ASSIGN_OR_RETURN(Decoded d, Decode(layout_, shape.params));
    TILEPROF_RETURN_IF_ERROR(CheckFields(shape, d));
    const uint64_t total = Product(d.res_dims), first = FirstElement(shape.params);
    if (first > total || shape.field_elements[2] > total - first) {
      return MakeError("field 'out' has {} elements from element {}, beyond the {} of the result",
                       shape.field_elements[2], first, total);
    }
    return {};
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return cost::WorkerLoop(shape.field_elements[2], 1, kGatherCyclesPerElement);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    TILEPROF_ASSIGN_OR_RETURN(Decoded d, Decode(layout_, io.params));
    const size_t size = SizeOf(type_);
    const uint64_t count = Count(io, 2);
    std::vector<uint64_t> idx(layout_.idx_rank, 0), in_box(layout_.idx_rank);
    std::vector<uint64_t> offset(layout_.op_rank), op(layout_.op_rank);
    std::vector<int64_t> start(layout_.op_rank);
    Odometer o(d.res_dims, FirstElement(io.params));
    for (uint64_t q = 0; q < count; ++q, o.Next()) {
      std::fill(offset.begin(), offset.end(), 0);
      for (uint32_t r = 0; r < layout_.res_rank; ++r) {
        if (d.res_src[r] < layout_.op_rank)
          offset[d.res_src[r]] = o[r];
        else
          idx[d.res_src[r] - layout_.op_rank] = o[r];
      }
      TILEPROF_RETURN_IF_ERROR(Starts(d, index_, io.fields[1], idx, in_box, start));
      for (uint32_t j = 0; j < layout_.op_rank; ++j) {
        const int64_t s = std::clamp<int64_t>(start[j], 0, d.op_dims[j] - d.window[j]);
        const uint64_t c = static_cast<uint64_t>(s) + offset[j];
        if (c < d.box_lo[j] || c - d.box_lo[j] >= d.box_size[j]) {
          return MakeError(
              "output element {} reads outside the connected box in operand "
              "dimension {}",
              FirstElement(io.params) + q, j);
        }
        op[j] = c - d.box_lo[j];
      }
      std::memcpy(io.fields[2].data() + q * size, io.fields[0].data() + Flat(d.box_size, op) * size,
                  size);
    }
    return {};
  }

 private:
  Status CheckFields(const VertexShape& shape, const Decoded& d) const {
    if (shape.field_elements[0] != Product(d.box_size)) {
      return MakeError("field 'operand' has {} elements, its box {}", shape.field_elements[0],
                       Product(d.box_size));
    }
    if (shape.field_elements[1] != Product(d.idx_size)) {
      return MakeError("field 'indices' has {} elements, its box {}", shape.field_elements[1],
                       Product(d.idx_size));
    }
    return {};
  }

  ElementType type_, index_;
  Layout layout_;
};

template <typename C>
C Combine(ScatterCombiner combiner, C a, C b) {
  switch (combiner) {
    case ScatterCombiner::kAssign:
      return b;
    case ScatterCombiner::kAdd:
      if constexpr (numeric::kIsInt<C>)
        return numeric::WrapAdd(a, b);
      else if constexpr (numeric::kIsFloat<C>)
        return a + b;
      else
        return a || b;
    case ScatterCombiner::kMul:
      if constexpr (numeric::kIsInt<C>)
        return numeric::WrapMul(a, b);
      else if constexpr (numeric::kIsFloat<C>)
        return a * b;
      else
        return a && b;
    case ScatterCombiner::kMax:
      return numeric::Max(a, b);
    case ScatterCombiner::kMin:
      return numeric::Min(a, b);
    case ScatterCombiner::kAnd:
      if constexpr (numeric::kIsFloat<C>)
        return b;  // refused by the factory
      else
        return a & b;
    case ScatterCombiner::kOr:
      if constexpr (numeric::kIsFloat<C>)
        return b;  // refused by the factory
      else
        return a | b;
  }
  return b;
}

class ScatterCodelet final : public Codelet {
 public:
  ScatterCodelet(ElementType type, ElementType index, ScatterCombiner combiner, uint32_t op_rank,
                 uint32_t idx_rank, uint32_t upd_rank)
      : Codelet(ScatterCodeletName(type, index, combiner, op_rank, idx_rank, upd_rank),
                ExecutionKind::kWorker,
                {In("operand", type), In("indices", index), In("updates", type),
                 Out("out", type, VectorLayout::kSpan)},
                Layout{op_rank, idx_rank, upd_rank, false}.Names(), kScatterCodeBytes),
        type_(type),
        index_(index),
        combiner_(combiner),
        layout_{op_rank, idx_rank, upd_rank, false} {}

  Status CheckShape(const VertexShape& shape) const override {
    TILEPROF_ASSIGN_OR_RETURN(Decoded d, Decode(layout_, shape.params));
    TILEPROF_RETURN_IF_ERROR(CheckSameSize(*this, shape, 0, 3));
    if (shape.field_elements[1] != Product(d.idx_size)) {
      return MakeError("field 'indices' has {} elements, its box {}", shape.field_elements[1],
                       Product(d.idx_size));
    }
    if (shape.field_elements[2] != Product(d.box_size)) {
      return MakeError("field 'updates' has {} elements, its box {}", shape.field_elements[2],
                       Product(d.box_size));
    }
    for (uint32_t j = 0; j < layout_.op_rank; ++j) {
      if (d.start[j] >= kStartFromBatch && d.window[j] != 1) {
        return MakeError("operand dimension {} is a batching dimension with a window", j);
      }
    }
    const uint64_t total = Product(d.op_dims), first = FirstElement(shape.params);
    if (first > total || shape.field_elements[3] > total - first) {
      return MakeError("field 'out' has {} elements from element {}, beyond the {} of the result",
                       shape.field_elements[3], first, total);
    }
    return {};
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return cost::WorkerLoop(1, 1,
                            kScatterCyclesPerUpdate * shape.field_elements[2] +
                                kScatterCyclesPerElement * shape.field_elements[3]);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    TILEPROF_ASSIGN_OR_RETURN(Decoded d, Decode(layout_, io.params));
    const size_t size = SizeOf(type_);
    const uint64_t first = FirstElement(io.params), count = Count(io, 3);
    std::memcpy(io.fields[3].data(), io.fields[0].data(), count * size);
    const uint64_t updates = Count(io, 2);
    std::vector<uint64_t> idx(layout_.idx_rank, 0), in_box(layout_.idx_rank);
    std::vector<uint64_t> offset(layout_.op_rank), op(layout_.op_rank);
    std::vector<int64_t> start(layout_.op_rank);
    Status status;
    numeric::Dispatch(type_, [&](auto tag) {
      constexpr ElementType kType = decltype(tag)::value;
      // The box in row-major order keeps the updates' relative order.
      Odometer u(d.box_size, 0);
      for (uint64_t e = 0; e < updates; ++e, u.Next()) {
        std::fill(offset.begin(), offset.end(), 0);
        for (uint32_t r = 0; r < layout_.res_rank; ++r) {
          const uint64_t c = u[r] + d.box_lo[r];
          if (d.res_src[r] < layout_.op_rank)
            offset[d.res_src[r]] = c;
          else
            idx[d.res_src[r] - layout_.op_rank] = c;
        }
        status = Starts(d, index_, io.fields[1], idx, in_box, start);
        if (!status) return;
        bool inside = true;
        for (uint32_t j = 0; j < layout_.op_rank && inside; ++j) {
          // XLA skips the whole window when it does not fit the operand.
          inside = start[j] >= 0 && start[j] <= static_cast<int64_t>(d.op_dims[j] - d.window[j]);
          op[j] = static_cast<uint64_t>(start[j]) + offset[j];
        }
        if (!inside) continue;
        const uint64_t flat = Flat(d.op_dims, op);
        if (flat < first || flat - first >= count) continue;
        const auto current = numeric::Get<kType>(io.fields[3], flat - first);
        numeric::Put<kType>(io.fields[3], flat - first,
                            Combine(combiner_, current, numeric::Get<kType>(io.fields[2], e)));
      }
    });
    return status;
  }

 private:
  ElementType type_, index_;
  ScatterCombiner combiner_;
  Layout layout_;
};

Status CheckRank(uint32_t rank, uint32_t min, std::string_view what) {
  if (rank < min || rank > kMaxRank) {
    return MakeError("{} rank {} outside [{}, {}]", what, rank, min, kMaxRank);
  }
  return {};
}

constexpr std::string_view kCombinerNames[] = {"assign", "add", "mul", "max", "min", "and", "or"};

}  // namespace

std::string_view ScatterCombinerName(ScatterCombiner combiner) {
  return kCombinerNames[static_cast<size_t>(combiner)];
}

std::optional<ScatterCombiner> ParseScatterCombiner(std::string_view name) {
  for (size_t i = 0; i < std::size(kCombinerNames); ++i) {
    if (kCombinerNames[i] == name) return static_cast<ScatterCombiner>(i);
  }
  return std::nullopt;
}

std::string GatherCodeletName(ElementType type, ElementType index, uint32_t op_rank,
                              uint32_t idx_rank, uint32_t out_rank) {
  return fmt::format("tileprof::Gather<{},{},{},{},{}>", PoplarName(type), PoplarName(index),
                     op_rank, idx_rank, out_rank);
}

std::string ScatterCodeletName(ElementType type, ElementType index, ScatterCombiner combiner,
                               uint32_t op_rank, uint32_t idx_rank, uint32_t upd_rank) {
  return fmt::format("tileprof::Scatter<{},{},{},{},{},{}>", PoplarName(type), PoplarName(index),
                     ScatterCombinerName(combiner), op_rank, idx_rank, upd_rank);
}

Expected<std::unique_ptr<Codelet>> MakeGatherCodelet(ElementType type, ElementType index,
                                                     uint32_t op_rank, uint32_t idx_rank,
                                                     uint32_t out_rank) {
  TILEPROF_RETURN_IF_ERROR(CheckRank(op_rank, 1, "gather operand"));
  TILEPROF_RETURN_IF_ERROR(CheckRank(idx_rank, 0, "gather indices"));
  TILEPROF_RETURN_IF_ERROR(CheckRank(out_rank, 0, "gather result"));
  if (!IsIndexType(index)) return MakeError("gather indices of type {}", HloName(index));
  return std::unique_ptr<Codelet>(new GatherCodelet(type, index, op_rank, idx_rank, out_rank));
}

Expected<std::unique_ptr<Codelet>> MakeScatterCodelet(ElementType type, ElementType index,
                                                      ScatterCombiner combiner, uint32_t op_rank,
                                                      uint32_t idx_rank, uint32_t upd_rank) {
  TILEPROF_RETURN_IF_ERROR(CheckRank(op_rank, 1, "scatter operand"));
  TILEPROF_RETURN_IF_ERROR(CheckRank(idx_rank, 0, "scatter indices"));
  TILEPROF_RETURN_IF_ERROR(CheckRank(upd_rank, 0, "scatter updates"));
  if (!IsIndexType(index)) return MakeError("scatter indices of type {}", HloName(index));
  const bool is_float = numeric::Dispatch(type, [](auto tag) {
    return numeric::kIsFloat<typename numeric::Traits<decltype(tag)::value>::Compute>;
  });
  if ((combiner == ScatterCombiner::kAnd || combiner == ScatterCombiner::kOr) && is_float) {
    return MakeError("scatter combiner {} on {}", ScatterCombinerName(combiner), HloName(type));
  }
  return std::unique_ptr<Codelet>(
      new ScatterCodelet(type, index, combiner, op_rank, idx_rank, upd_rank));
}

}  // namespace tileprof::engine
