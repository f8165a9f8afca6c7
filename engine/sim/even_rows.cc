// Where a field's runs lie as rows (FieldRows): the simulator hands such a
// field to a codelet that reads rows in place instead of gathering it.
#include <span>

#include "engine/sim/plan.h"

namespace tileprof::engine::sim {

// Runs of one variable, of one length, evenly spaced, or in evenly spaced
// blocks of evenly spaced runs (a block of a 4-D kernel: a tile's input
// channels at each kernel position): the field's rows (FieldRows); not
// strided() otherwise.
FieldRows EvenRows(std::span<const ByteRun> runs) {
  if (runs.size() < 2) return {};
  const ByteRun& first = runs[0];
  const uint64_t row_bytes = first.end - first.begin;
  // Rows that overlap (a field that reads elements twice) are gathered.
  if (runs[1].begin < first.end) return {};
  FieldRows rows{runs.size(), row_bytes, runs[1].begin - first.begin};
  uint64_t block = 1;
  while (block < runs.size() && runs[block].begin == first.begin + block * rows.stride) ++block;
  if (block < runs.size()) {
    // Blocks of `block` rows: the next block must start past this one.
    if (runs.size() % block != 0 ||
        runs[block].begin < first.begin + (block - 1) * rows.stride + row_bytes)
      return {};
    rows.block_rows = block;
    rows.block_stride = runs[block].begin - first.begin;
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].variable != first.variable || runs[i].end - runs[i].begin != row_bytes ||
        runs[i].begin != first.begin + rows.Offset(i))
      return {};
  }
  return rows;
}

}  // namespace tileprof::engine::sim
