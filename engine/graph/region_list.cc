#include "engine/graph/region_list.h"

namespace tileprof::engine {

size_t CountStridedRuns(std::span<const TensorRegion> regions) {
  // AppendStrided only looks at the last run: keep that one and count.
  StridedRegion window[2];
  size_t used = 0, runs = 0;
  for (const TensorRegion& region : regions) {
    AppendStrided(window, used, region);
    if (used == 2) {
      window[0] = window[1];
      used = 1;
      ++runs;
    }
  }
  return runs + used;
}

}  // namespace tileprof::engine
