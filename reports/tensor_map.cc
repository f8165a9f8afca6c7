#include "reports/tensor_map.h"

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

namespace tileprof::report {
namespace {

using Json = nlohmann::ordered_json;

// Names come from HLO text, which may hold any bytes; the JSON stays valid.
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Expected<Json> Parse(std::string_view text, std::string_view filename) {
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return MakeError("{}: not valid JSON", filename);
  return json;
}

Expected<uint64_t> Unsigned(const Json& value, std::string_view what) {
  if (!value.is_number_unsigned())
    return MakeError("{}: expected a non-negative integer, got {}", what, Dump(value));
  return value.get<uint64_t>();
}

// Elements 4 and 5: the original writes 0/1; readers apply bool(), so a JSON
// boolean is accepted too.
Expected<bool> Flag(const Json& value, std::string_view what) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_unsigned() && value.get<uint64_t>() <= 1) return value.get<uint64_t>() == 1;
  return MakeError("{}: expected 0 or 1, got {}", what, Dump(value));
}

Expected<MappedTensor> ReadTensor(const Json& array, const std::string& where) {
  // Element 8 (op name) is missing in the published docs' 8-element form.
  if (!array.is_array() || array.size() < 8 || array.size() > 9)
    return MakeError("{}: expected an array of 9 elements, got {}", where,
                     Dump(array).substr(0, 80));
  MappedTensor t;
  if (!array[0].is_string()) return MakeError("{}[0]: expected the instruction name", where);
  t.instruction = array[0].get<std::string>();
  TILEPROF_ASSIGN_OR_RETURN(t.output_index, Unsigned(array[1], where + "[1]"));
  if (!array[2].is_array()) return MakeError("{}[2]: expected the shape as an array", where);
  for (const Json& dim : array[2]) {
    TILEPROF_ASSIGN_OR_RETURN(uint64_t d, Unsigned(dim, where + "[2]"));
    t.shape.push_back(d);
  }
  if (!array[3].is_string()) return MakeError("{}[3]: expected the element type name", where);
  t.type = array[3].get<std::string>();
  TILEPROF_ASSIGN_OR_RETURN(t.has_constant, Flag(array[4], where + "[4]"));
  TILEPROF_ASSIGN_OR_RETURN(t.has_aliases, Flag(array[5], where + "[5]"));
  TILEPROF_ASSIGN_OR_RETURN(t.total_elements, Unsigned(array[6], where + "[6]"));
  if (!array[7].is_array()) return MakeError("{}[7]: expected the [tile, n] list", where);
  uint64_t sum = 0;
  for (size_t i = 0; i < array[7].size(); ++i) {
    const Json& pair = array[7][i];
    std::string at = fmt::format("{}[7][{}]", where, i);
    if (!pair.is_array() || pair.size() != 2) return MakeError("{}: expected [tile, n]", at);
    TILEPROF_ASSIGN_OR_RETURN(uint64_t tile, Unsigned(pair[0], at));
    TILEPROF_ASSIGN_OR_RETURN(uint64_t n, Unsigned(pair[1], at));
    if (tile > UINT32_MAX) return MakeError("{}: tile {} is out of range", at, tile);
    if (!t.tiles.empty() && tile <= t.tiles.back().tile)
      return MakeError("{}: tile {} does not ascend (after tile {})", at, tile,
                       t.tiles.back().tile);
    if (n > UINT64_MAX - sum) return MakeError("{}: element counts overflow", at);
    sum += n;
    t.tiles.push_back({static_cast<uint32_t>(tile), n});
  }
  if (sum != t.total_elements)
    return MakeError("{}[6]: total {} is not the sum of the per-tile counts ({})", where,
                     t.total_elements, sum);
  if (array.size() == 9) {
    if (!array[8].is_string()) return MakeError("{}[8]: expected the op name", where);
    t.op_name = array[8].get<std::string>();
  }
  return t;
}

}  // namespace

std::string_view MlTypeName(MlType type) {
  switch (type) {
    case MlType::kNone:
      return "NONE";
    case MlType::kInferenceFwd:
      return "INFERENCE_FWD";
    case MlType::kTrainingFwd:
      return "TRAINING_FWD";
    case MlType::kTrainingBwd:
      return "TRAINING_BWD";
    case MlType::kTrainingWu:
      return "TRAINING_WU";
  }
  return "UNKNOWN";
}

std::string WriteTensorMapJson(const TensorMap& map) {
  // Written directly rather than through a DOM: a large module's map has
  // millions of [tile, n] pairs, and a tree of them costs ~80 bytes each.
  std::string out = "{\"mappings\":{";
  auto quote = [&out](std::string_view text) { out += Dump(Json(std::string(text))); };
  for (size_t c = 0; c < map.computations.size(); ++c) {
    const ComputationTensors& computation = map.computations[c];
    if (c > 0) out += ',';
    quote(computation.computation);
    out += ":[";
    for (size_t i = 0; i < computation.tensors.size(); ++i) {
      const MappedTensor& t = computation.tensors[i];
      if (i > 0) out += ',';
      out += '[';
      quote(t.instruction);
      fmt::format_to(std::back_inserter(out), ",{},[", t.output_index);
      for (size_t d = 0; d < t.shape.size(); ++d)
        fmt::format_to(std::back_inserter(out), "{}{}", d ? "," : "", t.shape[d]);
      out += "],";
      quote(t.type);
      fmt::format_to(std::back_inserter(out), ",{},{},{},[", t.has_constant ? 1 : 0,
                     t.has_aliases ? 1 : 0, t.total_elements);
      for (size_t k = 0; k < t.tiles.size(); ++k)
        fmt::format_to(std::back_inserter(out), "{}[{},{}]", k ? "," : "", t.tiles[k].tile,
                       t.tiles[k].elements);
      out += "],";
      quote(t.op_name);
      out += ']';
    }
    out += ']';
  }
  out += "}}";
  return out;
}

std::string WriteInstructionInfoJson(const InstructionInfo& info) {
  Json types = Json::object();
  for (const auto& [key, type] : info.ml_types) types[key] = static_cast<uint32_t>(type);
  return Dump(Json{{"ml_types", std::move(types)}});
}

Expected<TensorMap> ReadTensorMapJson(std::string_view text, std::string_view filename) {
  TILEPROF_ASSIGN_OR_RETURN(Json json, Parse(text, filename));
  if (!json.is_object() || !json.contains("mappings") || !json["mappings"].is_object())
    return MakeError("{}: expected an object with a \"mappings\" object", filename);
  TensorMap map;
  std::set<std::pair<std::string, uint64_t>> seen;
  for (const auto& [name, tensors] : json["mappings"].items()) {
    std::string where = fmt::format("{}: mappings[\"{}\"]", filename, name);
    if (!tensors.is_array()) return MakeError("{}: expected a list of tensors", where);
    ComputationTensors computation{name, {}};
    for (size_t i = 0; i < tensors.size(); ++i) {
      TILEPROF_ASSIGN_OR_RETURN(MappedTensor t,
                                ReadTensor(tensors[i], fmt::format("{}[{}]", where, i)));
      // tests/test_utils.py identifies tensors as "<inst>,<index>".
      if (!seen.emplace(t.instruction, t.output_index).second)
        return MakeError("{}[{}]: tensor {},{} appears twice in the map", where, i, t.instruction,
                         t.output_index);
      computation.tensors.push_back(std::move(t));
    }
    map.computations.push_back(std::move(computation));
  }
  return map;
}

Expected<InstructionInfo> ReadInstructionInfoJson(std::string_view text,
                                                  std::string_view filename) {
  TILEPROF_ASSIGN_OR_RETURN(Json json, Parse(text, filename));
  if (!json.is_object() || !json.contains("ml_types") || !json["ml_types"].is_object())
    return MakeError("{}: expected an object with an \"ml_types\" object", filename);
  InstructionInfo info;
  for (const auto& [key, value] : json["ml_types"].items()) {
    std::string where = fmt::format("{}: ml_types[\"{}\"]", filename, key);
    TILEPROF_ASSIGN_OR_RETURN(uint64_t n, Unsigned(value, where));
    if (n > static_cast<uint64_t>(MlType::kTrainingWu))
      return MakeError("{}: {} is not an MLType (0 to 4)", where, n);
    info.ml_types.emplace_back(key, static_cast<MlType>(n));
  }
  return info;
}

}  // namespace tileprof::report
