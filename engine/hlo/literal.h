// Constant literals (../shared/spec/hlo-text.md section 5), decoded against
// the constant's shape:
//
//   s32[] constant(1)                      scalar
//   f32[] constant(-inf)                   inf, -inf, nan, -nan, nan(0x7f)
//   pred[2,2] constant({{false, true}, {true, false}})   nested per dimension
//   c64[] constant((1, 0))                 complex (real, imaginary)
//   (s32[], f32[2]) constant((1, {2, 3}))  tuple
//   bf16[56945,50] constant({...})         elided: the value is unknown
//
// An elided literal stays "value unknown" (Literal::kElided); nothing is ever
// filled in. Dumps also truncate with a trailing "..." inside the braces;
// that counts as elided too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/hlo/lexer.h"
#include "engine/hlo/shape.h"

namespace tileprof::hlo {

struct Literal {
  enum class Kind : uint8_t { kElided, kArray, kTuple };
  Kind kind = Kind::kElided;
  PrimitiveType element_type = PrimitiveType::kInvalid;
  std::vector<int64_t> dimensions;  // of the array, as parsed (bounds for dynamic)

  // Array values in row-major order, in the vector that fits the type:
  std::vector<int64_t> integers;    // pred (0/1) and s1..s64
  std::vector<uint64_t> unsigneds;  // u1..u64
  std::vector<double> reals;        // floating types; real parts of complex
  std::vector<double> imaginaries;  // imaginary parts of complex
  // Tuple elements.
  std::vector<Literal> elements;

  int64_t element_count() const;
  // All array values equal zero / one (false for elided and tuples).
  bool IsAll(int value) const;
  bool operator==(const Literal& other) const;
};

// Decodes `text` (what is between `constant(` and `)`) for `shape`. Errors
// say what and where: "col 7: expected 3 elements in dimension 0, found 2".
Expected<Literal> ParseLiteral(std::string_view text, const Shape& shape);

// The parser's entry point: decodes the literal starting at the lexer's next
// token (an optional leading shape, as very old dumps print, is checked and
// skipped) and leaves the lexer after it.
bool ParseLiteralTokens(Lexer& lexer, const Shape& shape, Literal* literal, ParseFailure* failure);

struct LiteralPrintOptions {
  // Print floating and complex values as "{...}" (normalisation level 4).
  bool elide_floating = false;
};

// Canonical text: shortest round-trip decimals for the element type,
// "{1, 2}" for rank 1, "{ {1, 2}, {3, 4} }" above, "(re, im)" for complex,
// "{...}" for elided values.
void AppendLiteral(std::string* out, const Literal& literal,
                   const LiteralPrintOptions& options = {});
std::string LiteralToString(const Literal& literal, const LiteralPrintOptions& options = {});

// Shortest text that reads back as the same value of `type`: 1 -> "1",
// 0.1f -> "0.1", infinities as "inf"/"-inf", NaN as "nan" or "nan(0x...)".
void AppendFloat(std::string* out, double value, PrimitiveType type);

}  // namespace tileprof::hlo
