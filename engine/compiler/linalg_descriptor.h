// Internal to engine/compiler: how the linear-algebra custom calls pass
// their sizes and flags, as linalg_call.h lists them by target: the target
// table, the GPU kernel descriptors, the typed-FFI attributes, the CPU
// forms' scalar operands and the layouts the library expects. Kept apart
// from linalg_call.cc, which reads each operation through a Reader.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/linalg_call.h"
#include "engine/hlo/attributes.h"
#include "engine/hlo/module.h"
#include "engine/target/element_type.h"

namespace tileprof::engine::compiler::linalg {

// A typed-FFI call's integer and boolean attributes by name.
using Attributes = std::map<std::string, int64_t, std::less<>>;

// How a target passes its sizes and flags.
enum class Form : uint8_t { kCuda, kHip, kScalars, kFfi };

struct TargetInfo {
  std::string_view name;
  LinalgOp op;
  Form form;
  // The element type its name says (LAPACK's s/d), else kInvalid.
  hlo::PrimitiveType type = hlo::PrimitiveType::kInvalid;
  bool batched = false;  // cuBLAS's batched getrf and geqrf: other descriptors
};

// The target named `name`, or nullptr: not a linear-algebra target.
const TargetInfo* FindTarget(std::string_view name);

// The GPU forms: a packed kernel descriptor as backend_config.
inline bool IsGpu(Form form) { return form == Form::kCuda || form == Form::kHip; }

// A kernel descriptor: fixed-offset little-endian integers.
class Descriptor {
 public:
  explicit Descriptor(std::string_view bytes) : bytes_(bytes) {}
  int64_t I32(size_t offset) const {
    int32_t v;
    std::memcpy(&v, bytes_.data() + offset, 4);
    return v;
  }
  int64_t I64(size_t offset) const {
    int64_t v;
    std::memcpy(&v, bytes_.data() + offset, 8);
    return v;
  }

 private:
  std::string_view bytes_;
};

// One call being read: its operands, results and errors.
class Reader {
 public:
  Reader(const hlo::Instruction& instruction, const hlo::CustomCall& call, const TargetInfo& target)
      : instruction_(instruction), call_(call), target_(target) {}

  const TargetInfo& target() const { return target_; }
  const hlo::Shape& Operand(size_t i) const { return instruction_.operands()[i]->shape(); }
  size_t OperandCount() const { return instruction_.operand_count(); }
  // Whether a binary descriptor is given (the FFI forms carry attributes).
  bool HasDescriptor() const {
    return call_.backend_config && call_.backend_config->quoted &&
           !call_.backend_config->bytes.empty();
  }
  // Result leaves: a tuple's elements, 0 for an array.
  size_t ResultCount() const {
    const hlo::Shape& shape = instruction_.shape();
    return shape.IsTuple() ? shape.tuple_shapes.size() : 0;
  }
  // Result leaf i: a tuple element, or the result itself.
  const hlo::Shape& Result(size_t i) const {
    const hlo::Shape& shape = instruction_.shape();
    return shape.IsTuple() ? shape.tuple_shapes[i] : shape;
  }

  Status ExpectOperands(size_t count, size_t or_count = 0) const;
  // A tuple of `count` results, or one array when count is 0.
  Status ExpectResults(size_t count) const;
  // The matrices' element type: f32/f64, nullopt for complex ones (not
  // supported), an error for others or a type the target's name rules out.
  Expected<std::optional<ElementType>> MatrixType(const hlo::Shape& shape) const;
  // [batch..., rows, cols]: the batch dimensions and the matrix size.
  Expected<std::vector<int64_t>> BatchDims(const hlo::Shape& shape, std::string_view what) const;
  // Error unless `shape` is `type`[dims].
  Status Expect(const hlo::Shape& shape, hlo::PrimitiveType type, const std::vector<int64_t>& dims,
                std::string_view what) const;
  // Whether operand i (as the library receives it) and result leaves
  // (index, trailing dimensions) have the library's layouts.
  bool Layouts(std::initializer_list<std::pair<size_t, int64_t>> operands,
               std::initializer_list<std::pair<size_t, int64_t>> results) const;
  // The descriptor of `size` bytes (GPU forms).
  Expected<Descriptor> ReadDescriptor(size_t size) const;
  // An s32 constant scalar operand (the sizes and flags of the CPU forms).
  Expected<int64_t> ScalarOperand(size_t i, std::string_view what) const;
  Expected<Attributes> FfiAttributes() const;

 private:
  const hlo::Instruction& instruction_;
  const hlo::CustomCall& call_;
  const TargetInfo& target_;
};

// ---- Flags ---------------------------------------------------------------
// `descriptor` is the GPU forms' (nullptr for the others).

struct TrsmFlags {
  bool left = true, lower = true, transpose = false, unit = false;
};

Expected<TrsmFlags> ReadTrsmFlags(const Reader& r, const Descriptor* descriptor);
Expected<bool> ReadPotrfLower(const Reader& r, const Descriptor* descriptor);

// Error unless the descriptor's type code is `type`'s: 0 f32, 1 f64 (2, 3:
// complex, not read here).
Status CheckTypeCode(int64_t code, ElementType type);

}  // namespace tileprof::engine::compiler::linalg
