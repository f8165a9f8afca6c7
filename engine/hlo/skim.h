// Where each computation of an XLA-printed module lies, found from line
// starts alone, without parsing: for comparing two dumps of one program,
// whose computations are mostly the same bytes and need not be parsed at all
// (ParseOptions::skip_bodies).
//
// XLA prints a computation as a header line at column 0 that ends in '{',
// instruction lines that start with a space, and a line at column 0 that
// starts with '}'. Text of any other form (one-line computations, several
// modules) is not skimmed: the caller then parses everything.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tileprof::hlo {

struct ComputationSpan {
  std::string_view name;  // without '%'
  uint32_t header = 0;    // offset of the header line
  uint32_t body = 0;      // offset of the '{' that opens the body
  uint32_t end = 0;       // offset just past the closing '}'

  std::string_view Text(std::string_view source) const {
    return source.substr(header, end - header);
  }
};

std::optional<std::vector<ComputationSpan>> SkimComputations(std::string_view text);

}  // namespace tileprof::hlo
