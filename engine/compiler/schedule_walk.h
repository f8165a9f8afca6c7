// The memory model's walk of the control program (memory_model.cc): the
// program as a linear schedule of steps, and what each step does on each
// tile (activity, exchanges, receive buffers) and to each variable (first and
// last step touching it), walked by several threads over consecutive ranges.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "engine/compiler/memory_pool.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"

namespace tileprof::engine::compiler {

enum class StepKind : uint8_t { kExecute, kCopy, kStreamIn, kStreamOut, kBranch };

struct Step {
  StepKind kind;
  program::Program program;
};

// The control program in execution order, each loop body once, both
// branches of an If one after the other (their temporaries are never live
// together, and a linear order keeps the interval analysis simple).
struct Schedule {
  std::vector<Step> steps;
  std::vector<std::pair<uint64_t, uint64_t>> loops;  // [first step, end step)

  void Walk(const program::Program& p) {
    switch (p.kind()) {
      case program::ProgramKind::kSequence:
        for (const program::Program& step : p.steps()) Walk(step);
        break;
      case program::ProgramKind::kExecute:
        steps.push_back({StepKind::kExecute, p});
        break;
      case program::ProgramKind::kCopy:
        steps.push_back({StepKind::kCopy, p});
        break;
      case program::ProgramKind::kCopyFromStream:
        steps.push_back({StepKind::kStreamIn, p});
        break;
      case program::ProgramKind::kCopyToStream:
        steps.push_back({StepKind::kStreamOut, p});
        break;
      case program::ProgramKind::kRepeat: {
        const uint64_t start = steps.size();
        Walk(p.body());
        loops.emplace_back(start, steps.size());
        break;
      }
      case program::ProgramKind::kRepeatWhileTrue: {
        const uint64_t start = steps.size();
        Walk(p.condition());
        steps.push_back({StepKind::kBranch, p});
        Walk(p.body());
        loops.emplace_back(start, steps.size());
        break;
      }
      case program::ProgramKind::kIf:
        steps.push_back({StepKind::kBranch, p});
        Walk(p.then_body());
        Walk(p.else_body());
        break;
    }
  }
};

// What the schedule does on one tile (WalkSteps): the steps it takes part
// in, its exchanges, and its receive buffers as pieces in step order.
struct TileWalk {
  uint64_t active_steps = 0;
  uint64_t host_steps = 0;
  uint64_t host_regions = 0;
  uint64_t exchange_steps = 0;
  uint64_t exchange_regions = 0;
  uint64_t copy_regions = 0;
  std::vector<Piece> pieces;
  // The host exchange last counted in host_steps (its first step), while
  // walking: stream copies merged into one exchange count once.
  uint64_t host_group = UINT64_MAX;
  // The host exchange last counted in active_steps: the tile calls a merged
  // exchange's program once, however many of its stream copies it takes
  // part in.
  uint64_t active_group = UINT64_MAX;
};

// What the steps [begin, end) of the schedule do: per tile, the counts the
// memory model needs and the receive buffers (as pieces, in step order); per
// variable, the first and last step touching it. Walks of consecutive ranges
// add up to the walk of their union, so the schedule is walked in parallel.
struct Walk {
  std::vector<TileWalk> tiles;
  std::vector<uint64_t> first;  // by variable; UINT64_MAX if untouched
  std::vector<uint64_t> last;
  uint64_t exchanges = 0;
  uint64_t host_steps = 0;
  // Steps of the control program: every step, but adjacent stream copies
  // merged into one host exchange are one.
  uint64_t control_steps = 0;
  std::set<StreamId> host_streams;
};

// The default number of walkers is one per core, up to this: more only add
// memory (a StepTiles and a per-tile account each) and join time.
constexpr uint32_t kMaxWalkers = 4;
// Ranges of the schedule per walker (see WalkSchedule).
constexpr uint32_t kRangesPerWalker = 4;

// Progress of a long computation as (done, total), called from the threads
// doing the work (so it must be thread-safe); done reaches total at the end.
using ProgressCallback = std::function<void(uint64_t done, uint64_t total)>;

// Walks the schedule in consecutive ranges of about equal cost (a few per
// worker), on up to `workers` threads, and joins them in step order (so the
// result does not depend on the number of workers). `progress`, if set, is told the cost
// walked (regions read or copied, summed over the walkers).
Walk WalkSchedule(const Graph& graph, const Schedule& schedule, uint32_t workers,
                  const ProgressCallback& progress = {});

}  // namespace tileprof::engine::compiler
