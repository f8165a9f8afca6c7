// The tensor map and instruction info of ../shared/spec/tensor-map.md: where
// every tensor an HLO instruction produced lives, tile by tile, and the ML
// role of convolutions and matmuls. Both are the JSON payloads of the
// COMPILE_END trace event and the files `<module>.tensor_map.json` /
// `<report_directory>/<module>/tensor_map.json`.
//
//   {"mappings":{"cluster_1.5":[["add.0",0,[32,32],"float",0,0,1024,[[0,256],[1,256]],"dense/add"]]}}
//   {"ml_types":{"dense/MatMul/dot.3":1}}
//
// Written compactly (one line, no insignificant whitespace) in the order of
// the structs, which the engine fills deterministically (computations in
// module order, instructions in computation order), so maps can be diffed.
// The readers accept what the original's consumers accept (tests/test_utils.py
// TensorMap): any key order and whitespace; they check the 9-element layout,
// the [tile, n] pairs, that element 6 is the sum of the n, and that
// (instruction, output index) is unique across the map, naming the
// computation and tensor of the first problem.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"

namespace tileprof::report {

struct TileElements {
  uint32_t tile = 0;  // global tile id (tile / tiles_per_ipu is the IPU)
  uint64_t elements = 0;

  bool operator==(const TileElements&) const = default;
};

// One array of the "mappings" lists: the 9 elements of spec 1.2.
struct MappedTensor {
  std::string instruction;          // 0
  uint64_t output_index = 0;        // 1: flattened output-tuple index
  std::vector<uint64_t> shape;      // 2: the graph tensor's shape
  std::string type;                 // 3: Poplar type name ("float", "half")
  bool has_constant = false;        // 4
  bool has_aliases = false;         // 5
  uint64_t total_elements = 0;      // 6: sum of tiles[].elements
  std::vector<TileElements> tiles;  // 7: ascending tile, no zero counts
  std::string op_name;              // 8: metadata op_name, may be ""

  bool operator==(const MappedTensor&) const = default;
};

struct ComputationTensors {
  std::string computation;
  std::vector<MappedTensor> tensors;

  bool operator==(const ComputationTensors&) const = default;
};

struct TensorMap {
  std::vector<ComputationTensors> computations;

  bool operator==(const TensorMap&) const = default;
};

// MLType of driver/backend_config.proto.
enum class MlType : uint32_t {
  kNone = 0,
  kInferenceFwd = 1,
  kTrainingFwd = 2,
  kTrainingBwd = 3,
  kTrainingWu = 4,
};
std::string_view MlTypeName(MlType type);  // "INFERENCE_FWD"

struct InstructionInfo {
  // Key "<op_name>/<instruction name>" (GetDebugName); NONE entries are
  // left out by whoever fills this, as the original does.
  std::vector<std::pair<std::string, MlType>> ml_types;

  bool operator==(const InstructionInfo&) const = default;
};

std::string WriteTensorMapJson(const TensorMap& map);
std::string WriteInstructionInfoJson(const InstructionInfo& info);

// `filename` only names the input in messages. Computations come back in
// the order of the text.
Expected<TensorMap> ReadTensorMapJson(std::string_view text, std::string_view filename);
// Values outside the MLType enum are rejected by number.
Expected<InstructionInfo> ReadInstructionInfoJson(std::string_view text, std::string_view filename);

}  // namespace tileprof::report
