// Sharding and replica-group payloads, including XLA's compact iota form
// ("[2,4]<=[4,2]T(1,0)"); see attributes.h and
// ../shared/spec/hlo-text.md section 6.
#include <numeric>

#include "engine/hlo/attributes.h"
#include "engine/hlo/value_parser.h"

namespace tileprof::hlo {

using internal::FailureToError;
using internal::ValueParser;

namespace {

// Checks an iota tile assignment without materialising it: the reshape
// covers exactly product(dims) devices, at most `max_devices`, and the
// transpose (if any) is a permutation of the reshape's dimensions.
bool CheckIota(const std::vector<int64_t>& dims, const std::vector<int64_t>& reshape,
               const std::vector<int64_t>& transpose, int64_t max_devices, std::string* error) {
  auto product = [](const std::vector<int64_t>& values, int64_t* result) {
    *result = 1;
    for (int64_t v : values)
      if (v < 0 || __builtin_mul_overflow(*result, v, result)) return false;
    return true;
  };
  int64_t total = 0, reshape_total = 0;
  if (!product(dims, &total) || !product(reshape, &reshape_total)) {
    *error = "iota dimensions overflow or are negative";
    return false;
  }
  if (total != reshape_total) {
    *error = "iota reshape covers " + std::to_string(reshape_total) +
             " devices but the tiles need " + std::to_string(total);
    return false;
  }
  if (total > max_devices) {
    *error = "iota assignment of " + std::to_string(total) + " devices exceeds the limit of " +
             std::to_string(max_devices);
    return false;
  }
  if (!transpose.empty()) {
    std::vector<bool> seen(reshape.size(), false);
    if (transpose.size() != reshape.size()) {
      *error = "iota transpose has " + std::to_string(transpose.size()) + " entries for " +
               std::to_string(reshape.size()) + " dimensions";
      return false;
    }
    for (int64_t axis : transpose) {
      if (axis < 0 || axis >= static_cast<int64_t>(reshape.size()) || seen[axis]) {
        *error = "iota transpose is not a permutation";
        return false;
      }
      seen[axis] = true;
    }
  }
  return true;
}

// '<=' '[' ints ']' [T '(' ints ')'], after the leading '[dims]'.
bool ParseIotaTail(ValueParser& parser, std::vector<int64_t>* reshape,
                   std::vector<int64_t>* transpose) {
  if (!parser.Expect(TokKind::kLeq, "before the iota reshape")) return false;
  if (!parser.ParseSquareIntList(reshape, "in iota reshape")) return false;
  Token next = parser.Peek();
  if (next.kind == TokKind::kIdent && next.text == "T") {
    parser.Next();
    if (!parser.Expect(TokKind::kLparen, "after T")) return false;
    while (true) {
      int64_t axis = 0;
      if (!parser.ParseInt(&axis, "in iota transpose")) return false;
      transpose->push_back(axis);
      Token separator = parser.Next();
      if (separator.kind == TokKind::kRparen) break;
      if (separator.kind != TokKind::kComma)
        return parser.Fail(separator, "expected ',' or ')' in iota transpose, got " +
                                          ValueParser::Describe(separator));
    }
  }
  return true;
}

class ShardingParser {
 public:
  ShardingParser(std::string_view value, ParseFailure* failure) : parser_(value, failure) {}

  bool Parse(Sharding* out) {
    if (!parser_.Expect(TokKind::kLbrace, "to open a sharding")) return false;
    return ParseBody(0, out) && parser_.ExpectEnd();
  }

 private:
  // After the opening '{' of one sharding; consumes its closing '}'.
  bool ParseBody(int depth, Sharding* out) {
    if (depth > 64) return parser_.Fail(parser_.Peek(), "sharding tuples nested too deeply");
    Token first = parser_.Peek();
    if (first.kind == TokKind::kLbrace || first.kind == TokKind::kRbrace)
      return ParseTuple(depth, out);
    bool has_kind = false;
    while (true) {
      Token token = parser_.Next();
      if (token.kind == TokKind::kRbrace) break;
      if (token.kind == TokKind::kIdent) {
        if (!ParseKeyword(token, out, &has_kind)) return false;
        continue;
      }
      if (token.kind != TokKind::kAttrName)
        return parser_.Fail(token,
                            "expected a sharding field, got " + ValueParser::Describe(token));
      if (token.text == "device") {
        if (!parser_.ParseInt(&out->device, "after device=")) return false;
      } else if (token.text == "devices") {
        out->kind = Sharding::Kind::kTiled;
        has_kind = true;
        if (!ParseDevices(token, out)) return false;
      } else if (token.text == "last_tile_dims") {
        if (!parser_.Expect(TokKind::kLbrace, "after last_tile_dims=")) return false;
        while (true) {
          Token item = parser_.Next();
          if (item.kind == TokKind::kRbrace) break;
          if (item.kind == TokKind::kComma) continue;
          if (item.kind != TokKind::kIdent)
            return parser_.Fail(item,
                                "expected a subgroup type, got " + ValueParser::Describe(item));
          out->last_tile_dims.emplace_back(item.text);
        }
      } else if (token.text == "metadata") {
        std::string_view raw;
        if (!parser_.SkipValue(&raw)) return false;
        out->metadata = std::string(raw);
      } else {
        return parser_.Fail(token, "unknown sharding field '" + std::string(token.text) + "='");
      }
    }
    if (!has_kind)
      return parser_.Fail(first, "sharding names no kind (replicated, maximal, devices=...)");
    if (out->kind == Sharding::Kind::kMaximal && out->device < 0)
      return parser_.Fail(first, "maximal sharding needs device=N");
    return true;
  }

  // `{}` or `{{...}, {...}}`: the element shardings of a tuple.
  bool ParseTuple(int depth, Sharding* out) {
    out->kind = Sharding::Kind::kTuple;
    if (parser_.Peek().kind == TokKind::kRbrace) {
      parser_.Next();
      return true;
    }
    while (true) {
      if (!parser_.Expect(TokKind::kLbrace, "to open a tuple element sharding")) return false;
      out->tuple_elements.emplace_back();
      if (!ParseBody(depth + 1, &out->tuple_elements.back())) return false;
      Token separator = parser_.Next();
      if (separator.kind == TokKind::kRbrace) return true;
      if (separator.kind != TokKind::kComma)
        return parser_.Fail(separator, "expected ',' or '}' between tuple shardings, got " +
                                           ValueParser::Describe(separator));
    }
  }

  // A bare word: a kind, last_tile_dim_replicate, or shard_as/shard_like N.
  bool ParseKeyword(const Token& token, Sharding* out, bool* has_kind) {
    static const std::pair<std::string_view, Sharding::Kind> kKinds[] = {
        {"replicated", Sharding::Kind::kReplicated}, {"maximal", Sharding::Kind::kMaximal},
        {"manual", Sharding::Kind::kManual},         {"unknown", Sharding::Kind::kUnknown},
        {"unreduced", Sharding::Kind::kUnreduced},
    };
    for (const auto& [word, kind] : kKinds) {
      if (token.text == word) {
        out->kind = kind;
        *has_kind = true;
        return true;
      }
    }
    if (token.text == "last_tile_dim_replicate") {
      out->last_tile_dim_replicate = true;
      return true;
    }
    if (token.text == "shard_as" || token.text == "shard_like") {
      out->shard_group_kind = std::string(token.text);
      int64_t group = 0;
      if (!parser_.ParseInt(&group, "after " + std::string(token.text))) return false;
      out->shard_group = group;
      return true;
    }
    return parser_.Fail(token, "unknown sharding keyword " + ValueParser::Describe(token));
  }

  // After devices=: the tile dimensions, then an iota (<=[...]) or a device
  // list with one device per tile.
  bool ParseDevices(const Token& token, Sharding* out) {
    if (!parser_.ParseSquareIntList(&out->tile_dimensions, "in tile dimensions")) return false;
    if (parser_.Peek().kind == TokKind::kLeq) {
      out->iota = true;
      if (!ParseIotaTail(parser_, &out->iota_reshape, &out->iota_transpose)) return false;
      std::string error;
      if (!CheckIota(out->tile_dimensions, out->iota_reshape, out->iota_transpose, int64_t{1} << 40,
                     &error))
        return parser_.Fail(token, error);
      return true;
    }
    while (true) {
      int64_t device = 0;
      if (!parser_.ParseInt(&device, "in device list")) return false;
      out->devices.push_back(device);
      if (parser_.Peek().kind != TokKind::kComma) break;
      parser_.Next();
    }
    int64_t tiles = 1;
    for (int64_t dim : out->tile_dimensions)
      if (dim < 0 || __builtin_mul_overflow(tiles, dim, &tiles)) tiles = -1;
    if (tiles != static_cast<int64_t>(out->devices.size()))
      return parser_.Fail(token, "tile dimensions need " + std::to_string(tiles) +
                                     " devices, got " + std::to_string(out->devices.size()));
    return true;
  }

  ValueParser parser_;
};

bool ParseReplicaGroupsText(std::string_view value, std::vector<std::vector<int64_t>>* groups,
                            int64_t max_devices, bool expand, ParseFailure* failure) {
  ValueParser parser(value, failure);
  if (parser.Peek().kind == TokKind::kLsquare) {
    std::vector<int64_t> dims, reshape, transpose;
    if (!parser.ParseSquareIntList(&dims, "in replica group dimensions")) return false;
    Token at = parser.Peek();
    if (dims.size() != 2) return parser.Fail(at, "iota replica groups need [groups,group_size]");
    if (!ParseIotaTail(parser, &reshape, &transpose) || !parser.ExpectEnd()) return false;
    std::string error;
    if (!CheckIota(dims, reshape, transpose, max_devices, &error)) return parser.Fail(at, error);
    if (!expand) return true;
    Expected<std::vector<int64_t>> ids = ExpandIota(dims, reshape, transpose, max_devices);
    if (!ids) return parser.Fail(at, ids.error().message());
    for (int64_t g = 0; g < dims[0]; ++g)
      groups->emplace_back(ids->begin() + g * dims[1], ids->begin() + (g + 1) * dims[1]);
    return true;
  }
  if (!parser.Expect(TokKind::kLbrace, "to open replica groups")) return false;
  if (parser.Peek().kind == TokKind::kRbrace) {
    parser.Next();
    return parser.ExpectEnd();
  }
  while (true) {
    groups->emplace_back();
    if (!parser.ParseIntList(&groups->back(), "in replica group")) return false;
    Token separator = parser.Next();
    if (separator.kind == TokKind::kRbrace) return parser.ExpectEnd();
    if (separator.kind != TokKind::kComma)
      return parser.Fail(separator, "expected ',' or '}' between replica groups, got " +
                                        ValueParser::Describe(separator));
  }
}

}  // namespace

namespace internal {

bool ValidateSharding(std::string_view value, ParseFailure* failure) {
  Sharding ignored;
  ShardingParser parser(value, failure);
  return parser.Parse(&ignored);
}

bool ValidateReplicaGroups(std::string_view value, ParseFailure* failure) {
  std::vector<std::vector<int64_t>> ignored;
  return ParseReplicaGroupsText(value, &ignored, int64_t{1} << 40, /*expand=*/false, failure);
}

}  // namespace internal

Expected<std::vector<int64_t>> ExpandIota(const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& reshape,
                                          const std::vector<int64_t>& transpose,
                                          int64_t max_devices) {
  std::string error;
  if (!CheckIota(dims, reshape, transpose, max_devices, &error)) return Error(error);
  int64_t total = 1;
  for (int64_t v : reshape) total *= v;
  std::vector<int64_t> out(static_cast<size_t>(total));
  if (transpose.empty()) {
    std::iota(out.begin(), out.end(), int64_t{0});
    return out;
  }
  // Row-major strides of the reshaped iota; output dimension i walks input
  // dimension transpose[i].
  size_t rank = reshape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * reshape[i];
  std::vector<int64_t> out_dims(rank), counter(rank, 0);
  for (size_t i = 0; i < rank; ++i) out_dims[i] = reshape[transpose[i]];
  for (int64_t n = 0; n < total; ++n) {
    int64_t source = 0;
    for (size_t i = 0; i < rank; ++i) source += counter[i] * strides[transpose[i]];
    out[n] = source;
    for (size_t i = rank; i-- > 0;) {
      if (++counter[i] < out_dims[i]) break;
      counter[i] = 0;
    }
  }
  return out;
}

Expected<std::vector<int64_t>> Sharding::TileAssignment(int64_t max_devices) const {
  if (kind != Kind::kTiled) return Error("only tiled shardings have a tile assignment");
  if (!iota) return devices;
  return ExpandIota(tile_dimensions, iota_reshape, iota_transpose, max_devices);
}

Expected<Sharding> ParseSharding(std::string_view value) {
  Sharding out;
  ParseFailure failure;
  ShardingParser parser(value, &failure);
  if (!parser.Parse(&out)) return FailureToError(failure);
  return out;
}

Expected<std::vector<std::vector<int64_t>>> ParseReplicaGroups(std::string_view value,
                                                               int64_t max_devices) {
  std::vector<std::vector<int64_t>> out;
  ParseFailure failure;
  if (!ParseReplicaGroupsText(value, &out, max_devices, /*expand=*/true, &failure))
    return FailureToError(failure);
  return out;
}

}  // namespace tileprof::hlo
