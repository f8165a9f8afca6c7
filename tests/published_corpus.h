// Paths of the published artefacts the tests read: the shared corpus
// (../shared/corpus/published/, A01-A10, B01-B12, C01-C06) and the ones this
// repository adds (tests/analyzer/data/published/, L01-L07, R01-R03). Each
// folder's SOURCES.md says where every file was published.
#pragma once

#include <string>
#include <string_view>

namespace tileprof::testing {

inline std::string SharedPublished(std::string_view name) {
  return std::string(TILEPROF_SHARED_DIR) + "/corpus/published/" + std::string(name);
}

inline std::string OurPublished(std::string_view name) {
  return std::string(TILEPROF_SOURCE_DIR) + "/tests/analyzer/data/published/" + std::string(name);
}

}  // namespace tileprof::testing
