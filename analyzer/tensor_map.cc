#include "analyzer/tensor_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <set>

#include "common/file.h"

namespace tileprof::analyzer {
namespace {

using Json = nlohmann::json;

bool IsCount(const Json& value) { return value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0); }

// Elements 4 and 5 are the numbers 0 or 1; readers convert with bool(), so
// JSON booleans are accepted too.
std::optional<bool> Flag(const Json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (IsCount(value) && value.get<uint64_t>() <= 1) return value.get<uint64_t>() == 1;
  return std::nullopt;
}

Expected<MappedTensor> ParseTensor(const Json& item, const std::string& computation, const std::string& where) {
  auto fail = [&](std::string_view at, std::string_view why) {
    return MakeError("{}{}: {}", where, at, why);
  };
  if (!item.is_array() || item.size() < 8 || item.size() > 9)
    return fail("", "expected an array of 9 items (instruction, output index, shape, type, constant, "
                    "aliases, elements, per-tile elements, op name)");
  MappedTensor tensor;
  tensor.computation = computation;
  if (!item[0].is_string()) return fail("[0]", "expected the instruction name (a string)");
  tensor.instruction = item[0].get<std::string>();
  if (!IsCount(item[1])) return fail("[1]", "expected the output index (an unsigned integer)");
  tensor.output_index = item[1].get<uint64_t>();
  if (!item[2].is_array()) return fail("[2]", "expected the shape (an array of unsigned integers)");
  for (size_t d = 0; d < item[2].size(); ++d) {
    if (!IsCount(item[2][d])) return fail(fmt::format("[2][{}]", d), "expected an unsigned integer");
    tensor.shape.push_back(item[2][d].get<uint64_t>());
  }
  if (!item[3].is_string()) return fail("[3]", "expected the element type (a string)");
  tensor.type = item[3].get<std::string>();
  std::optional<uint64_t> bytes = PoplarTypeBytes(tensor.type);
  if (!bytes) return fail("[3]", fmt::format("unknown element type '{}'", tensor.type));
  tensor.element_bytes = *bytes;
  std::optional<bool> constants = Flag(item[4]), aliases = Flag(item[5]);
  if (!constants) return fail("[4]", "expected 0 or 1 (has constant elements)");
  if (!aliases) return fail("[5]", "expected 0 or 1 (has aliases)");
  tensor.has_constants = *constants;
  tensor.has_aliases = *aliases;
  if (!IsCount(item[6])) return fail("[6]", "expected the number of elements (an unsigned integer)");
  tensor.elements = item[6].get<uint64_t>();
  if (!item[7].is_array()) return fail("[7]", "expected the per-tile elements [[tile, n], ...]");
  uint64_t sum = 0;
  for (size_t t = 0; t < item[7].size(); ++t) {
    const Json& pair = item[7][t];
    if (!pair.is_array() || pair.size() != 2 || !IsCount(pair[0]) || !IsCount(pair[1]) ||
        pair[0].get<uint64_t>() > UINT32_MAX)
      return fail(fmt::format("[7][{}]", t), "expected [tile, elements]");
    uint32_t tile = static_cast<uint32_t>(pair[0].get<uint64_t>());
    uint64_t n = pair[1].get<uint64_t>();
    if (!tensor.tiles.empty() && tile <= tensor.tiles.back().first)
      return fail(fmt::format("[7][{}]", t), fmt::format("tile {} does not ascend (after tile {})", tile,
                                                         tensor.tiles.back().first));
    if (n > UINT64_MAX - sum) return fail(fmt::format("[7][{}]", t), "element counts overflow 64 bits");
    sum += n;
    tensor.tiles.emplace_back(tile, n);
  }
  if (sum != tensor.elements)
    return fail("[6]", fmt::format("{} elements, but the per-tile counts sum to {}", tensor.elements, sum));
  if (tensor.elements > UINT64_MAX / tensor.element_bytes) return fail("[6]", "byte size overflows 64 bits");
  if (item.size() == 9) {
    if (!item[8].is_string()) return fail("[8]", "expected the op name (a string)");
    tensor.op_name = item[8].get<std::string>();
  }
  return tensor;
}

}  // namespace

std::string MappedTensor::ShapeText() const {
  return fmt::format("{}[{}]", type, fmt::join(shape, ","));
}

std::optional<uint64_t> PoplarTypeBytes(std::string_view type) {
  static const std::pair<std::string_view, uint64_t> kTypes[] = {
      {"float", 4},        {"half", 2},          {"int", 4},           {"unsigned int", 4},
      {"short", 2},        {"unsigned short", 2}, {"char", 1},         {"signed char", 1},
      {"unsigned char", 1}, {"bool", 1},         {"long long", 8},     {"unsigned long long", 8},
      {"quarter", 1},
  };
  for (const auto& [name, bytes] : kTypes)
    if (name == type) return bytes;
  return std::nullopt;
}

Expected<std::vector<MappedTensor>> ParseTensorMap(std::string_view text, std::string_view filename) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return MakeError("{}: not JSON: {}", filename, e.what());
  }
  if (!root.is_object() || !root.contains("mappings") || !root["mappings"].is_object())
    return MakeError("{}: expected an object with a \"mappings\" object (tensor-map.md section 1.2)", filename);
  std::vector<MappedTensor> tensors;
  std::set<std::pair<std::string, uint64_t>> seen;
  for (const auto& [computation, list] : root["mappings"].items()) {
    std::string where = fmt::format("{}: mappings.{}", filename, computation);
    if (!list.is_array()) return MakeError("{}: expected an array of tensors", where);
    for (size_t i = 0; i < list.size(); ++i) {
      std::string at = fmt::format("{}[{}]", where, i);
      TILEPROF_ASSIGN_OR_RETURN(MappedTensor tensor, ParseTensor(list[i], computation, at));
      if (!seen.emplace(tensor.instruction, tensor.output_index).second)
        return MakeError("{}: tensor '{},{}' appears twice (tensor ids must be unique)", at, tensor.instruction,
                         tensor.output_index);
      tensors.push_back(std::move(tensor));
    }
  }
  return tensors;
}

Expected<std::vector<MappedTensor>> ReadTensorMapFile(const std::string& path) {
  Expected<std::string> text = ReadFile(path);
  if (!text) return text.error().message().starts_with(path) ? text.error() : text.error().Within(path);
  return ParseTensorMap(*text, path);
}

}  // namespace tileprof::analyzer
