// Internal to engine/hlo: the recursive-descent parser behind parser.h,
// split over parser.cc (modules, computations, instructions) and
// parser_attributes.cc (attribute values, header, references).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/hlo/lexer.h"
#include "engine/hlo/module.h"
#include "engine/hlo/name_table.h"
#include "engine/hlo/parser.h"

namespace tileprof::hlo {

class Parser {
 public:
  Parser(std::shared_ptr<const void> owner, std::string_view text, const ParseOptions& options);

  // Parses every module; on failure returns false and error() is the
  // formatted diagnostic.
  bool ParseAll(std::vector<Module>* modules);
  const std::string& error() const { return error_; }

 private:
  // A computation name to resolve once the whole module is read.
  struct PendingCall {
    Instruction* instruction;
    uint32_t slot;
    std::string_view name;
    uint32_t offset;
  };
  // A control predecessor to resolve at the end of its computation.
  struct PendingControl {
    Instruction* instruction;
    uint32_t slot;
    std::string_view name;
    uint32_t offset;
  };

  // ---- tokens and errors (parser.cc)
  void Advance() { tok_ = lexer_.Next(); }
  Token PeekNext() const { return lexer_.Peek(); }
  bool Fail(uint32_t offset, std::string message);
  // Fails at `token`, reporting the lexer's message for a kError token.
  bool FailAt(const Token& token, std::string message);
  bool Expect(TokKind kind, std::string_view context);
  static bool IsKeyword(const Token& token, std::string_view word) {
    return token.kind == TokKind::kIdent && !token.percent && token.text == word;
  }
  static std::string Describe(const Token& token);

  // ---- structure (parser.cc)
  bool ParseModuleBody(Module* module);
  bool ParseComputation(Module* module, bool* entry_seen);
  bool ParseSignature(Computation* computation);
  bool ParseBody(Computation* computation, const Token& header);
  bool FailSkipStart();  // options_.skip_bodies[next_skip_] is not at a body
  bool ParseInstruction(Computation* computation);
  bool ParseOperands(Instruction* instruction);
  bool ParseConstant(Instruction* instruction);
  bool FinishComputation(Computation* computation, const Token& open);
  // Parses a shape at tok_, interned by its text.
  bool ParseShapeRef(const Shape** shape);

  // ---- attributes, header, references (parser_attributes.cc)
  bool ParseHeader(Module* module);
  bool ParseStackFrameTables(Module* module);
  bool ParseAttributes(Instruction* instruction);
  bool ParseNameList(std::string_view name, Instruction* instruction);
  // The text of an attribute value starting at tok_ (one or more atoms).
  bool CaptureValue(std::string_view attribute, bool single_atom, std::string_view* value);
  bool IsValueEnd();
  bool ResolveCalls(Module* module);
  bool CheckCallGraph(Module* module);

  std::shared_ptr<const void> owner_;
  std::string_view text_;
  ParseOptions options_;
  Lexer lexer_;
  Token tok_;
  size_t next_skip_ = 0;  // into options_.skip_bodies
  std::string error_;
  Module* module_ = nullptr;

  NameTable<Instruction> scope_;
  NameTable<Computation> computations_by_name_;
  NameTable<const Shape> shapes_by_text_;
  std::vector<PendingCall> pending_calls_;
  std::vector<PendingControl> pending_controls_;

  // Scratch lists reused across instructions.
  std::vector<Instruction*> operands_;
  std::vector<Attribute> attributes_;
  std::vector<Computation*> called_;
  std::vector<Instruction*> control_;
};

}  // namespace tileprof::hlo
