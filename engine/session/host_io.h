// The host side of `tileprof run`: which host streams a compiled module has
// (one per array leaf of each entry parameter, "out.i" per result leaf),
// filling them from .npy files, zeros or seeded random values, turning
// results back into .npy arrays, and the module's input_output_alias pairs
// that carry outputs into the next execution's parameters (a training
// step's weights).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/npy.h"
#include "engine/graph/graph.h"
#include "engine/hlo/module.h"
#include "engine/hlo/shape.h"

namespace tileprof::engine {

// One array leaf of a parameter or of the result.
struct HostLeaf {
  std::string stream;      // "x", "w.1" (leaf 1 of tuple parameter w), "out.0"
  std::string label;       // parameter: its name; result: the instruction that produced it
  int64_t parameter = -1;  // entry parameter number (inputs only)
  hlo::Shape shape;        // the leaf's HLO array shape
  ElementType type = ElementType::kF32;  // as the graph stores it
  uint64_t elements = 0;                 // 0: no stream (empty leaf)

  // "f32[2,3]"
  std::string ShapeString() const;
  uint64_t Bytes() const { return elements * SizeOf(type); }
};

struct HostInterface {
  std::vector<HostLeaf> inputs;   // parameter leaves, parameter order
  std::vector<HostLeaf> outputs;  // result leaves, out.0 first
  // input_output_alias: result leaf index -> input leaf index.
  std::vector<std::pair<size_t, size_t>> aliases;
};

// The leaves of the entry computation of `module`. Errors: an element type
// the host cannot feed (one the engine only stores, such as c64 or f8), an
// alias naming a missing parameter or leaf, or aliased leaves whose types
// or sizes differ.
Expected<HostInterface> DescribeHostInterface(const hlo::Module& module);

// The input leaf `name` names: a stream name ("x", "w.1"), a parameter name
// (if it has one leaf), or a parameter number. Errors list what exists.
Expected<size_t> FindInput(const HostInterface& host, std::string_view name);

// The stream bytes of `leaf` from a .npy array. Error (naming the leaf, the
// file and both shapes) unless dtype and shape match; a bf16 leaf takes a
// float32 array (bfloat16 is not a NumPy dtype), rounded to nearest even.
Expected<std::vector<std::byte>> InputFromNpy(const HostLeaf& leaf, const npy::Array& array,
                                              std::string_view file);
// Zeros, or reproducible random values from `seed`: floats uniform in
// [-1, 1), integers uniform in [0, 10), pred 0 or 1.
std::vector<std::byte> ZeroInput(const HostLeaf& leaf);
std::vector<std::byte> RandomInput(const HostLeaf& leaf, uint64_t seed);
// RandomInput's values for `elements` of `type`, from `seed` and `name`
// (different names give independent values).
std::vector<std::byte> RandomElements(ElementType type, uint64_t elements, uint64_t seed,
                                      std::string_view name);

// The .npy array of an output leaf; bf16 results become float32 (exactly).
Expected<npy::Array> OutputToNpy(const HostLeaf& leaf, std::span<const std::byte> bytes);

// One element as text: integers in decimal, floats with 6 significant
// digits, pred as true/false.
std::string FormatElement(ElementType type, const std::byte* element);

}  // namespace tileprof::engine
