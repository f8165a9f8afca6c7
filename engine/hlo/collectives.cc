// CollectiveDevices (attributes.h).
#include <algorithm>

#include <fmt/format.h>

#include "engine/hlo/attributes.h"

namespace tileprof::hlo {

Expected<CollectiveSpan> CollectiveDevices(const Instruction& instruction, const Module& module) {
  const int64_t replicas = std::max<int64_t>(module.replica_count(), 1);
  const int64_t partitions = std::max<int64_t>(module.num_partitions(), 1);
  CollectiveSpan span{replicas * partitions,
                      fmt::format("replica_count {} x num_partitions {}", module.replica_count(),
                                  module.num_partitions())};
  if (const Attribute* groups = instruction.FindAttribute("replica_groups")) {
    TILEPROF_ASSIGN_OR_RETURN(auto list, ParseReplicaGroups(groups->value()));
    if (!list.empty()) span = {static_cast<int64_t>(list.front().size()), "its replica groups"};
  }
  if (instruction.opcode() == Opcode::kCollectivePermute) {
    if (const Attribute* pairs = instruction.FindAttribute("source_target_pairs")) {
      TILEPROF_ASSIGN_OR_RETURN(auto list, ParseIntListList(pairs->value()));
      for (const auto& pair : list) {
        for (int64_t device : pair) {
          if (device + 1 > span.devices) span = {device + 1, "its source_target_pairs"};
        }
      }
    }
  }
  return span;
}

}  // namespace tileprof::hlo
