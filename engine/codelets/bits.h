// Codelets that work on the bits of their elements, created on demand by the
// HLO compiler:
//
//   tileprof::BitcastConvert<In,Out>  in, out: XLA's bitcast-convert, the
//                            bytes of `in` read as elements of `out`, in
//                            order (little-endian, as XLA's CPU backend and
//                            NumPy's view). Types of different sizes are
//                            allowed: a vertex's fields hold the same bytes.
//   tileprof::Threefry2x32<unsigned int>  key0, key1, x0, x1, out0, out1:
//                            the Threefry-2x32 block cipher with 20 rounds
//                            (Salmon et al., SC'11), element by element: what
//                            JAX's threefry2x32 custom calls compute
//                            (cuda_threefry2x32, cu_threefry2x32 and their
//                            _ffi forms), bit for bit.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

// Code bytes: a bitcast is a Copy1D (a load/store loop), 96 B; threefry's 20
// rounds of add, rotate and xor plus 5 key injections are straight-line
// code over two registers, ~100 instructions, 416 B.
inline constexpr uint32_t kBitcastConvertCodeBytes = 96;
inline constexpr uint32_t kThreefryCodeBytes = 416;
// Worker cycles: a bitcast moves 8 bytes per cycle pair (load and store of a
// 64-bit word); threefry costs 20 rounds x 4 instructions (add, two shifts
// or'd, xor) + 5 injections x 3, ~96 cycles per output pair, plus 4 loads
// and 2 stores.
inline constexpr uint64_t kBitcastCyclesPerWord = 2;
inline constexpr uint64_t kThreefryCyclesPerPair = 102;

std::string BitcastConvertCodeletName(ElementType in, ElementType out);
std::string ThreefryCodeletName();

// Error for pred (XLA's bitcast-convert is defined on numeric types only).
Expected<std::unique_ptr<Codelet>> MakeBitcastConvertCodelet(ElementType in, ElementType out);
Expected<std::unique_ptr<Codelet>> MakeThreefryCodelet();

// One Threefry-2x32 block (20 rounds) of counter (x0, x1) under key
// (k0, k1); exposed for tests.
std::pair<uint32_t, uint32_t> Threefry2x32(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1);

}  // namespace tileprof::engine
