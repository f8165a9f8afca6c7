// The not-always-live pool of one tile. See memory_pool.h.
#include "engine/compiler/memory_pool.h"

#include <algorithm>

#include "engine/compiler/memory_model.h"

namespace tileprof::engine::compiler {
namespace {

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

uint64_t FirstFitExtent(std::vector<Piece>& pieces) {
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return a.first != b.first ? a.first < b.first : a.bytes > b.bytes;
  });
  struct Placed {
    uint64_t offset, bytes, last;
  };
  std::vector<Placed> active;  // by offset
  uint64_t extent = 0;
  uint64_t earliest_end = UINT64_MAX;  // the smallest `last` of `active`
  for (Piece& piece : pieces) {
    if (earliest_end < piece.first) {
      std::erase_if(active, [&](const Placed& p) { return p.last < piece.first; });
      earliest_end = UINT64_MAX;
      for (const Placed& p : active) earliest_end = std::min(earliest_end, p.last);
    }
    earliest_end = std::min(earliest_end, piece.last);
    uint64_t offset = 0;
    size_t at = 0;
    for (; at < active.size(); ++at) {
      if (AlignUp(offset, memory::kDataAlignment) + piece.bytes <= active[at].offset) break;
      offset = std::max(offset, active[at].offset + active[at].bytes);
    }
    offset = AlignUp(offset, memory::kDataAlignment);
    active.insert(active.begin() + static_cast<std::ptrdiff_t>(at), {offset, piece.bytes, piece.last});
    piece.offset = offset;
    extent = std::max(extent, offset + piece.bytes);
  }
  return extent;
}

uint64_t PeakLive(std::span<const Piece> pieces) {
  std::vector<std::pair<uint64_t, int64_t>> events;
  events.reserve(pieces.size() * 2);
  for (const Piece& p : pieces) {
    events.emplace_back(p.first, static_cast<int64_t>(p.bytes));
    events.emplace_back(p.last + 1, -static_cast<int64_t>(p.bytes));
  }
  std::sort(events.begin(), events.end());  // ends (negative) before starts at one step
  int64_t live = 0;
  int64_t peak = 0;
  for (const auto& [step, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

std::vector<report::Variable> LargestVariables(const Graph& graph, uint32_t tile,
                                               std::span<const Piece> pieces, uint64_t pool_start,
                                               std::span<const PlacedConstant> constants,
                                               const std::function<std::string(uint64_t step)>& buffer_name) {
  struct Entry {
    VariableId variable;  // kNoVariable: the receive buffer of step `step`
    uint64_t bytes;
    uint64_t offset;
    bool constant;
    uint64_t step = 0;
  };
  std::vector<Entry> entries;
  for (const Piece& p : pieces) entries.push_back({p.variable, p.bytes, pool_start + p.offset, false, p.first});
  for (const PlacedConstant& c : constants) entries.push_back({c.variable, c.bytes, c.offset, true});
  // A variable mapped to the tile in several runs is one allocation per run;
  // the report names the variable once, at its lowest address.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.variable != b.variable ? a.variable < b.variable : a.offset < b.offset;
  });
  std::vector<Entry> merged;
  for (const Entry& e : entries) {
    if (!merged.empty() && e.variable != kNoVariable && merged.back().variable == e.variable) {
      merged.back().bytes += e.bytes;
    } else {
      merged.push_back(e);
    }
  }
  const size_t keep = std::min(merged.size(), kVariablesPerTile);
  std::partial_sort(merged.begin(), merged.begin() + static_cast<std::ptrdiff_t>(keep), merged.end(),
                    [](const Entry& a, const Entry& b) {
                      if (a.bytes != b.bytes) return a.bytes > b.bytes;
                      return a.variable != b.variable ? a.variable < b.variable : a.offset < b.offset;
                    });
  std::vector<report::Variable> out;
  out.reserve(keep);
  for (size_t i = 0; i < keep; ++i) {
    const Entry& e = merged[i];
    out.push_back({.name = e.variable == kNoVariable ? buffer_name(e.step) : graph.variable(e.variable).name,
                   .tile = tile,
                   .bytes = e.bytes,
                   .category = e.constant ? report::Category::kConstants : report::Category::kVariables,
                   .always_live = e.constant,
                   .offset = e.offset});
  }
  return out;
}

}  // namespace tileprof::engine::compiler
