#include "reports/program_chains.h"

#include <algorithm>

namespace tileprof::report {

ProgramChains::ProgramChains(const std::vector<Program>* programs) {
  if (programs == nullptr || programs->empty()) return;
  programs_ = programs;
  parent_.assign(programs->size(), kNone);
  std::vector<bool> seen(programs->size(), false);
  std::vector<uint32_t> order{0};  // breadth first from the root
  seen[0] = true;
  for (size_t i = 0; i < order.size(); ++i) {
    const Program& node = (*programs)[order[i]];
    for (uint32_t child : node.children) {
      if (child >= programs->size() || seen[child]) continue;
      seen[child] = true;
      parent_[child] = order[i];
      order.push_back(child);
    }
  }
  for (uint32_t node : order) by_name_.emplace((*programs)[node].name, node);
}

std::vector<uint32_t> ProgramChains::Chain(std::string_view step) const {
  std::vector<uint32_t> chain;
  auto it = by_name_.find(step);
  if (it == by_name_.end()) return chain;
  for (uint32_t node = it->second; node != kNone; node = parent_[node]) chain.push_back(node);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

}  // namespace tileprof::report
