// The lookup partial codelet. See lookup.h.
#include "engine/codelets/lookup.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/index_walk.h"
#include "engine/codelets/numeric.h"

namespace tileprof::engine {
namespace {

enum Field : size_t { kTable, kIndices, kOut };
enum Param : size_t { kRows, kRowLo, kWidth };

class LookupPartialCodelet final : public Codelet {
 public:
  LookupPartialCodelet(ElementType type, ElementType index)
      : Codelet(LookupPartialCodeletName(type, index), ExecutionKind::kWorker,
                {In("table", type), In("indices", index), Out("out", type)},
                {"rows", "rowLo", "width"}, kLookupCodeBytes),
        type_(type),
        index_(index) {}

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t width = shape.params[kWidth], rows = shape.params[kRows];
    const uint64_t table = shape.field_elements[kTable];
    if (width == 0) return MakeError("width 0");
    if (table % width != 0) {
      return MakeError("field 'table' has {} elements, not whole rows of {}", table, width);
    }
    if (shape.params[kRowLo] + table / width > rows) {
      return MakeError("rows [{}, +{}) beyond the table's {}", shape.params[kRowLo], table / width,
                       rows);
    }
    if (shape.field_elements[kOut] != shape.field_elements[kIndices] * width) {
      return MakeError("field 'out' has {} elements, {} lookups of {}", shape.field_elements[kOut],
                       shape.field_elements[kIndices], width);
    }
    return {};
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return cost::WorkerLoop(shape.field_elements[kIndices], 1, kLookupCyclesPerLookup) +
           cost::WorkerLoop(shape.field_elements[kOut], 1, kLookupCyclesPerElement);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const size_t size = SizeOf(type_);
    const uint64_t width = io.params[kWidth], row_bytes = width * size;
    const int64_t rows = io.params[kRows], lo = io.params[kRowLo];
    const int64_t held = static_cast<int64_t>(Count(io, kTable) / width);
    // The identity row: zero bytes, and the sign bit of each float element
    // (the last byte of a little-endian element).
    std::vector<std::byte> identity(row_bytes, std::byte{0});
    if (IsFloat(type_)) {
      for (uint64_t e = 0; e < width; ++e) identity[e * size + size - 1] = std::byte{0x80};
    }
    const uint64_t lookups = Count(io, kIndices);
    for (uint64_t l = 0; l < lookups; ++l) {
      const int64_t r =
          std::clamp<int64_t>(index_walk::LoadIndex(index_, io.fields[kIndices], l), 0, rows - 1);
      std::byte* out = io.fields[kOut].data() + l * row_bytes;
      if (r >= lo && r - lo < held) {
        std::memcpy(out, io.fields[kTable].data() + static_cast<uint64_t>(r - lo) * row_bytes,
                    row_bytes);
      } else {
        std::memcpy(out, identity.data(), row_bytes);
      }
    }
    return {};
  }

 private:
  ElementType type_, index_;
};

}  // namespace

std::string LookupPartialCodeletName(ElementType type, ElementType index) {
  return fmt::format("tileprof::LookupPartial<{},{}>", PoplarName(type), PoplarName(index));
}

Expected<std::unique_ptr<Codelet>> MakeLookupPartialCodelet(ElementType type, ElementType index) {
  if (!index_walk::IsIndexType(index))
    return MakeError("lookup indices of type {}", HloName(index));
  return std::unique_ptr<Codelet>(new LookupPartialCodelet(type, index));
}

}  // namespace tileprof::engine
