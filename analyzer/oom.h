// `tileprof oom`: which tiles are over their memory and by how much, what is
// on them (categories, regions, vertex types, code, always-live versus
// not-always-live at the peak, the largest variables, and with a tensor map
// the largest tensors by HLO instruction and TensorFlow op), and concrete
// suggestions with the bytes each would save on the tile.
//
// The savings are estimates under stated assumptions (the "assumption"
// column), on the tile only:
//  * spread: the tensor mapped evenly over every tile of the target keeps
//    ceil(bytes / tiles) here;
//  * split: computing the tensor in two halves one after the other keeps
//    half of its bytes here live at once;
//  * batch: halving the batch halves the not-always-live peak (activations
//    scale with the batch; weights, code and exchange do not);
//  * recompute: recomputation can free the not-always-live peak except the
//    largest single tensor, which still has to exist (an upper bound);
//  * fp16: every f32 ("float") tensor on the tile stored as f16 halves it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/open_report.h"
#include "analyzer/output.h"
#include "analyzer/tensor_map.h"

namespace tileprof::analyzer {

struct OomOptions {
  size_t worst_tiles = 5;  // tiles examined in detail
  size_t items = 10;       // variables and tensors listed per tile
  // Overrides the report's Memory Per-Tile (an excerpt may have no Target).
  std::optional<uint64_t> bytes_per_tile;
};

// `tensors` may be null (no --tensor-map). Errors name the report when the
// tile capacity is unknown, or when a tensor map's tile ids do not fit the
// report's target.
Expected<Output> OomView(const LoadedReport& report, const std::vector<MappedTensor>* tensors,
                         const OomOptions& options);

}  // namespace tileprof::analyzer
