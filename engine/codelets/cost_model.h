// Internal to engine/codelets: the cycle and code-size model of the built-in
// codelets. Graphcore publishes no per-vertex costs, so these are tileprof's
// own numbers, each derived from how the IPU executes the inner loop (64-bit
// load/store path, 6 worker contexts, f32v2/f16v4 vector units, no integer
// divide, no f64 hardware) or calibrated on seed 004's report. Every number
// is listed with its reason in docs/engine-graph.md as well.
#pragma once

#include <cstdint>

#include "engine/target/element_type.h"
#include "engine/target/target.h"

namespace tileprof::engine::cost {

// ---- Fixed costs --------------------------------------------------------
// A worker vertex's prologue and epilogue: load the vertex state base, the
// field pointers and lengths, set up the loop count, exit: about a dozen
// instructions.
inline constexpr uint64_t kWorkerOverhead = 12;
// A supervisor vertex's own work: read its state, split the work in 6 shares,
// start the workers and wait for them: about 10 supervisor instructions, and
// the supervisor issues in one of 6 barrel slots, so 10 x 6 tile cycles.
inline constexpr uint64_t kSupervisorOverhead = 60;

// ---- Per-vector costs ----------------------------------------------------
// One 64-bit load or store per worker cycle.
inline constexpr uint64_t kMemoryAccessCycles = 1;
// Add, subtract, multiply, max, min, compare, bitwise ops, shifts, abs, neg,
// sign, floor, ceil, round, select: one ALU instruction per vector.
inline constexpr uint64_t kSimpleOpCycles = 1;
// Float divide, sqrt, rsqrt: reciprocal-estimate plus refinement steps.
inline constexpr uint64_t kFloatDivideCycles = 6;
// exp, log, tanh, sigmoid, sin, cos, pow, atan2, remainder (fmod): a range
// reduction and a short polynomial, a dozen vector instructions.
inline constexpr uint64_t kTranscendentalCycles = 12;
// bf16 has no arithmetic on Mk1/Mk2 tiles: inputs are widened to f32 and the
// result narrowed, one instruction each way.
inline constexpr uint64_t kBf16ConvertCycles = 2;
// Integer division and remainder: no hardware divider, so a shift-subtract
// loop, one cycle per quotient bit of a 32-bit word.
inline constexpr uint64_t kIntDivideCycles = 32;
// Integer power by squaring: up to 2 multiplies per exponent bit of a 32-bit
// word.
inline constexpr uint64_t kIntPowerCycles = 64;
// 64-bit integers are emulated on 32-bit halves: twice the work for simple
// ops; division and power also have twice the bits to walk: 4 times.
inline constexpr uint64_t kInt64Factor = 2;
inline constexpr uint64_t kInt64SlowFactor = 4;
// f64 has no hardware: a soft-float op unpacks, operates, rounds and packs
// (tens of instructions); divide iterates; transcendentals chain soft-float
// ops.
inline constexpr uint64_t kF64SimpleCycles = 30;
inline constexpr uint64_t kF64DivideCycles = 100;
inline constexpr uint64_t kF64TranscendentalCycles = 250;
// Convolution (AMP) vertices: per output pixel, one worker loads the input
// pointer and length and issues the accumulate loop setup.
inline constexpr uint64_t kConvPerPixelCycles = 6;
// Dot products on the vector unit: per output, a reduction of the vector
// accumulator and the store.
inline constexpr uint64_t kDotPerOutputCycles = 4;
// Setting the seed: hash the seed with the two modifiers and write the two
// PRNG registers: about 12 instructions in worker context, 6 cycles each.
inline constexpr uint64_t kSetSeedCycles = 12 * 6;

// ---- Code sizes (bytes, once per codelet type per tile) -----------------
// Calibrated on seed 004 (an adder graph on a Mk1): Vertex Code 170,788 B
// over 1,216 tiles, where 1,215 tiles hold only poprand::SetSeedSupervisor:
// 170,788 / 1,216 -> 140 B each; the 548 B left on tile 0 belong to the two
// other types of that report, BinaryOp1DSupervisor and ScaledAddSupervisor:
// 274 B each.
inline constexpr uint32_t kSetSeedCodeBytes = 140;
inline constexpr uint32_t kSupervisorElementwiseCodeBytes = 274;
// A worker-only elementwise vertex lacks the supervisor's work-splitting and
// worker start-up code (about a quarter of it): 200 B.
inline constexpr uint32_t kWorkerElementwiseCodeBytes = 200;
// A copy or fill is one load/store loop plus a tail for the odd bytes.
inline constexpr uint32_t kCopyCodeBytes = 96;
// A reduction has an outer loop over outputs and an inner one over partials.
inline constexpr uint32_t kReduceCodeBytes = 320;
// Dot products: three nested loops and the accumulator reduction.
inline constexpr uint32_t kMatMulCodeBytes = 480;
// AMP convolution: weight loading, the AMP pipeline fill/drain and worker
// dispatch; the largest vertex in poplibs' 1x1 family.
inline constexpr uint32_t kConvCodeBytes = 1024;
// The seed listing's vertices: a scalar loop / a single add.
inline constexpr uint32_t kSumVertexCodeBytes = 48;
inline constexpr uint32_t kAdderVertexCodeBytes = 24;

enum class OpClass { kMove, kSimple, kDivide, kTranscendental };

// Worker cycles of the operation itself on one vector of `type`.
uint64_t OpCycles(OpClass op_class, ElementType type);
// Worker cycles per vector of an elementwise loop that loads `inputs` and
// stores `outputs` vectors.
uint64_t CyclesPerVector(OpClass op_class, ElementType type, uint32_t inputs, uint32_t outputs);
// Elements per vector for the loop (the target's vector width).
uint32_t Width(const Target& target, ElementType type);

uint64_t CeilDiv(uint64_t a, uint64_t b);
// A worker vertex that walks `n` elements `width` at a time:
//   kWorkerOverhead + ceil(n / width) * per_vector.
uint64_t WorkerLoop(uint64_t n, uint32_t width, uint64_t per_vector);
// A supervisor vertex that splits the vectors evenly over the workers:
//   kSupervisorOverhead
//     + W * (kWorkerOverhead + ceil(ceil(n / width) / W) * per_vector),
// W = target.NumWorkerContexts() (the slowest worker sets the pace and each
// worker cycle is W tile cycles).
uint64_t SupervisorLoop(uint64_t n, uint32_t width, uint64_t per_vector, const Target& target);

}  // namespace tileprof::engine::cost
