// HLO shapes (../shared/spec/hlo-text.md section 4): element types, arrays
// with static, bounded-dynamic (`<=N`) and unbounded (`?`) dimensions,
// layouts with their extensions (tiles, memory space, element size, ...),
// tuples (nested, empty), `token[]` and `opaque[]`.
//
//   f32[2,3]{1,0}          array with a minor-to-major layout
//   f32[4,<=4]             bounded dynamic second dimension
//   f32[?,784]             unbounded dimension
//   f32[4]{0:S(5)}         memory space 5 (pinned host)
//   f32[2,3,4]{0,1,2:T(2,128)}   tiled layout
//   ((f32[10]{0}), s32[])  nested tuple;  ()  the empty tuple
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/hlo/lexer.h"

namespace tileprof::hlo {

enum class PrimitiveType : uint8_t {
  kInvalid,
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kF8E5M2,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E5M2FNUZ,
  kF8E4M3FNUZ,
  kF8E3M4,
  kF8E8M0FNU,
  kF4E2M1FN,
  kF6E2M3FN,
  kF6E3M2FN,
  kToken,
  kOpaque,
  kTuple,  // never printed as a word: tuples print as "(...)"
};

// "f32", "bf16", "pred", "token", ...
std::string_view PrimitiveTypeName(PrimitiveType type);
// The element type spelled `name`, or nullopt (also for "tuple").
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);

bool IsFloatingPointType(PrimitiveType type);    // f16, bf16, f32, f64, all f8/f6/f4
bool IsComplexType(PrimitiveType type);          // c64, c128
bool IsSignedIntegerType(PrimitiveType type);    // s1..s64
bool IsUnsignedIntegerType(PrimitiveType type);  // u1..u64
// Bits per element (pred: 8, c64: 64); 0 for token, opaque and tuple.
int BitWidth(PrimitiveType type);

// Value of Shape::dimensions for `?`.
inline constexpr int64_t kUnboundedSize = -1;

// A layout's minor-to-major order plus the extensions after ':'. The
// extensions are kept as text without spaces ("T(8,128)(2,1)S(1)"), so
// every extension XLA has or will add survives a round trip; the common ones
// are also decoded.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::string extensions;

  // Decoded from `extensions`. Tile dimension -1 stands for '*'.
  std::vector<std::vector<int64_t>> tiles;
  int64_t memory_space = 0;          // S(n)
  int64_t element_size_in_bits = 0;  // E(n)

  bool operator==(const Layout& other) const {
    return minor_to_major == other.minor_to_major && extensions == other.extensions;
  }
};

struct Shape {
  PrimitiveType element_type = PrimitiveType::kInvalid;
  // Arrays: one entry per dimension; kUnboundedSize for '?'.
  std::vector<int64_t> dimensions;
  // Arrays: true where the dimension is dynamic ('<=N' or '?').
  std::vector<bool> dynamic_dimensions;
  // Whether a layout was written. Dumps always print one for rank >= 1;
  // hand-written tests and program shapes often omit it.
  bool has_layout = false;
  Layout layout;
  // Tuples: the element shapes.
  std::vector<Shape> tuple_shapes;

  bool IsTuple() const { return element_type == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type == PrimitiveType::kToken; }
  bool IsArray() const {
    return !IsTuple() && !IsToken() && element_type != PrimitiveType::kOpaque &&
           element_type != PrimitiveType::kInvalid;
  }
  int64_t rank() const { return static_cast<int64_t>(dimensions.size()); }

  // Elements of an array (bounds for dynamic dimensions, 1 for a scalar),
  // or nullopt on overflow or an unbounded dimension.
  std::optional<int64_t> ElementCount() const;
  // Bytes of an array or, summed, of a tuple's leaves (bits rounded up to
  // bytes per array); nullopt on overflow or an unbounded dimension.
  std::optional<int64_t> ByteSize() const;

  // Structural equality, layouts included (a missing layout differs from a
  // written one, so printing keeps what the text said).
  bool operator==(const Shape& other) const;
  // Equality of element types and dimensions, ignoring layouts: what a
  // declared operand shape in the legacy style must agree with.
  bool CompatibleWith(const Shape& other) const;
};

struct ShapeParseLimits {
  int max_depth = 64;      // tuple nesting
  int64_t max_rank = 256;  // dimensions per array
};

// Parses one shape starting at the lexer's next token and leaves the lexer
// just after it. A '{' after an array is a layout only when followed by an
// integer, '}' or ':', so that `-> f32[2] {` in a computation header leaves
// the body's brace alone.
bool ParseShape(Lexer& lexer, const ShapeParseLimits& limits, Shape* shape, ParseFailure* failure);

// Finds where a shape that starts at the lexer's next token ends, without
// decoding it (the parser interns shapes by their text and only decodes text
// it has not seen). On success the lexer is just after the shape and
// *end_offset is the byte offset after its last token.
bool ScanShape(Lexer& lexer, int max_depth, uint32_t* end_offset, ParseFailure* failure);

// Parses a whole string as one shape: "f32[2,3]{1,0}". Errors say
// "col N: message".
Expected<Shape> ParseShapeText(std::string_view text);

struct ShapePrintOptions {
  bool print_layout = true;
  // "/*index=N*/" before every 5th tuple element, as XLA's long style does.
  bool index_comments = false;
};

void AppendShape(std::string* out, const Shape& shape, const ShapePrintOptions& options = {});
std::string ShapeToString(const Shape& shape, const ShapePrintOptions& options = {});

// Whether a word followed by '[' starts an array shape (a known element type).
inline bool IsShapeStart(const Token& token, const Token& next) {
  return token.kind == TokKind::kIdent && !token.percent && next.kind == TokKind::kLsquare &&
         PrimitiveTypeFromName(token.text).has_value();
}

}  // namespace tileprof::hlo
