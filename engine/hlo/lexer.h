// The HLO text lexer (../shared/spec/hlo-text.md section 2). It walks a
// string_view and hands out tokens that are views into it: no token ever
// allocates. Whitespace and comments (`/* ... */`, `// ...` to end of line)
// are skipped, so `/*index=5*/` annotations, FileCheck lines and `// -----`
// split markers never reach the parser.
//
// Number-like words are lexed generously and classified afterwards, because
// several attribute payloads look like numbers with letters in them:
//   3x3         window sizes (kNumberWord)
//   0_1x1_1     padding low_high[_interior] per dimension (kNumberWord)
//   0x7f        a NaN payload (kNumberWord)
//   1.5e-3      kFloat;  -2  kInt
// Payloads are kept as raw text and decoded by the typed parsers in
// attributes.h, so the lexer only has to find where a value ends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tileprof::hlo {

enum class TokKind : uint8_t {
  kEof,         // end of input
  kError,       // lexical error; Lexer::error_message() says which
  kIdent,       // [a-zA-Z_][a-zA-Z0-9_.-]*, optionally after '%' (text without '%')
  kAttrName,    // an identifier immediately followed by '=' (text without '=')
  kNameColon,   // an identifier immediately followed by ':' (text without ':')
  kInt,         // -?[0-9]+
  kFloat,       // -?(d+.d*|d*.d+|d+)([eE][+-]?d+)? with '.' or exponent; -inf, -nan
  kNumberWord,  // any other word that starts like a number: 3x3, 1_2x0_0, 0x7f
  kString,      // "..." or '...' with C escapes (text includes the quotes)
  kLbrace,      // {
  kRbrace,      // }
  kLparen,      // (
  kRparen,      // )
  kLsquare,     // [
  kRsquare,     // ]
  kComma,       // ,
  kEqual,       // =
  kColon,       // :
  kArrow,       // ->
  kLeq,         // <=
  kEllipsis,    // ...
  kOther,       // any other printable character: * # + ~ @ > < ! ? ...
};

// A name for messages: "identifier", "'{'", "end of input".
std::string_view TokKindName(TokKind kind);

struct Token {
  TokKind kind = TokKind::kEof;
  bool percent = false;  // kIdent/kAttrName/kNameColon written with a leading '%'
  uint32_t offset = 0;   // byte offset of the token's first character
  std::string_view text;
};

class Lexer {
 public:
  // Lexes `source` from byte `start`. Sources are limited to 4 GiB - 1 so
  // that offsets fit 32 bits (the parser checks before lexing).
  explicit Lexer(std::string_view source, size_t start = 0) : source_(source), pos_(start) {}

  // Returns the next token and advances past it. At the end it keeps
  // returning kEof.
  Token Next();

  // Returns the token Next() would return, without advancing.
  Token Peek() const {
    Lexer copy = *this;
    return copy.Next();
  }

  // Byte offset just past the last token returned.
  size_t position() const { return pos_; }
  std::string_view source() const { return source_; }

  // For a kError token: what went wrong ("unterminated string").
  std::string_view error_message() const { return error_message_; }

 private:
  bool SkipSpaceAndComments();  // false on an unterminated comment
  Token Make(TokKind kind, size_t begin, size_t end);
  Token LexNumber(size_t begin);
  Token LexIdentifier(size_t begin, bool percent);
  Token LexString(size_t begin);

  std::string_view source_;
  size_t pos_;
  std::string_view error_message_;
};

// A failure inside a larger text: what went wrong and at which byte offset
// of the source. The parser turns it into "file:line:col: error: ...".
struct ParseFailure {
  uint32_t offset = 0;
  std::string message;
};

// Consumes tokens up to and including the bracket that closes `open` (one of
// '{', '(', '['), checking that brackets nest properly and no deeper than
// `max_depth`. On success *close is the closing token. Lexical errors, a
// mismatched closer and the end of input are failures; the end of input is
// reported at `open` ("unbalanced '{'").
bool SkipBalanced(Lexer& lexer, const Token& open, int max_depth, Token* close,
                  ParseFailure* failure);

// Byte-level versions of SkipBalanced and ScanShape (shape.h) for the hot
// path: they skip whitespace, comments and strings as the lexer does but do
// not build tokens. They return false on anything unusual (an unterminated
// string or comment, a mismatch, too deep, a byte the lexer rejects, the end
// of input); the caller then runs the token-based version, which finds the
// same end on good input and reports the error on bad input.
//   FastSkipBalanced: text[open] is '{', '(' or '['; *close is the offset of
//     its closing bracket.
//   FastScanShape: text[begin] starts a shape; *end is the offset just after it.
bool FastSkipBalanced(std::string_view text, size_t open, int max_depth, size_t* close);
bool FastScanShape(std::string_view text, size_t begin, int max_depth, size_t* end);

// Character classes of the grammar, shared with the typed payload parsers.
// A table lookup per byte: the lexer's loops run over every byte of the text.
namespace char_class {
inline constexpr uint8_t kSpace = 1;       // ' ' \t \n \r \f \v
inline constexpr uint8_t kIdentStart = 2;  // [a-zA-Z_]
inline constexpr uint8_t kIdent = 4;       // [a-zA-Z0-9_.-]
inline constexpr uint8_t kDigit = 8;       // [0-9]
inline constexpr uint8_t kWord = 16;       // [a-zA-Z0-9_.]: number words
inline constexpr uint8_t kSpecial = 32;    // what FastSkipBalanced must look at

struct Table {
  uint8_t bits[256];
  constexpr Table() : bits{} {
    for (int c = 0; c < 256; ++c) {
      uint8_t b = 0;
      bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z', digit = c >= '0' && c <= '9';
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') b |= kSpace;
      if (lower || upper || c == '_') b |= kIdentStart;
      if (lower || upper || digit || c == '_' || c == '.' || c == '-') b |= kIdent;
      if (digit) b |= kDigit;
      if (lower || upper || digit || c == '_' || c == '.') b |= kWord;
      bool printable = c >= 0x20 && c < 0x7f;
      if (c == '{' || c == '}' || c == '(' || c == ')' || c == '[' || c == ']' || c == '"' ||
          c == '\'' || c == '/' || (!printable && !(b & kSpace)))
        b |= kSpecial;
      bits[c] = b;
    }
  }
};
inline constexpr Table kTable;
inline bool Is(char c, uint8_t mask) {
  return (kTable.bits[static_cast<unsigned char>(c)] & mask) != 0;
}
}  // namespace char_class

inline bool IsIdentStart(char c) { return char_class::Is(c, char_class::kIdentStart); }
inline bool IsIdentChar(char c) { return char_class::Is(c, char_class::kIdent); }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Classifies a complete word that starts like a number (see TokKind).
TokKind ClassifyNumber(std::string_view word);

}  // namespace tileprof::hlo
