// Typed views of attribute payloads (../shared/spec/hlo-text.md section 6).
// The model keeps every value as written (Attribute::value()); these decode
// the ones a compiler or a diff tool needs. Each takes the value text and
// returns Expected<T>; errors carry the column inside the value
// ("col 7: expected 'x' or '}' in window"). The parser runs the same decoders
// while parsing (ParseOptions::validate_attributes), so values of a parsed
// module decode without error.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Only the declaration of nlohmann::json: the full header cost ~3 s in each
// of the ~23 units that include this one, for the one field below.
#include <nlohmann/json_fwd.hpp>

#include "common/expected.h"
#include "engine/hlo/lexer.h"
#include "engine/hlo/module.h"
#include "engine/hlo/shape.h"

namespace tileprof::hlo {

// ---- Generic -------------------------------------------------------------

// The value re-spelled from its tokens: comments and layout whitespace
// dropped, '%' sigils dropped, one space only between two words, strings
// untouched. "{ {0, 2}, {1, 3} }" -> "{{0,2},{1,3}}";
// "{size=3x3  pad=1_1x1_1}" -> "{size=3x3 pad=1_1x1_1}". Equal values of a
// parsed module normalise to equal text; the canonical printer uses this.
std::string NormalizeAttributeValue(std::string_view value);

// Decodes a C-escaped string token (with its quotes): "\"a\\n\\005\"" -> "a\n\5".
Expected<std::string> DecodeStringLiteral(std::string_view token);

// `{0,1}` -> {0, 1}; `{}` -> {}. For dimensions=, *_contracting_dims=,
// *_batch_dims=, slice_sizes=, dynamic_slice_sizes=, fft_length=, offset_dims=,
// collapsed_slice_dims=, start_index_map=, update_window_dims=, ...
Expected<std::vector<int64_t>> ParseIntList(std::string_view value);

// `{{0,1},{1,2}}` (source_target_pairs=, list-form replica groups).
Expected<std::vector<std::vector<int64_t>>> ParseIntListList(std::string_view value);

// `true` / `false`.
Expected<bool> ParseBool(std::string_view value);

// `{true,false}` (parameter_replication=, allow_spmd_sharding_propagation_*).
Expected<std::vector<bool>> ParseBoolList(std::string_view value);

// ---- Convolution and windows -------------------------------------------

struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;     // lhs_dilate
  int64_t window_dilation = 1;   // rhs_dilate
  bool window_reversal = false;  // rhs_reversal
  bool operator==(const WindowDimension&) const = default;
};

// `{size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=2x3 rhs_reversal=0x1}`;
// sub-attributes in any order, each with one entry per spatial dimension.
Expected<std::vector<WindowDimension>> ParseWindow(std::string_view value);

// dim_labels=b01f_01io->b01f: which dimension of input, kernel and output is
// batch (b), feature (f), input/output feature (i/o) and each spatial one
// (digits, in spatial order).
struct ConvolutionDimensions {
  int64_t input_batch = 0;
  int64_t input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0;
  int64_t kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0;
  int64_t output_feature = 0;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvolutionDimensions&) const = default;
};
Expected<ConvolutionDimensions> ParseDimLabels(std::string_view value);

// ---- Slices, padding, dots ----------------------------------------------

struct SliceDimension {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDimension&) const = default;
};
// slice={[0:10], [0:25:2]}
Expected<std::vector<SliceDimension>> ParseSlice(std::string_view value);

struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDimension&) const = default;
};
// padding=0_0x1_2_0 (low_high[_interior] per dimension, 'x' between)
Expected<std::vector<PaddingDimension>> ParsePadding(std::string_view value);

struct DotDimensions {
  std::vector<int64_t> lhs_batch;
  std::vector<int64_t> lhs_contracting;
  std::vector<int64_t> rhs_batch;
  std::vector<int64_t> rhs_contracting;
};
// From a dot's lhs_/rhs_ batch/contracting attributes (missing ones empty).
Expected<DotDimensions> GetDotDimensions(const Instruction& dot);

// ---- Sharding and replica groups (sharding.cc) ---------------------------

struct Sharding {
  enum class Kind : uint8_t {
    kReplicated,
    kMaximal,
    kManual,
    kUnknown,
    kUnreduced,
    kTiled,
    kTuple
  };
  Kind kind = Kind::kReplicated;
  int64_t device = -1;  // kMaximal
  // kTiled: devices=[tile dims] then either an explicit device list or the
  // iota form <=[reshape dims] with an optional T(permutation).
  std::vector<int64_t> tile_dimensions;
  std::vector<int64_t> devices;  // explicit list (empty for the iota form)
  bool iota = false;
  std::vector<int64_t> iota_reshape;
  std::vector<int64_t> iota_transpose;
  bool last_tile_dim_replicate = false;
  std::vector<std::string> last_tile_dims;  // manual, replicated, ...
  std::optional<int64_t> shard_group;       // shard_as N / shard_like N
  std::string shard_group_kind;             // "shard_as" or "shard_like"
  std::string metadata;                     // metadata={...} as written
  std::vector<Sharding> tuple_elements;     // kTuple

  // The device of every tile in row-major tile order (expands the iota form).
  // Errors when the assignment would exceed `max_devices` entries.
  Expected<std::vector<int64_t>> TileAssignment(int64_t max_devices = 1 << 24) const;
};

// {replicated}, {maximal device=0}, {manual}, {unknown}, {devices=[2,1]0,1},
// {devices=[2,2]<=[4]}, {devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate},
// last_tile_dims={manual}, metadata={...}, and tuples {{...}, {...}}.
Expected<Sharding> ParseSharding(std::string_view value);

// replica_groups={{0,1},{2,3}}, {} or the iota form [2,4]<=[8] /
// [2,4]<=[4,2]T(1,0); the result is always the explicit list of groups.
Expected<std::vector<std::vector<int64_t>>> ParseReplicaGroups(std::string_view value,
                                                               int64_t max_devices = 1 << 24);

// The devices a collective spans and what says so: its first replica
// group, else the module's replica_count x num_partitions; a
// collective-permute spans at least the highest device its
// source_target_pairs name, plus one (older pmap dumps print no
// replica_count). `from`: "its replica groups", "its source_target_pairs"
// or "replica_count R x num_partitions P".
struct CollectiveSpan {
  int64_t devices = 1;
  std::string from;
};
Expected<CollectiveSpan> CollectiveDevices(const Instruction& instruction, const Module& module);

// Expands `<=[reshape]T(perm)` reshaped to `dims`: the device ids
// iota(product(reshape)) reshaped to `reshape`, transposed by `perm` (identity
// when empty) and flattened. Errors on a bad permutation, a size mismatch or
// more than `max_devices` ids.
Expected<std::vector<int64_t>> ExpandIota(const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& reshape,
                                          const std::vector<int64_t>& transpose,
                                          int64_t max_devices);

// ---- Metadata, frontend attributes, backend config ------------------------

struct Metadata {
  // Every key=value in order, values as written (strings keep their quotes).
  std::vector<std::pair<std::string, std::string>> entries;
  // Decoded well-known keys (empty / -1 when absent).
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int64_t source_line = -1;
  int64_t stack_frame_id = -1;

  // The raw value of `key`, or nullptr.
  const std::string* Find(std::string_view key) const;
};
// metadata={op_type="Mean" op_name="a/b" source_file="x.py" source_line=10}:
// space-separated; unknown keys are kept in `entries`.
Expected<Metadata> ParseMetadata(std::string_view value);

// frontend_attributes={_xla_buffer_placement="pinned_host",grad_x="false"}:
// key -> decoded value, in order. Bare JSON values are kept as their text.
Expected<std::vector<std::pair<std::string, std::string>>> ParseFrontendAttributes(
    std::string_view value);

struct BackendConfig {
  // The bytes of a quoted value (decoded escapes; may be binary), or the
  // text of a bare JSON object.
  std::string bytes;
  bool quoted = false;
  // The bytes as JSON when they parse as JSON (XLA's GPU configs do, the
  // threefry configs of old JAX dumps are binary and do not), else null.
  // A pointer, so that this header needs only nlohmann's forward
  // declaration; include <nlohmann/json.hpp> to read the value.
  std::shared_ptr<const nlohmann::json> json;
};
// backend_config="..." (C-escaped, possibly binary) or backend_config={...}.
Expected<BackendConfig> ParseBackendConfig(std::string_view value);

// ---- Custom calls and aliasing --------------------------------------------

struct OutputOperandAlias {
  std::vector<int64_t> output_index;
  int64_t operand = 0;
  std::vector<int64_t> operand_index;
};
// output_to_operand_aliasing={{0}: (0, {1}), {1}: (1, {})}
Expected<std::vector<OutputOperandAlias>> ParseOutputOperandAliasing(std::string_view value);

struct CustomCall {
  std::string target;            // custom_call_target
  std::string api_version;       // API_VERSION_STATUS_RETURNING, ...
  bool has_side_effect = false;  // custom_call_has_side_effect
  std::string schedule;          // SCHEDULE_LATEST, ...
  std::vector<Shape> operand_layout_constraints;
  std::vector<OutputOperandAlias> output_to_operand_aliasing;
  std::optional<BackendConfig> backend_config;
  std::vector<const Computation*> called_computations;
};
// The custom-call fields of an instruction (any opcode; custom-call and its
// async forms are the ones that have them).
Expected<CustomCall> GetCustomCall(const Instruction& instruction);

// operand_layout_constraints={f32[2,3]{0,1}, f32[5,5]{1,0}}
Expected<std::vector<Shape>> ParseShapeList(std::string_view value);

struct InputOutputAlias {
  std::vector<int64_t> output_index;
  int64_t parameter = 0;
  std::vector<int64_t> parameter_index;
  std::string kind;  // "may-alias", "must-alias" or empty
};
// input_output_alias={ {0}: (40, {}, must-alias), {1}: (0, {1}) }
Expected<std::vector<InputOutputAlias>> ParseInputOutputAlias(std::string_view value);

struct BufferDonor {
  int64_t parameter = 0;
  std::vector<int64_t> parameter_index;
};
// buffer_donor={ (0, {}), (1, {0}) }
Expected<std::vector<BufferDonor>> ParseBufferDonor(std::string_view value);

// entry_computation_layout={(f32[10]{0},s32[])->f32[1,121]{1,0}}
Expected<ProgramShape> ParseProgramShape(std::string_view value);

// ---- Validation -----------------------------------------------------------

// Decodes the value of attribute `name` if it is one of the typed
// attributes above (by name); unknown names are accepted as raw text. On
// failure sets `failure->offset` relative to the start of `value`.
bool ValidateAttribute(std::string_view name, std::string_view value, ParseFailure* failure);

// The same for module header attributes (is_scheduled=, replica_count=,
// num_partitions=, entry_computation_layout=, input_output_alias=,
// buffer_donor=, allow_spmd_sharding_propagation_to_*=, frontend_attributes=).
bool ValidateModuleAttribute(std::string_view name, std::string_view value, ParseFailure* failure);

}  // namespace tileprof::hlo
