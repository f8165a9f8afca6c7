// Internal to engine/compiler: how HLO element types are stored on tiles.
// The engine computes on 13 element types (engine/target/element_type.h);
// the other HLO types still need memory, so they get a storage type of the
// same size and every operation on them is lowered as an opaque op.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/expected.h"
#include "engine/hlo/shape.h"
#include "engine/target/element_type.h"

namespace tileprof::hlo {
class Instruction;
}  // namespace tileprof::hlo

namespace tileprof::engine::compiler {

struct StorageType {
  ElementType type = ElementType::kU8;
  // Storage elements per HLO element: 2 for c128 (two u64 words), else 1.
  uint32_t per_element = 1;
  // False when the engine has no arithmetic for the HLO type (complex, f8,
  // sub-byte integers): only opaque ops may touch it.
  bool native = true;
};

// The storage of an HLO element type. s4/u4 (and s1/u1/s2/u2) take one byte
// per element: XLA only packs them when the layout says E(4), and a tile
// cannot address nibbles anyway. Error for tuple, token and opaque.
Expected<StorageType> StorageOf(hlo::PrimitiveType type);

// Dimensions of an array shape as the graph stores it (bounds for dynamic
// dimensions, a trailing storage dimension for c128). Error for unbounded
// dimensions.
Expected<std::vector<uint64_t>> StorageShape(const hlo::Shape& shape);

// True when every array leaf of the shape has a native storage type.
bool IsNative(const hlo::Shape& shape);

// XLA's mixed precision (TPU dumps after optimisation print a bf16
// select-and-scatter or reduce-window of f32 operands): an op whose
// computations take its operands' type computes in it and is rounded once
// to the result's float type after. The shape it is computed in: the
// result's, with operand 0's element type (the result's when either is not
// a float array).
hlo::Shape ComputedShape(const hlo::Instruction& instruction);

}  // namespace tileprof::engine::compiler
