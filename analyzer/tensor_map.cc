#include "analyzer/tensor_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/file.h"
#include "reports/tensor_map.h"

namespace tileprof::analyzer {

std::string MappedTensor::ShapeText() const {
  return fmt::format("{}[{}]", type, fmt::join(shape, ","));
}

std::optional<uint64_t> PoplarTypeBytes(std::string_view type) {
  static const std::pair<std::string_view, uint64_t> kTypes[] = {
      {"float", 4},
      {"half", 2},
      {"int", 4},
      {"unsigned int", 4},
      {"short", 2},
      {"unsigned short", 2},
      {"char", 1},
      {"signed char", 1},
      {"unsigned char", 1},
      {"bool", 1},
      {"long long", 8},
      {"unsigned long long", 8},
      {"quarter", 1},
      // Not Poplar types: the names tileprof's own tensor maps give bf16 and
      // f64 tensors (engine/target/element_type.cc), which Poplar has none for.
      {"bfloat16", 2},
      {"double", 8},
  };
  for (const auto& [name, bytes] : kTypes)
    if (name == type) return bytes;
  return std::nullopt;
}

Expected<std::vector<MappedTensor>> ParseTensorMap(std::string_view text,
                                                   std::string_view filename) {
  // One reader of the format (reports/tensor_map), plus what the analyzer
  // needs on top: each tensor's element size, to rank tensors by bytes.
  TILEPROF_ASSIGN_OR_RETURN(report::TensorMap map, report::ReadTensorMapJson(text, filename));
  std::vector<MappedTensor> tensors;
  for (report::ComputationTensors& computation : map.computations) {
    for (size_t i = 0; i < computation.tensors.size(); ++i) {
      report::MappedTensor& in = computation.tensors[i];
      const std::string at =
          fmt::format("{}: mappings[\"{}\"][{}]", filename, computation.computation, i);
      std::optional<uint64_t> bytes = PoplarTypeBytes(in.type);
      if (!bytes) return MakeError("{}[3]: unknown element type '{}'", at, in.type);
      if (in.total_elements > UINT64_MAX / *bytes)
        return MakeError("{}[6]: byte size overflows 64 bits", at);
      MappedTensor out;
      out.computation = computation.computation;
      out.instruction = std::move(in.instruction);
      out.output_index = in.output_index;
      out.shape = std::move(in.shape);
      out.type = std::move(in.type);
      out.has_constants = in.has_constant;
      out.has_aliases = in.has_aliases;
      out.elements = in.total_elements;
      out.tiles.reserve(in.tiles.size());
      for (const report::TileElements& t : in.tiles) out.tiles.emplace_back(t.tile, t.elements);
      out.op_name = std::move(in.op_name);
      out.element_bytes = *bytes;
      tensors.push_back(std::move(out));
    }
  }
  return tensors;
}

Expected<std::vector<MappedTensor>> ReadTensorMapFile(const std::string& path) {
  Expected<std::string> text = ReadFile(path);
  if (!text)
    return text.error().message().starts_with(path) ? text.error() : text.error().Within(path);
  return ParseTensorMap(*text, path);
}

}  // namespace tileprof::analyzer
