// The general convolution partial's parameter names (codelets.h, ConvParam),
// in the order of ConvParam.
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"

namespace tileprof::engine {
namespace {

constexpr size_t kSpatial = kConvMaxSpatialDims;
constexpr size_t kNumParams = static_cast<size_t>(ConvParam::kCount);

std::vector<std::string> MakeParamNames() {
  std::vector<std::string> names = {"outStart", "outSizeB", "outStrideB", "outSizeF", "outStrideF"};
  for (size_t d = 0; d < kSpatial; ++d) {
    names.push_back(fmt::format("outSize{}", d));
    names.push_back(fmt::format("outStride{}", d));
  }
  for (const char* name : {"inStart", "inStrideB", "inStrideF"}) names.emplace_back(name);
  for (size_t d = 0; d < kSpatial; ++d) {
    names.push_back(fmt::format("inSize{}", d));
    names.push_back(fmt::format("inStride{}", d));
  }
  for (const char* name : {"weightsStart", "weightsStrideI", "weightsStrideO"})
    names.emplace_back(name);
  for (size_t d = 0; d < kSpatial; ++d) {
    names.push_back(fmt::format("kernelSize{}", d));
    names.push_back(fmt::format("weightsStride{}", d));
  }
  for (const char* prefix : {"stride", "padLow", "lhsDilation", "rhsDilation"})
    for (size_t d = 0; d < kSpatial; ++d) names.push_back(fmt::format("{}{}", prefix, d));
  for (const char* name : {"reversal", "inChansPerGroup", "outChansPerGroup", "groupsSplitBatch",
                           "inChanStart", "inChans", "outOffsetB", "outOffsetF"}) {
    names.emplace_back(name);
  }
  for (const char* prefix : {"outOffset", "kernelOffset", "kernelFull"})
    for (size_t d = 0; d < kSpatial; ++d) names.push_back(fmt::format("{}{}", prefix, d));
  names.emplace_back("batchPerGroup");
  return names;
}

}  // namespace

std::span<const std::string> ConvPartialParamNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = MakeParamNames();
    if (v.size() != kNumParams) std::abort();  // ConvParam and the names disagree
    return v;
  }();
  return names;
}

}  // namespace tileprof::engine
