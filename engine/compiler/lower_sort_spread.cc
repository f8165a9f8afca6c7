// A sort whose lines are too long for one tile, spread over tiles as a
// block odd-even merge-split sort (docs/memory-model.md, "Lowering
// choices"). Each line is cut into `blocks` blocks of equal length (the last
// may be shorter), one per tile. The blocks are first sorted on their tiles
// (engine/codelets/sort.h's Sort, a line of rank 1 each); then `blocks`
// rounds of merge-split: round r pairs blocks (i, i + 1) for i = r mod 2,
// and both tiles of a pair merge the two blocks, the first keeping the lower
// part, the second the upper (SortMerge). After as many rounds as blocks the
// line is sorted (the 0-1 principle: a shorter last block behaves as one
// padded with keys that sort last, which never move). Ties keep their order
// (a merge takes the first block's element first), so the sort is stable.
//
// Memory per tile: its block twice (each round reads one buffer and writes
// the other) and its partner's block, received; never the line.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

// A block of all operands holds at most 1/16 of a tile: with the second
// buffer and the partner's block received, under a fifth of the tile.
constexpr uint64_t kBlockShare = 16;

using cost::CeilDiv;

}  // namespace

uint64_t Lowering::SortBlocks(const Tensor& first, size_t dimension,
                              std::span<const ElementType> types) const {
  // Lines along an outer dimension are strided through the tensor; they
  // stay on the one-tile lowering.
  if (first.Rank() == 0 || dimension + 1 != first.Rank()) return 1;
  const uint64_t line = first.shape()[dimension];
  uint64_t bytes = 0;
  for (ElementType type : types) bytes += SizeOf(type);
  const uint64_t budget = std::max<uint64_t>(1, graph_.target().BytesPerTile() / kBlockShare);
  // On one tile while the line received and its sorted copy take at most a
  // quarter of the tile: fewer compute sets, no merge steps.
  if (line * bytes <= 2 * budget) return 1;
  return std::min<uint64_t>({CeilDiv(line * bytes, budget), graph_.target().NumTiles(), line});
}

Expected<std::vector<Tensor>> Lowering::LowerSpreadSort(const hlo::Instruction& instruction,
                                                        std::span<const Value> operands,
                                                        const std::vector<ElementType>& types,
                                                        uint32_t key, SortOrder order,
                                                        uint64_t blocks,
                                                        program::Sequence& program) {
  const Tensor& first = operands[0].tensor;
  const size_t n = operands.size();
  const uint64_t line = first.shape().back();
  const uint64_t lines = first.NumElements() / line;
  const uint64_t size = CeilDiv(line, blocks);
  blocks = CeilDiv(line, size);
  const auto begin_of = [&](uint64_t l, uint64_t i) { return l * line + i * size; };
  const auto length_of = [&](uint64_t i) { return std::min(line, (i + 1) * size) - i * size; };
  const uint64_t tiles = graph_.target().NumTiles();
  const uint32_t first_tile = mapper_.TakeTiles(std::min(lines * blocks, tiles));
  const auto tile_of = [&](uint64_t l, uint64_t i) {
    return static_cast<uint32_t>((first_tile + l * blocks + i) % tiles);
  };

  const auto block = [&](const Tensor& flat, uint64_t l, uint64_t i) {
    return flat.Slice(begin_of(l, i), begin_of(l, i) + length_of(i));
  };

  // Two buffers per operand, flat, block (l, i) of each on its tile: the
  // first named like the sort's results, the second after the merge.
  std::vector<std::array<Tensor, 2>> buffers(n);
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < n; ++k) {
    const std::string base =
        n == 1 ? std::string(instruction.name()) : fmt::format("{}.{}", instruction.name(), k);
    for (size_t b = 0; b < 2; ++b) {
      TILEPROF_ASSIGN_OR_RETURN(Tensor buffer, NewTensor(types[k], {first.NumElements()},
                                                         b == 0 ? base : base + ".merge", false));
      for (uint64_t l = 0; l < lines; ++l) {
        for (uint64_t i = 0; i < blocks; ++i) {
          TILEPROF_ASSIGN_OR_RETURN(Tensor piece, block(buffer, l, i));
          TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(piece, tile_of(l, i)));
        }
      }
      buffers[k][b] = std::move(buffer);
    }
    inputs.push_back(operands[k].tensor.Flatten());
  }
  // Each block sorted on its tile.
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* sort, codelets_.Sort(1, key, order, types));
  const ComputeSetId sorts = AddComputeSet(fmt::format("{}/blocks", instruction.name()), program);
  for (uint64_t l = 0; l < lines; ++l) {
    for (uint64_t i = 0; i < blocks; ++i) {
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex,
                                graph_.AddVertex(sorts, *sort, instruction.name()));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile_of(l, i)));
      for (size_t k = 0; k < n; ++k) {
        TILEPROF_ASSIGN_OR_RETURN(Tensor in, block(inputs[k], l, i));
        TILEPROF_ASSIGN_OR_RETURN(Tensor out, block(buffers[k][0], l, i));
        TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex[fmt::format("in{}", k)], in));
        TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex[fmt::format("out{}", k)], out));
      }
      // first, size0, dim, boxLo0, boxSize0: the whole block, one line.
      const auto len = static_cast<uint32_t>(length_of(i));
      const std::array<uint32_t, 5> params = {0, len, 0, 0, len};
      TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValues(vertex, params));
    }
  }

  // The merge-split rounds; at[i] is the buffer holding block i.
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* merge, codelets_.SortMerge(key, order, types));
  std::vector<uint8_t> at(blocks, 0);
  for (uint64_t r = 0; r < blocks; ++r) {
    if (r % 2 + 1 >= blocks) continue;
    const ComputeSetId cs =
        AddComputeSet(fmt::format("{}/merge{}", instruction.name(), r), program);
    for (uint64_t a = r % 2; a + 1 < blocks; a += 2) {
      const uint64_t b = a + 1;
      for (uint64_t l = 0; l < lines; ++l) {
        for (const uint64_t self : {a, b}) {
          TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex,
                                    graph_.AddVertex(cs, *merge, instruction.name()));
          TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile_of(l, self)));
          for (size_t k = 0; k < n; ++k) {
            TILEPROF_ASSIGN_OR_RETURN(Tensor lower, block(buffers[k][at[a]], l, a));
            TILEPROF_ASSIGN_OR_RETURN(Tensor upper, block(buffers[k][at[b]], l, b));
            TILEPROF_ASSIGN_OR_RETURN(Tensor out, block(buffers[k][1 - at[self]], l, self));
            TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex[fmt::format("a{}", k)], lower));
            TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex[fmt::format("b{}", k)], upper));
            TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex[fmt::format("out{}", k)], out));
          }
          TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["upper"], self == b ? 1u : 0u));
        }
      }
      at[a] ^= 1;
      at[b] ^= 1;
    }
  }

  // Each result: its blocks from whichever buffer holds them.
  std::vector<Tensor> results;
  for (size_t k = 0; k < n; ++k) {
    std::vector<Tensor> parts;
    for (uint64_t l = 0; l < lines; ++l) {
      for (uint64_t i = 0; i < blocks; ++i) {
        TILEPROF_ASSIGN_OR_RETURN(Tensor part, block(buffers[k][at[i]], l, i));
        parts.push_back(std::move(part));
      }
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor flat, Tensor::Concat(parts));
    TILEPROF_ASSIGN_OR_RETURN(Tensor result, flat.Reshape(first.shape()));
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace tileprof::engine::compiler
