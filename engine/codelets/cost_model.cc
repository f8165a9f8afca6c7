// The codelet cost model. See cost_model.h.
#include "engine/codelets/cost_model.h"

namespace tileprof::engine::cost {

uint64_t OpCycles(OpClass op_class, ElementType type) {
  if (op_class == OpClass::kMove) return 0;
  switch (type) {
    case ElementType::kF64:
      switch (op_class) {
        case OpClass::kDivide:
          return kF64DivideCycles;
        case OpClass::kTranscendental:
          return kF64TranscendentalCycles;
        default:
          return kF64SimpleCycles;
      }
    case ElementType::kF32:
    case ElementType::kF16:
    case ElementType::kBF16: {
      uint64_t cycles = kSimpleOpCycles;
      if (op_class == OpClass::kDivide) cycles = kFloatDivideCycles;
      if (op_class == OpClass::kTranscendental) cycles = kTranscendentalCycles;
      return type == ElementType::kBF16 ? cycles + kBf16ConvertCycles : cycles;
    }
    default: {  // pred and integers
      const bool wide = SizeOf(type) == 8;
      switch (op_class) {
        case OpClass::kDivide:
          return kIntDivideCycles * (wide ? kInt64SlowFactor : 1);
        case OpClass::kTranscendental:  // integer power
          return kIntPowerCycles * (wide ? kInt64SlowFactor : 1);
        default:
          return kSimpleOpCycles * (wide ? kInt64Factor : 1);
      }
    }
  }
}

uint64_t CyclesPerVector(OpClass op_class, ElementType type, uint32_t inputs, uint32_t outputs) {
  return (inputs + outputs) * kMemoryAccessCycles + OpCycles(op_class, type);
}

uint32_t Width(const Target& target, ElementType type) { return target.VectorWidth(type); }

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

uint64_t WorkerLoop(uint64_t n, uint32_t width, uint64_t per_vector) {
  return kWorkerOverhead + CeilDiv(n, width) * per_vector;
}

uint64_t SupervisorLoop(uint64_t n, uint32_t width, uint64_t per_vector, const Target& target) {
  const uint64_t workers = target.NumWorkerContexts();
  const uint64_t vectors_per_worker = CeilDiv(CeilDiv(n, width), workers);
  return kSupervisorOverhead + workers * (kWorkerOverhead + vectors_per_worker * per_vector);
}

}  // namespace tileprof::engine::cost
