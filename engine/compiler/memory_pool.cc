// The not-always-live pool of one tile. See memory_pool.h.
#include "engine/compiler/memory_pool.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "engine/compiler/memory_model.h"

namespace tileprof::engine::compiler {
namespace {

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

PoolExtent FirstFitExtent(std::vector<Piece>& pieces) {
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return a.first != b.first ? a.first < b.first : a.bytes > b.bytes;
  });
  // The live pieces by offset, as parallel arrays, with the free bytes
  // below each (from the aligned end of the one before): first fit is then
  // a scan of one small array, and a piece leaves when a heap of ends says
  // so, where a pass over every live piece per piece placed (for each of
  // mobilenet_v2's three million) was a tenth of its compile.
  std::vector<uint64_t> offsets, ends, gaps;
  using Expiry = std::pair<uint64_t, uint64_t>;  // (last step, offset)
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<>> expiries;
  const auto aligned_end = [&](size_t i) {
    return i == 0 ? 0 : AlignUp(ends[i - 1], memory::kDataAlignment);
  };
  const auto at = [](size_t i) { return static_cast<std::ptrdiff_t>(i); };
  PoolExtent pool;
  uint64_t live = 0;
  for (Piece& piece : pieces) {
    while (!expiries.empty() && expiries.top().first < piece.first) {
      const uint64_t offset = expiries.top().second;
      expiries.pop();
      const size_t i = static_cast<size_t>(
          std::lower_bound(offsets.begin(), offsets.end(), offset) - offsets.begin());
      live -= ends[i] - offsets[i];
      offsets.erase(offsets.begin() + at(i));
      ends.erase(ends.begin() + at(i));
      gaps.erase(gaps.begin() + at(i));
      if (i < offsets.size()) gaps[i] = offsets[i] - aligned_end(i);
    }
    // An empty piece fits below everything and holds nothing: it changes
    // neither the live bytes nor where the others go.
    if (piece.bytes == 0) {
      piece.offset = 0;
      continue;
    }
    size_t i = 0;
    while (i < gaps.size() && gaps[i] < piece.bytes) ++i;
    piece.offset = aligned_end(i);
    offsets.insert(offsets.begin() + at(i), piece.offset);
    ends.insert(ends.begin() + at(i), piece.offset + piece.bytes);
    gaps.insert(gaps.begin() + at(i), 0);
    if (i + 1 < offsets.size()) gaps[i + 1] = offsets[i + 1] - aligned_end(i + 1);
    expiries.emplace(piece.last, piece.offset);
    live += piece.bytes;
    pool.peak = std::max(pool.peak, live);
    pool.extent = std::max(pool.extent, piece.offset + piece.bytes);
  }
  return pool;
}

std::vector<report::Variable> LargestVariables(
    const Graph& graph, uint32_t tile, std::span<const Piece> pieces, uint64_t pool_start,
    std::span<const PlacedConstant> constants,
    const std::function<std::string(uint64_t step)>& buffer_name) {
  struct Entry {
    VariableId variable;  // kNoVariable: the receive buffer of step `step`
    uint64_t bytes;
    uint64_t offset;
    bool constant;
    uint64_t step = 0;
  };
  // A variable mapped to the tile in several runs is one allocation per run;
  // the report names the variable once, at its lowest address. The runs are
  // gathered through a slot per variable, stamped per call, where a sort of
  // every entry by variable was half of this function.
  struct Slot {
    uint64_t stamp = 0;
    size_t entry = 0;
  };
  thread_local std::vector<Slot> slots;
  thread_local uint64_t stamp = 0;
  if (slots.size() < graph.num_variables()) slots.resize(graph.num_variables());
  ++stamp;
  std::vector<Entry> merged;
  merged.reserve(pieces.size() + constants.size());
  auto add = [&](const Entry& e) {
    if (e.variable == kNoVariable || e.variable >= slots.size()) {
      merged.push_back(e);
      return;
    }
    Slot& slot = slots[e.variable];
    if (slot.stamp != stamp) {
      slot = {stamp, merged.size()};
      merged.push_back(e);
      return;
    }
    Entry& first = merged[slot.entry];
    first.bytes += e.bytes;
    first.offset = std::min(first.offset, e.offset);
  };
  for (const Piece& p : pieces) add({p.variable, p.bytes, pool_start + p.offset, false, p.first});
  for (const PlacedConstant& c : constants) add({c.variable, c.bytes, c.offset, true});
  const size_t keep = std::min(merged.size(), kVariablesPerTile);
  std::partial_sort(merged.begin(), merged.begin() + static_cast<std::ptrdiff_t>(keep),
                    merged.end(), [](const Entry& a, const Entry& b) {
                      if (a.bytes != b.bytes) return a.bytes > b.bytes;
                      if (a.variable != b.variable) return a.variable < b.variable;
                      return a.offset != b.offset ? a.offset < b.offset : a.step < b.step;
                    });
  std::vector<report::Variable> out;
  out.reserve(keep);
  for (size_t i = 0; i < keep; ++i) {
    const Entry& e = merged[i];
    out.push_back(
        {.name = e.variable == kNoVariable ? buffer_name(e.step) : graph.variable(e.variable).name,
         .tile = tile,
         .bytes = e.bytes,
         .category = e.constant ? report::Category::kConstants : report::Category::kVariables,
         .always_live = e.constant,
         .offset = e.offset});
  }
  return out;
}

}  // namespace tileprof::engine::compiler
