// Attribute values, the module header, stack-frame tables and reference
// resolution; see parser.h and ../shared/spec/hlo-text.md sections 3 and 6.
//
// Attribute values are captured as raw text. A value is one or more atoms
// (a bracketed group, a string or a single token), because a few payloads
// are several tokens without separators:
//   literal=s32[] 1            dim_labels=b01f_01io->b01f
//   replica_groups=[2,4]<=[4,2]T(1,0)      sparsity=L.1@2:4
// It ends before a ',' at the top level, the '}' closing the computation, or
// the start of the next instruction ("name =", "name=" or ROOT), which is
// how line breaks inside instructions stay insignificant.
#include <charconv>

#include <fmt/format.h>

#include "engine/hlo/attributes.h"
#include "engine/hlo/parser_impl.h"

namespace tileprof::hlo {
namespace {

bool IsSingleComputationAttribute(std::string_view name) {
  return name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
         name == "select" || name == "scatter" || name == "true_computation" ||
         name == "false_computation";
}

bool IsComputationListAttribute(std::string_view name) {
  return name == "branch_computations" || name == "called_computations";
}

bool IsOpener(TokKind kind) {
  return kind == TokKind::kLbrace || kind == TokKind::kLparen || kind == TokKind::kLsquare;
}

}  // namespace

bool Parser::IsValueEnd() {
  switch (tok_.kind) {
    case TokKind::kComma:
    case TokKind::kRbrace:
    case TokKind::kRparen:
    case TokKind::kRsquare:
    case TokKind::kEof:
    case TokKind::kAttrName:  // "next.1=f32[] ..."
      return true;
    case TokKind::kIdent:
      if (IsKeyword(tok_, "ROOT") || IsKeyword(tok_, "ENTRY")) return true;
      return PeekNext().kind == TokKind::kEqual;  // "next.1 = f32[] ..."
    default:
      return false;
  }
}

bool Parser::CaptureValue(std::string_view attribute, bool single_atom, std::string_view* value) {
  const uint32_t begin = tok_.offset - (tok_.percent ? 1 : 0);
  uint32_t end = begin;
  bool first = true;
  while (first || (!single_atom && !IsValueEnd())) {
    if (tok_.kind == TokKind::kError) return FailAt(tok_, "");
    if (IsOpener(tok_.kind)) {
      size_t fast_close = 0;
      if (FastSkipBalanced(text_, tok_.offset, options_.max_nesting_depth, &fast_close)) {
        end = static_cast<uint32_t>(fast_close + 1);
        lexer_ = Lexer(text_, end);
      } else {
        Token close;
        ParseFailure failure;
        if (!SkipBalanced(lexer_, tok_, options_.max_nesting_depth, &close, &failure))
          return Fail(failure.offset, failure.message);
        end = close.offset + 1;
      }
    } else if (tok_.kind == TokKind::kEof || tok_.kind == TokKind::kComma ||
               tok_.kind == TokKind::kRbrace || tok_.kind == TokKind::kRparen ||
               tok_.kind == TokKind::kRsquare) {
      if (first)
        return FailAt(tok_, "missing value for attribute '" + std::string(attribute) + "'");
      return FailAt(tok_, "unbalanced " + Describe(tok_) + " in the value of '" +
                              std::string(attribute) + "'");
    } else {
      end = tok_.offset + static_cast<uint32_t>(tok_.text.size()) +
            ((tok_.kind == TokKind::kAttrName || tok_.kind == TokKind::kNameColon) ? 1 : 0);
    }
    first = false;
    Advance();
  }
  *value = text_.substr(begin, end - begin);
  return true;
}

// A {name, ...} list: the computations a call-like attribute names, or an
// instruction's control predecessors (resolved once the module is read).
bool Parser::ParseNameList(std::string_view name, Instruction* instruction) {
  const bool is_control = name == "control-predecessors";
  Token open = tok_;
  if (!Expect(TokKind::kLbrace, "to open the list of " + std::string(name))) return false;
  uint32_t first = static_cast<uint32_t>(is_control ? control_.size() : called_.size());
  while (tok_.kind != TokKind::kRbrace) {
    if (tok_.kind != TokKind::kIdent)
      return FailAt(tok_, "expected a name in " + std::string(name) + ", got " + Describe(tok_));
    if (is_control) {
      pending_controls_.push_back(
          {instruction, static_cast<uint32_t>(control_.size()), tok_.text, tok_.offset});
      control_.push_back(nullptr);
    } else {
      pending_calls_.push_back(
          {instruction, static_cast<uint32_t>(called_.size()), tok_.text, tok_.offset});
      called_.push_back(nullptr);
    }
    Advance();
    if (tok_.kind == TokKind::kComma) {
      Advance();
    } else if (tok_.kind != TokKind::kRbrace) {
      return FailAt(tok_,
                    "expected ',' or '}' in " + std::string(name) + ", got " + Describe(tok_));
    }
  }
  uint32_t count = static_cast<uint32_t>(is_control ? control_.size() : called_.size()) - first;
  std::string_view value = text_.substr(open.offset, tok_.offset + 1 - open.offset);
  attributes_.emplace_back(
      name, value,
      is_control ? AttributeKind::kControlPredecessors : AttributeKind::kComputationList, first,
      count);
  Advance();
  return true;
}

bool Parser::ParseAttributes(Instruction* instruction) {
  attributes_.clear();
  called_.clear();
  control_.clear();
  while (tok_.kind == TokKind::kComma) {
    Advance();
    Token key = tok_;
    if (tok_.kind == TokKind::kAttrName) {
      Advance();
    } else if (tok_.kind == TokKind::kIdent && PeekNext().kind == TokKind::kEqual) {
      Advance();
      Advance();
    } else {
      return FailAt(tok_, "expected an attribute 'name=value' after ',', got " + Describe(tok_));
    }
    std::string_view name = key.text;
    // Linear for the usual handful; hostile input with thousands of
    // attributes is bounded by the text size and rejected on the first repeat.
    for (const Attribute& earlier : attributes_)
      if (earlier.name() == name)
        return Fail(key.offset, "attribute '" + std::string(name) + "' is given twice");
    const uint32_t value_offset = tok_.offset - (tok_.percent ? 1 : 0);
    if (IsSingleComputationAttribute(name)) {
      if (tok_.kind != TokKind::kIdent)
        return FailAt(tok_, "expected a computation name after " + std::string(name) + "=, got " +
                                Describe(tok_));
      pending_calls_.push_back(
          {instruction, static_cast<uint32_t>(called_.size()), tok_.text, tok_.offset});
      uint32_t first = static_cast<uint32_t>(called_.size());
      called_.push_back(nullptr);
      std::string_view value =
          text_.substr(value_offset, tok_.offset + tok_.text.size() - value_offset);
      attributes_.emplace_back(name, value, AttributeKind::kComputation, first, 1);
      Advance();
      continue;
    }
    if (name == "control-predecessors" || IsComputationListAttribute(name)) {
      if (!ParseNameList(name, instruction)) return false;
      continue;
    }
    std::string_view value;
    if (!CaptureValue(name, false, &value)) return false;
    if (options_.validate_attributes) {
      ParseFailure failure;
      if (!ValidateAttribute(name, value, &failure))
        return Fail(value_offset + failure.offset,
                    "invalid " + std::string(name) + "=: " + failure.message);
    }
    attributes_.emplace_back(name, value);
  }
  Arena& arena = module_->arena_;
  std::span<Attribute> stored = arena.Copy(std::span<const Attribute>(attributes_));
  instruction->attributes_ = stored.data();
  instruction->attribute_count_ = static_cast<uint32_t>(stored.size());
  if (!called_.empty()) {
    instruction->called_ = arena.Copy(std::span<Computation* const>(called_)).data();
    instruction->called_count_ = static_cast<uint32_t>(called_.size());
  }
  if (!control_.empty()) {
    instruction->control_ = arena.Copy(std::span<Instruction* const>(control_)).data();
    instruction->control_count_ = static_cast<uint32_t>(control_.size());
  }
  return true;
}

bool Parser::ParseHeader(Module* module) {
  while (tok_.kind == TokKind::kComma) {
    Advance();
    if (tok_.kind != TokKind::kAttrName)
      return FailAt(tok_, "expected a module attribute 'name=value', got " + Describe(tok_));
    Token key = tok_;
    Advance();
    for (const Attribute& earlier : module->attributes_)
      if (earlier.name() == key.text)
        return Fail(key.offset, "module attribute '" + std::string(key.text) + "' is given twice");
    const uint32_t value_offset = tok_.offset;
    std::string_view value;
    if (!CaptureValue(key.text, true, &value)) return false;
    ParseFailure failure;
    if (!ValidateModuleAttribute(key.text, value, &failure))
      return Fail(value_offset + failure.offset,
                  "invalid " + std::string(key.text) + "=: " + failure.message);
    module->attributes_.emplace_back(key.text, value);
    if (key.text == "is_scheduled") module->is_scheduled_ = value == "true";
    if (key.text == "replica_count")
      std::from_chars(value.data(), value.data() + value.size(), module->replica_count_);
    if (key.text == "num_partitions")
      std::from_chars(value.data(), value.data() + value.size(), module->num_partitions_);
    if (key.text == "entry_computation_layout") {
      Expected<ProgramShape> layout = ParseProgramShape(value);
      if (!layout) return Fail(value_offset, layout.error().message());
      module->entry_computation_layout_ = std::move(*layout);
    }
  }
  return true;
}

bool Parser::ParseStackFrameTables(Module* module) {
  StackFrameTables& tables = module->stack_frames_;
  while (tok_.kind == TokKind::kIdent && !tok_.percent) {
    std::vector<StackFrameTables::Entry>* table = nullptr;
    if (tok_.text == "FileNames") table = &tables.file_names;
    if (tok_.text == "FunctionNames") table = &tables.function_names;
    if (tok_.text == "FileLocations") table = &tables.file_locations;
    if (tok_.text == "StackFrames") table = &tables.stack_frames;
    if (table == nullptr) break;
    // A computation may be called FileNames; then a '{' or '(' follows.
    TokKind next = PeekNext().kind;
    if (next == TokKind::kLbrace || next == TokKind::kLparen) break;
    const bool names = table == &tables.file_names || table == &tables.function_names;
    Advance();
    while (tok_.kind == TokKind::kInt) {
      StackFrameTables::Entry entry;
      auto [ptr, ec] =
          std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), entry.id);
      if (ec != std::errc()) return Fail(tok_.offset, "stack frame table id out of range");
      Advance();
      if (names ? tok_.kind != TokKind::kString : tok_.kind != TokKind::kLbrace)
        return FailAt(tok_, std::string("expected ") + (names ? "a quoted name" : "'{'") +
                                " in a stack frame table, got " + Describe(tok_));
      if (!CaptureValue("stack frame table entry", true, &entry.value)) return false;
      if (!names) {
        ParseFailure failure;
        if (!ValidateAttribute("metadata", entry.value, &failure))
          return Fail(static_cast<uint32_t>(entry.value.data() - text_.data()) + failure.offset,
                      failure.message);
      }
      table->push_back(entry);
    }
  }
  return true;
}

bool Parser::ResolveCalls(Module* module) {
  for (const PendingCall& pending : pending_calls_) {
    Computation* callee = computations_by_name_.Find(pending.name);
    if (callee == nullptr)
      return Fail(pending.offset,
                  "unknown computation '" + std::string(pending.name.substr(0, 60)) + "'");
    const_cast<Computation**>(pending.instruction->called_)[pending.slot] = callee;
  }
  (void)module;
  return true;
}

bool Parser::CheckCallGraph(Module* module) {
  // Iterative depth-first search: a call chain as deep as the file is long
  // must not overflow the stack. Colors: 0 unvisited, 1 on the path, 2 done.
  const size_t count = module->computations_.size();
  std::vector<uint8_t> color(count, 0);
  struct Frame {
    Computation* computation;
    size_t instruction;
    size_t callee;
  };
  std::vector<Frame> stack;
  for (Computation* root : module->computations_) {
    if (color[root->index_] != 0) continue;
    stack.push_back({root, 0, 0});
    color[root->index_] = 1;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const auto& instructions = frame.computation->instructions_;
      if (frame.instruction == instructions.size()) {
        color[frame.computation->index_] = 2;
        stack.pop_back();
        continue;
      }
      Instruction* instruction = instructions[frame.instruction];
      if (frame.callee == instruction->called_count_) {
        ++frame.instruction;
        frame.callee = 0;
        continue;
      }
      Computation* callee = instruction->called_[frame.callee++];
      if (color[callee->index_] == 1)
        return Fail(
            instruction->source_offset_,
            fmt::format(
                "recursive call: '{}' in computation '{}' calls '{}', which is already on the call "
                "path",
                instruction->name_, frame.computation->name_, callee->name_));
      if (color[callee->index_] == 0) {
        color[callee->index_] = 1;
        stack.push_back({callee, 0, 0});
      }
    }
  }
  return true;
}

}  // namespace tileprof::hlo
