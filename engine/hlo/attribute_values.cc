// Typed attribute payloads other than sharding; see attributes.h and
// ../shared/spec/hlo-text.md section 6.
#include <cctype>
#include <cstring>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "engine/hlo/attributes.h"
#include "engine/hlo/value_parser.h"

namespace tileprof::hlo {

using internal::FailureToError;
using internal::ValueParser;

namespace {

bool IsWordStart(TokKind kind) {
  switch (kind) {
    case TokKind::kIdent:
    case TokKind::kAttrName:
    case TokKind::kNameColon:
    case TokKind::kInt:
    case TokKind::kFloat:
    case TokKind::kNumberWord:
    case TokKind::kString:
      return true;
    default:
      return false;
  }
}

bool IsWordEnd(TokKind kind) {
  switch (kind) {
    case TokKind::kIdent:
    case TokKind::kInt:
    case TokKind::kFloat:
    case TokKind::kNumberWord:
    case TokKind::kString:
      return true;
    default:
      return false;
  }
}

// Splits "3x3" / "0_1" style words: every part must be an integer.
bool SplitInts(std::string_view word, char separator, std::vector<int64_t>* parts) {
  size_t begin = 0;
  while (true) {
    size_t end = word.find(separator, begin);
    std::string_view part = word.substr(begin, end == std::string_view::npos ? end : end - begin);
    int64_t value = 0;
    if (part.empty() || !ValueParser::ToInt(part, &value)) return false;
    parts->push_back(value);
    if (end == std::string_view::npos) return true;
    begin = end + 1;
  }
}

bool ParseIntListText(std::string_view value, std::vector<int64_t>* out, ParseFailure* failure) {
  ValueParser parser(value, failure);
  return parser.ParseIntList(out, "in integer list") && parser.ExpectEnd();
}

bool ParseIntListListText(std::string_view value, std::vector<std::vector<int64_t>>* out,
                          ParseFailure* failure) {
  ValueParser parser(value, failure);
  if (!parser.Expect(TokKind::kLbrace, "to open a list of lists")) return false;
  if (parser.Peek().kind == TokKind::kRbrace) {
    parser.Next();
    return parser.ExpectEnd();
  }
  while (true) {
    out->emplace_back();
    if (!parser.ParseIntList(&out->back(), "in list of lists")) return false;
    Token separator = parser.Next();
    if (separator.kind == TokKind::kRbrace) return parser.ExpectEnd();
    if (separator.kind != TokKind::kComma)
      return parser.Fail(
          separator, "expected ',' or '}' between lists, got " + ValueParser::Describe(separator));
  }
}

bool ParseBoolToken(ValueParser& parser, bool* value) {
  Token token = parser.Next();
  if (token.kind == TokKind::kIdent && (token.text == "true" || token.text == "false")) {
    *value = token.text == "true";
    return true;
  }
  return parser.Fail(token, "expected true or false, got " + ValueParser::Describe(token));
}

bool ParseWindowText(std::string_view value, std::vector<WindowDimension>* out,
                     ParseFailure* failure) {
  ValueParser parser(value, failure);
  if (!parser.Expect(TokKind::kLbrace, "to open a window")) return false;
  static constexpr std::string_view kFields[] = {"size",       "stride",     "pad",
                                                 "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  unsigned seen = 0;
  int64_t rank = -1;
  while (true) {
    Token key = parser.Next();
    if (key.kind == TokKind::kRbrace) break;
    if (key.kind != TokKind::kAttrName)
      return parser.Fail(
          key, "expected a window field such as size=, got " + ValueParser::Describe(key));
    size_t field =
        std::find(std::begin(kFields), std::end(kFields), key.text) - std::begin(kFields);
    if (field == std::size(kFields))
      return parser.Fail(key, "unknown window field '" + std::string(key.text) + "'");
    if (seen & (1u << field))
      return parser.Fail(key, "window field '" + std::string(key.text) + "' given twice");
    seen |= 1u << field;
    Token word = parser.Next();
    if (word.kind != TokKind::kInt && word.kind != TokKind::kNumberWord)
      return parser.Fail(word, "expected per-dimension values for " + std::string(key.text) +
                                   ", got " + ValueParser::Describe(word));
    std::vector<int64_t> values;
    std::vector<std::vector<int64_t>> pads;
    if (key.text == "pad") {
      size_t begin = 0;
      while (true) {
        size_t end = word.text.find('x', begin);
        std::string_view dim =
            word.text.substr(begin, end == std::string_view::npos ? end : end - begin);
        pads.emplace_back();
        if (!SplitInts(dim, '_', &pads.back()) || pads.back().size() != 2)
          return parser.Fail(word, "window padding must be low_high per dimension, got '" +
                                       std::string(word.text) + "'");
        if (end == std::string_view::npos) break;
        begin = end + 1;
      }
    } else if (!SplitInts(word.text, 'x', &values)) {
      return parser.Fail(word, "expected numbers separated by 'x' for " + std::string(key.text) +
                                   ", got '" + std::string(word.text) + "'");
    }
    int64_t count =
        key.text == "pad" ? static_cast<int64_t>(pads.size()) : static_cast<int64_t>(values.size());
    if (rank < 0) {
      rank = count;
      out->assign(rank, WindowDimension{});
    } else if (count != rank) {
      return parser.Fail(word, "window field " + std::string(key.text) + " has " +
                                   std::to_string(count) + " dimensions, expected " +
                                   std::to_string(rank));
    }
    for (int64_t i = 0; i < rank; ++i) {
      WindowDimension& dim = (*out)[i];
      if (key.text == "size")
        dim.size = values[i];
      else if (key.text == "stride")
        dim.stride = values[i];
      else if (key.text == "pad") {
        dim.padding_low = pads[i][0];
        dim.padding_high = pads[i][1];
      } else if (key.text == "lhs_dilate")
        dim.base_dilation = values[i];
      else if (key.text == "rhs_dilate")
        dim.window_dilation = values[i];
      else if (key.text == "rhs_reversal")
        dim.window_reversal = values[i] != 0;
      else
        return parser.Fail(key, "unknown window field '" + std::string(key.text) + "'");
    }
  }
  if (seen != 0 && !(seen & 1u)) return parser.Fail(Token{}, "window has no size=");
  return parser.ExpectEnd();
}

// One part of dim_labels ("b01f"): positions of the letters and of each
// spatial digit, which must be 0..n-1 exactly once.
bool DecodeLabels(std::string_view labels, char first, char second, int64_t* first_pos,
                  int64_t* second_pos, std::vector<int64_t>* spatial, std::string* error) {
  *first_pos = *second_pos = -1;
  std::vector<int64_t> by_digit(labels.size(), -1);
  size_t digits = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    char c = labels[i];
    if (c == first && *first_pos < 0) {
      *first_pos = static_cast<int64_t>(i);
    } else if (c == second && *second_pos < 0) {
      *second_pos = static_cast<int64_t>(i);
    } else if (IsDigit(c) && static_cast<size_t>(c - '0') < labels.size() &&
               by_digit[c - '0'] < 0) {
      by_digit[c - '0'] = static_cast<int64_t>(i);
      ++digits;
    } else {
      *error =
          "unexpected or repeated '" + std::string(1, c) + "' in '" + std::string(labels) + "'";
      return false;
    }
  }
  if (*first_pos < 0 || *second_pos < 0) {
    *error = "'" + std::string(labels) + "' needs one '" + first + "' and one '" + second + "'";
    return false;
  }
  for (size_t d = 0; d < digits; ++d) {
    if (by_digit[d] < 0) {
      *error = "spatial dimensions of '" + std::string(labels) + "' are not 0.." +
               std::to_string(digits - 1);
      return false;
    }
    spatial->push_back(by_digit[d]);
  }
  return true;
}

bool ParseDimLabelsText(std::string_view value, ConvolutionDimensions* out, ParseFailure* failure) {
  size_t underscore = value.find('_');
  size_t arrow = value.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos ||
      arrow < underscore) {
    failure->offset = 0;
    failure->message =
        "dim_labels must look like b01f_01io->b01f, got '" + std::string(value.substr(0, 60)) + "'";
    return false;
  }
  std::string error;
  std::string_view input = value.substr(0, underscore);
  std::string_view kernel = value.substr(underscore + 1, arrow - underscore - 1);
  std::string_view output = value.substr(arrow + 2);
  uint32_t at = 0;
  bool ok = DecodeLabels(input, 'b', 'f', &out->input_batch, &out->input_feature,
                         &out->input_spatial, &error);
  if (ok) {
    at = static_cast<uint32_t>(underscore + 1);
    ok = DecodeLabels(kernel, 'i', 'o', &out->kernel_input_feature, &out->kernel_output_feature,
                      &out->kernel_spatial, &error);
  }
  if (ok) {
    at = static_cast<uint32_t>(arrow + 2);
    ok = DecodeLabels(output, 'b', 'f', &out->output_batch, &out->output_feature,
                      &out->output_spatial, &error);
  }
  if (ok && (out->kernel_spatial.size() != out->input_spatial.size() ||
             out->output_spatial.size() != out->input_spatial.size())) {
    ok = false;
    error = "input, kernel and output of dim_labels have different numbers of spatial dimensions";
  }
  if (!ok) {
    failure->offset = at;
    failure->message = error;
  }
  return ok;
}

bool ParseSliceText(std::string_view value, std::vector<SliceDimension>* out,
                    ParseFailure* failure) {
  ValueParser parser(value, failure);
  if (!parser.Expect(TokKind::kLbrace, "to open a slice")) return false;
  if (parser.Peek().kind == TokKind::kRbrace) {
    parser.Next();
    return parser.ExpectEnd();
  }
  while (true) {
    if (!parser.Expect(TokKind::kLsquare, "to open a slice dimension")) return false;
    SliceDimension dim;
    if (!parser.ParseInt(&dim.start, "as slice start")) return false;
    if (!parser.Expect(TokKind::kColon, "after slice start")) return false;
    if (!parser.ParseInt(&dim.limit, "as slice limit")) return false;
    Token next = parser.Next();
    if (next.kind == TokKind::kColon) {
      if (!parser.ParseInt(&dim.stride, "as slice stride")) return false;
      next = parser.Next();
    }
    if (next.kind != TokKind::kRsquare)
      return parser.Fail(
          next, "expected ']' to close a slice dimension, got " + ValueParser::Describe(next));
    out->push_back(dim);
    Token separator = parser.Next();
    if (separator.kind == TokKind::kRbrace) return parser.ExpectEnd();
    if (separator.kind != TokKind::kComma)
      return parser.Fail(separator,
                         "expected ',' or '}' in slice, got " + ValueParser::Describe(separator));
  }
}

bool ParsePaddingText(std::string_view value, std::vector<PaddingDimension>* out,
                      ParseFailure* failure) {
  ValueParser parser(value, failure);
  Token word = parser.Next();
  if (word.kind != TokKind::kNumberWord && word.kind != TokKind::kInt)
    return parser.Fail(word, "expected padding like 0_0x1_1, got " + ValueParser::Describe(word));
  size_t begin = 0;
  while (true) {
    size_t end = word.text.find('x', begin);
    std::string_view dim =
        word.text.substr(begin, end == std::string_view::npos ? end : end - begin);
    std::vector<int64_t> parts;
    if (!SplitInts(dim, '_', &parts) || parts.size() < 2 || parts.size() > 3)
      return parser.Fail(word, "padding must be low_high[_interior] per dimension, got '" +
                                   std::string(dim) + "'");
    out->push_back({parts[0], parts[1], parts.size() == 3 ? parts[2] : 0});
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return parser.ExpectEnd();
}

// key=value pairs separated by spaces (metadata) or commas (frontend
// attributes), inside braces. Calls `on_entry` for each.
template <typename OnEntry>
bool ParseKeyValues(std::string_view value, bool commas, ParseFailure* failure, OnEntry on_entry) {
  ValueParser parser(value, failure);
  if (!parser.Expect(TokKind::kLbrace, "to open the attribute list")) return false;
  bool first = true;
  while (true) {
    Token key = parser.Next();
    if (key.kind == TokKind::kRbrace) break;
    if (commas && !first) {
      if (key.kind != TokKind::kComma)
        return parser.Fail(key, "expected ',' or '}', got " + ValueParser::Describe(key));
      key = parser.Next();
    }
    first = false;
    std::string_view name;
    if (key.kind == TokKind::kAttrName) {
      name = key.text;
    } else if (key.kind == TokKind::kString && parser.Peek().kind == TokKind::kEqual) {
      name = key.text;  // a quoted key, as some frontends write
      parser.Next();
    } else if (key.kind == TokKind::kIdent && parser.Peek().kind == TokKind::kEqual) {
      name = key.text;
      parser.Next();
    } else {
      return parser.Fail(key, "expected key=value, got " + ValueParser::Describe(key));
    }
    std::string_view raw;
    if (!parser.SkipValue(&raw)) return false;
    if (!on_entry(name, raw, key))
      return parser.Fail(key, "bad value for '" + std::string(name) + "'");
  }
  return parser.ExpectEnd();
}

bool ParseMetadataText(std::string_view value, Metadata* out, ParseFailure* failure) {
  return ParseKeyValues(value, false, failure,
                        [&](std::string_view key, std::string_view raw, const Token&) {
                          if (out == nullptr) return true;
                          out->entries.emplace_back(std::string(key), std::string(raw));
                          auto decode = [&](std::string* field) {
                            Expected<std::string> text = DecodeStringLiteral(raw);
                            if (!text) return false;
                            *field = *text;
                            return true;
                          };
                          if (key == "op_type") return decode(&out->op_type);
                          if (key == "op_name") return decode(&out->op_name);
                          if (key == "source_file") return decode(&out->source_file);
                          if (key == "source_line")
                            return ValueParser::ToInt(raw, &out->source_line);
                          if (key == "stack_frame_id")
                            return ValueParser::ToInt(raw, &out->stack_frame_id);
                          return true;
                        });
}

bool DecodeStringInto(std::string_view token, std::string* out, std::string* error) {
  if (token.size() < 2 || (token[0] != '"' && token[0] != '\'') || token.back() != token[0]) {
    *error = "expected a quoted string";
    return false;
  }
  std::string_view body = token.substr(1, token.size() - 2);
  out->reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i >= body.size()) {
      *error = "string ends with a lone backslash";
      return false;
    }
    c = body[i];
    switch (c) {
      case 'n':
        out->push_back('\n');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 'a':
        out->push_back('\a');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'v':
        out->push_back('\v');
        break;
      case '\\':
      case '"':
      case '\'':
      case '?':
        out->push_back(c);
        break;
      case 'x': {
        int value = 0, digits = 0;
        while (digits < 2 && i + 1 < body.size() &&
               std::isxdigit(static_cast<unsigned char>(body[i + 1]))) {
          char h = body[++i];
          value = value * 16 + (IsDigit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
          ++digits;
        }
        if (digits == 0) {
          *error = "\\x without hex digits";
          return false;
        }
        out->push_back(static_cast<char>(value));
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int value = c - '0', digits = 1;
          while (digits < 3 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7') {
            value = value * 8 + (body[++i] - '0');
            ++digits;
          }
          out->push_back(static_cast<char>(value & 0xff));
        } else {
          *error = std::string("unknown escape '\\") + c + "'";
          return false;
        }
    }
  }
  return true;
}

bool ParseShapeListText(std::string_view value, std::vector<Shape>* out, ParseFailure* failure) {
  ValueParser parser(value, failure);
  if (!parser.Expect(TokKind::kLbrace, "to open a shape list")) return false;
  if (parser.Peek().kind == TokKind::kRbrace) {
    parser.Next();
    return parser.ExpectEnd();
  }
  while (true) {
    out->emplace_back();
    if (!ParseShape(parser.lexer(), ShapeParseLimits{}, &out->back(), failure)) return false;
    Token separator = parser.Next();
    if (separator.kind == TokKind::kRbrace) return parser.ExpectEnd();
    if (separator.kind != TokKind::kComma)
      return parser.Fail(
          separator, "expected ',' or '}' in shape list, got " + ValueParser::Describe(separator));
  }
}

// `{0,1}` inside larger values (shape indices).
bool ParseShapeIndex(ValueParser& parser, std::vector<int64_t>* index) {
  return parser.ParseIntList(index, "in shape index");
}

bool ParseOutputOperandAliasingText(std::string_view value, std::vector<OutputOperandAlias>* out,
                                    ParseFailure* failure) {
  ValueParser parser(value, failure);
  if (!parser.Expect(TokKind::kLbrace, "to open the aliasing list")) return false;
  if (parser.Peek().kind == TokKind::kRbrace) {
    parser.Next();
    return parser.ExpectEnd();
  }
  while (true) {
    OutputOperandAlias alias;
    if (!ParseShapeIndex(parser, &alias.output_index)) return false;
    if (!parser.Expect(TokKind::kColon, "after the output index")) return false;
    if (!parser.Expect(TokKind::kLparen, "before the operand number")) return false;
    if (!parser.ParseInt(&alias.operand, "as operand number")) return false;
    if (!parser.Expect(TokKind::kComma, "after the operand number")) return false;
    if (!ParseShapeIndex(parser, &alias.operand_index)) return false;
    if (!parser.Expect(TokKind::kRparen, "after the operand index")) return false;
    out->push_back(std::move(alias));
    Token separator = parser.Next();
    if (separator.kind == TokKind::kRbrace) return parser.ExpectEnd();
    if (separator.kind != TokKind::kComma)
      return parser.Fail(separator, "expected ',' or '}' in aliasing list, got " +
                                        ValueParser::Describe(separator));
  }
}

bool ParseInputOutputAliasText(std::string_view value, std::vector<InputOutputAlias>* out,
                               ParseFailure* failure) {
  ValueParser parser(value, failure);
  if (!parser.Expect(TokKind::kLbrace, "to open input_output_alias")) return false;
  if (parser.Peek().kind == TokKind::kRbrace) {
    parser.Next();
    return parser.ExpectEnd();
  }
  while (true) {
    InputOutputAlias alias;
    if (!ParseShapeIndex(parser, &alias.output_index)) return false;
    if (!parser.Expect(TokKind::kColon, "after the output index")) return false;
    if (!parser.Expect(TokKind::kLparen, "before the parameter number")) return false;
    if (!parser.ParseInt(&alias.parameter, "as parameter number")) return false;
    if (!parser.Expect(TokKind::kComma, "after the parameter number")) return false;
    if (!ParseShapeIndex(parser, &alias.parameter_index)) return false;
    Token next = parser.Next();
    if (next.kind == TokKind::kComma) {
      Token kind = parser.Next();
      if (kind.kind != TokKind::kIdent || (kind.text != "may-alias" && kind.text != "must-alias"))
        return parser.Fail(kind,
                           "expected may-alias or must-alias, got " + ValueParser::Describe(kind));
      alias.kind = std::string(kind.text);
      next = parser.Next();
    }
    if (next.kind != TokKind::kRparen)
      return parser.Fail(next,
                         "expected ')' to close an alias, got " + ValueParser::Describe(next));
    out->push_back(std::move(alias));
    Token separator = parser.Next();
    if (separator.kind == TokKind::kRbrace) return parser.ExpectEnd();
    if (separator.kind != TokKind::kComma)
      return parser.Fail(separator, "expected ',' or '}' in input_output_alias, got " +
                                        ValueParser::Describe(separator));
  }
}

bool ParseBufferDonorText(std::string_view value, std::vector<BufferDonor>* out,
                          ParseFailure* failure) {
  ValueParser parser(value, failure);
  if (!parser.Expect(TokKind::kLbrace, "to open buffer_donor")) return false;
  if (parser.Peek().kind == TokKind::kRbrace) {
    parser.Next();
    return parser.ExpectEnd();
  }
  while (true) {
    BufferDonor donor;
    if (!parser.Expect(TokKind::kLparen, "before the parameter number")) return false;
    if (!parser.ParseInt(&donor.parameter, "as parameter number")) return false;
    if (!parser.Expect(TokKind::kComma, "after the parameter number")) return false;
    if (!ParseShapeIndex(parser, &donor.parameter_index)) return false;
    if (!parser.Expect(TokKind::kRparen, "to close a buffer donor")) return false;
    out->push_back(std::move(donor));
    Token separator = parser.Next();
    if (separator.kind == TokKind::kRbrace) return parser.ExpectEnd();
    if (separator.kind != TokKind::kComma)
      return parser.Fail(separator, "expected ',' or '}' in buffer_donor, got " +
                                        ValueParser::Describe(separator));
  }
}

bool ParseProgramShapeText(std::string_view value, ProgramShape* out, ParseFailure* failure) {
  ValueParser parser(value, failure);
  if (!parser.Expect(TokKind::kLbrace, "to open the layout")) return false;
  if (!parser.Expect(TokKind::kLparen, "before the parameter shapes")) return false;
  if (parser.Peek().kind == TokKind::kRparen) {
    parser.Next();
  } else {
    while (true) {
      out->parameters.emplace_back();
      if (!ParseShape(parser.lexer(), ShapeParseLimits{}, &out->parameters.back(), failure))
        return false;
      Token separator = parser.Next();
      if (separator.kind == TokKind::kRparen) break;
      if (separator.kind != TokKind::kComma)
        return parser.Fail(separator, "expected ',' or ')' between parameter shapes, got " +
                                          ValueParser::Describe(separator));
    }
  }
  if (!parser.Expect(TokKind::kArrow, "before the result shape")) return false;
  if (!ParseShape(parser.lexer(), ShapeParseLimits{}, &out->result, failure)) return false;
  return parser.Expect(TokKind::kRbrace, "to close the layout") && parser.ExpectEnd();
}

bool ParseScalarText(std::string_view value, TokKind kind, ParseFailure* failure) {
  ValueParser parser(value, failure);
  Token token = parser.Next();
  bool ok = token.kind == kind || (kind == TokKind::kFloat && token.kind == TokKind::kInt);
  if (!ok)
    return parser.Fail(token, "expected " + std::string(TokKindName(kind)) + ", got " +
                                  ValueParser::Describe(token));
  return parser.ExpectEnd();
}

bool ValidateString(std::string_view value, ParseFailure* failure) {
  std::string decoded, error;
  if (DecodeStringInto(value, &decoded, &error)) return true;
  failure->offset = 0;
  failure->message = error;
  return false;
}

bool ValidateBackendConfig(std::string_view value, ParseFailure* failure) {
  if (value.starts_with('{')) {
    ValueParser parser(value, failure);
    std::string_view raw;
    return parser.SkipValue(&raw) && parser.ExpectEnd();
  }
  return ValidateString(value, failure);
}

// How ValidateAttribute checks each known attribute.
enum class Check : uint8_t {
  kIntList,
  kInt,
  kBool,
  kMetadata,
  kWindow,
  kDimLabels,
  kSlice,
  kPadding,
  kSharding,
  kReplicaGroups,
  kIntListList,
  kFloat,
  kString,
  kBackendConfig,
  kFrontendAttributes,
  kShapeList,
  kOutputOperandAliasing,
  kBoolList,
};

const std::unordered_map<std::string_view, Check>& Checks() {
  static const std::unordered_map<std::string_view, Check> kChecks = {
      {"dimensions", Check::kIntList},
      {"lhs_batch_dims", Check::kIntList},
      {"lhs_contracting_dims", Check::kIntList},
      {"rhs_batch_dims", Check::kIntList},
      {"rhs_contracting_dims", Check::kIntList},
      {"slice_sizes", Check::kIntList},
      {"dynamic_slice_sizes", Check::kIntList},
      {"fft_length", Check::kIntList},
      {"offset_dims", Check::kIntList},
      {"collapsed_slice_dims", Check::kIntList},
      {"start_index_map", Check::kIntList},
      {"update_window_dims", Check::kIntList},
      {"inserted_window_dims", Check::kIntList},
      {"scatter_dims_to_operand_dims", Check::kIntList},
      {"operand_batching_dims", Check::kIntList},
      {"start_indices_batching_dims", Check::kIntList},
      {"input_batching_dims", Check::kIntList},
      {"scatter_indices_batching_dims", Check::kIntList},
      {"index", Check::kInt},
      {"iota_dimension", Check::kInt},
      {"feature_index", Check::kInt},
      {"feature_group_count", Check::kInt},
      {"batch_group_count", Check::kInt},
      {"channel_id", Check::kInt},
      {"index_vector_dim", Check::kInt},
      {"exponent_bits", Check::kInt},
      {"mantissa_bits", Check::kInt},
      {"k", Check::kInt},
      {"indices_are_sorted", Check::kBool},
      {"unique_indices", Check::kBool},
      {"is_stable", Check::kBool},
      {"use_global_device_ids", Check::kBool},
      {"custom_call_has_side_effect", Check::kBool},
      {"lower", Check::kBool},
      {"left_side", Check::kBool},
      {"unit_diagonal", Check::kBool},
      {"largest", Check::kBool},
      {"constrain_layout", Check::kBool},
      {"is_host_transfer", Check::kBool},
      {"metadata", Check::kMetadata},
      {"window", Check::kWindow},
      {"dim_labels", Check::kDimLabels},
      {"slice", Check::kSlice},
      {"padding", Check::kPadding},
      {"sharding", Check::kSharding},
      {"replica_groups", Check::kReplicaGroups},
      {"source_target_pairs", Check::kIntListList},
      {"epsilon", Check::kFloat},
      {"custom_call_target", Check::kString},
      {"infeed_config", Check::kString},
      {"outfeed_config", Check::kString},
      {"backend_config", Check::kBackendConfig},
      {"frontend_attributes", Check::kFrontendAttributes},
      {"operand_layout_constraints", Check::kShapeList},
      {"output_to_operand_aliasing", Check::kOutputOperandAliasing},
      {"parameter_replication", Check::kBoolList},
  };
  return kChecks;
}

}  // namespace

std::string NormalizeAttributeValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  Lexer lexer(value);
  TokKind previous = TokKind::kEof;
  std::string_view previous_text;
  while (true) {
    Token token = lexer.Next();
    if (token.kind == TokKind::kEof) break;
    if (token.kind == TokKind::kError) {
      // Not reachable for values of a parsed module; keep the rest verbatim.
      out.append(value.substr(token.offset));
      break;
    }
    // Joined, a stray '%' would become the next name's sigil (and vanish on
    // the next normalisation), and "/ /" or "/ *" would open a comment: the
    // result must lex as the same tokens, or levels are not fixed points.
    const char first = token.text.empty() ? '\0' : token.text.front();
    const bool would_merge = (previous_text == "%" && (IsIdentChar(first) || token.percent)) ||
                             (previous_text == "/" && (first == '/' || first == '*'));
    if ((IsWordEnd(previous) && IsWordStart(token.kind)) || would_merge) out.push_back(' ');
    out.append(token.text);
    if (token.kind == TokKind::kAttrName) out.push_back('=');
    if (token.kind == TokKind::kNameColon) out.push_back(':');
    previous = token.kind;
    previous_text = previous == TokKind::kOther ? token.text : std::string_view();
  }
  return out;
}

Expected<std::string> DecodeStringLiteral(std::string_view token) {
  std::string out, error;
  if (!DecodeStringInto(token, &out, &error)) return Error(error);
  return out;
}

// The typed parsers below share one shape: run the text parser into a fresh
// value and turn a failure into an Error.
template <typename T, typename TextParser>
Expected<T> ParseWith(std::string_view value, TextParser parse) {
  T out;
  ParseFailure failure;
  if (!parse(value, &out, &failure)) return FailureToError(failure);
  return out;
}

Expected<std::vector<int64_t>> ParseIntList(std::string_view value) {
  return ParseWith<std::vector<int64_t>>(value, ParseIntListText);
}

Expected<std::vector<std::vector<int64_t>>> ParseIntListList(std::string_view value) {
  return ParseWith<std::vector<std::vector<int64_t>>>(value, ParseIntListListText);
}

Expected<bool> ParseBool(std::string_view value) {
  ParseFailure failure;
  ValueParser parser(value, &failure);
  bool result = false;
  if (!ParseBoolToken(parser, &result) || !parser.ExpectEnd()) return FailureToError(failure);
  return result;
}

Expected<std::vector<bool>> ParseBoolList(std::string_view value) {
  ParseFailure failure;
  ValueParser parser(value, &failure);
  std::vector<bool> out;
  bool ok = parser.Expect(TokKind::kLbrace, "to open a list");
  if (ok && parser.Peek().kind == TokKind::kRbrace) {
    parser.Next();
  } else {
    while (ok) {
      bool item = false;
      ok = ParseBoolToken(parser, &item);
      if (!ok) break;
      out.push_back(item);
      Token separator = parser.Next();
      if (separator.kind == TokKind::kRbrace) break;
      if (separator.kind != TokKind::kComma)
        ok = parser.Fail(separator, "expected ',' or '}', got " + ValueParser::Describe(separator));
    }
  }
  if (!ok || !parser.ExpectEnd()) return FailureToError(failure);
  return out;
}

Expected<std::vector<WindowDimension>> ParseWindow(std::string_view value) {
  return ParseWith<std::vector<WindowDimension>>(value, ParseWindowText);
}

Expected<ConvolutionDimensions> ParseDimLabels(std::string_view value) {
  return ParseWith<ConvolutionDimensions>(value, ParseDimLabelsText);
}

Expected<std::vector<SliceDimension>> ParseSlice(std::string_view value) {
  return ParseWith<std::vector<SliceDimension>>(value, ParseSliceText);
}

Expected<std::vector<PaddingDimension>> ParsePadding(std::string_view value) {
  return ParseWith<std::vector<PaddingDimension>>(value, ParsePaddingText);
}

Expected<DotDimensions> GetDotDimensions(const Instruction& dot) {
  DotDimensions out;
  struct Field {
    std::string_view name;
    std::vector<int64_t>* target;
  } fields[] = {{"lhs_batch_dims", &out.lhs_batch},
                {"lhs_contracting_dims", &out.lhs_contracting},
                {"rhs_batch_dims", &out.rhs_batch},
                {"rhs_contracting_dims", &out.rhs_contracting}};
  for (const Field& field : fields) {
    if (const Attribute* attribute = dot.FindAttribute(field.name)) {
      TILEPROF_ASSIGN_OR_RETURN(*field.target, ParseIntList(attribute->value()));
    }
  }
  return out;
}

const std::string* Metadata::Find(std::string_view key) const {
  for (const auto& [name, value] : entries)
    if (name == key) return &value;
  return nullptr;
}

Expected<Metadata> ParseMetadata(std::string_view value) {
  return ParseWith<Metadata>(value, ParseMetadataText);
}

Expected<std::vector<std::pair<std::string, std::string>>> ParseFrontendAttributes(
    std::string_view value) {
  std::vector<std::pair<std::string, std::string>> out;
  ParseFailure failure;
  bool ok = ParseKeyValues(value, true, &failure,
                           [&](std::string_view key, std::string_view raw, const Token&) {
                             std::string name(key);
                             if (key.starts_with('"')) {
                               Expected<std::string> decoded = DecodeStringLiteral(key);
                               if (!decoded) return false;
                               name = *decoded;
                             }
                             if (raw.starts_with('"') || raw.starts_with('\'')) {
                               Expected<std::string> decoded = DecodeStringLiteral(raw);
                               if (!decoded) return false;
                               out.emplace_back(std::move(name), *decoded);
                             } else {
                               out.emplace_back(std::move(name), std::string(raw));
                             }
                             return true;
                           });
  if (!ok) return FailureToError(failure);
  return out;
}

Expected<BackendConfig> ParseBackendConfig(std::string_view value) {
  BackendConfig out;
  if (value.starts_with('{')) {
    ParseFailure failure;
    if (!ValidateBackendConfig(value, &failure)) return FailureToError(failure);
    out.bytes = std::string(value);
  } else {
    TILEPROF_ASSIGN_OR_RETURN(out.bytes, DecodeStringLiteral(value));
    out.quoted = true;
  }
  // nlohmann throws on bad input unless asked not to; binary configs are
  // simply not JSON.
  nlohmann::json json = nlohmann::json::parse(out.bytes, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded()) out.json = std::make_shared<const nlohmann::json>(std::move(json));
  return out;
}

Expected<std::vector<OutputOperandAlias>> ParseOutputOperandAliasing(std::string_view value) {
  return ParseWith<std::vector<OutputOperandAlias>>(value, ParseOutputOperandAliasingText);
}

Expected<std::vector<Shape>> ParseShapeList(std::string_view value) {
  return ParseWith<std::vector<Shape>>(value, ParseShapeListText);
}

Expected<CustomCall> GetCustomCall(const Instruction& instruction) {
  CustomCall out;
  for (const Attribute& attribute : instruction.attributes()) {
    std::string_view name = attribute.name();
    std::string_view value = attribute.value();
    if (name == "custom_call_target") {
      TILEPROF_ASSIGN_OR_RETURN(out.target, DecodeStringLiteral(value));
    } else if (name == "api_version") {
      out.api_version = std::string(value);
    } else if (name == "custom_call_has_side_effect") {
      TILEPROF_ASSIGN_OR_RETURN(out.has_side_effect, ParseBool(value));
    } else if (name == "schedule") {
      out.schedule = std::string(value);
    } else if (name == "operand_layout_constraints") {
      TILEPROF_ASSIGN_OR_RETURN(out.operand_layout_constraints, ParseShapeList(value));
    } else if (name == "output_to_operand_aliasing") {
      TILEPROF_ASSIGN_OR_RETURN(out.output_to_operand_aliasing, ParseOutputOperandAliasing(value));
    } else if (name == "backend_config") {
      TILEPROF_ASSIGN_OR_RETURN(out.backend_config, ParseBackendConfig(value));
    }
  }
  for (const Computation* computation : instruction.called_computations())
    out.called_computations.push_back(computation);
  return out;
}

Expected<std::vector<InputOutputAlias>> ParseInputOutputAlias(std::string_view value) {
  return ParseWith<std::vector<InputOutputAlias>>(value, ParseInputOutputAliasText);
}

Expected<std::vector<BufferDonor>> ParseBufferDonor(std::string_view value) {
  return ParseWith<std::vector<BufferDonor>>(value, ParseBufferDonorText);
}

Expected<ProgramShape> ParseProgramShape(std::string_view value) {
  return ParseWith<ProgramShape>(value, ParseProgramShapeText);
}

// Defined in sharding.cc: the non-allocating checks behind ParseSharding and
// ParseReplicaGroups.
namespace internal {
bool ValidateSharding(std::string_view value, ParseFailure* failure);
bool ValidateReplicaGroups(std::string_view value, ParseFailure* failure);
}  // namespace internal

bool ValidateAttribute(std::string_view name, std::string_view value, ParseFailure* failure) {
  const auto& checks = Checks();
  auto it = checks.find(name);
  if (it == checks.end()) return true;
  switch (it->second) {
    case Check::kIntList:
      return ParseIntListText(value, nullptr, failure);
    case Check::kInt:
      return ParseScalarText(value, TokKind::kInt, failure);
    case Check::kBool: {
      ValueParser parser(value, failure);
      bool ignored = false;
      return ParseBoolToken(parser, &ignored) && parser.ExpectEnd();
    }
    case Check::kMetadata:
      return ParseMetadataText(value, nullptr, failure);
    case Check::kWindow: {
      std::vector<WindowDimension> ignored;
      return ParseWindowText(value, &ignored, failure);
    }
    case Check::kDimLabels: {
      ConvolutionDimensions ignored;
      return ParseDimLabelsText(value, &ignored, failure);
    }
    case Check::kSlice: {
      std::vector<SliceDimension> ignored;
      return ParseSliceText(value, &ignored, failure);
    }
    case Check::kPadding: {
      std::vector<PaddingDimension> ignored;
      return ParsePaddingText(value, &ignored, failure);
    }
    case Check::kSharding:
      return internal::ValidateSharding(value, failure);
    case Check::kReplicaGroups:
      return internal::ValidateReplicaGroups(value, failure);
    case Check::kIntListList: {
      std::vector<std::vector<int64_t>> ignored;
      return ParseIntListListText(value, &ignored, failure);
    }
    case Check::kFloat:
      return ParseScalarText(value, TokKind::kFloat, failure);
    case Check::kString:
      return ValidateString(value, failure);
    case Check::kBackendConfig:
      return ValidateBackendConfig(value, failure);
    case Check::kFrontendAttributes:
      return ParseKeyValues(value, true, failure,
                            [](std::string_view, std::string_view, const Token&) { return true; });
    case Check::kShapeList: {
      std::vector<Shape> ignored;
      return ParseShapeListText(value, &ignored, failure);
    }
    case Check::kOutputOperandAliasing: {
      std::vector<OutputOperandAlias> ignored;
      return ParseOutputOperandAliasingText(value, &ignored, failure);
    }
    case Check::kBoolList: {
      auto parsed = ParseBoolList(value);
      if (parsed) return true;
      failure->offset = 0;
      failure->message = parsed.error().message();
      return false;
    }
  }
  return true;
}

bool ValidateModuleAttribute(std::string_view name, std::string_view value, ParseFailure* failure) {
  if (name == "is_scheduled" || name == "alias_passthrough_params") {
    ValueParser parser(value, failure);
    bool ignored = false;
    return ParseBoolToken(parser, &ignored) && parser.ExpectEnd();
  }
  if (name == "replica_count" || name == "num_partitions") {
    ValueParser parser(value, failure);
    int64_t count = 0;
    Token at = parser.Peek();
    if (!parser.ParseInt(&count, "as a count") || !parser.ExpectEnd()) return false;
    if (count < 1) return parser.Fail(at, std::string(name) + " must be at least 1");
    return true;
  }
  if (name == "entry_computation_layout") {
    ProgramShape ignored;
    return ParseProgramShapeText(value, &ignored, failure);
  }
  if (name == "input_output_alias") {
    std::vector<InputOutputAlias> ignored;
    return ParseInputOutputAliasText(value, &ignored, failure);
  }
  if (name == "buffer_donor") {
    std::vector<BufferDonor> ignored;
    return ParseBufferDonorText(value, &ignored, failure);
  }
  if (name.starts_with("allow_spmd_sharding_propagation_to_")) {
    auto parsed = ParseBoolList(value);
    if (parsed) return true;
    failure->offset = 0;
    failure->message = parsed.error().message();
    return false;
  }
  if (name == "frontend_attributes")
    return ParseKeyValues(value, true, failure,
                          [](std::string_view, std::string_view, const Token&) { return true; });
  return true;
}

}  // namespace tileprof::hlo
