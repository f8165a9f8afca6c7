// Internal to engine/codelets: each family file adds its codelets to the
// catalogue (catalogue.cc calls these once, on first use).
#pragma once

#include <memory>
#include <vector>

#include "engine/codelets/codelet.h"
#include "engine/codelets/codelets.h"
#include "engine/codelets/cost_model.h"

namespace tileprof::engine {

using CodeletList = std::vector<std::unique_ptr<Codelet>>;

void AddElementwiseCodelets(CodeletList& out);  // unary, binary
void AddDataCodelets(CodeletList& out);         // select, clamp, cast, copy, fill, scaled add
void AddReduceCodelets(CodeletList& out);
void AddDotCodelets(CodeletList& out);   // matmul and 1x1 conv partials
void AddConvCodelets(CodeletList& out);  // the general conv partial
void AddMiscCodelets(CodeletList& out);  // set seed, SumVertex, AdderVertex

// The cost class of an elementwise operation (elementwise.cc): what its
// codelet and a fused expression (map_expr.cc) charge per vector.
cost::OpClass BinaryOpClass(BinaryOp op, ElementType type);
cost::OpClass UnaryOpClass(UnaryOp op);

// Field constructors for the family files.
inline FieldSpec In(std::string name, ElementType type,
                    VectorLayout layout = VectorLayout::kOnePtr) {
  return {std::move(name), FieldDirection::kInput, FieldKind::kVector, type, layout};
}
inline FieldSpec Out(std::string name, ElementType type,
                     VectorLayout layout = VectorLayout::kOnePtr) {
  return {std::move(name), FieldDirection::kOutput, FieldKind::kVector, type, layout};
}
inline FieldSpec InOut(std::string name, ElementType type,
                       VectorLayout layout = VectorLayout::kOnePtr) {
  return {std::move(name), FieldDirection::kInOut, FieldKind::kVector, type, layout};
}
inline FieldSpec ScalarIn(std::string name, ElementType type) {
  return {std::move(name), FieldDirection::kInput, FieldKind::kScalar, type, VectorLayout::kOnePtr};
}
inline FieldSpec ScalarOut(std::string name, ElementType type) {
  return {std::move(name), FieldDirection::kOutput, FieldKind::kScalar, type,
          VectorLayout::kOnePtr};
}

}  // namespace tileprof::engine
