// Internal to engine/exec: reading an executable's payload. A Reader
// walks its sections; ReadGraph and ReadProgram (executable_read_graph.cc)
// rebuild the graph and the program through their public APIs, for
// DeserializePayload (executable.cc). See executable.h for the layout.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/compiler.h"
#include "engine/compiler/opaque.h"
#include "engine/exec/executable_format.h"
#include "engine/graph/program.h"

namespace tileprof::engine::exec::read_internal {

// Limits on what a file may ask the reader to build, far above what the
// compiler makes (a program nests a few levels per HLO while/conditional)
// and low enough that a crafted file cannot exhaust the stack or make a
// program whose unrolled size overflows the simulator's counters.
inline constexpr uint64_t kMaxProgramDepth = 256;
inline constexpr uint64_t kMaxExpandedSteps = uint64_t{1} << 40;
inline constexpr uint64_t kMaxRank = 64;

using format::Section;

// A Reader fails sticky: after the first error every read returns zero or
// empty and the error (naming the field and its offset) is kept, so the
// loops that use it check ok() once per item rather than after every field.

class Reader {
 public:
  Reader(std::span<const uint8_t> data, uint64_t base) : data_(data), base_(base) {}

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  uint64_t remaining() const { return data_.size() - pos_; }

  void Fail(std::string_view field, std::string_view what) {
    if (ok()) error_ = fmt::format("{} at offset {}: {}", field, base_ + pos_, what);
  }

  uint8_t U8(std::string_view field) {
    if (!ok()) return 0;
    if (pos_ >= data_.size()) {
      Fail(field, "the file ends here");
      return 0;
    }
    return data_[pos_++];
  }
  uint64_t Var(std::string_view field) {
    uint64_t value = 0;
    for (int shift = 0; ok(); shift += 7) {
      if (pos_ >= data_.size()) {
        Fail(field, "the file ends here");
        return 0;
      }
      const uint8_t byte = data_[pos_++];
      if (shift == 63 && (byte & 0x7e) != 0) {
        Fail(field, "integer overflows 64 bits");
        return 0;
      }
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
      if (shift == 63) {
        Fail(field, "integer longer than 10 bytes");
        return 0;
      }
    }
    return 0;
  }
  // A value that must be below `limit` (an index or an enum).
  uint64_t Below(uint64_t limit, std::string_view field) {
    uint64_t value = Var(field);
    if (ok() && value >= limit)
      Fail(field, fmt::format("{} is out of range (limit {})", value, limit));
    return ok() ? value : 0;
  }
  uint32_t U32Var(std::string_view field) {
    return static_cast<uint32_t>(Below(uint64_t{1} << 32, field));
  }
  // A count of items each taking at least `min_bytes`, so that a huge count
  // in a small file is an error before anything is allocated.
  uint64_t Count(std::string_view field, uint64_t min_bytes = 1) {
    uint64_t count = Var(field);
    if (ok() && count > remaining() / min_bytes)
      Fail(field, fmt::format("count {} exceeds what the remaining {} bytes can hold", count,
                              remaining()));
    return ok() ? count : 0;
  }
  std::span<const uint8_t> Bytes(uint64_t size, std::string_view field) {
    if (!ok()) return {};
    if (size > remaining()) {
      Fail(field, fmt::format("{} bytes run past the end of the file", size));
      return {};
    }
    auto bytes = data_.subspan(pos_, size);
    pos_ += size;
    return bytes;
  }
  std::string Str(std::string_view field) { return std::string(StrView(field)); }
  // The string in place: valid while the payload is.
  std::string_view StrView(std::string_view field) {
    uint64_t size = Var(field);
    auto bytes = Bytes(size, field);
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }
  uint64_t Fixed64(std::string_view field) {
    auto bytes = Bytes(8, field);
    uint64_t value = 0;
    for (size_t i = 0; i < bytes.size(); ++i) value |= uint64_t{bytes[i]} << (8 * i);
    return value;
  }
  ElementType Type(std::string_view field) {
    return static_cast<ElementType>(Below(std::size(kAllElementTypes), field));
  }
  std::vector<uint64_t> Shape(std::string_view field) {
    std::vector<uint64_t> shape;
    ShapeInto(field, shape);
    return shape;
  }
  // Into a buffer the caller reuses (a shape per vertex field).
  void ShapeInto(std::string_view field, std::vector<uint64_t>& shape) {
    shape.clear();
    uint64_t rank = Var(field);
    if (ok() && rank > kMaxRank) Fail(field, fmt::format("rank {} is above {}", rank, kMaxRank));
    for (uint64_t i = 0; ok() && i < rank; ++i) shape.push_back(Var(field));
  }
  // A tensor as its element type, shape and regions, in buffers this reader
  // reuses (for TensorValue).
  ElementType TensorParts(std::string_view field) {
    return TypeShapeAndList(field, 3, regions_, [&] {
      TensorRegion region;
      region.variable = U32Var(field);
      region.begin = Var(field);
      uint64_t size = Var(field);
      if (ok() && size > UINT64_MAX - region.begin) Fail(field, "run end overflows");
      region.end = region.begin + size;
      return region;
    });
  }
  // A vertex field's runs (Writer::FieldRuns), into runs().
  ElementType FieldRuns(std::string_view field) {
    return TypeShapeAndList(field, 5, runs_, [&] {
      StridedRegion run;
      run.variable = U32Var(field);
      run.begin = Var(field);
      run.length = Var(field);
      run.count = U32Var(field);
      const uint64_t zigzag = Var(field);
      run.stride = static_cast<int64_t>((zigzag >> 1) ^ (0 - (zigzag & 1)));
      return run;
    });
  }
  // An element type, a shape into shape_, then a count and that many items
  // (each at least `min_bytes`) read by `read_one` into `items`.
  template <typename T, typename ReadOne>
  ElementType TypeShapeAndList(std::string_view field, uint64_t min_bytes, std::vector<T>& items,
                               ReadOne read_one) {
    const ElementType type = Type(field);
    ShapeInto(field, shape_);
    const uint64_t count = Count(field, min_bytes);
    items.clear();
    for (uint64_t i = 0; ok() && i < count; ++i) items.push_back(read_one());
    return type;
  }
  std::span<const uint64_t> shape() const { return shape_; }
  std::span<const StridedRegion> runs() const { return runs_; }
  Tensor TensorValue(std::string_view field) {
    const ElementType type = TensorParts(field);
    if (!ok()) return Tensor();
    auto tensor = Tensor::FromRegions(type, shape_, regions_);
    if (!tensor) {
      Fail(field, tensor.error().message());
      return Tensor();
    }
    return std::move(*tensor);
  }
  // The next section, which must be `section`, as a reader of its own;
  // this reader moves past it.
  Reader Sub(Section section, std::string_view name) {
    const uint8_t found = U8(name);
    if (ok() && found != static_cast<uint8_t>(section))
      Fail(name, fmt::format("expected section {}, found {}", static_cast<int>(section), found));
    const uint64_t size = Fixed64(name);
    const uint64_t start = base_ + pos_;
    auto bytes = Bytes(size, name);
    Reader sub(bytes, start);
    if (!ok()) sub.error_ = error_;
    return sub;
  }
  // After a section's last field: nothing may be left over.
  void End(std::string_view name) {
    if (ok() && remaining() != 0)
      Fail(name, fmt::format("{} unexpected bytes at the end of the section", remaining()));
  }
  void Adopt(const Reader& sub) {
    if (ok() && !sub.ok()) error_ = sub.error_;
  }

 private:
  std::span<const uint8_t> data_;
  uint64_t base_;
  uint64_t pos_ = 0;
  std::string error_;
  std::vector<uint64_t> shape_;  // reused by TensorParts
  std::vector<TensorRegion> regions_;
  std::vector<StridedRegion> runs_;  // reused by FieldRuns
};

// The graph section into result.graph (made for the target): variables,
// codelets (into `codelets`, by their index in the file), compute sets,
// vertices and streams. The error names the field and its offset.
Status ReadGraph(Reader& outer, compiler::CompileResult& result,
                 compiler::CompilerCodelets& compiler_codelets,
                 std::vector<const Codelet*>& codelets);

// The program section: a DAG of nodes in post-order, within the limits above.
Expected<program::Sequence> ReadProgram(Reader& outer);

}  // namespace tileprof::engine::exec::read_internal
