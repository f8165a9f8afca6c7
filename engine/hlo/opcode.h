// HLO opcodes: every opcode XLA has printed (XLA@2025 `hlo_opcode.h`, plus a
// few legacy spellings from TF-era dumps). The parser rejects any other word
// in opcode position, so a typo is an error with a location instead of an
// instruction nobody can compile.
//
// Async syntax sugar (`custom-call-start`, `call-done`, ...) is not an opcode
// of its own: it parses as kAsyncStart/kAsyncUpdate/kAsyncDone plus the
// wrapped opcode, see Instruction::async_wrapped_opcode().
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tileprof::hlo {

// X(enumerator, printed name)
#define TILEPROF_HLO_OPCODES(X)                          \
  X(kAbs, "abs")                                         \
  X(kAcos, "acos")                                       \
  X(kAcosh, "acosh")                                     \
  X(kAdd, "add")                                         \
  X(kAddDependency, "add-dependency")                    \
  X(kAfterAll, "after-all")                              \
  X(kAllGather, "all-gather")                            \
  X(kAllGatherDone, "all-gather-done")                   \
  X(kAllGatherStart, "all-gather-start")                 \
  X(kAllReduce, "all-reduce")                            \
  X(kAllReduceDone, "all-reduce-done")                   \
  X(kAllReduceStart, "all-reduce-start")                 \
  X(kAllToAll, "all-to-all")                             \
  X(kAnd, "and")                                         \
  X(kAsin, "asin")                                       \
  X(kAsinh, "asinh")                                     \
  X(kAsyncDone, "async-done")                            \
  X(kAsyncStart, "async-start")                          \
  X(kAsyncUpdate, "async-update")                        \
  X(kAtan, "atan")                                       \
  X(kAtan2, "atan2")                                     \
  X(kAtanh, "atanh")                                     \
  X(kBatchNormGrad, "batch-norm-grad")                   \
  X(kBatchNormInference, "batch-norm-inference")         \
  X(kBatchNormTraining, "batch-norm-training")           \
  X(kBitcast, "bitcast")                                 \
  X(kBitcastConvert, "bitcast-convert")                  \
  X(kBroadcast, "broadcast")                             \
  X(kCall, "call")                                       \
  X(kCbrt, "cbrt")                                       \
  X(kCeil, "ceil")                                       \
  X(kCholesky, "cholesky")                               \
  X(kClamp, "clamp")                                     \
  X(kClz, "count-leading-zeros")                         \
  X(kCollectiveBroadcast, "collective-broadcast")        \
  X(kCollectivePermute, "collective-permute")            \
  X(kCollectivePermuteDone, "collective-permute-done")   \
  X(kCollectivePermuteStart, "collective-permute-start") \
  X(kCollectiveReduce, "collective-reduce")              \
  X(kCompare, "compare")                                 \
  X(kComplex, "complex")                                 \
  X(kConcatenate, "concatenate")                         \
  X(kConditional, "conditional")                         \
  X(kConstant, "constant")                               \
  X(kConvert, "convert")                                 \
  X(kConvolution, "convolution")                         \
  X(kCopy, "copy")                                       \
  X(kCopyDone, "copy-done")                              \
  X(kCopyStart, "copy-start")                            \
  X(kCos, "cosine")                                      \
  X(kCosh, "cosh")                                       \
  X(kCrossReplicaSum, "cross-replica-sum")               \
  X(kCustomCall, "custom-call")                          \
  X(kDivide, "divide")                                   \
  X(kDomain, "domain")                                   \
  X(kDot, "dot")                                         \
  X(kDynamicReshape, "dynamic-reshape")                  \
  X(kDynamicSlice, "dynamic-slice")                      \
  X(kDynamicUpdateSlice, "dynamic-update-slice")         \
  X(kErf, "erf")                                         \
  X(kExp, "exponential")                                 \
  X(kExpm1, "exponential-minus-one")                     \
  X(kFft, "fft")                                         \
  X(kFloor, "floor")                                     \
  X(kFusion, "fusion")                                   \
  X(kGather, "gather")                                   \
  X(kGetDimensionSize, "get-dimension-size")             \
  X(kGetTupleElement, "get-tuple-element")               \
  X(kImag, "imag")                                       \
  X(kInfeed, "infeed")                                   \
  X(kIota, "iota")                                       \
  X(kIsFinite, "is-finite")                              \
  X(kLog, "log")                                         \
  X(kLog1p, "log-plus-one")                              \
  X(kLogistic, "logistic")                               \
  X(kMap, "map")                                         \
  X(kMaximum, "maximum")                                 \
  X(kMinimum, "minimum")                                 \
  X(kMulhi, "mulhi")                                     \
  X(kMultiply, "multiply")                               \
  X(kNegate, "negate")                                   \
  X(kNot, "not")                                         \
  X(kOptimizationBarrier, "opt-barrier")                 \
  X(kOr, "or")                                           \
  X(kOutfeed, "outfeed")                                 \
  X(kPad, "pad")                                         \
  X(kParameter, "parameter")                             \
  X(kPartitionId, "partition-id")                        \
  X(kPopulationCount, "popcnt")                          \
  X(kPower, "power")                                     \
  X(kRaggedAllToAll, "ragged-all-to-all")                \
  X(kRaggedDot, "ragged-dot")                            \
  X(kReal, "real")                                       \
  X(kRecv, "recv")                                       \
  X(kRecvDone, "recv-done")                              \
  X(kReduce, "reduce")                                   \
  X(kReducePrecision, "reduce-precision")                \
  X(kReduceScatter, "reduce-scatter")                    \
  X(kReduceWindow, "reduce-window")                      \
  X(kRemainder, "remainder")                             \
  X(kReplicaId, "replica-id")                            \
  X(kReshape, "reshape")                                 \
  X(kReverse, "reverse")                                 \
  X(kRng, "rng")                                         \
  X(kRngBitGenerator, "rng-bit-generator")               \
  X(kRngGetAndUpdateState, "rng-get-and-update-state")   \
  X(kRoundNearestAfz, "round-nearest-afz")               \
  X(kRoundNearestEven, "round-nearest-even")             \
  X(kRsqrt, "rsqrt")                                     \
  X(kScaledDot, "scaled-dot")                            \
  X(kScan, "scan")                                       \
  X(kScatter, "scatter")                                 \
  X(kSelect, "select")                                   \
  X(kSelectAndScatter, "select-and-scatter")             \
  X(kSend, "send")                                       \
  X(kSendDone, "send-done")                              \
  X(kSetDimensionSize, "set-dimension-size")             \
  X(kShiftLeft, "shift-left")                            \
  X(kShiftRightArithmetic, "shift-right-arithmetic")     \
  X(kShiftRightLogical, "shift-right-logical")           \
  X(kShuffle, "shuffle")                                 \
  X(kSign, "sign")                                       \
  X(kSin, "sine")                                        \
  X(kSinh, "sinh")                                       \
  X(kSlice, "slice")                                     \
  X(kSort, "sort")                                       \
  X(kSqrt, "sqrt")                                       \
  X(kStochasticConvert, "stochastic-convert")            \
  X(kSubtract, "subtract")                               \
  X(kTan, "tan")                                         \
  X(kTanh, "tanh")                                       \
  X(kTopK, "topk")                                       \
  X(kTrace, "trace")                                     \
  X(kTranspose, "transpose")                             \
  X(kTriangularSolve, "triangular-solve")                \
  X(kTuple, "tuple")                                     \
  X(kTupleSelect, "tuple-select")                        \
  X(kWhile, "while")                                     \
  X(kXor, "xor")

enum class Opcode : uint8_t {
#define TILEPROF_HLO_OPCODE_ENUM(name, text) name,
  TILEPROF_HLO_OPCODES(TILEPROF_HLO_OPCODE_ENUM)
#undef TILEPROF_HLO_OPCODE_ENUM
};

inline constexpr int kOpcodeCount = 0
#define TILEPROF_HLO_OPCODE_COUNT(name, text) +1
    TILEPROF_HLO_OPCODES(TILEPROF_HLO_OPCODE_COUNT)
#undef TILEPROF_HLO_OPCODE_COUNT
    ;

// The printed spelling: kGetTupleElement -> "get-tuple-element".
std::string_view OpcodeName(Opcode opcode);

// The opcode spelled `name`, or nullopt for anything else (including async
// sugar such as "custom-call-start"; see ParseOpcodeWithAsyncSugar).
std::optional<Opcode> OpcodeFromName(std::string_view name);

// Resolves a word in opcode position. Real opcodes first ("all-reduce-start"
// is one); otherwise "<op>-start", "<op>-update" and "<op>-done" for a real
// <op> give kAsyncStart/kAsyncUpdate/kAsyncDone with *wrapped = <op>.
std::optional<Opcode> ParseOpcodeWithAsyncSugar(std::string_view name,
                                                std::optional<Opcode>* wrapped);

}  // namespace tileprof::hlo
