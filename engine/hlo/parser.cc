// Modules, computations and instructions; see parser.h and
// ../shared/spec/hlo-text.md section 3.
//
// The parser keeps one token of lookahead (tok_) and peeks one further by
// copying the lexer (three words). Names are resolved through per-computation
// scopes: an operand must be defined earlier in its computation, as XLA
// requires, while computations may be referenced before they are defined
// (legacy files put ENTRY first) and are resolved at the end of the module.
#include "engine/hlo/parser.h"

#include <charconv>

#include <fmt/format.h>

#include "engine/hlo/diagnostics.h"
#include "engine/hlo/literal.h"
#include "engine/hlo/parser_impl.h"

namespace tileprof::hlo {

Parser::Parser(std::shared_ptr<const void> owner, std::string_view text,
               const ParseOptions& options)
    : owner_(std::move(owner)), text_(text), options_(options), lexer_(text_) {}

bool Parser::Fail(uint32_t offset, std::string message) {
  if (error_.empty()) error_ = FormatDiagnostic(options_.source_name, text_, offset, message);
  return false;
}

bool Parser::FailAt(const Token& token, std::string message) {
  if (token.kind == TokKind::kError) return Fail(token.offset, std::string(lexer_.error_message()));
  return Fail(token.offset, std::move(message));
}

std::string Parser::Describe(const Token& token) {
  if (token.kind == TokKind::kEof) return "end of input";
  std::string_view text = token.text.substr(0, 60);
  if (token.kind == TokKind::kAttrName) return "'" + std::string(text) + "='";
  if (token.kind == TokKind::kNameColon) return "'" + std::string(text) + ":'";
  return "'" + std::string(token.percent ? "%" : "") + std::string(text) + "'";
}

bool Parser::Expect(TokKind kind, std::string_view context) {
  if (tok_.kind == kind) {
    Advance();
    return true;
  }
  return FailAt(tok_,
                fmt::format("expected {} {}, got {}", TokKindName(kind), context, Describe(tok_)));
}

bool Parser::ParseAll(std::vector<Module>* modules) {
  Advance();
  if (tok_.kind == TokKind::kEof) return Fail(tok_.offset, "no HloModule in the input");
  while (tok_.kind != TokKind::kEof) {
    if (!IsKeyword(tok_, "HloModule"))
      return FailAt(tok_, "expected 'HloModule', got " + Describe(tok_));
    Module module;
    module.source_owner_ = owner_;
    module.source_ = text_;
    module.source_name_ = options_.source_name;
    if (!ParseModuleBody(&module)) return false;
    modules->push_back(std::move(module));
  }
  return true;
}

bool Parser::ParseModuleBody(Module* module) {
  module_ = module;
  computations_by_name_.Clear();
  shapes_by_text_.Clear();
  pending_calls_.clear();
  Token keyword = tok_;
  Advance();
  // `HloModule convolution.167:` is the legacy header.
  if (tok_.kind != TokKind::kIdent && tok_.kind != TokKind::kNameColon)
    return FailAt(tok_, "expected a module name after 'HloModule', got " + Describe(tok_));
  module->name_ = tok_.text;
  Advance();
  if (!ParseHeader(module) || !ParseStackFrameTables(module)) return false;
  bool entry_seen = false;
  while (tok_.kind != TokKind::kEof && !IsKeyword(tok_, "HloModule")) {
    if (!ParseComputation(module, &entry_seen)) return false;
  }
  if (module->computations_.empty())
    return Fail(keyword.offset, "module '" + std::string(module->name_) + "' has no computations");
  // A range left over at the end of the text is not at a body either.
  if (tok_.kind == TokKind::kEof && next_skip_ < options_.skip_bodies.size())
    return FailSkipStart();
  if (!entry_seen) {
    module->entry_ = module->computations_.back();
    module->entry_->is_entry_ = true;
  }
  return ResolveCalls(module) && CheckCallGraph(module);
}

bool Parser::ParseComputation(Module* module, bool* entry_seen) {
  Token start = tok_;
  bool is_entry = false;
  if (IsKeyword(tok_, "ENTRY") && PeekNext().kind == TokKind::kIdent) {
    is_entry = true;
    Advance();
  }
  if (tok_.kind != TokKind::kIdent)
    return FailAt(tok_, "expected a computation name, got " + Describe(tok_));
  Token name = tok_;
  if (is_entry && *entry_seen)
    return Fail(start.offset,
                "second ENTRY computation '" + std::string(name.text) + "' (there can be one)");
  auto owned = std::make_unique<Computation>();
  Computation* computation = owned.get();
  computation->name_ = name.text;
  computation->source_offset_ = name.offset;
  computation->is_entry_ = is_entry;
  computation->index_ = static_cast<uint32_t>(module->computations_.size());
  if (computations_by_name_.Insert(name.text, computation) != computation) {
    const Computation* earlier = computations_by_name_.Find(name.text);
    SourceLocation at = LocateOffset(text_, earlier->source_offset_);
    return Fail(name.offset, fmt::format("computation '{}' is already defined at {}:{}", name.text,
                                         at.line, at.column));
  }
  module->computation_storage_.push_back(std::move(owned));
  module->computations_.push_back(computation);
  if (is_entry) {
    *entry_seen = true;
    module->entry_ = computation;
  }
  Advance();
  if (tok_.kind == TokKind::kLparen && !ParseSignature(computation)) return false;
  if (!ParseBody(computation, start)) return false;
  // `}, execution_thread="name"` after the body.
  if (tok_.kind == TokKind::kComma) {
    Advance();
    if (tok_.kind != TokKind::kAttrName || tok_.text != "execution_thread")
      return FailAt(tok_, "expected execution_thread= after a computation, got " + Describe(tok_));
    Advance();
    if (tok_.kind != TokKind::kString || tok_.text.size() < 2)
      return FailAt(tok_, "expected a quoted thread name, got " + Describe(tok_));
    computation->execution_thread_ = tok_.text.substr(1, tok_.text.size() - 2);
    Advance();
  }
  return true;
}

bool Parser::ParseBody(Computation* computation, const Token& header) {
  Token open = tok_;
  const auto& skips = options_.skip_bodies;
  if (next_skip_ < skips.size() && skips[next_skip_].first < open.offset) return FailSkipStart();
  if (open.kind == TokKind::kLbrace && next_skip_ < skips.size() &&
      skips[next_skip_].first == open.offset) {
    auto [begin, end] = skips[next_skip_++];
    if (end <= begin || end > text_.size() || text_[end - 1] != '}')
      return Fail(begin, "a body to skip does not end at a '}'");
    const uint32_t from = header.offset - (header.percent ? 1 : 0);  // the '%' is not in the token
    computation->skipped_text_ = text_.substr(from, end - from);
    lexer_ = Lexer(text_, end);
    Advance();
    return true;
  }
  if (!Expect(TokKind::kLbrace,
              "to open the body of computation '" + std::string(computation->name_) + "'"))
    return false;
  scope_.Clear();
  pending_controls_.clear();
  while (tok_.kind != TokKind::kRbrace) {
    if (tok_.kind == TokKind::kEof)
      return Fail(open.offset, "unbalanced braces: the body of computation '" +
                                   std::string(computation->name_) +
                                   "' is not closed before the end of input");
    if (!ParseInstruction(computation)) return false;
  }
  Advance();
  return FinishComputation(computation, open);
}

bool Parser::FailSkipStart() {
  return Fail(options_.skip_bodies[next_skip_].first,
              "a body to skip does not start at the '{' of a computation");
}

bool Parser::ParseSignature(Computation* computation) {
  ProgramSignature signature;
  Advance();  // '('
  if (tok_.kind != TokKind::kRparen) {
    while (true) {
      ProgramSignature::Parameter parameter;
      if (tok_.kind == TokKind::kNameColon) {
        parameter.name = tok_.text;
        Advance();
      } else if (tok_.kind == TokKind::kIdent && PeekNext().kind == TokKind::kColon) {
        parameter.name = tok_.text;
        Advance();
        Advance();
      } else {
        return FailAt(tok_, "expected 'name:' of a parameter in the computation header, got " +
                                Describe(tok_));
      }
      if (!ParseShapeRef(&parameter.shape)) return false;
      signature.parameters.push_back(parameter);
      if (tok_.kind == TokKind::kRparen) break;
      if (!Expect(TokKind::kComma, "between parameters of the computation header")) return false;
    }
  }
  Advance();  // ')'
  if (!Expect(TokKind::kArrow, "before the result shape of the computation header")) return false;
  if (!ParseShapeRef(&signature.result)) return false;
  computation->signature_ = std::move(signature);
  return true;
}

bool Parser::ParseShapeRef(const Shape** shape) {
  const uint32_t begin = tok_.offset;
  Lexer scan(text_, begin);
  uint32_t end = 0;
  ParseFailure failure;
  size_t fast_end = 0;
  if (FastScanShape(text_, begin, options_.max_nesting_depth, &fast_end)) {
    end = static_cast<uint32_t>(fast_end);
    scan = Lexer(text_, end);
  } else if (!ScanShape(scan, options_.max_nesting_depth, &end, &failure)) {
    // The scan only balances brackets, so `f32[2, parameter(0)` fails lines
    // later at the computation's '}'; the full parse points at the bad token.
    Lexer full(text_, begin);
    Shape ignored;
    ParseFailure precise;
    ShapeParseLimits limits;
    limits.max_depth = options_.max_nesting_depth;
    if (!ParseShape(full, limits, &ignored, &precise)) return Fail(precise.offset, precise.message);
    return Fail(failure.offset, failure.message);
  }
  std::string_view key = text_.substr(begin, end - begin);
  const Shape* found = shapes_by_text_.Find(key);
  if (found == nullptr) {
    Lexer full(text_, begin);
    Shape parsed;
    ShapeParseLimits limits;
    limits.max_depth = options_.max_nesting_depth;
    if (!ParseShape(full, limits, &parsed, &failure)) return Fail(failure.offset, failure.message);
    if (full.position() != end)
      return Fail(begin, "malformed shape '" + std::string(key.substr(0, 60)) + "'");
    module_->shapes_.push_back(std::move(parsed));
    found = &module_->shapes_.back();
    shapes_by_text_.Insert(key, found);
  }
  *shape = found;
  lexer_ = scan;
  Advance();
  return true;
}

bool Parser::ParseInstruction(Computation* computation) {
  Token start = tok_;
  bool is_root = false;
  if (IsKeyword(tok_, "ROOT")) {
    TokKind next = PeekNext().kind;
    if (next == TokKind::kIdent || next == TokKind::kAttrName) {
      is_root = true;
      Advance();
    }
  }
  Token name = tok_;
  if (tok_.kind == TokKind::kAttrName) {
    Advance();
  } else if (tok_.kind == TokKind::kIdent) {
    Advance();
    if (!Expect(TokKind::kEqual, "after instruction name '" + std::string(name.text) + "'"))
      return false;
  } else {
    return FailAt(tok_,
                  "expected an instruction 'name = shape opcode(...)', got " + Describe(tok_));
  }
  Instruction* instruction = module_->arena_.New<Instruction>();
  instruction->name_ = name.text;
  instruction->parent_ = computation;
  instruction->source_offset_ = name.offset;
  instruction->index_ = static_cast<uint32_t>(computation->instructions_.size());
  if (!ParseShapeRef(&instruction->shape_)) return false;
  if (tok_.kind != TokKind::kIdent || tok_.percent)
    return FailAt(tok_, "expected an opcode after the shape, got " + Describe(tok_));
  std::optional<Opcode> opcode = ParseOpcodeWithAsyncSugar(tok_.text, &instruction->wrapped_);
  if (!opcode)
    return Fail(tok_.offset, "unknown opcode '" + std::string(tok_.text.substr(0, 60)) + "'");
  instruction->opcode_ = *opcode;
  Advance();
  if (!Expect(TokKind::kLparen, "after opcode '" + std::string(OpcodeName(*opcode)) + "'"))
    return false;
  if (*opcode == Opcode::kParameter) {
    int64_t number = -1;
    auto [ptr, ec] = std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), number);
    if (tok_.kind != TokKind::kInt || ec != std::errc() || number < 0 || number > INT32_MAX)
      return FailAt(tok_, "expected a parameter number, got " + Describe(tok_));
    instruction->parameter_number_ = number;
    Advance();
    if (!Expect(TokKind::kRparen, "after the parameter number")) return false;
  } else if (*opcode == Opcode::kConstant) {
    if (!ParseConstant(instruction)) return false;
  } else if (!ParseOperands(instruction)) {
    return false;
  }
  if (!ParseAttributes(instruction)) return false;
  if (scope_.Insert(name.text, instruction) != instruction) {
    SourceLocation at = LocateOffset(text_, scope_.Find(name.text)->source_offset_);
    return Fail(name.offset, fmt::format("instruction '{}' is already defined at {}:{}", name.text,
                                         at.line, at.column));
  }
  if (is_root) {
    if (computation->root_ != nullptr) {
      SourceLocation at = LocateOffset(text_, computation->root_->source_offset_);
      return Fail(start.offset,
                  fmt::format("second ROOT in computation '{}': '{}' (the first is '{}' at {}:{})",
                              computation->name_, name.text, computation->root_->name_, at.line,
                              at.column));
    }
    computation->root_ = instruction;
  }
  computation->instructions_.push_back(instruction);
  ++module_->instruction_count_;
  return true;
}

bool Parser::ParseOperands(Instruction* instruction) {
  operands_.clear();
  if (tok_.kind == TokKind::kRparen) {
    Advance();
    return true;
  }
  while (true) {
    if (tok_.kind == TokKind::kEllipsis)
      return Fail(
          tok_.offset,
          "elided operand list '...' cannot be parsed (the dump was printed without all operands)");
    const Shape* declared = nullptr;
    uint32_t declared_at = tok_.offset;
    if (tok_.kind == TokKind::kLparen ||
        (tok_.kind == TokKind::kIdent && !tok_.percent && PrimitiveTypeFromName(tok_.text) &&
         PeekNext().kind == TokKind::kLsquare)) {
      if (!ParseShapeRef(&declared)) return false;
    }
    if (tok_.kind != TokKind::kIdent)
      return FailAt(tok_, "expected an operand name, got " + Describe(tok_));
    Instruction* operand = scope_.Find(tok_.text);
    if (operand == nullptr)
      return Fail(tok_.offset, "operand '" + std::string(tok_.text.substr(0, 60)) +
                                   "' is used before it is defined in this computation");
    if (declared != nullptr && declared != operand->shape_ &&
        !declared->CompatibleWith(*operand->shape_))
      return Fail(declared_at,
                  fmt::format("operand '{}' is declared as {} but defined as {}", operand->name_,
                              ShapeToString(*declared), ShapeToString(*operand->shape_)));
    operands_.push_back(operand);
    Advance();
    if (tok_.kind == TokKind::kRparen) break;
    if (tok_.kind != TokKind::kComma)
      return FailAt(tok_, "expected ',' or ')' after operand '" + std::string(operand->name_) +
                              "', got " + Describe(tok_));
    Advance();
  }
  Advance();
  std::span<Instruction*> stored = module_->arena_.Copy(std::span<Instruction* const>(operands_));
  instruction->operands_ = stored.data();
  instruction->operand_count_ = static_cast<uint32_t>(stored.size());
  return true;
}

bool Parser::ParseConstant(Instruction* instruction) {
  if (tok_.kind == TokKind::kRparen) return Fail(tok_.offset, "constant needs a literal value");
  const uint32_t begin = tok_.offset;
  Lexer literal_lexer(text_, begin);
  Literal literal;
  ParseFailure failure;
  if (!ParseLiteralTokens(literal_lexer, *instruction->shape_, &literal, &failure))
    return Fail(failure.offset, failure.message);
  const size_t end = literal_lexer.position();
  Token close = literal_lexer.Next();
  if (close.kind != TokKind::kRparen)
    return Fail(close.offset, "expected ')' after the literal, got " + Describe(close));
  instruction->literal_ = text_.substr(begin, end - begin);
  lexer_ = literal_lexer;
  Advance();
  return true;
}

bool Parser::FinishComputation(Computation* computation, const Token& open) {
  if (computation->instructions_.empty())
    return Fail(open.offset,
                "computation '" + std::string(computation->name_) + "' has no instructions");
  if (computation->root_ == nullptr) computation->root_ = computation->instructions_.back();
  for (const PendingControl& pending : pending_controls_) {
    Instruction* predecessor = scope_.Find(pending.name);
    if (predecessor == nullptr)
      return Fail(pending.offset, "control predecessor '" + std::string(pending.name) +
                                      "' is not an instruction of computation '" +
                                      std::string(computation->name_) + "'");
    const_cast<Instruction**>(pending.instruction->control_)[pending.slot] = predecessor;
  }
  // Parameters must be numbered 0..n-1, each once.
  size_t count = 0;
  for (Instruction* instruction : computation->instructions_)
    if (instruction->opcode_ == Opcode::kParameter) ++count;
  computation->parameters_.assign(count, nullptr);
  for (Instruction* instruction : computation->instructions_) {
    if (instruction->opcode_ != Opcode::kParameter) continue;
    int64_t number = instruction->parameter_number_;
    if (number >= static_cast<int64_t>(count))
      return Fail(
          instruction->source_offset_,
          fmt::format(
              "parameter number {} of '{}' is out of range: computation '{}' has {} parameters",
              number, instruction->name_, computation->name_, count));
    if (computation->parameters_[number] != nullptr)
      return Fail(instruction->source_offset_,
                  fmt::format("parameter number {} is used by both '{}' and '{}'", number,
                              computation->parameters_[number]->name_, instruction->name_));
    computation->parameters_[number] = instruction;
  }
  return true;
}

Expected<std::vector<Module>> ParseModules(std::string text, const ParseOptions& options) {
  auto source = std::make_shared<const std::string>(std::move(text));
  return ParseModules(source, *source, options);
}

Expected<std::vector<Module>> ParseModules(std::shared_ptr<const void> owner, std::string_view text,
                                           const ParseOptions& options) {
  if (text.size() > options.max_input_bytes)
    return MakeError("{}: input of {} bytes exceeds the limit of {} bytes", options.source_name,
                     text.size(), options.max_input_bytes);
  if (text.size() >= (uint64_t{1} << 32))
    return MakeError("{}: HLO text over 4 GiB is not supported", options.source_name);
  Parser parser(std::move(owner), text, options);
  std::vector<Module> modules;
  if (!parser.ParseAll(&modules)) return Error(parser.error());
  return modules;
}

Expected<Module> ParseModule(std::string text, const ParseOptions& options) {
  auto source = std::make_shared<const std::string>(std::move(text));
  return ParseModule(source, *source, options);
}

Expected<Module> ParseModule(std::shared_ptr<const void> owner, std::string_view text,
                             const ParseOptions& options) {
  TILEPROF_ASSIGN_OR_RETURN(std::vector<Module> modules,
                            ParseModules(std::move(owner), text, options));
  if (modules.size() != 1)
    return MakeError(
        "{}: expected one module, found {} (use ParseModules for files split with '// -----')",
        options.source_name, modules.size());
  return std::move(modules.front());
}

}  // namespace tileprof::hlo
