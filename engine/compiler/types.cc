#include "engine/compiler/types.h"

#include "engine/hlo/module.h"

namespace tileprof::engine::compiler {

using hlo::PrimitiveType;

Expected<StorageType> StorageOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
      return StorageType{ElementType::kPred};
    case PrimitiveType::kS8:
      return StorageType{ElementType::kS8};
    case PrimitiveType::kU8:
      return StorageType{ElementType::kU8};
    case PrimitiveType::kS16:
      return StorageType{ElementType::kS16};
    case PrimitiveType::kU16:
      return StorageType{ElementType::kU16};
    case PrimitiveType::kS32:
      return StorageType{ElementType::kS32};
    case PrimitiveType::kU32:
      return StorageType{ElementType::kU32};
    case PrimitiveType::kS64:
      return StorageType{ElementType::kS64};
    case PrimitiveType::kU64:
      return StorageType{ElementType::kU64};
    case PrimitiveType::kF16:
      return StorageType{ElementType::kF16};
    case PrimitiveType::kBF16:
      return StorageType{ElementType::kBF16};
    case PrimitiveType::kF32:
      return StorageType{ElementType::kF32};
    case PrimitiveType::kF64:
      return StorageType{ElementType::kF64};
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
      return StorageType{ElementType::kS8, 1, false};
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
      return StorageType{ElementType::kU8, 1, false};
    case PrimitiveType::kC64:
      return StorageType{ElementType::kU64, 1, false};
    case PrimitiveType::kC128:
      return StorageType{ElementType::kU64, 2, false};
    case PrimitiveType::kInvalid:
    case PrimitiveType::kToken:
    case PrimitiveType::kOpaque:
    case PrimitiveType::kTuple:
      return MakeError("{} has no storage", hlo::PrimitiveTypeName(type));
    default:
      // The 8-, 6- and 4-bit floats: one byte each.
      return StorageType{ElementType::kU8, 1, false};
  }
}

Expected<std::vector<uint64_t>> StorageShape(const hlo::Shape& shape) {
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  std::vector<uint64_t> dims;
  dims.reserve(shape.dimensions.size() + 1);
  for (int64_t d : shape.dimensions) {
    if (d < 0) return MakeError("unbounded dimension in {}", hlo::ShapeToString(shape));
    dims.push_back(static_cast<uint64_t>(d));
  }
  if (storage.per_element != 1) dims.push_back(storage.per_element);
  return dims;
}

bool IsNative(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    for (const hlo::Shape& element : shape.tuple_shapes)
      if (!IsNative(element)) return false;
    return true;
  }
  if (!shape.IsArray()) return true;
  auto storage = StorageOf(shape.element_type);
  return storage && storage->native;
}

hlo::Shape ComputedShape(const hlo::Instruction& instruction) {
  hlo::Shape shape = instruction.shape();
  if (!shape.IsArray() || instruction.operand_count() == 0) return shape;
  const hlo::Shape& operand = instruction.operand(0)->shape();
  const auto is_float = [](hlo::PrimitiveType type) {
    const Expected<StorageType> storage = StorageOf(type);
    return storage && IsFloat(storage->type);
  };
  if (operand.IsArray() && is_float(operand.element_type) && is_float(shape.element_type))
    shape.element_type = operand.element_type;
  return shape;
}

}  // namespace tileprof::engine::compiler
