// The built-in codelet catalogue: the vertex types an HLO lowering needs,
// named in the style of the Poplar libraries (the names the text report's
// "By Type" list shows, seed 004), plus the seed listing's SumVertex and
// AdderVertex. docs/engine-graph.md lists every family with its fields, state
// and code bytes and cycle formula.
//
// Numerics follow XLA's definitions where the HLO lowering needs them (see
// each enumerator); f16 and bf16 are computed in f32 and rounded to nearest
// even on store.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

// popops::expr::BinaryOpType names.
enum class BinaryOp : uint8_t {
  kAdd,                   // integers wrap (two's complement)
  kSubtract,              // integers wrap
  kMultiply,              // integers wrap
  kDivide,                // integers: x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN (XLA)
  kRemainder,             // integers: x%0 = x, INT_MIN%-1 = 0 (XLA); floats: fmod
  kPower,                 // integers: by squaring, wrapping; negative exponent gives
                          // 1 if the base is 1, else 0 (XLA); floats: pow
  kMaximum,               // floats: NaN if either is NaN; -0 < +0
  kMinimum,               // floats: NaN if either is NaN; -0 < +0
  kAtan2,                 // floats only
  kBitwiseAnd,            // integers and pred
  kBitwiseOr,             // integers and pred
  kBitwiseXor,            // integers and pred
  kShiftLeft,             // integers; an amount >= bit width (as unsigned) gives 0
  kShiftRight,            // logical; amount >= width gives 0
  kShiftRightSignExtend,  // arithmetic; amount >= width fills with the sign
  kEqual,                 // comparisons: output pred; floats compare as IEEE
  kNotEqual,              //   (NaN is unequal to everything, itself included)
  kLessThan,
  kLessThanEqual,
  kGreaterThan,
  kGreaterThanEqual,
};

// popops::expr::UnaryOpType names (ROUND_HALF_EVEN is tileprof's, for HLO
// round-nearest-even).
enum class UnaryOp : uint8_t {
  kAbsolute,  // integers wrap: |INT_MIN| = INT_MIN; unsigned: identity
  kNegate,    // integers wrap
  kSignum,    // -1, 0, 1; floats keep NaN and the sign of zero
  kFloor,     // floats only from here to kIsFinite
  kCeil,
  kRound,  // half away from zero (HLO round-nearest-afz)
  kRoundHalfEven,
  kExponent,
  kExponentMinusOne,
  kLogarithm,
  kLogarithmOnePlus,
  kTanh,
  kSigmoid,  // HLO logistic: 1 / (1 + exp(-x))
  kSqrt,
  kRsqrt,
  kSin,
  kCos,
  kIsFinite,           // output pred
  kBitwiseNot,         // integers
  kLogicalNot,         // pred
  kErf,                // floats; from here on, new ops last, so that the older keep their codes in
                       // MapExpr names
  kCountLeadingZeros,  // integers: of the type's width (clz(0) is the width)
  kPopcount,           // integers: the set bits of the two's complement pattern
};

enum class ReduceOp : uint8_t { kAdd, kMul, kMax, kMin, kAnd, kOr };

std::string_view BinaryOpName(BinaryOp op);  // "ADD"
std::string_view UnaryOpName(UnaryOp op);    // "EXPONENT"
std::string_view ReduceOpName(ReduceOp op);  // "ReduceAdd"
bool IsComparison(BinaryOp op);
// The element types the catalogue has the operation for.
bool Supports(BinaryOp op, ElementType type);
bool Supports(UnaryOp op, ElementType type);
bool Supports(ReduceOp op, ElementType type);
// Output element type of a unary op on `type` (pred for kIsFinite).
ElementType UnaryOutputType(UnaryOp op, ElementType type);

// Codelet names, e.g.
//   popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::ADD,float>
//   popops::UnaryOp1DSupervisor<popops::expr::UnaryOpType::EXPONENT,half>
//   popops::Select<float>, popops::Clamp<float>, popops::Cast1D<float,half>
//   poplar_rt::Copy1D<float>, popops::Fill<float>
//   popops::ScaledAddSupervisor<float,float,true>  (false: scale is a tensor)
//   popops::Reduce<popops::ReduceAdd,float,float,false,0>
//   poplin::MatMulPartial<half,float>
//   poplin::ConvPartial1x1Out<half,float,true,false>
//   poprand::SetSeedSupervisor, SumVertex, AdderVertex, DotProductVertex,
//   ReduceVertex
std::string BinaryOpCodeletName(BinaryOp op, ElementType type);
std::string UnaryOpCodeletName(UnaryOp op, ElementType type);
std::string SelectCodeletName(ElementType type);
std::string ClampCodeletName(ElementType type);
std::string CastCodeletName(ElementType from, ElementType to);
std::string CopyCodeletName(ElementType type);
std::string FillCodeletName(ElementType type);
// constant_scale: the scale is a constant in the vertex state (parameter
// scaleB, f32 bits; float types only) rather than a scalar tensor field.
std::string ScaledAddCodeletName(ElementType type, bool constant_scale);
std::string ReduceCodeletName(ReduceOp op, ElementType type, bool is_update);
//   popops::Reduce<popops::ReduceAdd,float,half,false,0>: partials of one
//   type, output of another (only f32 -> f16/bf16 adds are in the catalogue).
std::string ReduceCodeletName(ReduceOp op, ElementType partials, ElementType out, bool is_update);
//   popops::ContinuousReduce<popops::ReduceAdd,float,float,false>
std::string ContinuousReduceCodeletName(ReduceOp op, ElementType type, bool is_update);
std::string MatMulPartialCodeletName(ElementType input, ElementType accumulator);
// poplin::MatMulPartialTransposed<float,float,true,false>: MatMulPartial with
// `in` stored [k x m] and/or `weights` stored [n x k] (at least one).
std::string MatMulPartialTransposedCodeletName(ElementType input, ElementType accumulator,
                                               bool transpose_in, bool transpose_weights);
std::string ConvPartial1x1OutCodeletName(ElementType input, ElementType accumulator);
// The general convolution partial: poplin::ConvPartialnx1<In,Acc,true,false>
// for the AMP pairs (f32/f32, f16/f32, f16/f16),
// poplin::ConvPartialHorizontalMac<In,Acc,true> (vector unit) for the others.
std::string ConvPartialCodeletName(ElementType input, ElementType accumulator);
inline constexpr std::string_view kSetSeedCodeletName = "poprand::SetSeedSupervisor";
inline constexpr std::string_view kSumVertexCodeletName = "SumVertex";
inline constexpr std::string_view kDotProductVertexCodeletName = "DotProductVertex";
inline constexpr std::string_view kReduceVertexCodeletName = "ReduceVertex";
inline constexpr std::string_view kAdderVertexCodeletName = "AdderVertex";

// The catalogue, built once on first use (thread-safe); codelets live for
// the whole program.
const Codelet* FindCodelet(std::string_view name);  // nullptr if unknown
std::span<const Codelet* const> AllCodelets();      // sorted by name

// Lookups by operation. Error when the catalogue lacks the combination:
// "no codelet popops::BinaryOp1DSupervisor<...ATAN2,int>: ATAN2 is not
// defined for s32".
Expected<const Codelet*> GetBinaryOpCodelet(BinaryOp op, ElementType type);
Expected<const Codelet*> GetUnaryOpCodelet(UnaryOp op, ElementType type);
Expected<const Codelet*> GetSelectCodelet(ElementType type);
Expected<const Codelet*> GetClampCodelet(ElementType type);
Expected<const Codelet*> GetCastCodelet(ElementType from, ElementType to);
Expected<const Codelet*> GetCopyCodelet(ElementType type);
Expected<const Codelet*> GetFillCodelet(ElementType type);
Expected<const Codelet*> GetScaledAddCodelet(ElementType type, bool constant_scale);
Expected<const Codelet*> GetReduceCodelet(ReduceOp op, ElementType type, bool is_update);
Expected<const Codelet*> GetReduceCodelet(ReduceOp op, ElementType partials, ElementType out,
                                          bool is_update);
Expected<const Codelet*> GetContinuousReduceCodelet(ReduceOp op, ElementType type, bool is_update);
Expected<const Codelet*> GetMatMulPartialCodelet(ElementType input, ElementType accumulator);
// The plain codelet when neither is transposed.
Expected<const Codelet*> GetMatMulPartialCodelet(ElementType input, ElementType accumulator,
                                                 bool transpose_in, bool transpose_weights);
Expected<const Codelet*> GetConvPartial1x1OutCodelet(ElementType input, ElementType accumulator);
Expected<const Codelet*> GetConvPartialCodelet(ElementType input, ElementType accumulator);

// ---- The general convolution partial (conv.cc) ---------------------------
// Fields: in (a flat range of the input tensor, in its own layout), weights
// (a flat range of the kernel), out (a flat range of the output or of a
// partial-sums tensor of the output's shape). Each output element
//   out[b, f, o...] = sum over ci in [inChanStart, inChanStart + inChans),
//                     kernel positions k... of in[b', ci', x...] * w[ci, f, k'...]
// where the group of f is g = f / outChansPerGroup; when groupsSplitBatch is
// 0 (feature groups) b' = b, ci' = g * inChansPerGroup + ci, else (batch
// groups) b' = g * outSizeB + b, ci' = ci; x = (o * stride - padLow + k *
// rhsDilation) / lhsDilation where that divides and lies inside the input
// (else the term is zero, as padding); k' = kSize - 1 - k where bit d of
// reversal is set. Every dimension is located by a stride into the whole
// tensor and each field starts at element *Start of it, so any dim_labels
// layout is read in place. Up to kConvMaxSpatialDims spatial dimensions;
// unused ones have size, stride and dilations 1.
inline constexpr size_t kConvMaxSpatialDims = 3;
enum class ConvParam : uint8_t {
  kOutStart,
  kOutSizeB,
  kOutStrideB,
  kOutSizeF,
  kOutStrideF,
  kOutSize0,
  kOutStride0,
  kOutSize1,
  kOutStride1,
  kOutSize2,
  kOutStride2,
  kInStart,
  kInStrideB,
  kInStrideF,
  kInSize0,
  kInStride0,
  kInSize1,
  kInStride1,
  kInSize2,
  kInStride2,
  kWeightsStart,
  kWeightsStrideI,
  kWeightsStrideO,
  kKernelSize0,
  kWeightsStride0,
  kKernelSize1,
  kWeightsStride1,
  kKernelSize2,
  kWeightsStride2,
  kStride0,
  kStride1,
  kStride2,
  kPadLow0,
  kPadLow1,
  kPadLow2,  // two's complement: padding may be negative
  kLhsDilation0,
  kLhsDilation1,
  kLhsDilation2,
  kRhsDilation0,
  kRhsDilation1,
  kRhsDilation2,
  kReversal,  // bit d: spatial dimension d of the kernel is reversed
  kInChansPerGroup,
  kOutChansPerGroup,
  kGroupsSplitBatch,
  kInChanStart,
  kInChans,
  // Where the vertex's block lies in the whole convolution (a planned cell,
  // engine/compiler/conv_plan.h): the out* sizes and strides above describe
  // the block, whose element (b, f, o...) is the convolution's output (b +
  // outOffsetB, f + outOffsetF, o + outOffset...), and the kernel positions
  // it sums over are kernelSize of kernelFull from kernelOffset. With batch
  // groups the input batch is g * batchPerGroup + b.
  kOutOffsetB,
  kOutOffsetF,
  kOutOffset0,
  kOutOffset1,
  kOutOffset2,
  kKernelOffset0,
  kKernelOffset1,
  kKernelOffset2,
  kKernelFull0,
  kKernelFull1,
  kKernelFull2,
  kBatchPerGroup,
  kCount
};
// Parameter names in ConvParam order ("outStart", "outSizeB", ...).
std::span<const std::string> ConvPartialParamNames();

}  // namespace tileprof::engine
