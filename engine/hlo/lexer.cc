// The HLO text lexer; see lexer.h and ../shared/spec/hlo-text.md section 2.
#include "engine/hlo/lexer.h"

#include <cstring>

namespace tileprof::hlo {

std::string_view TokKindName(TokKind kind) {
  switch (kind) {
    case TokKind::kEof:
      return "end of input";
    case TokKind::kError:
      return "invalid token";
    case TokKind::kIdent:
      return "identifier";
    case TokKind::kAttrName:
      return "attribute name";
    case TokKind::kNameColon:
      return "'name:'";
    case TokKind::kInt:
      return "integer";
    case TokKind::kFloat:
      return "float";
    case TokKind::kNumberWord:
      return "number";
    case TokKind::kString:
      return "string";
    case TokKind::kLbrace:
      return "'{'";
    case TokKind::kRbrace:
      return "'}'";
    case TokKind::kLparen:
      return "'('";
    case TokKind::kRparen:
      return "')'";
    case TokKind::kLsquare:
      return "'['";
    case TokKind::kRsquare:
      return "']'";
    case TokKind::kComma:
      return "','";
    case TokKind::kEqual:
      return "'='";
    case TokKind::kColon:
      return "':'";
    case TokKind::kArrow:
      return "'->'";
    case TokKind::kLeq:
      return "'<='";
    case TokKind::kEllipsis:
      return "'...'";
    case TokKind::kOther:
      return "character";
  }
  return "token";
}

TokKind ClassifyNumber(std::string_view word) {
  size_t i = 0;
  if (i < word.size() && word[i] == '-') ++i;
  size_t int_begin = i;
  while (i < word.size() && IsDigit(word[i])) ++i;
  size_t int_digits = i - int_begin;
  if (i == word.size()) return int_digits > 0 ? TokKind::kInt : TokKind::kNumberWord;
  bool has_dot = false;
  size_t frac_digits = 0;
  if (word[i] == '.') {
    has_dot = true;
    ++i;
    size_t frac_begin = i;
    while (i < word.size() && IsDigit(word[i])) ++i;
    frac_digits = i - frac_begin;
  }
  if (int_digits + frac_digits == 0) return TokKind::kNumberWord;
  bool has_exponent = false;
  if (i < word.size() && (word[i] == 'e' || word[i] == 'E')) {
    ++i;
    if (i < word.size() && (word[i] == '+' || word[i] == '-')) ++i;
    size_t exp_begin = i;
    while (i < word.size() && IsDigit(word[i])) ++i;
    if (i == exp_begin) return TokKind::kNumberWord;
    has_exponent = true;
  }
  if (i != word.size() || !(has_dot || has_exponent)) return TokKind::kNumberWord;
  return TokKind::kFloat;
}

Token Lexer::Make(TokKind kind, size_t begin, size_t end) {
  pos_ = end;
  Token token;
  token.kind = kind;
  token.offset = static_cast<uint32_t>(begin);
  token.text = source_.substr(begin, end - begin);
  return token;
}

bool Lexer::SkipSpaceAndComments() {
  const size_t n = source_.size();
  const char* s = source_.data();
  while (pos_ < n) {
    char c = s[pos_];
    if (char_class::Is(c, char_class::kSpace)) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < n && s[pos_ + 1] == '*') {
      // Search from pos_ + 2 so that "/*/" does not close itself.
      size_t search = pos_ + 2;
      bool closed = false;
      while (search + 1 < n) {
        const void* star = std::memchr(s + search, '*', n - 1 - search);
        if (star == nullptr) break;
        size_t i = static_cast<const char*>(star) - s;
        if (s[i + 1] == '/') {
          pos_ = i + 2;
          closed = true;
          break;
        }
        search = i + 1;
      }
      if (!closed) return false;  // pos_ stays at the opening "/*"
    } else if (c == '/' && pos_ + 1 < n && s[pos_ + 1] == '/') {
      const void* newline = std::memchr(s + pos_, '\n', n - pos_);
      pos_ = newline == nullptr ? n : static_cast<const char*>(newline) - s + 1;
    } else {
      break;
    }
  }
  return true;
}

Token Lexer::Next() {
  if (!SkipSpaceAndComments()) {
    error_message_ = "unterminated comment: '/*' without '*/'";
    Token token = Make(TokKind::kError, pos_, pos_ + 2);
    pos_ = source_.size();
    return token;
  }
  const size_t n = source_.size();
  if (pos_ >= n) return Make(TokKind::kEof, n, n);
  const char* s = source_.data();
  const size_t begin = pos_;
  const char c = s[begin];
  const char next = begin + 1 < n ? s[begin + 1] : '\0';
  if (IsIdentStart(c)) return LexIdentifier(begin, false);
  if (IsDigit(c)) return LexNumber(begin);
  switch (c) {
    case '{':
      return Make(TokKind::kLbrace, begin, begin + 1);
    case '}':
      return Make(TokKind::kRbrace, begin, begin + 1);
    case '(':
      return Make(TokKind::kLparen, begin, begin + 1);
    case ')':
      return Make(TokKind::kRparen, begin, begin + 1);
    case '[':
      return Make(TokKind::kLsquare, begin, begin + 1);
    case ']':
      return Make(TokKind::kRsquare, begin, begin + 1);
    case ',':
      return Make(TokKind::kComma, begin, begin + 1);
    case '=':
      return Make(TokKind::kEqual, begin, begin + 1);
    case ':':
      return Make(TokKind::kColon, begin, begin + 1);
    case '"':
    case '\'':
      return LexString(begin);
    case '%':
      if (IsIdentStart(next) || IsDigit(next)) return LexIdentifier(begin + 1, true);
      return Make(TokKind::kOther, begin, begin + 1);
    case '<':
      if (next == '=') return Make(TokKind::kLeq, begin, begin + 2);
      return Make(TokKind::kOther, begin, begin + 1);
    case '.':
      if (next == '.' && begin + 2 < n && s[begin + 2] == '.')
        return Make(TokKind::kEllipsis, begin, begin + 3);
      if (IsDigit(next)) return LexNumber(begin);
      return Make(TokKind::kOther, begin, begin + 1);
    case '-':
      if (next == '>') return Make(TokKind::kArrow, begin, begin + 2);
      if (IsDigit(next) || (next == '.' && begin + 2 < n && IsDigit(s[begin + 2])))
        return LexNumber(begin);
      // -inf and -nan are single tokens; `-nan(0x7f)` continues with '('.
      if (begin + 3 < n && (std::memcmp(s + begin + 1, "inf", 3) == 0 ||
                            std::memcmp(s + begin + 1, "nan", 3) == 0)) {
        if (begin + 4 >= n || !IsIdentChar(s[begin + 4]))
          return Make(TokKind::kFloat, begin, begin + 4);
      }
      return Make(TokKind::kOther, begin, begin + 1);
    default:
      break;
  }
  if (c > ' ' && c < 0x7f) return Make(TokKind::kOther, begin, begin + 1);
  error_message_ = "unexpected character outside a string";
  return Make(TokKind::kError, begin, begin + 1);
}

Token Lexer::LexIdentifier(size_t begin, bool percent) {
  const size_t n = source_.size();
  const char* s = source_.data();
  size_t end = begin;
  while (end < n && IsIdentChar(s[end])) ++end;
  Token token;
  if (end < n && s[end] == '=' && !(end + 1 < n && s[end + 1] == '=')) {
    token = Make(TokKind::kAttrName, begin, end);
    pos_ = end + 1;
  } else if (end < n && s[end] == ':') {
    token = Make(TokKind::kNameColon, begin, end);
    pos_ = end + 1;
  } else {
    token = Make(TokKind::kIdent, begin, end);
  }
  token.percent = percent;
  return token;
}

Token Lexer::LexNumber(size_t begin) {
  const size_t n = source_.size();
  const char* s = source_.data();
  size_t end = begin;
  if (s[end] == '-') ++end;
  while (end < n) {
    char c = s[end];
    if (char_class::Is(c, char_class::kWord)) {
      // "1..." would swallow an ellipsis; stop before it.
      if (c == '.' && end + 1 < n && s[end + 1] == '.') break;
      ++end;
    } else if ((c == '-' || c == '+') && end > begin &&
               (s[end - 1] == 'e' || s[end - 1] == 'E' || s[end - 1] == '_' || s[end - 1] == 'x')) {
      ++end;
    } else {
      break;
    }
  }
  Token token = Make(TokKind::kNumberWord, begin, end);
  token.kind = ClassifyNumber(token.text);
  return token;
}

Token Lexer::LexString(size_t begin) {
  const size_t n = source_.size();
  const char* s = source_.data();
  const char quote = s[begin];
  size_t i = begin + 1;
  while (i < n) {
    // Jump to the next quote; it closes the string unless an odd number of
    // backslashes precede it.
    const void* hit = std::memchr(s + i, quote, n - i);
    if (hit == nullptr) break;
    size_t at = static_cast<const char*>(hit) - s;
    size_t slashes = 0;
    while (at - slashes > i && s[at - slashes - 1] == '\\') ++slashes;
    if (slashes % 2 == 0) return Make(TokKind::kString, begin, at + 1);
    i = at + 1;
  }
  error_message_ = "unterminated string";
  Token token = Make(TokKind::kError, begin, begin + 1);
  pos_ = n;
  return token;
}

namespace {

TokKind CloserOf(TokKind open) {
  switch (open) {
    case TokKind::kLbrace:
      return TokKind::kRbrace;
    case TokKind::kLparen:
      return TokKind::kRparen;
    default:
      return TokKind::kRsquare;
  }
}

bool IsOpener(TokKind kind) {
  return kind == TokKind::kLbrace || kind == TokKind::kLparen || kind == TokKind::kLsquare;
}

bool IsCloser(TokKind kind) {
  return kind == TokKind::kRbrace || kind == TokKind::kRparen || kind == TokKind::kRsquare;
}

}  // namespace

bool SkipBalanced(Lexer& lexer, const Token& open, int max_depth, Token* close,
                  ParseFailure* failure) {
  // An explicit stack instead of recursion: depth is bounded by max_depth,
  // never by the C++ stack.
  std::string expected;
  expected.push_back(static_cast<char>(CloserOf(open.kind)));
  while (true) {
    Token token = lexer.Next();
    if (token.kind == TokKind::kError) {
      failure->offset = token.offset;
      failure->message = std::string(lexer.error_message());
      return false;
    }
    if (token.kind == TokKind::kEof) {
      failure->offset = open.offset;
      failure->message = "unbalanced '" + std::string(open.text) + "': no matching '" +
                         std::string(TokKindName(CloserOf(open.kind))).substr(1, 1) +
                         "' before the end of input";
      return false;
    }
    if (IsOpener(token.kind)) {
      if (static_cast<int>(expected.size()) >= max_depth) {
        failure->offset = token.offset;
        failure->message = "brackets nested deeper than " + std::to_string(max_depth) + " levels";
        return false;
      }
      expected.push_back(static_cast<char>(CloserOf(token.kind)));
    } else if (IsCloser(token.kind)) {
      if (static_cast<char>(token.kind) != expected.back()) {
        failure->offset = token.offset;
        failure->message =
            "unbalanced brackets: found " + std::string(TokKindName(token.kind)) + " where " +
            std::string(TokKindName(static_cast<TokKind>(expected.back()))) + " was expected";
        return false;
      }
      expected.pop_back();
      if (expected.empty()) {
        *close = token;
        return true;
      }
    }
  }
}

namespace {

// Skips whitespace and comments from `pos`; false on an unterminated comment.
bool FastSkipSpace(std::string_view text, size_t* pos) {
  const size_t n = text.size();
  size_t i = *pos;
  while (i < n) {
    char c = text[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      size_t close = text.find("*/", i + 2);
      if (close == std::string_view::npos) return false;
      i = close + 2;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      size_t newline = text.find('\n', i);
      i = newline == std::string_view::npos ? n : newline + 1;
    } else {
      break;
    }
  }
  *pos = i;
  return true;
}

}  // namespace

bool FastSkipBalanced(std::string_view text, size_t open, int max_depth, size_t* close) {
  char expected[256];
  if (max_depth > 256) max_depth = 256;
  int depth = 0;
  const size_t n = text.size();
  for (size_t i = open; i < n;) {
    while (i < n && !char_class::Is(text[i], char_class::kSpecial)) ++i;
    if (i >= n) break;
    char c = text[i];
    switch (c) {
      case '{':
      case '(':
      case '[':
        if (depth >= max_depth) return false;
        expected[depth++] = c == '{' ? '}' : c == '(' ? ')' : ']';
        ++i;
        break;
      case '}':
      case ')':
      case ']':
        if (depth == 0 || expected[depth - 1] != c) return false;
        if (--depth == 0) {
          *close = i;
          return true;
        }
        ++i;
        break;
      case '"':
      case '\'': {
        size_t j = i + 1;
        while (true) {
          const void* hit = std::memchr(text.data() + j, c, j < n ? n - j : 0);
          if (hit == nullptr) return false;
          size_t quote = static_cast<const char*>(hit) - text.data();
          // The quote is escaped when an odd number of backslashes precede it.
          size_t slashes = 0;
          while (quote - slashes > j && text[quote - slashes - 1] == '\\') ++slashes;
          if (slashes % 2 == 0) {
            j = quote;
            break;
          }
          j = quote + 1;
        }
        i = j + 1;
        break;
      }
      case '/':
        if (i + 1 < n && (text[i + 1] == '*' || text[i + 1] == '/')) {
          if (!FastSkipSpace(text, &i)) return false;
        } else {
          ++i;
        }
        break;
      default:
        // A byte the lexer rejects outside strings: let it report it.
        return false;
    }
  }
  return false;
}

bool FastScanShape(std::string_view text, size_t begin, int max_depth, size_t* end) {
  const size_t n = text.size();
  if (begin >= n) return false;
  size_t close = 0;
  if (text[begin] == '(') {
    if (!FastSkipBalanced(text, begin, max_depth, &close)) return false;
    *end = close + 1;
    return true;
  }
  if (!IsIdentStart(text[begin])) return false;
  size_t i = begin;
  while (i < n && IsIdentChar(text[i])) ++i;
  // "f32[" never has '=' or ':' after the word (those would be other tokens).
  if (!FastSkipSpace(text, &i) || i >= n || text[i] != '[') return false;
  if (!FastSkipBalanced(text, i, max_depth, &close)) return false;
  *end = close + 1;
  // A layout follows when '{' is followed by an integer, '}' or ':', as in
  // ScanShape; otherwise the brace is the computation body.
  size_t j = close + 1;
  if (!FastSkipSpace(text, &j)) return false;
  if (j < n && text[j] == '{') {
    size_t k = j + 1;
    if (!FastSkipSpace(text, &k) || k >= n) return false;
    char c = text[k];
    bool integer = IsDigit(c) || (c == '-' && k + 1 < n && IsDigit(text[k + 1]));
    if (integer) {
      // ScanShape asks for an integer token: "0x1" or "1e5" are not.
      size_t m = k + 1;
      while (m < n && (IsDigit(text[m]) || IsIdentStart(text[m]) || text[m] == '.')) {
        if (!IsDigit(text[m])) return false;
        ++m;
      }
    }
    if (integer || c == '}' || c == ':') {
      if (!FastSkipBalanced(text, j, max_depth, &close)) return false;
      *end = close + 1;
    }
  }
  return true;
}

}  // namespace tileprof::hlo
