#include "engine/session/host_io.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine {
namespace {

// The array leaves of `shape` in order (tokens and empty tuples skipped),
// each with its index path.
void Leaves(const hlo::Shape& shape, std::vector<int64_t>& path,
            std::vector<std::pair<std::vector<int64_t>, const hlo::Shape*>>& out) {
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      path.push_back(static_cast<int64_t>(i));
      Leaves(shape.tuple_shapes[i], path, out);
      path.pop_back();
    }
  } else if (shape.IsArray()) {
    out.emplace_back(path, &shape);
  }
}

std::vector<std::pair<std::vector<int64_t>, const hlo::Shape*>> LeavesOf(const hlo::Shape& shape) {
  std::vector<std::pair<std::vector<int64_t>, const hlo::Shape*>> out;
  std::vector<int64_t> path;
  Leaves(shape, path, out);
  return out;
}

Expected<HostLeaf> MakeLeaf(const hlo::Shape& shape, std::string stream, std::string label) {
  HostLeaf leaf;
  leaf.stream = std::move(stream);
  leaf.label = std::move(label);
  leaf.shape = shape;
  TILEPROF_ASSIGN_OR_RETURN(compiler::StorageType storage, compiler::StorageOf(shape.element_type));
  if (!storage.native) {
    return MakeError("'{}' is {}: the host cannot feed or read {} arrays", leaf.label,
                     leaf.ShapeString(), hlo::PrimitiveTypeName(shape.element_type));
  }
  leaf.type = storage.type;
  std::optional<int64_t> count = shape.ElementCount();
  if (!count) return MakeError("'{}' has no fixed size ({})", leaf.label, leaf.ShapeString());
  leaf.elements = static_cast<uint64_t>(*count);
  return leaf;
}

std::optional<npy::Dtype> DtypeOf(ElementType type) {
  switch (type) {
    case ElementType::kPred:
      return npy::Dtype::kBool;
    case ElementType::kS8:
      return npy::Dtype::kI1;
    case ElementType::kU8:
      return npy::Dtype::kU1;
    case ElementType::kS16:
      return npy::Dtype::kI2;
    case ElementType::kU16:
      return npy::Dtype::kU2;
    case ElementType::kS32:
      return npy::Dtype::kI4;
    case ElementType::kU32:
      return npy::Dtype::kU4;
    case ElementType::kS64:
      return npy::Dtype::kI8;
    case ElementType::kU64:
      return npy::Dtype::kU8;
    case ElementType::kF16:
      return npy::Dtype::kF2;
    case ElementType::kF32:
      return npy::Dtype::kF4;
    case ElementType::kF64:
      return npy::Dtype::kF8;
    case ElementType::kBF16:
      return std::nullopt;
  }
  return std::nullopt;
}

std::vector<uint64_t> Dims(const hlo::Shape& shape) {
  std::vector<uint64_t> dims;
  for (int64_t d : shape.dimensions) dims.push_back(static_cast<uint64_t>(std::max<int64_t>(d, 0)));
  return dims;
}

// SplitMix64: a fixed, documented generator, so `--seed N` gives the same
// inputs with every standard library.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t HashName(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : name) hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  return hash;
}

}  // namespace

std::string HostLeaf::ShapeString() const {
  hlo::ShapePrintOptions options;
  options.print_layout = false;
  return hlo::ShapeToString(shape, options);
}

Expected<HostInterface> DescribeHostInterface(const hlo::Module& module) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return MakeError("module '{}' has no entry computation", module.name());
  HostInterface host;
  // Input leaf index of (parameter, path), for the aliases.
  std::vector<std::vector<std::pair<std::vector<int64_t>, size_t>>> input_paths;
  for (const hlo::Instruction* parameter : entry->parameters()) {
    if (parameter == nullptr) return MakeError("entry computation has a gap in its parameters");
    input_paths.emplace_back();
    const auto leaves = LeavesOf(parameter->shape());
    for (size_t i = 0; i < leaves.size(); ++i) {
      std::string stream = leaves.size() == 1 ? std::string(parameter->name())
                                              : fmt::format("{}.{}", parameter->name(), i);
      TILEPROF_ASSIGN_OR_RETURN(HostLeaf leaf, MakeLeaf(*leaves[i].second, stream, stream));
      leaf.parameter = parameter->parameter_number();
      input_paths.back().emplace_back(leaves[i].first, host.inputs.size());
      host.inputs.push_back(std::move(leaf));
    }
  }
  const hlo::Instruction* root = entry->root();
  if (root == nullptr) return MakeError("entry computation is empty");
  const auto result_leaves = LeavesOf(root->shape());
  for (size_t i = 0; i < result_leaves.size(); ++i) {
    // The producer's name: the root's operand when the root builds a tuple.
    std::string label(root->name());
    const std::vector<int64_t>& path = result_leaves[i].first;
    if (root->opcode() == hlo::Opcode::kTuple && path.size() == 1 &&
        static_cast<size_t>(path[0]) < root->operand_count()) {
      label = std::string(root->operand(static_cast<size_t>(path[0]))->name());
    }
    TILEPROF_ASSIGN_OR_RETURN(HostLeaf leaf,
                              MakeLeaf(*result_leaves[i].second, fmt::format("out.{}", i), label));
    host.outputs.push_back(std::move(leaf));
  }
  if (const hlo::Attribute* attribute = module.FindAttribute("input_output_alias")) {
    Expected<std::vector<hlo::InputOutputAlias>> aliases =
        hlo::ParseInputOutputAlias(attribute->value());
    if (!aliases) return aliases.error().Within("input_output_alias");
    for (const hlo::InputOutputAlias& alias : *aliases) {
      const std::string where =
          fmt::format("input_output_alias {{{}}}: ({}, {{{}}})", fmt::join(alias.output_index, ","),
                      alias.parameter, fmt::join(alias.parameter_index, ","));
      size_t output = result_leaves.size();
      for (size_t i = 0; i < result_leaves.size(); ++i) {
        if (result_leaves[i].first == alias.output_index) output = i;
      }
      if (output == result_leaves.size())
        return MakeError("{}: the result has no such array", where);
      if (alias.parameter < 0 || static_cast<size_t>(alias.parameter) >= input_paths.size()) {
        return MakeError("{}: there is no parameter {}", where, alias.parameter);
      }
      size_t input = host.inputs.size();
      for (const auto& [path, index] : input_paths[static_cast<size_t>(alias.parameter)]) {
        if (path == alias.parameter_index) input = index;
      }
      if (input == host.inputs.size())
        return MakeError("{}: the parameter has no such array", where);
      const HostLeaf& in = host.inputs[input];
      const HostLeaf& out = host.outputs[output];
      if (in.type != out.type || in.elements != out.elements) {
        return MakeError("{}: {} is {} but {} is {}", where, out.stream, out.ShapeString(),
                         in.stream, in.ShapeString());
      }
      host.aliases.emplace_back(output, input);
    }
  }
  return host;
}

Expected<size_t> FindInput(const HostInterface& host, std::string_view name) {
  for (size_t i = 0; i < host.inputs.size(); ++i) {
    if (host.inputs[i].stream == name) return i;
  }
  int64_t number = -1;
  const bool is_number =
      !name.empty() &&
      std::from_chars(name.data(), name.data() + name.size(), number).ec == std::errc() &&
      std::from_chars(name.data(), name.data() + name.size(), number).ptr ==
          name.data() + name.size();
  std::vector<size_t> matches;
  for (size_t i = 0; i < host.inputs.size(); ++i) {
    const HostLeaf& leaf = host.inputs[i];
    const bool by_number = is_number && leaf.parameter == number;
    const bool by_name = leaf.stream.size() > name.size() && leaf.stream.starts_with(name) &&
                         leaf.stream[name.size()] == '.';
    if (by_number || by_name) matches.push_back(i);
  }
  if (matches.size() == 1) return matches[0];
  std::vector<std::string> names;
  for (const HostLeaf& leaf : host.inputs)
    names.push_back(fmt::format("{} ({})", leaf.stream, leaf.parameter));
  if (matches.size() > 1) {
    std::vector<std::string> leaves;
    for (size_t i : matches) leaves.push_back(host.inputs[i].stream);
    return MakeError("input '{}' is a tuple of {} arrays; name one of {}", name, matches.size(),
                     fmt::join(leaves, ", "));
  }
  return MakeError(
      "no parameter '{}'; the parameters are: {}", name,
      names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", ")));
}

Expected<std::vector<std::byte>> InputFromNpy(const HostLeaf& leaf, const npy::Array& array,
                                              std::string_view file) {
  const std::vector<uint64_t> dims = Dims(leaf.shape);
  std::optional<npy::Dtype> want = DtypeOf(leaf.type);
  const bool bf16 = leaf.type == ElementType::kBF16;
  const bool dtype_ok = bf16 ? array.dtype == npy::Dtype::kF4 : array.dtype == *want;
  if (!dtype_ok || array.shape != dims) {
    return MakeError(
        "input '{}': {} is {}, the parameter is {}{}", leaf.stream, file, array.Describe(),
        leaf.ShapeString(),
        bf16 ? " (bfloat16 is not a NumPy dtype: give a float32 array of that shape)" : "");
  }
  if (!bf16) return array.data;
  std::vector<std::byte> bytes(leaf.Bytes());
  for (uint64_t i = 0; i < leaf.elements; ++i) {
    float value;
    std::memcpy(&value, array.data.data() + 4 * i, 4);
    const uint16_t bits = BFloat16FromFloat(value);
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  return bytes;
}

std::vector<std::byte> ZeroInput(const HostLeaf& leaf) {
  return std::vector<std::byte>(leaf.Bytes(), std::byte{0});
}

std::vector<std::byte> RandomElements(ElementType type, uint64_t elements, uint64_t seed,
                                      std::string_view name) {
  const uint32_t size = SizeOf(type);
  std::vector<std::byte> bytes(elements * size);
  uint64_t state = seed ^ HashName(name);
  for (uint64_t i = 0; i < elements; ++i) {
    const uint64_t bits = SplitMix64(state);
    std::byte* at = bytes.data() + i * size;
    if (IsFloat(type)) {
      const double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
      StoreFromDouble(type, 2.0 * unit - 1.0, at);
    } else if (type == ElementType::kPred) {
      StoreFromInt64(type, static_cast<int64_t>(bits >> 63), at);
    } else {
      StoreFromInt64(type, static_cast<int64_t>((bits >> 32) % 10), at);
    }
  }
  return bytes;
}

std::vector<std::byte> RandomInput(const HostLeaf& leaf, uint64_t seed) {
  return RandomElements(leaf.type, leaf.elements, seed, leaf.stream);
}

Expected<npy::Array> OutputToNpy(const HostLeaf& leaf, std::span<const std::byte> bytes) {
  if (bytes.size() != leaf.Bytes()) {
    return MakeError("output '{}' has {} bytes, expected {} for {}", leaf.stream, bytes.size(),
                     leaf.Bytes(), leaf.ShapeString());
  }
  npy::Array array;
  array.shape = Dims(leaf.shape);
  if (leaf.type == ElementType::kBF16) {
    array.dtype = npy::Dtype::kF4;
    array.data.resize(leaf.elements * 4);
    for (uint64_t i = 0; i < leaf.elements; ++i) {
      uint16_t bits;
      std::memcpy(&bits, bytes.data() + 2 * i, 2);
      const float value = BFloat16ToFloat(bits);
      std::memcpy(array.data.data() + 4 * i, &value, 4);
    }
    return array;
  }
  array.dtype = *DtypeOf(leaf.type);
  array.data.assign(bytes.begin(), bytes.end());
  return array;
}

std::string FormatElement(ElementType type, const std::byte* element) {
  if (type == ElementType::kPred) return std::to_integer<uint8_t>(*element) != 0 ? "true" : "false";
  if (IsFloat(type)) return fmt::format("{:.6g}", LoadAsDouble(type, element));
  if (type == ElementType::kU64) {
    uint64_t value;
    std::memcpy(&value, element, 8);
    return fmt::format("{}", value);
  }
  if (type == ElementType::kS64) {
    int64_t value;
    std::memcpy(&value, element, 8);
    return fmt::format("{}", value);
  }
  return fmt::format("{}", static_cast<int64_t>(LoadAsDouble(type, element)));
}

}  // namespace tileprof::engine
