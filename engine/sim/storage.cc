#include "engine/sim/storage.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace tileprof::engine::sim {
namespace {

// True when the runs cover the variable without a gap, in tile order:
// storage order is then element order.
bool TileOrdered(std::span<const TileRun> runs, uint64_t elements) {
  uint64_t next = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].begin != next || (i > 0 && runs[i].tile < runs[i - 1].tile)) return false;
    next = runs[i].end;
  }
  return next == elements;
}

uint64_t MappedElements(std::span<const TileRun> runs) {
  uint64_t mapped = 0;
  for (const TileRun& run : runs) mapped += run.end - run.begin;
  return mapped;
}

}  // namespace

StorageLayout::StorageLayout(const Graph& graph) : start_(graph.num_variables()) {
  std::vector<size_t> order;
  for (VariableId v = 0; v < graph.num_variables(); ++v) {
    const std::vector<TileRun>& runs = graph.TileMapping(v);
    if (TileOrdered(runs, graph.variable(v).num_elements)) continue;
    order.resize(runs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return runs[a].tile < runs[b].tile; });
    std::vector<uint64_t>& start = start_[v];
    start.resize(runs.size());
    uint64_t at = 0;
    for (size_t i : order) {
      start[i] = at;
      at += runs[i].end - runs[i].begin;
    }
  }
}

uint64_t StorageLayout::Of(const Graph& graph, VariableId variable, uint64_t element) const {
  if (InElementOrder(variable)) return element;
  const std::vector<TileRun>& runs = graph.TileMapping(variable);
  const auto it = std::upper_bound(runs.begin(), runs.end(), element,
                                   [](uint64_t e, const TileRun& run) { return e < run.end; });
  const auto run = static_cast<size_t>(it - runs.begin());
  if (it != runs.end() && it->begin <= element) return InRun(variable, run, *it, element);
  // Unmapped: after every mapped element, in element order.
  const uint64_t before = MappedElements(std::span(runs).first(run));
  return MappedElements(runs) + (element - before);
}

void StorageLayout::ToStorage(const Graph& graph, VariableId variable,
                              std::span<const std::byte> values, std::span<std::byte> out) const {
  if (InElementOrder(variable)) {
    std::copy(values.begin(), values.end(), out.begin());
    return;
  }
  const std::vector<TileRun>& runs = graph.TileMapping(variable);
  const uint64_t size = SizeOf(graph.variable(variable).type);
  const std::vector<uint64_t>& start = start_[variable];
  uint64_t gap_at = MappedElements(runs), element = 0;
  const auto copy = [&](uint64_t from, uint64_t to, uint64_t count) {
    std::memcpy(out.data() + to * size, values.data() + from * size, count * size);
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    copy(element, gap_at, runs[i].begin - element);  // the unmapped elements before it
    gap_at += runs[i].begin - element;
    copy(runs[i].begin, start[i], runs[i].end - runs[i].begin);
    element = runs[i].end;
  }
  copy(element, gap_at, values.size() / size - element);
}

}  // namespace tileprof::engine::sim
