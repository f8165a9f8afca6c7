// Index-mapped data movement codelets. See indexed.h.
#include "engine/codelets/indexed.h"

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
using index_walk::Product;
using Odometer = index_walk::SignedOdometer;

constexpr uint32_t kMaxRank = 16;

int64_t Signed(uint32_t bits) { return static_cast<int32_t>(bits); }

std::string Ranks(uint32_t a) { return fmt::format("{}", a); }

// Common base: the "first" parameter, the result's dimensions and the output
// field (the last one).
class IndexedCodelet : public Codelet {
 public:
  IndexedCodelet(std::string name, std::vector<FieldSpec> fields, std::vector<std::string> params,
                 uint32_t code_bytes, uint64_t cycles_per_element, uint32_t out_rank)
      : Codelet(std::move(name), ExecutionKind::kWorker, std::move(fields), std::move(params),
                code_bytes),
        cycles_per_element_(cycles_per_element),
        out_rank_(out_rank) {}

  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return cost::WorkerLoop(shape.field_elements.back(), 1, cycles_per_element_);
  }

 protected:
  // The output dimensions start at parameter 1.
  std::span<const uint32_t> OutDims(std::span<const uint32_t> params) const {
    return params.subspan(1, out_rank_);
  }
  Status CheckOutput(const VertexShape& shape) const {
    const uint64_t total = Product(OutDims(shape.params));
    const uint64_t first = FirstElement(shape.params);
    const uint64_t count = shape.field_elements.back();
    if (first > total || count > total - first) {
      return MakeError("field 'out' has {} elements from element {}, beyond the {} of the result",
                       count, first, total);
    }
    return {};
  }
  static Status CheckBox(const Codelet& codelet, const VertexShape& shape, size_t field,
                         std::span<const uint32_t> box_sizes) {
    const uint64_t expected = Product(box_sizes);
    if (shape.field_elements[field] != expected) {
      return MakeError("field '{}' has {} elements, its box has {}", codelet.fields()[field].name,
                       shape.field_elements[field], expected);
    }
    return {};
  }

  uint64_t cycles_per_element_;
  uint32_t out_rank_;
};

// ---- Rearrange -------------------------------------------------------------

// Parameters: first, outSize<d> (out_rank), then per source dimension j the
// nine of kRearrangeDimParams.
constexpr const char* kRearrangeDimParams[] = {"src", "mul",    "src2",  "mul2",   "add",
                                               "div", "extent", "boxLo", "boxSize"};
enum RearrangeParam : size_t { kSrc, kMul, kSrc2, kMul2, kAdd, kDiv, kExtent, kBoxLo, kBoxSize };
constexpr size_t kRearrangeDimParamCount = std::size(kRearrangeDimParams);

class RearrangeCodelet final : public IndexedCodelet {
 public:
  RearrangeCodelet(ElementType type, uint32_t in_rank, uint32_t out_rank, bool padded)
      : IndexedCodelet(RearrangeCodeletName(type, in_rank, out_rank, padded), Fields(type, padded),
                       Params(in_rank, out_rank),
                       padded ? kRearrangePaddedCodeBytes : kRearrangeCodeBytes,
                       padded ? kTestedMoveCyclesPerElement : kRearrangeCyclesPerElement, out_rank),
        type_(type),
        in_rank_(in_rank),
        padded_(padded) {}

  Status CheckShape(const VertexShape& shape) const override {
    TILEPROF_RETURN_IF_ERROR(CheckOutput(shape));
    std::vector<uint32_t> box;
    for (uint32_t j = 0; j < in_rank_; ++j) {
      const auto p = DimParams(shape.params, j);
      if (p[kSrc] >= out_rank_ || p[kSrc2] >= out_rank_) {
        return MakeError("source dimension {} reads output dimension {}, rank is {}", j,
                         std::max(p[kSrc], p[kSrc2]), out_rank_);
      }
      if (p[kDiv] == 0) return MakeError("source dimension {} has div 0", j);
      if (static_cast<uint64_t>(p[kBoxLo]) + p[kBoxSize] > p[kExtent]) {
        return MakeError("source dimension {}: box [{}, +{}) exceeds extent {}", j, p[kBoxLo],
                         p[kBoxSize], p[kExtent]);
      }
      box.push_back(p[kBoxSize]);
    }
    return CheckBox(*this, shape, 0, box);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const size_t size = SizeOf(type_);
    const std::span<const std::byte> in = io.fields[0];
    const std::span<std::byte> out = io.fields.back();
    const uint64_t count = Count(io, fields().size() - 1);
    Odometer o(OutDims(io.params), FirstElement(io.params));
    for (uint64_t q = 0; q < count; ++q, o.Next()) {
      uint64_t index = 0;
      bool is_padding = false;
      for (uint32_t j = 0; j < in_rank_ && !is_padding; ++j) {
        const auto p = DimParams(io.params, j);
        int64_t c = Signed(p[kAdd]) + Signed(p[kMul]) * o[p[kSrc]] + Signed(p[kMul2]) * o[p[kSrc2]];
        const auto div = static_cast<int64_t>(p[kDiv]);
        if (c < 0 || c % div != 0 || c / div >= static_cast<int64_t>(p[kExtent])) {
          if (padded_) {
            is_padding = true;
            break;
          }
          return MakeError("output element {} maps outside source dimension {} (coordinate {})",
                           FirstElement(io.params) + q, j, c);
        }
        c = c / div - static_cast<int64_t>(p[kBoxLo]);
        if (c < 0 || c >= static_cast<int64_t>(p[kBoxSize])) {
          return MakeError(
              "output element {} reads outside the connected box in source "
              "dimension {}",
              FirstElement(io.params) + q, j);
        }
        index = index * p[kBoxSize] + static_cast<uint64_t>(c);
      }
      const std::byte* from = is_padding ? io.fields[1].data() : in.data() + index * size;
      std::memcpy(out.data() + q * size, from, size);
    }
    return {};
  }

 private:
  static std::vector<FieldSpec> Fields(ElementType type, bool padded) {
    std::vector<FieldSpec> fields = {In("in", type)};
    if (padded) fields.push_back(ScalarIn("padding", type));
    fields.push_back(Out("out", type, VectorLayout::kSpan));
    return fields;
  }
  static std::vector<std::string> Params(uint32_t in_rank, uint32_t out_rank) {
    std::vector<std::string> params = {"first"};
    for (uint32_t d = 0; d < out_rank; ++d) params.push_back(fmt::format("outSize{}", d));
    for (uint32_t j = 0; j < in_rank; ++j)
      for (const char* name : kRearrangeDimParams) params.push_back(fmt::format("{}{}", name, j));
    params.push_back("firstHigh");
    return params;
  }
  std::span<const uint32_t> DimParams(std::span<const uint32_t> params, uint32_t j) const {
    return params.subspan(1 + out_rank_ + j * kRearrangeDimParamCount, kRearrangeDimParamCount);
  }

  ElementType type_;
  uint32_t in_rank_;
  bool padded_;
};

// ---- Dynamic slice and update ---------------------------------------------

// Parameters: first, outSize<d> (the result: the slice, or the operand for
// an update), then per dimension the size of the other side (inSize<d> of
// the operand for a slice, updSize<d> for an update), boxLo<d>, boxSize<d>.
class DynamicSliceCodelet final : public IndexedCodelet {
 public:
  DynamicSliceCodelet(ElementType type, ElementType index, uint32_t rank, bool update)
      : IndexedCodelet(update ? DynamicUpdateSliceCodeletName(type, index, rank)
                              : DynamicSliceCodeletName(type, index, rank),
                       Fields(type, index, rank, update), Params(rank, update),
                       update ? kDynamicUpdateSliceCodeBytes : kDynamicSliceCodeBytes,
                       update ? kTestedMoveCyclesPerElement : kRearrangeCyclesPerElement, rank),
        type_(type),
        index_(index),
        rank_(rank),
        update_(update) {}

  Status CheckShape(const VertexShape& shape) const override {
    TILEPROF_RETURN_IF_ERROR(CheckOutput(shape));
    const auto out = OutDims(shape.params);
    std::vector<uint32_t> box;
    for (uint32_t d = 0; d < rank_; ++d) {
      const uint32_t other = Other(shape.params, d);
      const uint32_t sliced = update_ ? other : out[d];
      const uint32_t whole = update_ ? out[d] : other;
      if (sliced > whole) {
        return MakeError("dimension {}: slice of {} from a dimension of {}", d, sliced, whole);
      }
      if (static_cast<uint64_t>(BoxLo(shape.params, d)) + BoxSize(shape.params, d) > other) {
        return MakeError("dimension {}: box exceeds the {} elements", d, other);
      }
      box.push_back(BoxSize(shape.params, d));
    }
    if (update_) TILEPROF_RETURN_IF_ERROR(CheckSameSize(*this, shape, 0, fields().size() - 1));
    return CheckBox(*this, shape, update_ ? 1 : 0, box);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const size_t size = SizeOf(type_);
    const auto out_dims = OutDims(io.params);
    std::vector<int64_t> start(rank_);
    const size_t start_field = update_ ? 2 : 1;
    for (uint32_t d = 0; d < rank_; ++d) {
      const int64_t sliced = update_ ? Other(io.params, d) : out_dims[d];
      const int64_t whole = update_ ? out_dims[d] : Other(io.params, d);
      start[d] =
          std::clamp<int64_t>(LoadIndex(index_, io.fields[start_field + d]), 0, whole - sliced);
    }
    const std::span<const std::byte> box = io.fields[update_ ? 1 : 0];
    const std::span<std::byte> out = io.fields.back();
    const uint64_t count = Count(io, fields().size() - 1);
    Odometer o(out_dims, FirstElement(io.params));
    // A run of outputs along the last dimension at a time: their sources
    // follow one another until the row, the box or (an update) the update
    // ends or begins. An element at a time, the copy was a library call
    // each (the MNIST sample's batch slice took a tenth of its step).
    const uint32_t last = rank_ - 1;
    for (uint64_t q = 0; q < count;) {
      uint64_t index = 0;
      bool from_box = true;
      uint64_t run = rank_ == 0 ? 1 : std::min<uint64_t>(count - q, out_dims[last] - o[last]);
      for (uint32_t d = 0; d < rank_; ++d) {
        // Slice: source coordinate o + s. Update: update coordinate o - s.
        int64_t c = update_ ? o[d] - start[d] : o[d] + start[d];
        if (update_) {
          const auto other = static_cast<int64_t>(Other(io.params, d));
          if (c < 0 || c >= other) {
            from_box = false;
            // Along the row, outside until the update begins (if it does).
            if (d == last && c < 0) run = std::min<uint64_t>(run, static_cast<uint64_t>(-c));
            break;
          }
        }
        c -= BoxLo(io.params, d);
        const auto box_size = static_cast<int64_t>(BoxSize(io.params, d));
        if (c < 0 || c >= box_size) {
          return MakeError("output element {} reads outside the connected box in dimension {}",
                           FirstElement(io.params) + q, d);
        }
        // (The box lies inside the update, so its end is the update's too.)
        if (d == last) run = std::min<uint64_t>(run, static_cast<uint64_t>(box_size - c));
        index = index * BoxSize(io.params, d) + static_cast<uint64_t>(c);
      }
      const std::byte* from = from_box ? box.data() + index * size : io.fields[0].data() + q * size;
      std::memcpy(out.data() + q * size, from, run * size);
      q += run;
      o.Advance(run);
    }
    return {};
  }

 private:
  static std::vector<FieldSpec> Fields(ElementType type, ElementType index, uint32_t rank,
                                       bool update) {
    std::vector<FieldSpec> fields;
    if (update) {
      fields.push_back(In("operand", type));
      fields.push_back(In("update", type));
    } else {
      fields.push_back(In("in", type));
    }
    for (uint32_t d = 0; d < rank; ++d)
      fields.push_back(ScalarIn(fmt::format("start{}", d), index));
    fields.push_back(Out("out", type, VectorLayout::kSpan));
    return fields;
  }
  static std::vector<std::string> Params(uint32_t rank, bool update) {
    std::vector<std::string> params = {"first"};
    for (uint32_t d = 0; d < rank; ++d) params.push_back(fmt::format("outSize{}", d));
    for (uint32_t d = 0; d < rank; ++d) {
      params.push_back((update ? "updSize" : "inSize") + std::to_string(d));
      params.push_back(fmt::format("boxLo{}", d));
      params.push_back(fmt::format("boxSize{}", d));
    }
    params.push_back("firstHigh");
    return params;
  }
  uint32_t Other(std::span<const uint32_t> params, uint32_t d) const {
    return params[1 + rank_ + 3 * d];
  }
  uint32_t BoxLo(std::span<const uint32_t> params, uint32_t d) const {
    return params[1 + rank_ + 3 * d + 1];
  }
  uint32_t BoxSize(std::span<const uint32_t> params, uint32_t d) const {
    return params[1 + rank_ + 3 * d + 2];
  }

  ElementType type_;
  ElementType index_;
  uint32_t rank_;
  bool update_;
};

// ---- Iota ------------------------------------------------------------------

class IotaCodelet final : public Codelet {
 public:
  explicit IotaCodelet(ElementType type)
      : Codelet(IotaCodeletName(type), ExecutionKind::kWorker,
                {Out("out", type, VectorLayout::kSpan)}, {"first", "dimSize", "inner", "firstHigh"},
                kIotaCodeBytes),
        type_(type) {}

  Status CheckShape(const VertexShape& shape) const override {
    if (shape.params[1] == 0 || shape.params[2] == 0) {
      return MakeError("parameters dimSize={} and inner={} must be nonzero", shape.params[1],
                       shape.params[2]);
    }
    return {};
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return cost::WorkerLoop(shape.field_elements[0], 1, kIotaCyclesPerElement);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t first = FirstElement(io.params), dim = io.params[1], inner = io.params[2];
    const uint64_t count = Count(io, 0);
    numeric::Dispatch(type_, [&](auto tag) {
      constexpr ElementType kType = decltype(tag)::value;
      using C = typename numeric::Traits<kType>::Compute;
      for (uint64_t q = 0; q < count; ++q) {
        const uint64_t value = ((first + q) / inner) % dim;
        // Narrow integer types wrap (modular conversion), floats round.
        numeric::Put<kType>(io.fields[0], q, static_cast<C>(value));
      }
    });
    return {};
  }

 private:
  ElementType type_;
};

Status CheckRank(uint32_t rank, uint32_t min, std::string_view what) {
  if (rank < min || rank > kMaxRank) {
    return MakeError("{} rank {} outside [{}, {}]", what, rank, min, kMaxRank);
  }
  return {};
}

}  // namespace

std::string RearrangeCodeletName(ElementType type, uint32_t in_rank, uint32_t out_rank,
                                 bool padded) {
  return fmt::format("tileprof::{}<{},{},{}>", padded ? "RearrangePadded" : "Rearrange",
                     PoplarName(type), Ranks(in_rank), Ranks(out_rank));
}
std::string DynamicSliceCodeletName(ElementType type, ElementType index, uint32_t rank) {
  return fmt::format("tileprof::DynamicSlice<{},{},{}>", PoplarName(type), PoplarName(index), rank);
}
std::string DynamicUpdateSliceCodeletName(ElementType type, ElementType index, uint32_t rank) {
  return fmt::format("tileprof::DynamicUpdateSlice<{},{},{}>", PoplarName(type), PoplarName(index),
                     rank);
}
std::string IotaCodeletName(ElementType type) {
  return fmt::format("tileprof::Iota<{}>", PoplarName(type));
}

Expected<std::unique_ptr<Codelet>> MakeRearrangeCodelet(ElementType type, uint32_t in_rank,
                                                        uint32_t out_rank, bool padded) {
  TILEPROF_RETURN_IF_ERROR(CheckRank(in_rank, 0, "source"));
  TILEPROF_RETURN_IF_ERROR(CheckRank(out_rank, 1, "result"));
  return std::unique_ptr<Codelet>(new RearrangeCodelet(type, in_rank, out_rank, padded));
}

Expected<std::unique_ptr<Codelet>> MakeDynamicSliceCodelet(ElementType type, ElementType index,
                                                           uint32_t rank) {
  TILEPROF_RETURN_IF_ERROR(CheckRank(rank, 1, "dynamic-slice"));
  if (!IsIndexType(index)) return MakeError("start indices of type {}", HloName(index));
  return std::unique_ptr<Codelet>(new DynamicSliceCodelet(type, index, rank, false));
}

Expected<std::unique_ptr<Codelet>> MakeDynamicUpdateSliceCodelet(ElementType type,
                                                                 ElementType index, uint32_t rank) {
  TILEPROF_RETURN_IF_ERROR(CheckRank(rank, 1, "dynamic-update-slice"));
  if (!IsIndexType(index)) return MakeError("start indices of type {}", HloName(index));
  return std::unique_ptr<Codelet>(new DynamicSliceCodelet(type, index, rank, true));
}

Expected<std::unique_ptr<Codelet>> MakeIotaCodelet(ElementType type) {
  if (type == ElementType::kPred) return MakeError("iota of pred");
  return std::unique_ptr<Codelet>(new IotaCodelet(type));
}

}  // namespace tileprof::engine
