// Each execution step's program node and that node's ancestors in the
// compiled program tree, root first (a step names its program: an Execute
// after its compute set, a transfer as the simulator names it). Shared by
// the Chrome trace's programs row and the view's flame chart.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "reports/report.h"

namespace tileprof::report {

// A node's parent is the first node that lists it, breadth first from the
// root (node 0); a name names its first node in that order.
class ProgramChains {
 public:
  explicit ProgramChains(const std::vector<Program>* programs);
  // Root first, the step's own node last; empty when no node has the name.
  std::vector<uint32_t> Chain(std::string_view step) const;
  const Program& node(uint32_t i) const { return (*programs_)[i]; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  const std::vector<Program>* programs_ = nullptr;
  std::vector<uint32_t> parent_;
  std::map<std::string_view, uint32_t> by_name_;
};

}  // namespace tileprof::report
