// The tensor map of ../shared/spec/tensor-map.md section 1: where every
// tensor an HLO instruction produces lives, tile by tile
// ({"mappings": {"<computation>": [[inst, index, shape, type, const, alias,
// elements, [[tile, n], ...], op_name], ...]}}). `tileprof oom --tensor-map`
// uses it to name what fills a tile by HLO instruction and TensorFlow op.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"

namespace tileprof::analyzer {

struct MappedTensor {
  std::string computation;
  std::string instruction;  // element 0
  uint64_t output_index = 0;
  std::vector<uint64_t> shape;
  std::string type;  // Poplar type name: "float", "half", "int", ...
  bool has_constants = false;
  bool has_aliases = false;
  uint64_t elements = 0;                             // element 6
  std::vector<std::pair<uint32_t, uint64_t>> tiles;  // (tile, elements), ascending
  std::string op_name;                               // element 8; "" when absent
  uint64_t element_bytes = 0;

  uint64_t Bytes() const { return elements * element_bytes; }
  std::string ShapeText() const;  // "float[32,32]"
};

// Bytes per element of a Poplar type name, or nullopt for an unknown name.
std::optional<uint64_t> PoplarTypeBytes(std::string_view type);

// Errors name the file and the JSON place, e.g. "tm.json: mappings.
// cluster_1.5[2][7][1]: expected [tile, elements]": not the spec's shape,
// an unknown element type, element 6 differing from the sum of the per-tile
// counts, tiles not ascending, or an (instruction, output index) pair seen
// twice. Item 8 may be missing (the published docs' 8-item form).
Expected<std::vector<MappedTensor>> ParseTensorMap(std::string_view text,
                                                   std::string_view filename);
Expected<std::vector<MappedTensor>> ReadTensorMapFile(const std::string& path);

}  // namespace tileprof::analyzer
