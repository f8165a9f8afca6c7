// A table lookup's share on the tile that holds a block of the table: the
// partial of a planned gather (engine/compiler/lower_lookup.cc), in the
// spirit of popops::MultiSlice over a dictionary split across tiles. The
// gather out[l, :] = table[clamp(indices[l], 0, rows - 1), :] is computed
// as the sum, over the blocks of rows, of each block's partial; a partial
// row is the table row when the block holds it and the additive identity
// otherwise, so the sum is exact:
//
//   tileprof::LookupPartial<T,Idx>
//     table: rows [rowLo, rowLo + |table| / width) of the table, row-major;
//     indices: the L lookups (any integer type); out: L x width.
//     Parameters: rows (the whole table's, for the clamp, as XLA clamps a
//     gather's start), rowLo, width. A row outside the block is written as
//     -0.0 for floating-point types (x + -0.0 is x for every x, including
//     -0.0, so the sum keeps a zero's sign), 0 for integers, false for pred.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

// A lookup is a load, a clamp and two compares (4 cycles), and each output
// element a load and a store, or a store of the identity (1 cycle per
// element in 64-bit copies is what the copy codelets count; 2 here for the
// select of source).
inline constexpr uint64_t kLookupCyclesPerLookup = 4;
inline constexpr uint64_t kLookupCyclesPerElement = 2;
inline constexpr uint32_t kLookupCodeBytes = 192;

std::string LookupPartialCodeletName(ElementType type, ElementType index);

// Error: an index type that is not an integer.
Expected<std::unique_ptr<Codelet>> MakeLookupPartialCodelet(ElementType type, ElementType index);

}  // namespace tileprof::engine
