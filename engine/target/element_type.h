// Element types of tensors, vertex fields and tile memory: the XLA primitive
// types the engine supports (../shared/spec/hlo-text.md names them: pred, s8,
// ... f64), their Poplar spellings (used in codelet names such as
// `popops::Reduce<popops::ReduceAdd,float,float,false,0>`), their sizes, and
// the element conversions that XLA's `convert` defines. The conversions live
// here, not in codelets/, because constants, host streams and the Cast
// codelet must all round the same way.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tileprof::engine {

// In-memory encodings: little-endian two's complement integers, IEEE 754
// binary16 (f16), bfloat16 (the upper half of a binary32), binary32, binary64;
// pred is one byte, 0 or 1 (any nonzero byte reads as true).
enum class ElementType : uint8_t {
  kPred,
  kS8,
  kU8,
  kS16,
  kU16,
  kS32,
  kU32,
  kS64,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
};

inline constexpr ElementType kAllElementTypes[] = {
    ElementType::kPred, ElementType::kS8,  ElementType::kU8,  ElementType::kS16, ElementType::kU16,
    ElementType::kS32,  ElementType::kU32, ElementType::kS64, ElementType::kU64, ElementType::kF16,
    ElementType::kBF16, ElementType::kF32, ElementType::kF64};

// Size of one element in bytes (pred: 1). Inline so that typed element
// access in codelet inner loops folds it to a constant.
constexpr uint32_t SizeOf(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kU8:
      return 1;
    case ElementType::kS16:
    case ElementType::kU16:
    case ElementType::kF16:
    case ElementType::kBF16:
      return 2;
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kF32:
      return 4;
    case ElementType::kS64:
    case ElementType::kU64:
    case ElementType::kF64:
      return 8;
  }
  return 0;
}

bool IsFloat(ElementType type);    // f16, bf16, f32, f64
bool IsInteger(ElementType type);  // s8 ... u64 (not pred)
bool IsSigned(ElementType type);   // signed integers and floats

// "f32", "pred", ... as in HLO text.
std::string_view HloName(ElementType type);
// "float", "half", "bool", "unsigned int", ... as in Poplar type names and
// codelet template arguments. bf16 has no Poplar name; we use "bfloat16".
std::string_view PoplarName(ElementType type);

std::optional<ElementType> ParseHloElementType(std::string_view name);
std::optional<ElementType> ParsePoplarElementType(std::string_view name);

// IEEE binary16 and bfloat16 from a double, rounding to nearest, ties to even
// (one rounding step, so f64 -> f16 never double-rounds). Overflow gives
// infinity, NaN stays NaN (quiet, sign kept), tiny values become subnormals or
// signed zero.
uint16_t HalfFromDouble(double value);
uint16_t BFloat16FromDouble(double value);
// binary32 from a double with the same rules (defined for out-of-range input,
// unlike a C++ cast).
float FloatFromDouble(double value);
// Exact widenings.
double HalfToDouble(uint16_t bits);
double BFloat16ToDouble(uint16_t bits);
// The f32 forms, on bits: the simulator converts every f16 and bf16 element
// it reads or writes, so these are the hot path of half-precision models.
// Each equals the double route above bit for bit, NaNs included (quieted,
// payload kept, as the hardware's float/double conversions do);
// element_type_test checks them against it.
inline float HalfToFloat(uint16_t bits) {
  const uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu;
  if (exp == 0x1f)  // infinity, or a NaN made quiet
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13) | (mant ? 0x00400000u : 0));
  if (exp == 0)  // zero or subnormal: mant * 2^-24, exact in f32
    return std::bit_cast<float>(sign |
                                std::bit_cast<uint32_t>(static_cast<float>(mant) * 0x1p-24f));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}
inline float BFloat16ToFloat(uint16_t bits) {
  uint32_t f = uint32_t{bits} << 16;
  if ((f & 0x7fffffffu) > 0x7f800000u) f |= 0x00400000u;  // a NaN made quiet
  return std::bit_cast<float>(f);
}
// Round to nearest, ties to even; overflow to infinity; a NaN stays a quiet
// NaN with its sign and the top of its payload.
inline uint16_t HalfFromFloat(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t a = f & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: infinity
  if (a < 0x38800000u) {  // below 2^-14: a subnormal, |value| * 2^24 rounded (exact scaling)
    const float scaled = std::bit_cast<float>(a) * 0x1p24f;
    // Round half to even by hand: lrint depends on the rounding mode, like
    // nearbyint in RoundToFormat, but this needs no libm call.
    auto whole = static_cast<uint32_t>(scaled);
    const float rest = scaled - static_cast<float>(whole);
    if (rest > 0.5f || (rest == 0.5f && (whole & 1u))) ++whole;
    return static_cast<uint16_t>(sign | whole);
  }
  uint32_t half = ((((a >> 23) - 112) << 10) | ((a >> 13) & 0x3ffu));
  const uint32_t rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(sign | half);
}
inline uint16_t BFloat16FromFloat(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x0040u);
  return static_cast<uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}

// Converts one element, with the semantics XLA gives `convert`:
//  * float -> float: round to nearest even, overflow to infinity, NaN kept;
//  * integer -> float: round to nearest even, correctly for 64-bit values;
//  * x -> bf16: first to f32 as above, then to bf16 (XLA converts to bf16
//    only from f32), so f64 and integers beyond 2^24 may round twice:
//    s32 16842753 (2^24 + 2^16 + 1) -> f32 2^24 + 2^16, a bf16 tie -> 2^24;
//    x -> f16 rounds once, from the exact value;
//  * float -> integer: truncate toward zero, saturate at the type's range,
//    NaN -> 0 (XLA lowers this with llvm's fptosi.sat / fptoui.sat);
//  * integer -> integer: two's complement wrap (truncate or extend by sign);
//  * x -> pred: x != 0 (a NaN is true, as XLA's unordered compare gives);
//    pred -> x: 0 or 1.
// `src` and `dst` point at SizeOf(from) and SizeOf(to) bytes; they may alias
// only if they are the same address and the types have the same size.
void ConvertElement(ElementType from, const std::byte* src, ElementType to, std::byte* dst);

// Convenience wrappers around ConvertElement for building constants.
void StoreFromDouble(ElementType type, double value, std::byte* dst);
void StoreFromInt64(ElementType type, int64_t value, std::byte* dst);
// Reads an element widened to double (exact for every type but 64-bit
// integers beyond 2^53, which round to nearest even).
double LoadAsDouble(ElementType type, const std::byte* src);

}  // namespace tileprof::engine
