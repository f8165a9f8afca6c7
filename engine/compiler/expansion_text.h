// The HLO text of an expansion: an op written out as a module of its own
// (Lowering::LowerExpansion lowers it like a call whose compute sets are
// the op's). Every expansion builds its text here, so that they all name
// their instructions after the expanded op ("%name.what"): the tensors and
// exchange buffers they make then say, in reports, whose they are.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/hlo/shape.h"

namespace tileprof::engine::compiler {

class ExpansionText {
 public:
  // `name`: the expanded instruction's. An empty name gives instructions
  // their bare names ("%what").
  explicit ExpansionText(std::string_view name) : name_(name) {}

  // "%name.what"; "%name" itself for an empty `what`.
  std::string Ref(std::string_view what) const;
  // Appends "%name.what = shape op" to the entry; returns Ref(what).
  std::string Add(std::string_view what, std::string_view shape, std::string_view op);
  // The same with the shape and the op in one: "%name.what = shape_op".
  std::string Add(std::string_view what, std::string_view shape_op);
  // The entry's next parameter, numbered in order; returns Ref(what).
  std::string Parameter(std::string_view what, std::string_view shape);
  // A computation Ref(what) combining two scalars of `type` with the binary
  // `op` (a reduce's to_apply); returns its reference.
  std::string ScalarComputation(std::string_view what, std::string_view op, std::string_view type);
  // The module: the scalar computations, then the entry, whose root is
  // "%name.result = shape op".
  std::string Finish(std::string_view shape, std::string_view op) const;

 private:
  std::string name_;
  std::string computations_, signature_, body_;
  size_t num_parameters_ = 0;
};

// `shape`'s text without its layout or dynamic dimensions, of element type
// `type`.
std::string ShapeText(hlo::Shape shape, hlo::PrimitiveType type);
inline std::string ShapeText(const hlo::Shape& shape) {
  return ShapeText(shape, shape.element_type);
}

// The type an expansion computes values of `type` in: f32 for the halves
// (f16, bf16), whose sums over many elements and long chains of ops would
// otherwise round at every step (TensorFlow's and Flax's batch norms on
// halves compute so too), `type` itself otherwise.
hlo::PrimitiveType ComputingType(hlo::PrimitiveType type);

}  // namespace tileprof::engine::compiler
