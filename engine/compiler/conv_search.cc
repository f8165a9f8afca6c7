// The contraction planner's search (conv_plan.h, ChoosePartition): a
// coarse search over candidate splits, refined one dimension at a time,
// then serial steps; the cost model it compares plans by is conv_plan.cc's.
#include <algorithm>

#include "engine/compiler/conv_plan.h"
#include "engine/compiler/conv_plan_internal.h"

namespace tileprof::engine::compiler {

using plan_internal::CeilDiv;
using plan_internal::FullSizes;
using plan_internal::Index;
using plan_internal::Mul;
using plan_internal::SliceShape;

namespace {

// Serial steps are tried when a single step's temporaries exceed this on a
// tile (or do not fit); up to kMaxSerialSteps of them.
constexpr uint64_t kSerialThresholdBytes = 32 * 1024;
constexpr uint64_t kMaxSerialSteps = 64;

// The candidate ways of splitting a dimension of `size`: every split whose
// blocks are a power of two, or a power of two times 3, long, and the
// whole (one element a cell), no more than `limit`. Fine enough for the
// search; the refinement (ChoosePartition) then tries every value.
std::vector<uint64_t> Candidates(uint64_t size, uint64_t limit) {
  std::vector<uint64_t> ways{1};
  if (size <= 1) return ways;
  for (uint64_t block = 1; block < size; block *= 2) {
    for (uint64_t b : {block, block * 3}) {
      if (b >= size) continue;
      const uint64_t w = CeilDiv(size, b);
      if (w <= limit) ways.push_back(w);
    }
  }
  std::sort(ways.begin(), ways.end());
  ways.erase(std::unique(ways.begin(), ways.end()), ways.end());
  return ways;
}

// Channels are split in blocks of a power of two times the channel grain
// (or not at all), as poplin splits them in whole channel groups: blocks of
// neighbouring operations then nest, so a cell's slice of its input comes
// whole from the tiles of the blocks that made it, and its exchange is a
// few long runs rather than a piece of every row.
std::vector<uint64_t> ChannelCandidates(uint64_t size, uint64_t limit, uint64_t grain) {
  std::vector<uint64_t> ways{1};
  for (uint64_t block = std::max<uint64_t>(grain, 1); block < size; block *= 2) {
    const uint64_t w = CeilDiv(size, block);
    if (w <= limit) ways.push_back(w);
  }
  std::sort(ways.begin(), ways.end());
  ways.erase(std::unique(ways.begin(), ways.end()), ways.end());
  return ways;
}

bool IsChannel(PlanDim d) { return d == PlanDim::kInChan || d == PlanDim::kOutChan; }

}  // namespace

namespace {

// Whether a plan of cost `a` is preferred to one of cost `b`: bounded
// regions first (the compiler's own memory), then plans that fit the tile,
// then the cheapest; among plans that do not fit, the smallest
// temporaries.
bool Better(const PlanCost& a, const PlanCost& b, uint64_t max_runs) {
  const bool a_bounded = a.field_regions <= kMaxCellRegions && a.output_runs <= max_runs;
  const bool b_bounded = b.field_regions <= kMaxCellRegions && b.output_runs <= max_runs;
  if (a_bounded != b_bounded) return a_bounded;
  if (a.fits != b.fits) return a.fits;
  return a.fits ? a.Objective() < b.Objective() : a.temporary_bytes < b.temporary_bytes;
}

// Each dimension split into exactly the blocks it has (7 ways of 8 rows is
// 4 blocks of 2: 4 ways).
Partition Normalised(Partition p, const std::array<uint64_t, kPlanDims>& full) {
  for (size_t d = 0; d < kPlanDims; ++d) {
    const uint64_t w = p.Ways(static_cast<PlanDim>(d));
    p.ways[d] = CeilDiv(full[d], CeilDiv(full[d], w));
  }
  return p;
}

// The best partition of one step (no serial splits), normalised, whose
// output has at most `max_runs` runs.
Partition ChooseStep(const ContractionShape& shape, const PlanTarget& target, uint64_t max_runs) {
  const std::array<uint64_t, kPlanDims> full = FullSizes(shape);
  const uint64_t tiles = std::max<uint32_t>(target.tiles, 1);
  // Which dimensions may be split. A block of several groups must hold
  // every channel of them (its features are then one range); a batch split
  // into groups (batch_group_count) likewise.
  std::array<bool, kPlanDims> splittable{};
  for (size_t d = 0; d < kPlanDims; ++d) splittable[d] = full[d] > 1;
  std::vector<PlanDim> dims;
  for (size_t d = 0; d < kPlanDims; ++d)
    if (splittable[d]) dims.push_back(static_cast<PlanDim>(d));
  auto allowed = [&](const Partition& p) {
    if (p.Ways(PlanDim::kGroup) == 1 || p.Ways(PlanDim::kGroup) >= shape.groups) return true;
    // Several groups per cell: channels whole.
    return p.Ways(PlanDim::kInChan) == 1 && p.Ways(PlanDim::kOutChan) == 1;
  };
  Partition best;
  PlanCost best_cost = EstimatePlan(shape, best, target);
  auto consider = [&](const Partition& p) {
    if (p.Cells() > tiles || !allowed(p)) return;
    const PlanCost cost = EstimatePlan(shape, p, target);
    const bool better = Better(cost, best_cost, max_runs);
    if (better) {
      best = p;
      best_cost = cost;
    }
  };
  // Coarse search over the candidate splits, then refinement of one
  // dimension at a time over every value, until nothing improves.
  std::vector<std::vector<uint64_t>> candidates;
  for (PlanDim d : dims) {
    candidates.push_back(IsChannel(d)
                             ? ChannelCandidates(full[Index(d)], tiles, shape.channel_grain)
                             : Candidates(full[Index(d)], tiles));
  }
  Partition current;
  auto search = [&](auto&& self, size_t i, uint64_t cells) -> void {
    if (i == dims.size()) {
      consider(current);
      return;
    }
    for (uint64_t w : candidates[i]) {
      if (Mul(cells, w) > tiles) break;
      current.ways[Index(dims[i])] = w;
      self(self, i + 1, cells * w);
    }
    current.ways[Index(dims[i])] = 1;
  };
  search(search, 0, 1);
  for (bool improved = true; improved;) {
    improved = false;
    for (size_t i = 0; i < dims.size(); ++i) {
      const PlanDim d = dims[i];
      const Partition start = best;
      const uint64_t others = best.Cells() / best.Ways(d);
      const uint64_t limit = std::min(full[Index(d)], tiles / others);
      Partition p = best;
      if (IsChannel(d)) {
        for (uint64_t w : candidates[i]) {
          if (w > limit) break;
          p.ways[Index(d)] = w;
          consider(p);
        }
      } else {
        for (uint64_t w = 1; w <= limit; ++w) {
          // Only values that change the block size.
          const uint64_t block = CeilDiv(full[Index(d)], w);
          if (w > 1 && CeilDiv(full[Index(d)], w - 1) == block) continue;
          p.ways[Index(d)] = CeilDiv(full[Index(d)], block);
          consider(p);
        }
      }
      if (best.ways != start.ways) improved = true;
    }
  }
  return Normalised(best, full);
}

}  // namespace

Partition ChoosePartition(const ContractionShape& shape, const PlanTarget& target) {
  const uint64_t tiles = std::max<uint32_t>(target.tiles, 1);
  const uint64_t max_runs = kMaxOutputRunsPerTile * tiles;
  Partition best = ChooseStep(shape, target, max_runs);
  PlanCost best_cost = EstimatePlan(shape, best, target);
  // Serial steps when one step holds much on each tile: each slice of an
  // output dimension in turn, the temporaries of a slice at a time.
  // (Temporaries within the free memory cost nothing that steps would save.)
  if (best_cost.fits &&
      best_cost.temporary_bytes <= std::max(kSerialThresholdBytes, target.free_temporary_bytes)) {
    return best;
  }
  const std::array<uint64_t, kPlanDims> full = FullSizes(shape);
  for (PlanDim dim : {PlanDim::kOutChan, PlanDim::kBatch, PlanDim::kGroup, PlanDim::kField0}) {
    const uint64_t size = full[Index(dim)];
    uint64_t worse = 0;
    for (uint64_t steps : Candidates(size, kMaxSerialSteps)) {
      if (steps == 1) continue;
      // Each step's output is mapped in turn: the steps share the bound.
      Partition p = ChooseStep(SliceShape(shape, dim, steps), target, max_runs / steps);
      p.serial = CeilDiv(size, CeilDiv(size, steps));
      p.serial_dim = dim;
      const PlanCost cost = EstimatePlan(shape, p, target);
      if (Better(cost, best_cost, max_runs)) {
        best = p;
        best_cost = cost;
        worse = 0;
      } else if (++worse == 3) {
        break;  // more steps only add their cycles and code from here
      }
    }
  }
  return best;
}

}  // namespace tileprof::engine::compiler
