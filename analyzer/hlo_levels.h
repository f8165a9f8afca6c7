// Whether two modules print the same at a normalisation level
// (engine/hlo/canonical.h). Internal to hlo_diff.cc, which also defines
// EqualLevel and DescribeLevel (hlo_diff.h) here.
#pragma once

#include "engine/hlo/module.h"

namespace tileprof::analyzer {

// Below level 5 a print costs a pass over each module, so the two sides
// hash on two threads.
bool SameAtLevel(const hlo::Module& a, const hlo::Module& b, int level);

}  // namespace tileprof::analyzer
