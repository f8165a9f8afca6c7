// Shapes: element types, parsing and printing; see shape.h.
#include "engine/hlo/shape.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

namespace tileprof::hlo {
namespace {

enum TypeClass : uint8_t { kOther, kFloat, kComplex, kSigned, kUnsigned };

struct TypeInfo {
  std::string_view name;
  PrimitiveType type;
  int bits;
  TypeClass type_class;
};

constexpr std::array<TypeInfo, 35> kTypes = {{
    {"pred", PrimitiveType::kPred, 8, kOther},
    {"s1", PrimitiveType::kS1, 1, kSigned},
    {"s2", PrimitiveType::kS2, 2, kSigned},
    {"s4", PrimitiveType::kS4, 4, kSigned},
    {"s8", PrimitiveType::kS8, 8, kSigned},
    {"s16", PrimitiveType::kS16, 16, kSigned},
    {"s32", PrimitiveType::kS32, 32, kSigned},
    {"s64", PrimitiveType::kS64, 64, kSigned},
    {"u1", PrimitiveType::kU1, 1, kUnsigned},
    {"u2", PrimitiveType::kU2, 2, kUnsigned},
    {"u4", PrimitiveType::kU4, 4, kUnsigned},
    {"u8", PrimitiveType::kU8, 8, kUnsigned},
    {"u16", PrimitiveType::kU16, 16, kUnsigned},
    {"u32", PrimitiveType::kU32, 32, kUnsigned},
    {"u64", PrimitiveType::kU64, 64, kUnsigned},
    {"f16", PrimitiveType::kF16, 16, kFloat},
    {"bf16", PrimitiveType::kBF16, 16, kFloat},
    {"f32", PrimitiveType::kF32, 32, kFloat},
    {"f64", PrimitiveType::kF64, 64, kFloat},
    {"c64", PrimitiveType::kC64, 64, kComplex},
    {"c128", PrimitiveType::kC128, 128, kComplex},
    {"f8e5m2", PrimitiveType::kF8E5M2, 8, kFloat},
    {"f8e4m3", PrimitiveType::kF8E4M3, 8, kFloat},
    {"f8e4m3fn", PrimitiveType::kF8E4M3FN, 8, kFloat},
    {"f8e4m3b11fnuz", PrimitiveType::kF8E4M3B11FNUZ, 8, kFloat},
    {"f8e5m2fnuz", PrimitiveType::kF8E5M2FNUZ, 8, kFloat},
    {"f8e4m3fnuz", PrimitiveType::kF8E4M3FNUZ, 8, kFloat},
    {"f8e3m4", PrimitiveType::kF8E3M4, 8, kFloat},
    {"f8e8m0fnu", PrimitiveType::kF8E8M0FNU, 8, kFloat},
    {"f4e2m1fn", PrimitiveType::kF4E2M1FN, 4, kFloat},
    {"f6e2m3fn", PrimitiveType::kF6E2M3FN, 6, kFloat},
    {"f6e3m2fn", PrimitiveType::kF6E3M2FN, 6, kFloat},
    {"token", PrimitiveType::kToken, 0, kOther},
    {"opaque", PrimitiveType::kOpaque, 0, kOther},
    {"tuple", PrimitiveType::kTuple, 0, kOther},
}};

const TypeInfo* InfoOf(PrimitiveType type) {
  for (const TypeInfo& info : kTypes)
    if (info.type == type) return &info;
  return nullptr;
}

bool Fail(ParseFailure* failure, uint32_t offset, std::string message) {
  failure->offset = offset;
  failure->message = std::move(message);
  return false;
}

std::string Describe(const Token& token) {
  if (token.kind == TokKind::kEof) return "end of input";
  return "'" + std::string(token.text.substr(0, 40)) + "'";
}

bool ParseNonNegative(std::string_view text, int64_t* value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && ptr == text.data() + text.size() && *value >= 0;
}

// Token after the next one, for the layout-or-body decision.
Token PeekSecond(const Lexer& lexer) {
  Lexer copy = lexer;
  copy.Next();
  return copy.Next();
}

// Decodes the extensions after ':' in a layout, up to the closing '}'.
bool ParseLayoutExtensions(Lexer& lexer, int max_depth, Layout* layout, ParseFailure* failure) {
  std::string_view item;       // the current extension letter(s): T, S, E, D, ...
  int group_depth = 0;         // parenthesis depth
  std::vector<int64_t> group;  // integers of the current top-level group
  bool group_numeric = true;
  while (true) {
    Token token = lexer.Next();
    if (token.kind == TokKind::kError)
      return Fail(failure, token.offset, std::string(lexer.error_message()));
    if (token.kind == TokKind::kEof)
      return Fail(failure, token.offset, "unterminated layout: expected '}'");
    if (group_depth == 0 && token.kind == TokKind::kRbrace) return true;
    layout->extensions += token.text;
    if (token.kind == TokKind::kLparen || token.kind == TokKind::kLsquare ||
        token.kind == TokKind::kLbrace) {
      if (++group_depth > max_depth) return Fail(failure, token.offset, "layout nested too deeply");
      if (group_depth == 1) {
        group.clear();
        group_numeric = token.kind == TokKind::kLparen;
      }
      continue;
    }
    if (token.kind == TokKind::kRparen || token.kind == TokKind::kRsquare ||
        token.kind == TokKind::kRbrace) {
      if (group_depth == 0)
        return Fail(failure, token.offset, "unbalanced " + Describe(token) + " in layout");
      if (--group_depth == 0 && group_numeric) {
        if (item == "T") layout->tiles.push_back(group);
        if (item == "S" && group.size() == 1) layout->memory_space = group[0];
        if (item == "E" && group.size() == 1) layout->element_size_in_bits = group[0];
      }
      continue;
    }
    if (group_depth == 0) {
      item = token.text;
      continue;
    }
    if (group_depth == 1) {
      int64_t value = 0;
      if (token.kind == TokKind::kInt && ParseNonNegative(token.text, &value)) {
        group.push_back(value);
      } else if (token.kind == TokKind::kOther && token.text == "*") {
        group.push_back(-1);
      } else if (token.kind != TokKind::kComma) {
        group_numeric = false;
      }
    }
  }
}

bool ParseLayout(Lexer& lexer, const ShapeParseLimits& limits, Layout* layout,
                 ParseFailure* failure) {
  // The '{' is already consumed.
  if (lexer.Peek().kind == TokKind::kRbrace) {
    lexer.Next();
    return true;
  }
  while (true) {
    Token token = lexer.Next();
    if (token.kind == TokKind::kColon)
      return ParseLayoutExtensions(lexer, limits.max_depth, layout, failure);
    int64_t value = 0;
    if (token.kind != TokKind::kInt || !ParseNonNegative(token.text, &value))
      return Fail(failure, token.offset,
                  "expected a dimension number in layout, got " + Describe(token));
    if (static_cast<int64_t>(layout->minor_to_major.size()) >= limits.max_rank)
      return Fail(failure, token.offset,
                  "layout has more than " + std::to_string(limits.max_rank) + " dimensions");
    layout->minor_to_major.push_back(value);
    Token separator = lexer.Next();
    if (separator.kind == TokKind::kRbrace) return true;
    if (separator.kind == TokKind::kColon)
      return ParseLayoutExtensions(lexer, limits.max_depth, layout, failure);
    if (separator.kind != TokKind::kComma)
      return Fail(failure, separator.offset,
                  "expected ',', ':' or '}' in layout, got " + Describe(separator));
  }
}

bool ParseShapeAt(Lexer& lexer, const ShapeParseLimits& limits, int depth, Shape* shape,
                  ParseFailure* failure) {
  Token token = lexer.Next();
  if (token.kind == TokKind::kError)
    return Fail(failure, token.offset, std::string(lexer.error_message()));
  if (token.kind == TokKind::kLparen) {
    if (depth >= limits.max_depth)
      return Fail(
          failure, token.offset,
          "tuple shapes nested deeper than " + std::to_string(limits.max_depth) + " levels");
    shape->element_type = PrimitiveType::kTuple;
    if (lexer.Peek().kind == TokKind::kRparen) {
      lexer.Next();
      return true;
    }
    while (true) {
      Shape element;
      if (!ParseShapeAt(lexer, limits, depth + 1, &element, failure)) return false;
      shape->tuple_shapes.push_back(std::move(element));
      Token separator = lexer.Next();
      if (separator.kind == TokKind::kRparen) return true;
      if (separator.kind != TokKind::kComma)
        return Fail(failure, separator.offset,
                    "expected ',' or ')' in tuple shape, got " + Describe(separator));
    }
  }
  if (token.kind != TokKind::kIdent || token.percent)
    return Fail(failure, token.offset, "expected a shape, got " + Describe(token));
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(token.text);
  if (!type) return Fail(failure, token.offset, "unknown element type " + Describe(token));
  shape->element_type = *type;
  Token open = lexer.Next();
  if (open.kind != TokKind::kLsquare)
    return Fail(failure, open.offset,
                "expected '[' after element type " + Describe(token) + ", got " + Describe(open));
  if (lexer.Peek().kind == TokKind::kRsquare) {
    lexer.Next();
  } else {
    while (true) {
      Token dim = lexer.Next();
      bool dynamic = false;
      int64_t size = 0;
      if (dim.kind == TokKind::kLeq) {
        dynamic = true;
        dim = lexer.Next();
      }
      if (dim.kind == TokKind::kOther && dim.text == "?" && !dynamic) {
        dynamic = true;
        size = kUnboundedSize;
      } else if (dim.kind != TokKind::kInt || !ParseNonNegative(dim.text, &size)) {
        return Fail(failure, dim.offset, "expected a dimension size, got " + Describe(dim));
      }
      if (shape->rank() >= limits.max_rank)
        return Fail(failure, dim.offset,
                    "shape has more than " + std::to_string(limits.max_rank) + " dimensions");
      shape->dimensions.push_back(size);
      shape->dynamic_dimensions.push_back(dynamic);
      Token separator = lexer.Next();
      if (separator.kind == TokKind::kRsquare) break;
      if (separator.kind != TokKind::kComma)
        return Fail(failure, separator.offset,
                    "expected ',' or ']' in dimensions, got " + Describe(separator));
    }
  }
  if ((shape->IsToken() || shape->element_type == PrimitiveType::kOpaque) && shape->rank() != 0)
    return Fail(failure, token.offset, std::string(token.text) + " shapes have no dimensions");
  if (lexer.Peek().kind == TokKind::kLbrace) {
    TokKind after = PeekSecond(lexer).kind;
    if (after == TokKind::kInt || after == TokKind::kRbrace || after == TokKind::kColon) {
      lexer.Next();
      shape->has_layout = true;
      if (!ParseLayout(lexer, limits, &shape->layout, failure)) return false;
      if (!shape->layout.minor_to_major.empty() &&
          static_cast<int64_t>(shape->layout.minor_to_major.size()) != shape->rank())
        return Fail(failure, token.offset,
                    "layout has " + std::to_string(shape->layout.minor_to_major.size()) +
                        " dimensions but the shape has " + std::to_string(shape->rank()));
    }
  }
  return true;
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) {
  const TypeInfo* info = InfoOf(type);
  return info ? info->name : std::string_view("invalid");
}

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  // Short names; a linear scan over 34 entries with a first-letter check is
  // cheaper than hashing.
  if (name.empty() || name.size() > 13) return std::nullopt;
  for (const TypeInfo& info : kTypes)
    if (info.name[0] == name[0] && info.name == name && info.type != PrimitiveType::kTuple)
      return info.type;
  return std::nullopt;
}

bool IsFloatingPointType(PrimitiveType type) {
  const TypeInfo* info = InfoOf(type);
  return info && info->type_class == kFloat;
}
bool IsComplexType(PrimitiveType type) {
  const TypeInfo* info = InfoOf(type);
  return info && info->type_class == kComplex;
}
bool IsSignedIntegerType(PrimitiveType type) {
  const TypeInfo* info = InfoOf(type);
  return info && info->type_class == kSigned;
}
bool IsUnsignedIntegerType(PrimitiveType type) {
  const TypeInfo* info = InfoOf(type);
  return info && info->type_class == kUnsigned;
}
int BitWidth(PrimitiveType type) {
  const TypeInfo* info = InfoOf(type);
  return info ? info->bits : 0;
}

std::optional<int64_t> Shape::ElementCount() const {
  int64_t count = 1;
  for (int64_t dim : dimensions) {
    if (dim < 0) return std::nullopt;
    if (__builtin_mul_overflow(count, dim, &count)) return std::nullopt;
  }
  return count;
}

std::optional<int64_t> Shape::ByteSize() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : tuple_shapes) {
      std::optional<int64_t> size = element.ByteSize();
      if (!size || __builtin_add_overflow(total, *size, &total)) return std::nullopt;
    }
    return total;
  }
  std::optional<int64_t> count = ElementCount();
  if (!count) return std::nullopt;
  int64_t bits = 0;
  if (__builtin_mul_overflow(*count, static_cast<int64_t>(BitWidth(element_type)), &bits))
    return std::nullopt;
  return (bits + 7) / 8;
}

bool Shape::operator==(const Shape& other) const {
  return element_type == other.element_type && dimensions == other.dimensions &&
         dynamic_dimensions == other.dynamic_dimensions && has_layout == other.has_layout &&
         (!has_layout || layout == other.layout) && tuple_shapes == other.tuple_shapes;
}

bool Shape::CompatibleWith(const Shape& other) const {
  if (element_type != other.element_type || dimensions != other.dimensions ||
      tuple_shapes.size() != other.tuple_shapes.size())
    return false;
  for (size_t i = 0; i < tuple_shapes.size(); ++i)
    if (!tuple_shapes[i].CompatibleWith(other.tuple_shapes[i])) return false;
  return true;
}

bool ParseShape(Lexer& lexer, const ShapeParseLimits& limits, Shape* shape, ParseFailure* failure) {
  return ParseShapeAt(lexer, limits, 0, shape, failure);
}

bool ScanShape(Lexer& lexer, int max_depth, uint32_t* end_offset, ParseFailure* failure) {
  Token token = lexer.Next();
  Token close;
  if (token.kind == TokKind::kLparen) {
    if (!SkipBalanced(lexer, token, max_depth, &close, failure)) return false;
    *end_offset = close.offset + 1;
    return true;
  }
  if (token.kind == TokKind::kError)
    return Fail(failure, token.offset, std::string(lexer.error_message()));
  if (token.kind != TokKind::kIdent || token.percent)
    return Fail(failure, token.offset, "expected a shape, got " + Describe(token));
  Token open = lexer.Next();
  if (open.kind != TokKind::kLsquare) {
    if (!PrimitiveTypeFromName(token.text))
      return Fail(failure, token.offset, "expected a shape, got " + Describe(token));
    return Fail(failure, open.offset,
                "expected '[' after element type " + Describe(token) + ", got " + Describe(open));
  }
  if (!SkipBalanced(lexer, open, max_depth, &close, failure)) return false;
  *end_offset = close.offset + 1;
  if (lexer.Peek().kind == TokKind::kLbrace) {
    TokKind after = PeekSecond(lexer).kind;
    if (after == TokKind::kInt || after == TokKind::kRbrace || after == TokKind::kColon) {
      Token brace = lexer.Next();
      if (!SkipBalanced(lexer, brace, max_depth, &close, failure)) return false;
      *end_offset = close.offset + 1;
    }
  }
  return true;
}

Expected<Shape> ParseShapeText(std::string_view text) {
  Lexer lexer(text);
  Shape shape;
  ParseFailure failure;
  if (!ParseShape(lexer, ShapeParseLimits{}, &shape, &failure))
    return MakeError("col {}: {}", failure.offset + 1, failure.message);
  Token rest = lexer.Next();
  if (rest.kind != TokKind::kEof)
    return MakeError("col {}: unexpected {} after the shape", rest.offset + 1, Describe(rest));
  return shape;
}

void AppendShape(std::string* out, const Shape& shape, const ShapePrintOptions& options) {
  char buffer[24];
  auto append_int = [&](int64_t value) {
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out->append(buffer, end);
  };
  if (shape.IsTuple()) {
    out->push_back('(');
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      if (i > 0) out->append(", ");
      if (options.index_comments && i > 0 && i % 5 == 0) {
        out->append("/*index=");
        append_int(static_cast<int64_t>(i));
        out->append("*/");
      }
      AppendShape(out, shape.tuple_shapes[i], options);
    }
    out->push_back(')');
    return;
  }
  out->append(PrimitiveTypeName(shape.element_type));
  out->push_back('[');
  for (size_t i = 0; i < shape.dimensions.size(); ++i) {
    if (i > 0) out->push_back(',');
    if (shape.dimensions[i] == kUnboundedSize) {
      out->push_back('?');
      continue;
    }
    if (shape.dynamic_dimensions[i]) out->append("<=");
    append_int(shape.dimensions[i]);
  }
  out->push_back(']');
  if (options.print_layout && shape.has_layout) {
    out->push_back('{');
    for (size_t i = 0; i < shape.layout.minor_to_major.size(); ++i) {
      if (i > 0) out->push_back(',');
      append_int(shape.layout.minor_to_major[i]);
    }
    if (!shape.layout.extensions.empty()) {
      out->push_back(':');
      out->append(shape.layout.extensions);
    }
    out->push_back('}');
  }
}

std::string ShapeToString(const Shape& shape, const ShapePrintOptions& options) {
  std::string out;
  AppendShape(&out, shape, options);
  return out;
}

}  // namespace tileprof::hlo
