#include "engine/compiler/report_programs.h"

#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tileprof::engine::compiler {
namespace {

using program::Program;
using program::ProgramKind;

void AddComputeSets(const Graph& graph, report::CompilationReport& report) {
  std::unordered_map<std::string_view, uint32_t> type_of;
  for (uint32_t t = 0; t < report.vertex_types.size(); ++t)
    type_of.emplace(report.vertex_types[t].name, t);
  report.compute_sets.reserve(graph.num_compute_sets());
  for (ComputeSetId id = 0; id < graph.num_compute_sets(); ++id) {
    const ComputeSetInfo& info = graph.compute_set(id);
    std::map<uint32_t, uint64_t> counts;
    const Codelet* last = nullptr;
    uint32_t last_type = 0;
    for (VertexId v : info.vertices) {
      const Codelet* codelet = graph.vertex(v).codelet;
      if (codelet != last) {
        auto it = type_of.find(codelet->name());
        if (it == type_of.end()) {
          // Every laid-out vertex's type is in the report; a type missing
          // here would be a new one, kept rather than dropped.
          it = type_of.emplace(codelet->name(), static_cast<uint32_t>(report.vertex_types.size()))
                   .first;
          report.vertex_types.push_back({codelet->name()});
        }
        last = codelet;
        last_type = it->second;
      }
      ++counts[last_type];
    }
    report::ComputeSet set{info.name, {}};
    for (const auto& [type, count] : counts) set.vertices.push_back({type, count});
    report.compute_sets.push_back(std::move(set));
  }
}

class ProgramTree {
 public:
  ProgramTree(const Graph& graph, report::CompilationReport& report)
      : graph_(graph), programs_(report.programs) {}

  uint32_t Add(const Program& p) {
    auto [it, added] = index_.emplace(p.id(), static_cast<uint32_t>(programs_.size()));
    if (!added) return it->second;
    const uint32_t self = it->second;
    programs_.push_back(
        {program::StepName(graph_, p), std::string(program::KindName(p.kind())), {}, std::nullopt});
    std::vector<uint32_t> children;
    switch (p.kind()) {
      case ProgramKind::kSequence:
        for (const Program& step : p.steps()) children.push_back(Add(step));
        break;
      case ProgramKind::kExecute:
        programs_[self].compute_set = p.compute_set();
        break;
      case ProgramKind::kRepeat:
        children.push_back(Add(p.body()));
        break;
      case ProgramKind::kRepeatWhileTrue:
        children.push_back(Add(p.condition()));
        children.push_back(Add(p.body()));
        break;
      case ProgramKind::kIf:
        children.push_back(Add(p.then_body()));
        children.push_back(Add(p.else_body()));
        break;
      case ProgramKind::kCopy:
      case ProgramKind::kCopyFromStream:
      case ProgramKind::kCopyToStream:
        break;
    }
    // Not a reference taken before the recursion: it grows programs_.
    programs_[self].children = std::move(children);
    return self;
  }

 private:
  const Graph& graph_;
  std::vector<report::Program>& programs_;
  std::unordered_map<const void*, uint32_t> index_;
};

}  // namespace

void AddProgramTree(const Graph& graph, const program::Program& root,
                    std::span<const StepLiveness> steps, report::CompilationReport& report) {
  AddComputeSets(graph, report);
  ProgramTree tree(graph, report);
  tree.Add(root);
  report.liveness.reserve(steps.size());
  // Every step is a node of root's tree, already indexed: Add finds it.
  report.liveness_fullest_tiles.reserve(steps.size());
  for (const StepLiveness& step : steps) {
    for (uint32_t ipu = 0; ipu < step.by_ipu.size(); ++ipu)
      report.liveness_by_ipu.push_back({report.liveness.size(), ipu, step.by_ipu[ipu]});
    report.liveness.push_back({tree.Add(step.program), step.not_always_live});
    report.liveness_fullest_tiles.push_back(step.fullest);
  }
}

namespace {

// Each operation's tiles, as runs of consecutive tiles (OperationTiles), and
// the vertex code its vertices need: each codelet once per tile it runs on.
void AddOperationTiles(const Graph& graph, std::span<const uint32_t> compute_set_operations,
                       report::CompilationReport& report) {
  std::vector<std::vector<std::pair<uint32_t, const Codelet*>>> placed(report.operations.size());
  for (ComputeSetId cs = 0; cs < compute_set_operations.size(); ++cs) {
    const uint32_t op = compute_set_operations[cs];
    if (op == Lowering::kNoOperation) continue;
    for (VertexId v : graph.compute_set(cs).vertices) {
      const VertexInfo& vertex = graph.vertex(v);
      if (vertex.tile) placed[op].push_back({*vertex.tile, vertex.codelet});
    }
  }
  for (uint32_t op = 0; op < placed.size(); ++op) {
    auto& list = placed[op];
    std::sort(list.begin(), list.end());
    uint64_t code = 0, tiles = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      const bool new_tile = i == 0 || list[i].first != list[i - 1].first;
      tiles += new_tile;
      if (new_tile || list[i].second != list[i - 1].second) code += list[i].second->code_bytes();
      auto& runs = report.operation_tiles;
      if (new_tile && (runs.empty() || runs.back().operation != op ||
                       runs.back().last_tile + 1 != list[i].first))
        runs.push_back({op, list[i].first, list[i].first, 0});
      runs.back().last_tile = list[i].first;
      ++runs.back().vertices;
    }
    report.operations[op].code_bytes = code;
    report.operations[op].tiles = tiles;
    std::vector<std::pair<uint32_t, const Codelet*>>().swap(list);
  }
}

}  // namespace

void AddOperations(const Graph& graph, std::span<const Lowering::OperationOrigin> operations,
                   std::span<const uint32_t> compute_set_operations,
                   std::span<const StepLiveness> steps, report::CompilationReport& report) {
  report.operations.reserve(operations.size());
  for (const Lowering::OperationOrigin& origin : operations)
    report.operations.push_back(
        {.name = origin.name, .opcode = origin.opcode, .flops = origin.flops});
  for (ComputeSetId cs = 0; cs < compute_set_operations.size(); ++cs) {
    const uint32_t op = compute_set_operations[cs];
    if (op == Lowering::kNoOperation) continue;
    report.compute_set_operations.push_back({cs, op});
    report::Operation& operation = report.operations[op];
    for (VertexId v : graph.compute_set(cs).vertices) {
      ++operation.vertices;
      operation.vertex_state_bytes += graph.vertex(v).codelet->state_bytes();
    }
  }
  AddOperationTiles(graph, compute_set_operations, report);
  // A step's receive buffers belong to the operation of the compute set it
  // executes (other steps, copies and stream copies, have none).
  for (const StepLiveness& step : steps) {
    if (step.receive_bytes == 0 || step.program.kind() != ProgramKind::kExecute) continue;
    const ComputeSetId cs = step.program.compute_set();
    if (cs < compute_set_operations.size() && compute_set_operations[cs] != Lowering::kNoOperation)
      report.operations[compute_set_operations[cs]].exchange_bytes += step.receive_bytes;
  }
}

}  // namespace tileprof::engine::compiler
