// Internal to engine/sim: planning one compute set (plan.cc plans the
// program: its compute sets, on several threads, with this, and its
// transfers).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/sim/pieces.h"
#include "engine/sim/plan.h"

namespace tileprof::engine::sim::plan_internal {

// Refusals in the order first met, each once by key ("instruction\nreason",
// or the constant): a refused instruction or an unknown constant is
// reported for its first reader only.
class Refusals {
 public:
  bool Contains(const std::string& key) const { return keys_.contains(key); }
  void Add(std::string key, Refusal refusal) {
    if (!keys_.insert(key).second) return;
    order_.push_back(std::move(key));
    list_.push_back(std::move(refusal));
  }
  // `later`'s refusals after these (a compute set planned on another
  // thread, merged in the program's order).
  void Append(Refusals& later) {
    for (size_t i = 0; i < later.list_.size(); ++i)
      Add(std::move(later.order_[i]), std::move(later.list_[i]));
  }
  std::vector<Refusal> Take() { return std::move(list_); }

 private:
  std::unordered_set<std::string> keys_;
  std::vector<std::string> order_;  // the keys of list_
  std::vector<Refusal> list_;
};

// What planning is told, shared by every compute set's planner.
struct PlanInputs {
  const Graph& graph;
  const StorageLayout& storage;
  std::unordered_set<VariableId> valueless;
  bool busy_tiles = false;  // list each step's busy tiles (a tile-level profile)
  bool ipu_model = false;   // cost host transfers at the IPU Model's link rate
};

// Refuses reading a valueless constant: one refusal per constant, naming
// its first reader.
void CheckValues(const PlanInputs& in, std::span<const Piece> pieces, std::string_view who,
                 Refusals& refusals);

struct ComputeSetWork;  // plan_compute_set.cc

// One compute set's plan, made on any of the simulator's threads (the
// compute sets are independent, and the graph is only read). Its codelets
// are numbered in the order it meets them, and its refusals kept apart,
// until Planner::Merge puts them in the program's order.
class ComputeSetPlanner {
 public:
  explicit ComputeSetPlanner(const PlanInputs& in) : in_(in) {}
  Status Plan(ComputeSetId id, ComputeSetPlan& plan);

  std::vector<const Codelet*> codelets;  // by the plan's CodeletCount::codelet
  Refusals refusals;

 private:
  Status PlanVertex(VertexId vertex_id, ComputeSetWork& work);
  uint32_t CodeletIndex(const Codelet* codelet);

  const PlanInputs& in_;
  std::unordered_map<const Codelet*, uint32_t> codelet_index_;
  std::vector<ByteRun> runs_;  // PlanVertex's, reused field to field
  std::vector<Piece> pieces_;  // PlanVertex's, reused field to field
};

}  // namespace tileprof::engine::sim::plan_internal
