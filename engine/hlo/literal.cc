// Constant literals: decoding against a shape and canonical printing; see
// literal.h and ../shared/spec/hlo-text.md section 5.
#include "engine/hlo/literal.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

namespace tileprof::hlo {
namespace {

constexpr uint64_t kMantissaMask = (uint64_t{1} << 52) - 1;
constexpr uint64_t kQuietBit = uint64_t{1} << 51;

bool Fail(ParseFailure* failure, uint32_t offset, std::string message) {
  failure->offset = offset;
  failure->message = std::move(message);
  return false;
}

std::string Describe(const Token& token) {
  if (token.kind == TokKind::kEof) return "end of input";
  return "'" + std::string(token.text.substr(0, 40)) + "'";
}

// A NaN carrying `payload` in its mantissa (0 means the default quiet NaN).
double MakeNan(bool negative, uint64_t payload) {
  payload &= kMantissaMask;
  if (payload == 0) payload = kQuietBit;
  uint64_t bits = (uint64_t{0x7ff} << 52) | payload | (negative ? uint64_t{1} << 63 : 0);
  return std::bit_cast<double>(bits);
}

class LiteralParser {
 public:
  LiteralParser(Lexer& lexer, ParseFailure* failure) : lexer_(lexer), failure_(failure) {}

  bool Parse(const Shape& shape, Literal* literal) {
    Token first = lexer_.Peek();
    if (first.kind == TokKind::kIdent) {
      Lexer copy = lexer_;
      copy.Next();
      if (IsShapeStart(first, copy.Peek())) {
        // Very old dumps printed `constant(f32[2] {1, 2})`.
        Shape written;
        uint32_t at = first.offset;
        if (!ParseShape(lexer_, ShapeParseLimits{}, &written, failure_)) return false;
        if (!written.CompatibleWith(shape))
          return Fail(failure_, at,
                      "literal shape " + ShapeToString(written) +
                          " does not match the instruction shape " + ShapeToString(shape));
      }
    }
    return ParseValue(shape, literal);
  }

 private:
  bool ParseValue(const Shape& shape, Literal* literal) {
    literal->element_type = shape.element_type;
    if (IsElided()) {
      literal->kind = Literal::Kind::kElided;
      return true;
    }
    if (shape.IsTuple()) {
      literal->kind = Literal::Kind::kTuple;
      Token open = lexer_.Next();
      if (open.kind != TokKind::kLparen)
        return Fail(failure_, open.offset,
                    "expected '(' to start a tuple literal, got " + Describe(open));
      for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
        if (i > 0) {
          Token comma = lexer_.Next();
          if (comma.kind != TokKind::kComma)
            return Fail(failure_, comma.offset,
                        "expected ',' between tuple literal elements, got " + Describe(comma));
        }
        literal->elements.emplace_back();
        if (!ParseValue(shape.tuple_shapes[i], &literal->elements.back())) return false;
      }
      Token close = lexer_.Next();
      if (close.kind != TokKind::kRparen)
        return Fail(failure_, close.offset,
                    "expected ')' after " + std::to_string(shape.tuple_shapes.size()) +
                        " tuple literal elements, got " + Describe(close));
      return true;
    }
    if (!shape.IsArray())
      return Fail(failure_, lexer_.Peek().offset,
                  "a " + std::string(PrimitiveTypeName(shape.element_type)) +
                      " shape has no literal values");
    literal->kind = Literal::Kind::kArray;
    literal->dimensions = shape.dimensions;
    counts_.assign(shape.dimensions.size(), 0);
    if (!ParseArray(shape, 0, literal)) return false;
    for (size_t i = 0; i < counts_.size(); ++i) literal->dimensions[i] = counts_[i];
    return true;
  }

  // `{...}`, or braces with a "..." anywhere inside (a truncated print):
  // the value is unknown. Consumes the literal when it is elided.
  bool IsElided() {
    Token open = lexer_.Peek();
    if (open.kind != TokKind::kLbrace) return false;
    Lexer scan = lexer_;
    scan.Next();
    int depth = 1;
    bool ellipsis = false;
    while (depth > 0) {
      Token token = scan.Next();
      if (token.kind == TokKind::kEof || token.kind == TokKind::kError) return false;
      if (token.kind == TokKind::kEllipsis) ellipsis = true;
      if (token.kind == TokKind::kLbrace) ++depth;
      if (token.kind == TokKind::kRbrace) --depth;
      // Nesting is bounded by the shape's rank, checked by ParseArray; a
      // deeper elided literal is still just skipped here, iteratively.
    }
    if (!ellipsis) return false;
    lexer_ = scan;
    return true;
  }

  bool ParseArray(const Shape& shape, size_t dim, Literal* literal) {
    if (dim == shape.dimensions.size()) return ParseScalar(shape.element_type, literal);
    Token open = lexer_.Next();
    if (open.kind != TokKind::kLbrace)
      return Fail(failure_, open.offset,
                  "expected '{' for dimension " + std::to_string(dim) + " of " +
                      ShapeToString(shape) + ", got " + Describe(open));
    int64_t count = 0;
    if (lexer_.Peek().kind == TokKind::kRbrace) {
      lexer_.Next();
    } else {
      while (true) {
        if (!ParseArray(shape, dim + 1, literal)) return false;
        ++count;
        Token separator = lexer_.Next();
        if (separator.kind == TokKind::kRbrace) break;
        if (separator.kind != TokKind::kComma)
          return Fail(failure_, separator.offset,
                      "expected ',' or '}' in literal, got " + Describe(separator));
      }
    }
    int64_t expected = shape.dimensions[dim];
    bool ok = shape.dynamic_dimensions[dim] ? (expected == kUnboundedSize || count <= expected)
                                            : count == expected;
    if (!ok)
      return Fail(failure_, open.offset,
                  "expected " + std::to_string(expected) + " elements in dimension " +
                      std::to_string(dim) + " of " + ShapeToString(shape) + ", found " +
                      std::to_string(count));
    counts_[dim] = count;
    return true;
  }

  bool ParseScalar(PrimitiveType type, Literal* literal) {
    if (IsComplexType(type)) {
      Token open = lexer_.Next();
      if (open.kind != TokKind::kLparen)
        return Fail(failure_, open.offset,
                    "expected '(real, imaginary)' for a complex value, got " + Describe(open));
      double real = 0, imaginary = 0;
      if (!ParseFloat(&real)) return false;
      Token comma = lexer_.Next();
      if (comma.kind != TokKind::kComma)
        return Fail(failure_, comma.offset,
                    "expected ',' in complex value, got " + Describe(comma));
      if (!ParseFloat(&imaginary)) return false;
      Token close = lexer_.Next();
      if (close.kind != TokKind::kRparen)
        return Fail(failure_, close.offset,
                    "expected ')' after complex value, got " + Describe(close));
      literal->reals.push_back(real);
      literal->imaginaries.push_back(imaginary);
      return true;
    }
    if (IsFloatingPointType(type)) {
      double value = 0;
      if (!ParseFloat(&value)) return false;
      literal->reals.push_back(value);
      return true;
    }
    Token token = lexer_.Next();
    if (type == PrimitiveType::kPred) {
      if (token.kind == TokKind::kIdent && (token.text == "true" || token.text == "false")) {
        literal->integers.push_back(token.text == "true" ? 1 : 0);
        return true;
      }
      if (token.kind == TokKind::kInt && (token.text == "0" || token.text == "1")) {
        literal->integers.push_back(token.text == "1" ? 1 : 0);
        return true;
      }
      return Fail(failure_, token.offset, "expected true or false, got " + Describe(token));
    }
    int bits = BitWidth(type);
    if (token.kind != TokKind::kInt)
      return Fail(failure_, token.offset,
                  "expected an integer for " + std::string(PrimitiveTypeName(type)) + ", got " +
                      Describe(token));
    const char* begin = token.text.data();
    const char* end = begin + token.text.size();
    if (IsUnsignedIntegerType(type)) {
      uint64_t value = 0;
      auto [ptr, ec] = std::from_chars(begin, end, value);
      uint64_t max = bits >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
      if (ec != std::errc() || ptr != end || value > max)
        return Fail(failure_, token.offset,
                    "value " + std::string(token.text) + " out of range for " +
                        std::string(PrimitiveTypeName(type)));
      literal->unsigneds.push_back(value);
      return true;
    }
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(begin, end, value);
    int64_t max = bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    int64_t min = bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
    if (ec != std::errc() || ptr != end || value > max || value < min)
      return Fail(failure_, token.offset,
                  "value " + std::string(token.text) + " out of range for " +
                      std::string(PrimitiveTypeName(type)));
    literal->integers.push_back(value);
    return true;
  }

  bool ParseFloat(double* value) {
    Token token = lexer_.Next();
    if (token.kind == TokKind::kInt ||
        (token.kind == TokKind::kFloat && token.text != "-inf" && token.text != "-nan")) {
      const char* begin = token.text.data();
      const char* end = begin + token.text.size();
      auto [ptr, ec] = std::from_chars(begin, end, *value);
      // Out-of-range decimals saturate to infinity, as strtod does.
      if (ec == std::errc::result_out_of_range) {
        *value = token.text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
        return true;
      }
      if (ec != std::errc() || ptr != end)
        return Fail(failure_, token.offset, "malformed number " + Describe(token));
      return true;
    }
    bool negative = token.text.starts_with('-');
    std::string_view word = negative ? token.text.substr(1) : token.text;
    if ((token.kind == TokKind::kIdent || token.kind == TokKind::kFloat) && word == "inf") {
      *value = negative ? -HUGE_VAL : HUGE_VAL;
      return true;
    }
    if ((token.kind == TokKind::kIdent || token.kind == TokKind::kFloat) && word == "nan") {
      uint64_t payload = 0;
      if (lexer_.Peek().kind == TokKind::kLparen) {
        lexer_.Next();
        Token hex = lexer_.Next();
        std::string_view digits = hex.text;
        bool ok = digits.size() > 2 && (digits.starts_with("0x") || digits.starts_with("0X"));
        if (ok) {
          auto [ptr, ec] =
              std::from_chars(digits.data() + 2, digits.data() + digits.size(), payload, 16);
          ok = ec == std::errc() && ptr == digits.data() + digits.size();
        }
        if (!ok)
          return Fail(failure_, hex.offset,
                      "expected a hexadecimal NaN payload, got " + Describe(hex));
        Token close = lexer_.Next();
        if (close.kind != TokKind::kRparen)
          return Fail(failure_, close.offset,
                      "expected ')' after NaN payload, got " + Describe(close));
      }
      *value = MakeNan(negative, payload);
      return true;
    }
    return Fail(failure_, token.offset, "expected a number, got " + Describe(token));
  }

  Lexer& lexer_;
  ParseFailure* failure_;
  std::vector<int64_t> counts_;
};

void AppendValue(std::string* out, const Literal& literal, size_t index,
                 const LiteralPrintOptions& options) {
  PrimitiveType type = literal.element_type;
  if (IsComplexType(type)) {
    out->push_back('(');
    AppendFloat(out, literal.reals[index], type);
    out->append(", ");
    AppendFloat(out, literal.imaginaries[index], type);
    out->push_back(')');
  } else if (IsFloatingPointType(type)) {
    AppendFloat(out, literal.reals[index], type);
  } else if (type == PrimitiveType::kPred) {
    out->append(literal.integers[index] != 0 ? "true" : "false");
  } else if (IsUnsignedIntegerType(type)) {
    fmt::format_to(std::back_inserter(*out), "{}", literal.unsigneds[index]);
  } else {
    fmt::format_to(std::back_inserter(*out), "{}", literal.integers[index]);
  }
  (void)options;
}

// Prints dimensions [dim, rank) starting at row-major element `*index`.
void AppendArray(std::string* out, const Literal& literal, size_t dim, size_t* index,
                 const LiteralPrintOptions& options) {
  if (dim == literal.dimensions.size()) {
    AppendValue(out, literal, (*index)++, options);
    return;
  }
  bool spaced = literal.dimensions.size() >= 2;
  int64_t count = literal.dimensions[dim];
  if (count == 0) {
    out->append("{}");
    return;
  }
  out->append(spaced ? "{ " : "{");
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0) out->append(", ");
    AppendArray(out, literal, dim + 1, index, options);
  }
  out->append(spaced ? " }" : "}");
}

bool SameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace

int64_t Literal::element_count() const {
  switch (kind) {
    case Kind::kElided:
      return 0;
    case Kind::kTuple:
      return static_cast<int64_t>(elements.size());
    case Kind::kArray:
      return static_cast<int64_t>(integers.size() + unsigneds.size() + reals.size());
  }
  return 0;
}

bool Literal::IsAll(int value) const {
  if (kind != Kind::kArray) return false;
  for (int64_t v : integers)
    if (v != value) return false;
  for (uint64_t v : unsigneds)
    if (v != static_cast<uint64_t>(value)) return false;
  for (double v : reals)
    if (v != value) return false;
  for (double v : imaginaries)
    if (v != 0) return false;
  return true;
}

bool Literal::operator==(const Literal& other) const {
  return kind == other.kind && element_type == other.element_type &&
         dimensions == other.dimensions && integers == other.integers &&
         unsigneds == other.unsigneds && SameBits(reals, other.reals) &&
         SameBits(imaginaries, other.imaginaries) && elements == other.elements;
}

bool ParseLiteralTokens(Lexer& lexer, const Shape& shape, Literal* literal, ParseFailure* failure) {
  LiteralParser parser(lexer, failure);
  return parser.Parse(shape, literal);
}

Expected<Literal> ParseLiteral(std::string_view text, const Shape& shape) {
  Lexer lexer(text);
  Literal literal;
  ParseFailure failure;
  if (!ParseLiteralTokens(lexer, shape, &literal, &failure))
    return MakeError("col {}: {}", failure.offset + 1, failure.message);
  Token rest = lexer.Next();
  if (rest.kind != TokKind::kEof)
    return MakeError("col {}: unexpected {} after the literal", rest.offset + 1, Describe(rest));
  return literal;
}

void AppendFloat(std::string* out, double value, PrimitiveType type) {
  if (std::isnan(value)) {
    uint64_t bits = std::bit_cast<uint64_t>(value);
    if (bits >> 63) out->push_back('-');
    uint64_t payload = bits & kMantissaMask;
    if (payload == kQuietBit) {
      out->append("nan");
    } else {
      fmt::format_to(std::back_inserter(*out), "nan(0x{:x})", payload);
    }
    return;
  }
  if (std::isinf(value)) {
    out->append(value < 0 ? "-inf" : "inf");
    return;
  }
  if (type == PrimitiveType::kF64 || type == PrimitiveType::kC128) {
    fmt::format_to(std::back_inserter(*out), "{}", value);
  } else {
    // Narrower types: the shortest text of the float nearest the value.
    fmt::format_to(std::back_inserter(*out), "{}", static_cast<float>(value));
  }
}

void AppendLiteral(std::string* out, const Literal& literal, const LiteralPrintOptions& options) {
  switch (literal.kind) {
    case Literal::Kind::kElided:
      out->append("{...}");
      return;
    case Literal::Kind::kTuple:
      out->push_back('(');
      for (size_t i = 0; i < literal.elements.size(); ++i) {
        if (i > 0) out->append(", ");
        AppendLiteral(out, literal.elements[i], options);
      }
      out->push_back(')');
      return;
    case Literal::Kind::kArray:
      if (options.elide_floating &&
          (IsFloatingPointType(literal.element_type) || IsComplexType(literal.element_type))) {
        out->append("{...}");
        return;
      }
      size_t index = 0;
      AppendArray(out, literal, 0, &index, options);
      return;
  }
}

std::string LiteralToString(const Literal& literal, const LiteralPrintOptions& options) {
  std::string out;
  AppendLiteral(&out, literal, options);
  return out;
}

}  // namespace tileprof::hlo
