// The HLO text parser: all three print styles XLA has used (legacy long with
// operand shapes and program shapes, short parsable, long), see
// ../shared/spec/hlo-text.md sections 1-7.
//
//   Expected<Module> module = ParseModule(std::move(text), {.source_name = path});
//   if (!module) PrintDiagnostic("hlo", module.error().message());
//
// Errors are "file:line:col: error: message", the source line and a caret
// (diagnostics.h). The parser is hand-written over string_views: no regex, no
// string per token, names interned as views of the text. Input size,
// nesting depth and every list are bounded, so hostile input costs memory
// proportional to its size and a bounded stack.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "engine/hlo/module.h"

namespace tileprof::hlo {

struct ParseOptions {
  // The file name used in messages.
  std::string source_name = "<input>";
  // Nesting of tuple shapes, literals and brackets inside attribute values.
  int max_nesting_depth = 64;
  // Larger inputs are rejected up front (offsets are 32-bit).
  uint64_t max_input_bytes = (uint64_t{1} << 32) - 1;
  // Decode the typed attributes (window=, sharding=, metadata=, ...) while
  // parsing, so that a malformed payload is reported with its location.
  bool validate_attributes = true;
  // Computation bodies to leave unparsed, as byte ranges [offset of the '{'
  // that opens the body, offset just past its '}'), in text order. For
  // comparing two modules whose bodies are known to be the same bytes
  // (SkimComputations finds them): such a computation keeps only its name,
  // header and text (Computation::body_skipped). A range that does not start
  // at a body's '{' is an error.
  std::vector<std::pair<uint32_t, uint32_t>> skip_bodies;
};

// Parses text that holds exactly one module (comments and FileCheck lines
// around it are fine). Missing ENTRY: the last computation is the entry.
// Missing ROOT: the last instruction is the root.
Expected<Module> ParseModule(std::string text, const ParseOptions& options = {});

// Parses every module in the text, in order: XLA test files hold several,
// separated by `// -----` lines (which are comments).
Expected<std::vector<Module>> ParseModules(std::string text, const ParseOptions& options = {});

// The same over text someone else holds (a mapped file): the modules keep
// `owner` alive, and `text` must stay valid while it lives. The byte after
// the text must be readable, as std::string's terminator is.
Expected<Module> ParseModule(std::shared_ptr<const void> owner, std::string_view text,
                             const ParseOptions& options = {});
Expected<std::vector<Module>> ParseModules(std::shared_ptr<const void> owner, std::string_view text,
                                           const ParseOptions& options = {});

}  // namespace tileprof::hlo
