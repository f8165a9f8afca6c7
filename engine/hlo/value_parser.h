// Internal to engine/hlo: a small token reader over one attribute value,
// shared by the typed payload decoders (attribute_values.cc, sharding.cc).
// Offsets in failures are relative to the start of the value.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/hlo/lexer.h"

namespace tileprof::hlo::internal {

class ValueParser {
 public:
  explicit ValueParser(std::string_view text, ParseFailure* failure)
      : lexer_(text), failure_(failure) {}

  Token Next() {
    Token token = lexer_.Next();
    if (token.kind == TokKind::kError && failure_->message.empty()) {
      failure_->offset = token.offset;
      failure_->message = std::string(lexer_.error_message());
    }
    return token;
  }
  Token Peek() const { return lexer_.Peek(); }
  Lexer& lexer() { return lexer_; }
  std::string_view text() const { return lexer_.source(); }
  bool failed() const { return !failure_->message.empty(); }

  bool Fail(const Token& at, std::string message) {
    if (failure_->message.empty()) {
      failure_->offset = at.offset;
      failure_->message = std::move(message);
    }
    return false;
  }

  static std::string Describe(const Token& token) {
    if (token.kind == TokKind::kEof) return "end of value";
    return "'" + std::string(token.text.substr(0, 40)) + "'";
  }

  bool Expect(TokKind kind, std::string_view context) {
    Token token = Next();
    if (token.kind == kind) return true;
    return Fail(token, "expected " + std::string(TokKindName(kind)) + " " + std::string(context) +
                           ", got " + Describe(token));
  }

  // The whole value must have been consumed.
  bool ExpectEnd() {
    Token token = Next();
    if (token.kind == TokKind::kEof) return true;
    return Fail(token, "unexpected " + Describe(token) + " after the value");
  }

  static bool ToInt(std::string_view text, int64_t* value) {
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && ptr == text.data() + text.size();
  }

  bool ParseInt(int64_t* value, std::string_view context) {
    Token token = Next();
    if (token.kind == TokKind::kInt && ToInt(token.text, value)) return true;
    return Fail(token, "expected an integer " + std::string(context) + ", got " + Describe(token));
  }

  // '{' [int (',' int)*] '}'; `values` may be null to only check.
  bool ParseIntList(std::vector<int64_t>* values, std::string_view context) {
    if (!Expect(TokKind::kLbrace, context)) return false;
    if (Peek().kind == TokKind::kRbrace) {
      Next();
      return true;
    }
    while (true) {
      int64_t value = 0;
      if (!ParseInt(&value, context)) return false;
      if (values != nullptr) values->push_back(value);
      Token separator = Next();
      if (separator.kind == TokKind::kRbrace) return true;
      if (separator.kind != TokKind::kComma)
        return Fail(separator,
                    "expected ',' or '}' " + std::string(context) + ", got " + Describe(separator));
    }
  }

  // '[' [int (',' int)*] ']'
  bool ParseSquareIntList(std::vector<int64_t>* values, std::string_view context) {
    if (!Expect(TokKind::kLsquare, context)) return false;
    if (Peek().kind == TokKind::kRsquare) {
      Next();
      return true;
    }
    while (true) {
      int64_t value = 0;
      if (!ParseInt(&value, context)) return false;
      values->push_back(value);
      Token separator = Next();
      if (separator.kind == TokKind::kRsquare) return true;
      if (separator.kind != TokKind::kComma)
        return Fail(separator,
                    "expected ',' or ']' " + std::string(context) + ", got " + Describe(separator));
    }
  }

  // One value inside a key=value list: a string, a balanced group or a
  // single token. Returns its text (a view into the value).
  bool SkipValue(std::string_view* raw, int max_depth = 64) {
    Token first = Next();
    if (first.kind == TokKind::kLbrace || first.kind == TokKind::kLparen ||
        first.kind == TokKind::kLsquare) {
      Token close;
      if (!SkipBalanced(lexer_, first, max_depth, &close, failure_)) return false;
      *raw = text().substr(first.offset, close.offset + 1 - first.offset);
      return true;
    }
    if (first.kind == TokKind::kEof || first.kind == TokKind::kError ||
        first.kind == TokKind::kComma || first.kind == TokKind::kRbrace)
      return Fail(first, "expected a value, got " + Describe(first));
    *raw = first.text;
    return true;
  }

 private:
  Lexer lexer_;
  ParseFailure* failure_;
};

// Turns a relative failure into "col N: message".
inline Error FailureToError(const ParseFailure& failure) {
  return Error("col " + std::to_string(failure.offset + 1) + ": " + failure.message);
}

}  // namespace tileprof::hlo::internal
