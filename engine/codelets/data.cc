// Data-movement and selection codelets:
//   popops::Select<T>       in1, in2, in3 (pred) -> out = in3 ? in1 : in2
//   popops::Clamp<T>        in1 (x), in2 (low), in3 (high) -> out
//   popops::Cast1D<A,B>     in -> out, XLA convert semantics (element_type.h)
//   poplar_rt::Copy1D<T>    in -> out
//   popops::Fill<T>         in (scalar) -> out
//   popops::ScaledAddSupervisor<T,T,false>  data += scaleB * B (scaleB a
//                                           scalar tensor)
//   popops::ScaledAddSupervisor<T,T,true>   data += scaleB * B (scaleB a
//                                           constant in the vertex state)
// Copy1D is tileprof's name: Poplar's runtime copy vertices
// (poplar_rt::StridedCopyDA32 ...) describe strided layouts we do not model.
#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/codelets/codelets.h"
#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"
#include "engine/codelets/widen.h"

namespace tileprof::engine {
namespace {

using numeric::Get;
using numeric::Put;

constexpr ElementType kPred = ElementType::kPred;

// One worker loop over n elements with `inputs` loads and one store per
// vector (select, clamp).
uint64_t SimpleWorkerLoop(uint64_t n, ElementType type, uint32_t inputs, const Target& target) {
  return cost::WorkerLoop(n, cost::Width(target, type),
                          cost::CyclesPerVector(cost::OpClass::kSimple, type, inputs, 1));
}

// Select and clamp: three same-sized inputs (the third of type `third`),
// one output of type `type`, one simple op per element.
class ThreeInputCodelet : public Codelet {
 public:
  ThreeInputCodelet(std::string name, ElementType type, ElementType third)
      : Codelet(std::move(name), ExecutionKind::kWorker,
                {In("in1", type), In("in2", type), In("in3", third),
                 Out("out", type, VectorLayout::kSpan)},
                {}, cost::kWorkerElementwiseCodeBytes),
        type_(type) {}
  Status CheckShape(const VertexShape& shape) const override {
    for (size_t i = 0; i < 3; ++i) TILEPROF_RETURN_IF_ERROR(CheckSameSize(*this, shape, 3, i));
    return {};
  }
  // WorkerLoop(n, width(T), 3 loads + 1 store + 1 op).
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    return SimpleWorkerLoop(shape.field_elements[3], type_, 3, target);
  }

 protected:
  ElementType type_;
};

class SelectCodelet final : public ThreeInputCodelet {
 public:
  explicit SelectCodelet(ElementType type)
      : ThreeInputCodelet(SelectCodeletName(type), type, kPred) {}

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t n = Count(io, 3);
    return numeric::Dispatch(type_, [&](auto tag) -> Status {
      constexpr ElementType kT = decltype(tag)::value;
      // Both read and one chosen, without a branch on the predicate
      // (random for a ReLU's gradient).
      const std::span<const std::byte> on_true = io.fields[0], on_false = io.fields[1],
                                       predicate = io.fields[2];
      const std::span<std::byte> out = io.fields[3];
      for (uint64_t i = 0; i < n; ++i) {
        const auto first = Get<kT>(on_true, i), second = Get<kT>(on_false, i);
        Put<kT>(out, i, Get<kPred>(predicate, i) ? first : second);
      }
      return {};
    });
  }
};

class ClampCodelet final : public ThreeInputCodelet {
 public:
  explicit ClampCodelet(ElementType type) : ThreeInputCodelet(ClampCodeletName(type), type, type) {}

 protected:
  // XLA clamp(low, x, high) = min(max(x, low), high), NaN-propagating.
  Status Compute(const VertexIo& io) const override {
    const uint64_t n = Count(io, 3);
    return numeric::Dispatch(type_, [&](auto tag) -> Status {
      constexpr ElementType kT = decltype(tag)::value;
      using C = typename numeric::Traits<kT>::Compute;
      if constexpr (numeric::kIsPred<C>) {
        return MakeError("clamp is not defined for pred");
      } else {
        for (uint64_t i = 0; i < n; ++i) {
          const C x = Get<kT>(io.fields[0], i);
          const C low = Get<kT>(io.fields[1], i);
          const C high = Get<kT>(io.fields[2], i);
          Put<kT>(io.fields[3], i, numeric::Min(numeric::Max(x, low), high));
        }
        return {};
      }
    });
  }
};

class CastCodelet final : public Codelet {
 public:
  CastCodelet(ElementType from, ElementType to)
      : Codelet(CastCodeletName(from, to), ExecutionKind::kWorker,
                {In("in", from), Out("out", to, VectorLayout::kSpan)}, {},
                cost::kWorkerElementwiseCodeBytes),
        from_(from),
        to_(to) {}
  Status CheckShape(const VertexShape& shape) const override {
    return CheckSameSize(*this, shape, 1, 0);
  }
  // WorkerLoop(n, min(width(A), width(B)), 1 load + 1 store + the costlier
  // of the two types' simple-op cycles).
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint32_t width = std::min(cost::Width(target, from_), cost::Width(target, to_));
    const uint64_t convert = std::max(cost::OpCycles(cost::OpClass::kSimple, from_),
                                      cost::OpCycles(cost::OpClass::kSimple, to_));
    return cost::WorkerLoop(shape.field_elements[1], width,
                            2 * cost::kMemoryAccessCycles + convert);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t n = Count(io, 1);
    const uint32_t in_size = SizeOf(from_);
    const uint32_t out_size = SizeOf(to_);
    // The conversions of mixed precision, between f32 and f16 or bf16,
    // typed: the same bits as ConvertElement (compared over every f32 and
    // every 16-bit input), without its trip through double (frexp, ldexp
    // and nearbyint an element were 7% of an f16 ResNet-50 training step).
    using enum ElementType;
    if (from_ == kF16 && to_ == kF32) return Typed<kF16, kF32>(io, n);
    if (from_ == kF32 && to_ == kF16) return Typed<kF32, kF16>(io, n);
    if (from_ == kBF16 && to_ == kF32) return Typed<kBF16, kF32>(io, n);
    if (from_ == kF32 && to_ == kBF16) return Typed<kF32, kBF16>(io, n);
    for (uint64_t i = 0; i < n; ++i) {
      ConvertElement(from_, io.fields[0].data() + i * in_size, to_,
                     io.fields[1].data() + i * out_size);
    }
    return {};
  }

 private:
  // Through the compute type (float for all four), as the elementwise
  // maps go (widen.h: F16C for f16).
  template <ElementType kFrom, ElementType kTo>
  static Status Typed(const VertexIo& io, uint64_t n) {
    numeric::MapElements<kFrom, kTo, 1>({io.fields[0]}, io.fields[1], n, [](float x) { return x; });
    return {};
  }

  ElementType from_;
  ElementType to_;
};

class CopyCodelet final : public Codelet {
 public:
  explicit CopyCodelet(ElementType type)
      : Codelet(CopyCodeletName(type), ExecutionKind::kWorker,
                {In("in", type), Out("out", type, VectorLayout::kSpan)}, {}, cost::kCopyCodeBytes),
        type_(type) {}
  Status CheckShape(const VertexShape& shape) const override {
    return CheckSameSize(*this, shape, 1, 0);
  }
  // WorkerLoop(bytes, 8, one 64-bit load + one 64-bit store).
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return cost::WorkerLoop(shape.field_elements[1] * SizeOf(type_), 8,
                            cost::CyclesPerVector(cost::OpClass::kMove, type_, 1, 1));
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    // memmove: an exactly aliased (in-place) copy is allowed.
    std::memmove(io.fields[1].data(), io.fields[0].data(), io.fields[1].size());
    return {};
  }

 private:
  ElementType type_;
};

class FillCodelet final : public Codelet {
 public:
  explicit FillCodelet(ElementType type)
      : Codelet(FillCodeletName(type), ExecutionKind::kWorker,
                {ScalarIn("in", type), Out("out", type, VectorLayout::kSpan)}, {},
                cost::kCopyCodeBytes),
        type_(type) {}
  // WorkerLoop(bytes, 8, one 64-bit store).
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return cost::WorkerLoop(shape.field_elements[1] * SizeOf(type_), 8,
                            cost::CyclesPerVector(cost::OpClass::kMove, type_, 0, 1));
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const size_t size = SizeOf(type_);
    std::byte value[8];
    std::memcpy(value, io.fields[0].data(), size);
    for (size_t offset = 0; offset < io.fields[1].size(); offset += size) {
      std::memcpy(io.fields[1].data() + offset, value, size);
    }
    return {};
  }

 private:
  ElementType type_;
};

// data += scale * B. The scale comes from the scalar field scaleB, or, when
// `constant_scale`, from the parameter scaleB holding the bits of an f32
// (float types only: the state holds the scale as the vertex's constant).
class ScaledAddCodelet final : public Codelet {
 public:
  ScaledAddCodelet(ElementType type, bool constant_scale)
      : Codelet(ScaledAddCodeletName(type, constant_scale), ExecutionKind::kSupervisor,
                Fields(type, constant_scale),
                constant_scale ? std::vector<std::string>{"scaleB"} : std::vector<std::string>{},
                cost::kSupervisorElementwiseCodeBytes),
        type_(type),
        constant_scale_(constant_scale) {}
  Status CheckShape(const VertexShape& shape) const override {
    return CheckSameSize(*this, shape, 0, 1);
  }
  // SupervisorLoop(n, width(T), 2 loads + 1 store + multiply + add).
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint64_t per_vector = cost::CyclesPerVector(cost::OpClass::kSimple, type_, 2, 1) +
                                cost::OpCycles(cost::OpClass::kSimple, type_);
    return cost::SupervisorLoop(shape.field_elements[0], cost::Width(target, type_), per_vector,
                                target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t n = Count(io, 0);
    return numeric::Dispatch(type_, [&](auto tag) -> Status {
      constexpr ElementType kT = decltype(tag)::value;
      using C = typename numeric::Traits<kT>::Compute;
      if constexpr (numeric::kIsPred<C>) {
        return MakeError("scaled add is not defined for pred");
      } else {
        C scale;
        if (constant_scale_) {
          scale = static_cast<C>(std::bit_cast<float>(io.params[0]));
        } else {
          scale = Get<kT>(io.fields[2], 0);
        }
        for (uint64_t i = 0; i < n; ++i) {
          const C data = Get<kT>(io.fields[0], i);
          const C b = Get<kT>(io.fields[1], i);
          if constexpr (numeric::kIsInt<C>) {
            Put<kT>(io.fields[0], i, numeric::WrapAdd(data, numeric::WrapMul(scale, b)));
          } else {
            Put<kT>(io.fields[0], i, static_cast<C>(data + scale * b));
          }
        }
        return {};
      }
    });
  }

 private:
  static std::vector<FieldSpec> Fields(ElementType type, bool constant_scale) {
    std::vector<FieldSpec> fields = {InOut("data", type, VectorLayout::kSpan), In("B", type)};
    if (!constant_scale) fields.push_back(ScalarIn("scaleB", type));
    return fields;
  }

  ElementType type_;
  bool constant_scale_;
};

}  // namespace

void AddDataCodelets(CodeletList& out) {
  for (ElementType type : kAllElementTypes) {
    const bool numeric_type = type != kPred;
    out.push_back(std::make_unique<SelectCodelet>(type));
    if (numeric_type) out.push_back(std::make_unique<ClampCodelet>(type));
    for (ElementType to : kAllElementTypes) {
      if (to != type) out.push_back(std::make_unique<CastCodelet>(type, to));
    }
    out.push_back(std::make_unique<CopyCodelet>(type));
    out.push_back(std::make_unique<FillCodelet>(type));
    if (numeric_type) out.push_back(std::make_unique<ScaledAddCodelet>(type, false));
    if (IsFloat(type)) out.push_back(std::make_unique<ScaledAddCodelet>(type, true));
  }
}

}  // namespace tileprof::engine
