// Fuzzes the tensor-map reader (analyzer/tensor_map.h): any bytes either
// fail with a message naming the file or give tensors whose per-tile counts
// ascend and sum to their element count.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "analyzer/tensor_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto tensors = tileprof::analyzer::ParseTensorMap(text, "fuzz.json");
  if (!tensors) {
    if (!tensors.error().message().starts_with("fuzz.json")) std::abort();
    return 0;
  }
  for (const auto& t : *tensors) {
    uint64_t sum = 0;
    for (size_t i = 0; i < t.tiles.size(); ++i) {
      if (i > 0 && t.tiles[i].first <= t.tiles[i - 1].first) std::abort();
      sum += t.tiles[i].second;
    }
    if (sum != t.elements || t.element_bytes == 0) std::abort();
    (void)t.ShapeText();
  }
  return 0;
}
