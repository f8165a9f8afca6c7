// Transposes that move the innermost dimension, as blocks. Lowered like any
// rearrangement (a contiguous run of the linearly mapped result per vertex),
// a run of the result reads one element of each source row: a vertex of n
// outputs connects n one-element regions, and the regions dominate the graph
// (mobilenet_v2 held 44 M of them in Rearrange<float,4,4> fields). Here the
// result is mapped in square-ish blocks of the two dimensions the transpose
// swaps, so a block of b x b elements is b rows of the source and b rows of
// the result: 2b regions instead of b^2, the same data moved.
//
// Also here: a transpose read only by dots is folded into them (lower.h,
// FoldableTransposes), so no transposed copy is made at all.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/codelets/codelets.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

// The same transpose in the fewest dimensions: size-1 dimensions dropped,
// source dimensions that stay neighbours in the result merged. Output
// dimension i reads source dimension perm[i].
struct CanonicalTranspose {
  std::vector<uint64_t> dims;
  std::vector<size_t> perm;
};

CanonicalTranspose Canonicalize(std::span<const uint64_t> dims, std::span<const size_t> perm) {
  std::vector<size_t> kept_index(dims.size(), SIZE_MAX);
  std::vector<uint64_t> kept;
  for (size_t j = 0; j < dims.size(); ++j) {
    if (dims[j] != 1) {
      kept_index[j] = kept.size();
      kept.push_back(dims[j]);
    }
  }
  // Runs of consecutive source dimensions in output order: (first, count).
  std::vector<std::pair<size_t, size_t>> groups;
  for (size_t s : perm) {
    const size_t j = kept_index[s];
    if (j == SIZE_MAX) continue;
    if (!groups.empty() && groups.back().first + groups.back().second == j) {
      ++groups.back().second;
    } else {
      groups.emplace_back(j, 1);
    }
  }
  std::vector<size_t> order(groups.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return groups[a].first < groups[b].first; });
  CanonicalTranspose c{std::vector<uint64_t>(groups.size()), std::vector<size_t>(groups.size())};
  for (size_t r = 0; r < order.size(); ++r) {
    const auto [first, count] = groups[order[r]];
    c.dims[r] = std::accumulate(kept.begin() + static_cast<ptrdiff_t>(first),
                                kept.begin() + static_cast<ptrdiff_t>(first + count), uint64_t{1},
                                std::multiplies<>());
    c.perm[order[r]] = r;
  }
  return c;
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Blocks along the two swapped dimensions (extents eq and el): about
// `wanted` blocks over all `other` slabs, about square, and never more
// blocks than `tiles`, so that each block is one vertex on its own tile.
std::pair<uint64_t, uint64_t> BlockCounts(uint64_t eq, uint64_t el, uint64_t other, uint64_t wanted,
                                          uint64_t tiles) {
  const double per_slab = std::max(1.0, static_cast<double>(wanted) / static_cast<double>(other));
  auto nq = static_cast<uint64_t>(
      std::llround(std::sqrt(per_slab * static_cast<double>(eq) / static_cast<double>(el))));
  nq = std::clamp<uint64_t>(nq, 1, eq);
  uint64_t nl = std::clamp<uint64_t>(static_cast<uint64_t>(per_slab) / nq, 1, el);
  // Equal blocks: n blocks of ceil(e / n) may leave the last ones empty.
  auto even = [](uint64_t e, uint64_t n) { return CeilDiv(e, CeilDiv(e, n)); };
  nq = even(eq, nq);
  nl = even(el, nl);
  while (other * nq * nl > tiles) {
    if (nq >= nl) {
      nq = even(eq, nq - 1);
    } else {
      nl = even(el, nl - 1);
    }
  }
  return {nq, nl};
}

// A permutation of `rank` dimensions, or the error saying why not.
Status CheckPermutation(size_t rank, std::span<const size_t> permutation) {
  std::vector<bool> seen(rank, false);
  for (size_t p : permutation) {
    if (p >= seen.size() || seen[p]) {
      return MakeError("transpose dimensions are not a permutation of {} dimensions", seen.size());
    }
    seen[p] = true;
  }
  if (permutation.size() != seen.size()) {
    return MakeError("transpose of {} dimensions given {}", seen.size(), permutation.size());
  }
  return {};
}

// How the canonical output is cut: nq x nl blocks of bq x bl along the
// swapped dimensions q and l of every slab, block k on tile first_tile + k.
struct Blocking {
  size_t q = 0, l = 0;
  uint64_t nq = 1, nl = 1, bq = 1, bl = 1;
  uint32_t first_tile = 0;
  uint64_t tiles = 1;
  uint32_t Tile(uint64_t block) const {
    return static_cast<uint32_t>((first_tile + block) % tiles);
  }
};

Status MapBlocked(Graph& graph, const Tensor& flat_out, const std::vector<uint64_t>& canon_out,
                  const Blocking& b) {
  // Map the result in element order (appending to the tile map): each row
  // of the last dimension is nl pieces, one per block it crosses; pieces
  // that continue on the same tile are mapped as one.
  uint64_t pending_begin = 0, pending_end = 0;
  uint32_t pending_tile = 0;
  auto flush = [&]() -> Status {
    if (pending_end == pending_begin) return {};
    TILEPROF_ASSIGN_OR_RETURN(Tensor piece, flat_out.Slice(pending_begin, pending_end));
    return graph.SetTileMapping(piece, pending_tile);
  };
  const size_t rank = canon_out.size(), q = b.q, l = b.l;
  std::vector<uint64_t> coord(rank, 0);
  const uint64_t rows = flat_out.NumElements() / canon_out[l];
  for (uint64_t row = 0; row < rows; ++row) {
    uint64_t slab = 0;
    for (size_t d = 0; d < l; ++d) {
      if (d != q) slab = slab * canon_out[d] + coord[d];
    }
    for (uint64_t il = 0; il < b.nl; ++il) {
      const uint64_t begin = row * canon_out[l] + il * b.bl;
      const uint64_t end = std::min(begin + b.bl, (row + 1) * canon_out[l]);
      const uint32_t tile = b.Tile((slab * b.nq + coord[q] / b.bq) * b.nl + il);
      if (tile != pending_tile || begin != pending_end) {
        TILEPROF_RETURN_IF_ERROR(flush());
        pending_begin = begin;
        pending_tile = tile;
      }
      pending_end = end;
    }
    for (size_t d = l; d-- > 0;) {  // odometer over all but the last dimension
      if (++coord[d] < canon_out[d]) break;
      coord[d] = 0;
    }
  }
  TILEPROF_RETURN_IF_ERROR(flush());
  return {};
}

// A block's Rearrange parameters, as EmitRearrange's, the result being this
// block: first 0, outSize the block, source dimension j at the block's
// corner of the output dimension that reads it, firstHigh 0.
void BlockParams(const std::vector<uint64_t>& size, const std::vector<size_t>& reads,
                 const std::vector<uint64_t>& src_lo, const std::vector<uint64_t>& src_size,
                 const std::vector<uint64_t>& source_dims, std::vector<uint32_t>& values) {
  const size_t rank = size.size();
  values.assign({0});
  for (size_t d = 0; d < rank; ++d) values.push_back(static_cast<uint32_t>(size[d]));
  for (size_t j = 0; j < rank; ++j) {
    const auto d = static_cast<uint32_t>(reads[j]);
    values.insert(
        values.end(),
        {d, 1, d, 0, static_cast<uint32_t>(src_lo[j]), 1, static_cast<uint32_t>(source_dims[j]),
         static_cast<uint32_t>(src_lo[j]), static_cast<uint32_t>(src_size[j])});
  }
  values.push_back(0);  // firstHigh
}

}  // namespace

Expected<std::optional<Tensor>> Lowering::EmitBlockedTranspose(const Tensor& source,
                                                               std::span<const size_t> permutation,
                                                               std::string_view name,
                                                               program::Sequence& program) {
  TILEPROF_RETURN_IF_ERROR(CheckPermutation(source.Rank(), permutation));
  const CanonicalTranspose c = Canonicalize(source.shape(), permutation);
  std::vector<uint64_t> out_dims(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) out_dims[i] = source.shape()[permutation[i]];
  const size_t rank = c.dims.size();
  if (rank <= 1) {
    // Only size-1 dimensions move: the same element order.
    TILEPROF_ASSIGN_OR_RETURN(Tensor view, source.Reshape(out_dims));
    return std::optional<Tensor>(std::move(view));
  }
  const size_t l = rank - 1;
  if (c.perm[l] == l) return std::optional<Tensor>();  // rows stay rows: runs are cheap
  const size_t q = static_cast<size_t>(std::find(c.perm.begin(), c.perm.end(), l) - c.perm.begin());
  std::vector<uint64_t> canon_out(rank);
  for (size_t i = 0; i < rank; ++i) canon_out[i] = c.dims[c.perm[i]];
  const uint64_t elements = source.NumElements();
  if (elements == 0) return std::optional<Tensor>();
  const uint64_t other = elements / (canon_out[q] * canon_out[l]);
  const uint64_t tiles = graph_.target().NumTiles();
  const bool fits =
      std::all_of(c.dims.begin(), c.dims.end(), [](uint64_t d) { return d <= UINT32_MAX; });
  if (other > tiles || !fits) return std::optional<Tensor>();

  const ElementType type = source.element_type();
  const uint64_t wanted = CeilDiv(elements, mapper_.ChunkElements(elements, type));
  const auto [nq, nl] = BlockCounts(canon_out[q], canon_out[l], other, wanted, tiles);
  const uint64_t bq = CeilDiv(canon_out[q], nq), bl = CeilDiv(canon_out[l], nl);
  const uint64_t blocks = other * nq * nl;
  const uint32_t first_tile = mapper_.TakeTiles(blocks);

  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(type, canon_out, name, false));
  const Tensor flat_out = out.Flatten();
  const Blocking blocking{q, l, nq, nl, bq, bl, first_tile, tiles};
  TILEPROF_RETURN_IF_ERROR(MapBlocked(graph_, flat_out, canon_out, blocking));

  TILEPROF_ASSIGN_OR_RETURN(
      const Codelet* codelet,
      codelets_.Rearrange(type, static_cast<uint32_t>(rank), static_cast<uint32_t>(rank), false));
  TILEPROF_ASSIGN_OR_RETURN(Tensor canon_source, source.Reshape(c.dims));
  const TensorIndex source_index(std::move(canon_source));
  const TensorIndex out_index(out);
  const ComputeSetId cs = AddComputeSet(name, program);
  std::vector<size_t> reads(rank);  // source dimension j is output dimension reads[j]
  for (size_t i = 0; i < rank; ++i) reads[c.perm[i]] = i;
  std::vector<uint64_t> lo(rank), size(rank), src_lo(rank), src_size(rank);
  std::vector<uint64_t> coord(rank, 0);  // over the slabs (q and l stay 0)
  std::vector<uint32_t> values;
  for (uint64_t slab = 0; slab < other; ++slab) {
    for (uint64_t iq = 0; iq < nq; ++iq) {
      for (uint64_t il = 0; il < nl; ++il) {
        for (size_t d = 0; d < rank; ++d) {
          lo[d] = coord[d];
          size[d] = 1;
        }
        lo[q] = iq * bq;
        size[q] = std::min(bq, canon_out[q] - lo[q]);
        lo[l] = il * bl;
        size[l] = std::min(bl, canon_out[l] - lo[l]);
        for (size_t j = 0; j < rank; ++j) {
          src_lo[j] = lo[reads[j]];
          src_size[j] = size[reads[j]];
        }
        TILEPROF_ASSIGN_OR_RETURN(Tensor in, source_index.Box(src_lo, src_size));
        TILEPROF_ASSIGN_OR_RETURN(Tensor out_part, out_index.Box(lo, size));
        TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, name));
        TILEPROF_RETURN_IF_ERROR(
            graph_.SetTileMapping(vertex, blocking.Tile((slab * nq + iq) * nl + il)));
        TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["in"], std::move(in)));
        TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], std::move(out_part)));
        BlockParams(size, reads, src_lo, src_size, c.dims, values);
        TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValues(vertex, values));
      }
    }
    for (size_t d = rank; d-- > 0;) {  // next slab: odometer skipping q and l
      if (d == q || d == l) continue;
      if (++coord[d] < canon_out[d]) break;
      coord[d] = 0;
    }
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor result, out.Reshape(out_dims));
  return std::optional<Tensor>(std::move(result));
}

std::vector<bool> Lowering::FoldableTransposes(const hlo::Computation& computation) {
  const std::span<hlo::Instruction* const> instructions = computation.instructions();
  const size_t n = instructions.size();
  // Per instruction: read by some instruction, and by dots only.
  std::vector<bool> read(n, false), dots_only(n, true);
  for (const hlo::Instruction* user : instructions) {
    for (const hlo::Instruction* operand : user->operands()) {
      if (!InComputation(computation, operand)) continue;
      read[operand->index()] = true;
      if (user->opcode() != hlo::Opcode::kDot) dots_only[operand->index()] = false;
    }
  }
  std::vector<bool> foldable(n, false);
  for (size_t i = 0; i < n; ++i) {
    const hlo::Instruction& instruction = *instructions[i];
    foldable[i] = instruction.opcode() == hlo::Opcode::kTranspose && read[i] && dots_only[i] &&
                  &instruction != computation.root() && IsNative(instruction.shape());
  }
  return foldable;
}

bool Lowering::FoldTranspose(const hlo::Instruction& transpose, Scope& scope) {
  if (transpose.operand_count() != 1) return false;
  const auto it = scope.find(transpose.operand(0));
  if (it == scope.end() || !it->second.IsArray() || !it->second.tensor.valid()) return false;
  const hlo::Attribute* attribute = transpose.FindAttribute("dimensions");
  if (attribute == nullptr) return false;
  Expected<std::vector<int64_t>> permutation = hlo::ParseIntList(attribute->value());
  if (!permutation || permutation->size() != it->second.tensor.Rank()) return false;
  std::vector<size_t> perm;
  std::vector<bool> seen(permutation->size(), false);
  for (int64_t d : *permutation) {
    if (d < 0 || static_cast<size_t>(d) >= seen.size() || seen[static_cast<size_t>(d)])
      return false;
    seen[static_cast<size_t>(d)] = true;
    perm.push_back(static_cast<size_t>(d));
  }
  folded_transposes_[&transpose] = std::move(perm);
  scope[&transpose] = it->second;
  return true;
}

const std::vector<size_t>* Lowering::FoldedTranspose(const hlo::Instruction& instruction) const {
  const auto it = folded_transposes_.find(&instruction);
  return it == folded_transposes_.end() ? nullptr : &it->second;
}

}  // namespace tileprof::engine::compiler
