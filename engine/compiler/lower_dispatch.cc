// The instruction dispatch: every HLO opcode to the Lowering member that
// lowers it (the lower_*.cc files), in one place so that the list of what
// tileprof lowers can be checked whole.
#include <charconv>
#include <span>
#include <string_view>

#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {

using hlo::Opcode;

namespace {

bool IsUnary(Opcode op) {
  switch (op) {
    case Opcode::kAbs:
    case Opcode::kNegate:
    case Opcode::kSign:
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kTanh:
    case Opcode::kLogistic:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kIsFinite:
    case Opcode::kNot:
    case Opcode::kCbrt:
    case Opcode::kTan:
    case Opcode::kAtan:
    case Opcode::kErf:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kCosh:
    case Opcode::kSinh:
    case Opcode::kClz:
    case Opcode::kPopulationCount:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kReducePrecision:
      return true;
    default:
      return false;
  }
}

bool IsBinary(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kPower:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAtan2:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kCompare:
    case Opcode::kComplex:
    case Opcode::kMulhi:
    case Opcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

}  // namespace

// Long on purpose: the dispatch from every HLO opcode to its lowering, one
// case each; the list of what tileprof lowers is easiest to check whole.
Expected<Value> Lowering::Lower(const hlo::Instruction& instruction,
                                std::span<const Value> operands, program::Sequence& program) {
  const Opcode op = instruction.opcode();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<Value> matched,
                            MatchPrecision(instruction, operands, program));
  if (!matched.empty()) return Lower(instruction, matched, program);
  auto operand = [&](size_t i) -> const Value& { return operands[i]; };
  if (IsUnary(op) && operands.size() == 1) return LowerUnary(instruction, operand(0), program);
  if (IsBinary(op) && operands.size() == 2) return LowerBinary(instruction, operands, program);
  switch (op) {
    case Opcode::kConstant:
      return LowerConstant(instruction);
    case Opcode::kSelect:
    case Opcode::kClamp:
      if (operands.size() == 3) return LowerSelectOrClamp(instruction, operands, program);
      break;
    case Opcode::kConvert:
      if (operands.size() == 1) return LowerConvert(instruction, operand(0), program);
      break;
    case Opcode::kBroadcast:
      if (operands.size() == 1) return LowerBroadcast(instruction, operand(0), program);
      break;
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kDynamicReshape: {
      if (operands.empty() || operand(0).is_tuple || !operand(0).tensor.valid()) break;
      const Tensor& in = operand(0).tensor;
      if (!instruction.shape().IsArray()) break;
      auto storage = StorageOf(instruction.shape().element_type);
      auto dims = StorageShape(instruction.shape());
      if (!storage || !dims || storage->type != in.element_type()) break;
      auto view = in.Reshape(*dims);
      if (view) return Value::Array(std::move(*view));
      break;
    }
    case Opcode::kTranspose:
      if (operands.size() == 1) return LowerTranspose(instruction, operand(0), program);
      break;
    case Opcode::kSlice:
      if (operands.size() == 1) return LowerSlice(instruction, operand(0), program);
      break;
    case Opcode::kConcatenate:
      return LowerConcatenate(instruction, operands, program);
    case Opcode::kPad:
      return LowerPad(instruction, operands, program);
    case Opcode::kReverse:
      if (operands.size() == 1) return LowerReverse(instruction, operand(0), program);
      break;
    case Opcode::kIota:
      if (operands.empty()) return LowerIota(instruction, program);
      break;
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
      return LowerDynamicSlice(instruction, operands, program);
    case Opcode::kGather:
      return LowerGather(instruction, operands, program);
    case Opcode::kScatter:
      return LowerScatter(instruction, operands, program);
    case Opcode::kSort:
      return LowerSort(instruction, operands, program);
    case Opcode::kCopy:
      if (operands.size() == 1) return LowerCopy(instruction, operand(0), program);
      break;
    // An asynchronous copy (TPU dumps: a weight prefetched into another
    // memory space): copy-start is the copy, paired with its source and a
    // u32 context; copy-done is the copy.
    case Opcode::kCopyStart:
      if (operands.size() == 1) return LowerCopyStart(instruction, operand(0), program);
      break;
    case Opcode::kCopyDone:
      if (operands.size() == 1 && operand(0).is_tuple && !operand(0).elements.empty())
        return operand(0).elements[0];
      break;
    case Opcode::kTuple: {
      Value tuple;
      tuple.is_tuple = true;
      tuple.elements.assign(operands.begin(), operands.end());
      return tuple;
    }
    case Opcode::kGetTupleElement: {
      const hlo::Attribute* index = instruction.FindAttribute("index");
      if (index == nullptr || operands.size() != 1 || !operand(0).is_tuple) break;
      int64_t i = -1;
      const std::string_view text = index->value();
      if (std::from_chars(text.data(), text.data() + text.size(), i).ec != std::errc()) {
        return MakeError("bad index={}", text);
      }
      if (i < 0 || static_cast<size_t>(i) >= operand(0).elements.size()) {
        return MakeError("index {} out of range for a tuple of {}", i, operand(0).elements.size());
      }
      return operand(0).elements[static_cast<size_t>(i)];
    }
    // Identities on their first operand: they order or annotate, move nothing.
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
      if (!operands.empty()) return operand(0);
      break;
    case Opcode::kAfterAll:
      return Value{};
    case Opcode::kBitcastConvert:
      if (operands.size() == 1) return LowerBitcastConvert(instruction, operand(0), program);
      break;
    case Opcode::kCustomCall:
      return LowerCustomCall(instruction, operands, program);
    case Opcode::kGetDimensionSize:
      return LowerGetDimensionSize(instruction, operands, program);
    case Opcode::kTriangularSolve:
    case Opcode::kCholesky:
      return LowerLinalgOp(instruction, operands, program);
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
      return LowerCollective(instruction, operands, program);
    case Opcode::kDot:
    case Opcode::kConvolution:
      if (operands.size() == 2) return LowerDotLike(instruction, operands, program);
      break;
    case Opcode::kReduce:
      return LowerReduce(instruction, operands, program);
    case Opcode::kReduceWindow:
      return LowerReduceWindow(instruction, operands, program);
    case Opcode::kSelectAndScatter:
      return LowerSelectAndScatter(instruction, operands, program);
    case Opcode::kRng:
      return LowerRng(instruction, operands, program);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return LowerBatchNorm(instruction, operands, program);
    case Opcode::kCall:
    case Opcode::kFusion: {
      if (instruction.called_computations().size() != 1) break;
      Value result;
      TILEPROF_RETURN_IF_ERROR(
          LowerComputation(*instruction.called_computations()[0], operands, program, &result));
      return result;
    }
    case Opcode::kWhile:
      if (operands.size() == 1) return LowerWhile(instruction, operand(0), program);
      break;
    case Opcode::kConditional:
      return LowerConditional(instruction, operands, program);
    default:
      break;
  }
  return LowerOpaque(instruction, operands, program);
}

}  // namespace tileprof::engine::compiler
