// Element type names, sizes and XLA `convert` semantics. See element_type.h.
#include "engine/target/element_type.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace tileprof::engine {
namespace {

static_assert(std::endian::native == std::endian::little,
              "tile memory is little-endian and is accessed with memcpy");

struct TypeRow {
  ElementType type;
  uint32_t size;
  std::string_view hlo;
  std::string_view poplar;
};

constexpr TypeRow kTypeRows[] = {
    {ElementType::kPred, 1, "pred", "bool"},
    {ElementType::kS8, 1, "s8", "signed char"},
    {ElementType::kU8, 1, "u8", "unsigned char"},
    {ElementType::kS16, 2, "s16", "short"},
    {ElementType::kU16, 2, "u16", "unsigned short"},
    {ElementType::kS32, 4, "s32", "int"},
    {ElementType::kU32, 4, "u32", "unsigned int"},
    {ElementType::kS64, 8, "s64", "long long"},
    {ElementType::kU64, 8, "u64", "unsigned long long"},
    {ElementType::kF16, 2, "f16", "half"},
    {ElementType::kBF16, 2, "bf16", "bfloat16"},
    {ElementType::kF32, 4, "f32", "float"},
    {ElementType::kF64, 8, "f64", "double"},
};

const TypeRow& Row(ElementType type) {
  const auto index = static_cast<size_t>(type);
  assert(index < std::size(kTypeRows) && kTypeRows[index].type == type);
  return kTypeRows[index];
}

// Rounds `value` to the nearest value of a binary floating-point format with
// `mant_bits` stored mantissa bits and `exp_bits` exponent bits (ties to
// even), and returns its bit pattern. Works by scaling |value| so that one ulp
// of the result is 1 and letting nearbyint (default rounding mode: to
// nearest, ties to even) do the single rounding step; scaling by a power of
// two is exact in double for every format narrower than double.
uint64_t RoundToFormat(double value, int mant_bits, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int emin = 1 - bias;
  const int emax = bias;
  const uint64_t one = 1;
  const uint64_t sign = std::signbit(value) ? one << (mant_bits + exp_bits) : 0;
  const uint64_t exp_all_ones = ((one << exp_bits) - 1) << mant_bits;
  if (std::isnan(value)) {
    // A quiet NaN that keeps the top bits of the payload.
    const auto bits = std::bit_cast<uint64_t>(value);
    const uint64_t payload = (bits & ((one << 52) - 1)) >> (52 - mant_bits);
    return sign | exp_all_ones | (one << (mant_bits - 1)) | payload;
  }
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign | exp_all_ones;
  if (magnitude == 0) return sign;
  int frexp_exp = 0;
  std::frexp(magnitude, &frexp_exp);
  int exp = frexp_exp - 1;  // magnitude = 1.f * 2^exp
  if (exp > emax) return sign | exp_all_ones;
  const int ulp_exp = (exp < emin ? emin : exp) - mant_bits;
  auto significand = static_cast<uint64_t>(std::nearbyint(std::ldexp(magnitude, -ulp_exp)));
  // Subnormal range: the significand is the whole encoding (a carry into bit
  // mant_bits gives the smallest normal, whose encoding is the same number).
  if (exp < emin) return sign | significand;
  if (significand == (one << (mant_bits + 1))) {  // rounded up to 2^(exp+1)
    significand >>= 1;
    ++exp;
    if (exp > emax) return sign | exp_all_ones;
  }
  return sign | (static_cast<uint64_t>(exp + bias) << mant_bits) |
         (significand - (one << mant_bits));
}

double DecodeFormat(uint64_t bits, int mant_bits, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint64_t one = 1;
  const bool negative = (bits >> (mant_bits + exp_bits)) & 1;
  const uint64_t exp_field = (bits >> mant_bits) & ((one << exp_bits) - 1);
  const uint64_t mantissa = bits & ((one << mant_bits) - 1);
  double magnitude;
  if (exp_field == (one << exp_bits) - 1) {
    if (mantissa == 0) {
      magnitude = std::numeric_limits<double>::infinity();
    } else {
      // Keep the payload: it moves to the top of the double's mantissa.
      const uint64_t nan_bits = (uint64_t{0x7ff} << 52) | (mantissa << (52 - mant_bits));
      magnitude = std::bit_cast<double>(nan_bits);
    }
  } else if (exp_field == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - mant_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (one << mant_bits)),
                           static_cast<int>(exp_field) - bias - mant_bits);
  }
  return negative ? -magnitude : magnitude;
}

// An element widened without loss: floats to double (exact for f16, bf16,
// f32, f64), integers to 64 bits keeping their signedness.
struct Wide {
  enum class Kind { kFloat, kSigned, kUnsigned } kind;
  double f = 0;
  int64_t s = 0;
  uint64_t u = 0;
};

template <typename T>
T LoadRaw(const std::byte* src) {
  T value;
  std::memcpy(&value, src, sizeof(T));
  return value;
}

template <typename T>
void StoreRaw(std::byte* dst, T value) {
  std::memcpy(dst, &value, sizeof(T));
}

Wide Widen(ElementType type, const std::byte* src) {
  using K = Wide::Kind;
  switch (type) {
    case ElementType::kPred:
      return {K::kUnsigned, 0, 0, LoadRaw<uint8_t>(src) != 0 ? 1u : 0u};
    case ElementType::kS8:
      return {K::kSigned, 0, LoadRaw<int8_t>(src), 0};
    case ElementType::kU8:
      return {K::kUnsigned, 0, 0, LoadRaw<uint8_t>(src)};
    case ElementType::kS16:
      return {K::kSigned, 0, LoadRaw<int16_t>(src), 0};
    case ElementType::kU16:
      return {K::kUnsigned, 0, 0, LoadRaw<uint16_t>(src)};
    case ElementType::kS32:
      return {K::kSigned, 0, LoadRaw<int32_t>(src), 0};
    case ElementType::kU32:
      return {K::kUnsigned, 0, 0, LoadRaw<uint32_t>(src)};
    case ElementType::kS64:
      return {K::kSigned, 0, LoadRaw<int64_t>(src), 0};
    case ElementType::kU64:
      return {K::kUnsigned, 0, 0, LoadRaw<uint64_t>(src)};
    case ElementType::kF16:
      return {K::kFloat, HalfToDouble(LoadRaw<uint16_t>(src)), 0, 0};
    case ElementType::kBF16:
      return {K::kFloat, BFloat16ToDouble(LoadRaw<uint16_t>(src)), 0, 0};
    case ElementType::kF32:
      return {K::kFloat, LoadRaw<float>(src), 0, 0};
    case ElementType::kF64:
      return {K::kFloat, LoadRaw<double>(src), 0, 0};
  }
  assert(false && "unknown element type");
  return {};
}

// A 64-bit magnitude as a double rounded to odd: exact below 2^53, else the
// discarded bits are ORed into the last kept bit. Rounding that double to
// any format with at most 51 mantissa bits then gives the correctly rounded
// result (round-to-odd avoids double rounding when 53 >= p + 2).
double RoundToOddDouble(uint64_t magnitude) {
  const int bit_length = 64 - std::countl_zero(magnitude);
  if (bit_length <= 53) return static_cast<double>(magnitude);
  const int shift = bit_length - 53;
  uint64_t kept = magnitude >> shift;
  if ((magnitude & ((uint64_t{1} << shift) - 1)) != 0) kept |= 1;
  return std::ldexp(static_cast<double>(kept), shift);
}

// The value to round into a float type narrower than double.
double NarrowingSource(const Wide& wide) {
  switch (wide.kind) {
    case Wide::Kind::kFloat:
      return wide.f;
    case Wide::Kind::kUnsigned:
      return RoundToOddDouble(wide.u);
    case Wide::Kind::kSigned: {
      const uint64_t magnitude =
          wide.s < 0 ? 0 - static_cast<uint64_t>(wide.s) : static_cast<uint64_t>(wide.s);
      const double rounded = RoundToOddDouble(magnitude);
      return wide.s < 0 ? -rounded : rounded;
    }
  }
  return 0;
}

// Float -> integer: truncate, saturate, NaN -> 0. `lo` and `hi_exclusive`
// are powers of two (or zero) and therefore exact doubles.
uint64_t SaturatingBits(double value, double lo, double hi_exclusive, uint64_t lo_bits,
                        uint64_t hi_bits) {
  if (std::isnan(value)) return 0;
  const double truncated = std::trunc(value);
  if (truncated < lo) return lo_bits;
  if (truncated >= hi_exclusive) return hi_bits;
  if (truncated < 0) {
    return static_cast<uint64_t>(static_cast<int64_t>(truncated));
  }
  return static_cast<uint64_t>(truncated);
}

uint64_t FloatToIntegerBits(double value, ElementType to) {
  const int bits = static_cast<int>(SizeOf(to)) * 8;
  if (IsSigned(to)) {
    const double hi = std::ldexp(1.0, bits - 1);
    const uint64_t max_bits = (uint64_t{1} << (bits - 1)) - 1;
    return SaturatingBits(value, -hi, hi, ~max_bits, max_bits);
  }
  const double hi = std::ldexp(1.0, bits);
  const uint64_t max_bits = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return SaturatingBits(value, 0.0, hi, 0, max_bits);
}

}  // namespace

bool IsFloat(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16 || type == ElementType::kF32 ||
         type == ElementType::kF64;
}

bool IsInteger(ElementType type) { return type != ElementType::kPred && !IsFloat(type); }

bool IsSigned(ElementType type) {
  switch (type) {
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
      return true;
    default:
      return IsFloat(type);
  }
}

std::string_view HloName(ElementType type) { return Row(type).hlo; }
std::string_view PoplarName(ElementType type) { return Row(type).poplar; }

std::optional<ElementType> ParseHloElementType(std::string_view name) {
  for (const TypeRow& row : kTypeRows) {
    if (row.hlo == name) return row.type;
  }
  return std::nullopt;
}

std::optional<ElementType> ParsePoplarElementType(std::string_view name) {
  for (const TypeRow& row : kTypeRows) {
    if (row.poplar == name) return row.type;
  }
  return std::nullopt;
}

// binary16: 10 mantissa bits, 5 exponent bits; bfloat16: 7 and 8; binary32:
// 23 and 8 (IEEE 754-2008 table 3.5; bfloat16 is binary32 without its low 16
// mantissa bits).
uint16_t HalfFromDouble(double value) { return static_cast<uint16_t>(RoundToFormat(value, 10, 5)); }
uint16_t BFloat16FromDouble(double value) {
  return static_cast<uint16_t>(RoundToFormat(value, 7, 8));
}
float FloatFromDouble(double value) {
  return std::bit_cast<float>(static_cast<uint32_t>(RoundToFormat(value, 23, 8)));
}
double HalfToDouble(uint16_t bits) { return DecodeFormat(bits, 10, 5); }
double BFloat16ToDouble(uint16_t bits) { return DecodeFormat(bits, 7, 8); }

void ConvertElement(ElementType from, const std::byte* src, ElementType to, std::byte* dst) {
  const Wide wide = Widen(from, src);
  switch (to) {
    case ElementType::kPred: {
      bool truth;
      switch (wide.kind) {
        case Wide::Kind::kFloat:
          truth = !(wide.f == 0);
          break;  // NaN -> true
        case Wide::Kind::kSigned:
          truth = wide.s != 0;
          break;
        default:
          truth = wide.u != 0;
          break;
      }
      StoreRaw<uint8_t>(dst, truth ? 1 : 0);
      return;
    }
    case ElementType::kF16:
      StoreRaw(dst, HalfFromDouble(NarrowingSource(wide)));
      return;
    case ElementType::kBF16:
      // Through f32, as XLA's elemental emitter converts to bf16 (a cast to
      // F32, then EmitF32ToBF16) and as Eigen's bfloat16(T) constructor does:
      // from f64 and from integers beyond 2^24 that rounds twice.
      StoreRaw(dst, BFloat16FromDouble(FloatFromDouble(NarrowingSource(wide))));
      return;
    case ElementType::kF32:
      StoreRaw(dst, FloatFromDouble(NarrowingSource(wide)));
      return;
    case ElementType::kF64: {
      double value = wide.f;
      // int64 -> double: the hardware conversion rounds to nearest even.
      if (wide.kind == Wide::Kind::kSigned) value = static_cast<double>(wide.s);
      if (wide.kind == Wide::Kind::kUnsigned) value = static_cast<double>(wide.u);
      StoreRaw(dst, value);
      return;
    }
    default:
      break;
  }
  // Integer destinations: the low SizeOf(to) bytes of a 64-bit pattern.
  uint64_t bits;
  switch (wide.kind) {
    case Wide::Kind::kFloat:
      bits = FloatToIntegerBits(wide.f, to);
      break;
    case Wide::Kind::kSigned:
      bits = static_cast<uint64_t>(wide.s);
      break;
    default:
      bits = wide.u;
      break;
  }
  std::memcpy(dst, &bits, SizeOf(to));
}

void StoreFromDouble(ElementType type, double value, std::byte* dst) {
  std::byte src[sizeof(double)];
  std::memcpy(src, &value, sizeof(double));
  ConvertElement(ElementType::kF64, src, type, dst);
}

void StoreFromInt64(ElementType type, int64_t value, std::byte* dst) {
  std::byte src[sizeof(int64_t)];
  std::memcpy(src, &value, sizeof(int64_t));
  ConvertElement(ElementType::kS64, src, type, dst);
}

double LoadAsDouble(ElementType type, const std::byte* src) {
  std::byte dst[sizeof(double)];
  ConvertElement(type, src, ElementType::kF64, dst);
  double value;
  std::memcpy(&value, dst, sizeof(double));
  return value;
}

}  // namespace tileprof::engine
