// Internal to engine/sim: the error a run is refused with, listing the
// instructions the simulator cannot execute and why.
#pragma once

#include <vector>

#include "common/expected.h"
#include "engine/hlo/module.h"
#include "engine/sim/plan.h"

namespace tileprof::engine::sim {

// "cannot run: N instruction(s) ..." with the first refusals, each named as
// in the module (its opcode, a custom call's target). An instruction that
// exchanges data with other devices (a collective among several, infeed,
// outfeed, send, recv) says so: the planner only sees an opaque vertex.
Error RefusalError(const std::vector<Refusal>& refusals, const hlo::Module* module);

}  // namespace tileprof::engine::sim
