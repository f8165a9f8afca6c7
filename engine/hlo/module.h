// The HLO model: Module -> Computation -> Instruction, as parsed from text
// (../shared/spec/hlo-text.md section 3).
//
// A Module owns its source text and everything parsed from it. Names,
// attribute values and literals are views into that text (or into the
// module's arena), so a 100 MB dump costs one copy of the text plus compact
// instruction records; nothing is re-spelled. Instructions, operand lists and
// attribute lists live in an arena and are immutable after parsing; the
// printer (printer.h) produces every canonical form without changing the
// model.
//
// Every attribute is kept exactly as written (Attribute::value()); typed
// views of the payloads a compiler needs are in attributes.h. References to
// other computations (to_apply=, calls=, body=, branch_computations=, ...) and
// control predecessors are resolved to pointers while parsing.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/hlo/arena.h"
#include "engine/hlo/opcode.h"
#include "engine/hlo/shape.h"

namespace tileprof::hlo {

class Computation;
class Instruction;

enum class AttributeKind : uint8_t {
  kRaw,                  // only the text
  kComputation,          // to_apply=%f, calls=, condition=, body=, select=, scatter=, ...
  kComputationList,      // branch_computations={%a, %b}, called_computations={...}
  kControlPredecessors,  // control-predecessors={%a, %b}
};

// One `name=value` of an instruction or of the module header.
class Attribute {
 public:
  Attribute() = default;
  Attribute(std::string_view name, std::string_view value, AttributeKind kind = AttributeKind::kRaw,
            uint32_t first = 0, uint32_t count = 0)
      : name_(name.data()),
        value_(value.data()),
        name_size_(static_cast<uint32_t>(name.size())),
        value_size_(static_cast<uint32_t>(value.size())),
        first_(first),
        count_(count),
        kind_(kind) {}

  std::string_view name() const { return {name_, name_size_}; }
  // The value exactly as written, e.g. "{size=3x3 pad=1_1x1_1}" or "\"foo\"".
  std::string_view value() const { return {value_, value_size_}; }
  AttributeKind kind() const { return kind_; }
  // For reference kinds: the range of Instruction::called_computations() or
  // Instruction::control_predecessors() this attribute holds.
  uint32_t first() const { return first_; }
  uint32_t count() const { return count_; }

 private:
  // Pointer + 32-bit size instead of two string_views: 32 bytes instead of
  // 48, and every instruction has a few of these.
  const char* name_ = nullptr;
  const char* value_ = nullptr;
  uint32_t name_size_ = 0;
  uint32_t value_size_ = 0;
  uint32_t first_ = 0;
  uint32_t count_ = 0;
  AttributeKind kind_ = AttributeKind::kRaw;
};

class Instruction {
 public:
  std::string_view name() const { return name_; }
  Opcode opcode() const { return opcode_; }
  // For async sugar ("custom-call-start"): the wrapped opcode; opcode() is
  // then kAsyncStart, kAsyncUpdate or kAsyncDone.
  std::optional<Opcode> async_wrapped_opcode() const { return wrapped_; }
  const Shape& shape() const { return *shape_; }

  std::span<Instruction* const> operands() const { return {operands_, operand_count_}; }
  Instruction* operand(size_t index) const { return operands_[index]; }
  size_t operand_count() const { return operand_count_; }

  std::span<const Attribute> attributes() const { return {attributes_, attribute_count_}; }
  // The attribute called `name`, or nullptr.
  const Attribute* FindAttribute(std::string_view name) const;

  // Every computation this instruction calls, in attribute order.
  std::span<Computation* const> called_computations() const { return {called_, called_count_}; }
  std::span<Instruction* const> control_predecessors() const { return {control_, control_count_}; }

  bool is_root() const;
  // parameter(N): N; -1 for other opcodes.
  int64_t parameter_number() const { return parameter_number_; }
  // constant(...): the literal text between the parentheses, as written
  // ("{1, 2}", "{...}", "-inf"); empty for other opcodes. Decode it with
  // ParseLiteral (literal.h).
  std::string_view literal() const { return literal_; }

  Computation* parent() const { return parent_; }
  // Position in parent()->instructions().
  uint32_t index() const { return index_; }
  // Byte offset of the instruction's name in the module source, for messages
  // (Module::Locate turns it into line:col).
  uint32_t source_offset() const { return source_offset_; }

 private:
  friend class Parser;

  std::string_view name_;
  std::string_view literal_;
  const Shape* shape_ = nullptr;
  Instruction* const* operands_ = nullptr;
  const Attribute* attributes_ = nullptr;
  Computation* const* called_ = nullptr;
  Instruction* const* control_ = nullptr;
  Computation* parent_ = nullptr;
  int64_t parameter_number_ = -1;
  uint32_t operand_count_ = 0;
  uint32_t attribute_count_ = 0;
  uint32_t called_count_ = 0;
  uint32_t control_count_ = 0;
  uint32_t index_ = 0;
  uint32_t source_offset_ = 0;
  Opcode opcode_ = Opcode::kParameter;
  std::optional<Opcode> wrapped_;
};

// A computation header's `(p0: f32[2], p1: s32[]) -> f32[2]`, as written.
// It is informational only: XLA derives the real signature from the
// parameter instructions and the root, and old hand-written tests disagree
// with their own headers.
struct ProgramSignature {
  struct Parameter {
    std::string_view name;
    const Shape* shape = nullptr;
  };
  std::vector<Parameter> parameters;
  const Shape* result = nullptr;
};

class Computation {
 public:
  std::string_view name() const { return name_; }
  bool is_entry() const { return is_entry_; }
  // Instructions in text order (for a scheduled module, the schedule).
  std::span<Instruction* const> instructions() const { return instructions_; }
  Instruction* root() const { return root_; }
  // Parameter instructions indexed by parameter number.
  std::span<Instruction* const> parameters() const { return parameters_; }
  // `, execution_thread="name"` after the closing brace; empty when absent.
  std::string_view execution_thread() const { return execution_thread_; }
  // The header's program shape as written, if any.
  const std::optional<ProgramSignature>& signature() const { return signature_; }
  // The instruction named `name`, or nullptr (linear search).
  Instruction* FindInstruction(std::string_view name) const;
  uint32_t source_offset() const { return source_offset_; }
  // Position in Module::computations().
  uint32_t index() const { return index_; }
  // Parsed with its body left out (ParseOptions::skip_bodies): no
  // instructions and no root. skipped_text() is its text, header to closing
  // brace; the printer prints its header line and the canonical hasher
  // hashes its name in place of the body.
  bool body_skipped() const { return !skipped_text_.empty(); }
  std::string_view skipped_text() const { return skipped_text_; }

 private:
  friend class Parser;

  std::string_view name_;
  std::string_view skipped_text_;
  std::string_view execution_thread_;
  std::vector<Instruction*> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
  std::optional<ProgramSignature> signature_;
  uint32_t source_offset_ = 0;
  uint32_t index_ = 0;
  bool is_entry_ = false;
};

inline bool Instruction::is_root() const { return parent_ != nullptr && parent_->root() == this; }

// `entry_computation_layout={(f32[10]{0},s32[])->f32[1,121]{1,0}}`.
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
  bool operator==(const ProgramShape&) const = default;
};

// The stack-frame tables newer dumps print after the module header
// (FileNames, FunctionNames, FileLocations, StackFrames). Values are kept as
// written: a string literal for names, "{file_name_id=1 ...}" for the others.
struct StackFrameTables {
  struct Entry {
    int64_t id = 0;
    std::string_view value;
    bool operator==(const Entry&) const = default;
  };
  std::vector<Entry> file_names;
  std::vector<Entry> function_names;
  std::vector<Entry> file_locations;
  std::vector<Entry> stack_frames;

  bool empty() const {
    return file_names.empty() && function_names.empty() && file_locations.empty() &&
           stack_frames.empty();
  }
  bool operator==(const StackFrameTables&) const = default;
};

struct SourceLocation {
  int64_t line = 0;    // 1-based
  int64_t column = 0;  // 1-based, in bytes
};

class Module {
 public:
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  std::string_view name() const { return name_; }
  // Computations in text order.
  std::span<Computation* const> computations() const { return computations_; }
  // The ENTRY computation (the last one when none is marked).
  Computation* entry() const { return entry_; }
  Computation* FindComputation(std::string_view name) const;

  // Header attributes as written, in order.
  std::span<const Attribute> attributes() const { return attributes_; }
  const Attribute* FindAttribute(std::string_view name) const;
  bool is_scheduled() const { return is_scheduled_; }
  int64_t replica_count() const { return replica_count_; }
  int64_t num_partitions() const { return num_partitions_; }
  const std::optional<ProgramShape>& entry_computation_layout() const {
    return entry_computation_layout_;
  }
  const StackFrameTables& stack_frames() const { return stack_frames_; }

  int64_t instruction_count() const { return instruction_count_; }

  // The text everything points into, and the file name used in messages.
  std::string_view source() const { return source_; }
  std::string_view source_name() const { return source_name_; }
  // 1-based line and column of a byte offset of source().
  SourceLocation Locate(uint32_t offset) const;

 private:
  friend class Parser;
  Module() = default;

  std::shared_ptr<const void> source_owner_;  // keeps source_ alive
  std::string_view source_;
  std::string source_name_;
  std::string_view name_;
  std::vector<Computation*> computations_;
  std::vector<std::unique_ptr<Computation>> computation_storage_;
  Computation* entry_ = nullptr;
  std::vector<Attribute> attributes_;
  bool is_scheduled_ = false;
  int64_t replica_count_ = 1;
  int64_t num_partitions_ = 1;
  std::optional<ProgramShape> entry_computation_layout_;
  StackFrameTables stack_frames_;
  int64_t instruction_count_ = 0;
  std::deque<Shape> shapes_;  // interned; instructions point here
  Arena arena_;
};

// Locates a byte offset in `text`.
SourceLocation LocateOffset(std::string_view text, uint32_t offset);

// Structural equality of two modules: names, header attributes, stack-frame
// tables, computations in order with their instructions, shapes (layouts
// included), operands and references by name, and attribute values compared
// after whitespace normalisation (NormalizeAttributeValue). Program
// signatures, '%' sigils, operand shapes, comments and layout of the text are
// not part of the model and never compared.
bool operator==(const Module& a, const Module& b);

// The first difference between two modules in words ("computation 'main':
// instruction 3 'add.3': opcode add vs subtract"), or nullopt when equal.
std::optional<std::string> FindDifference(const Module& a, const Module& b);

}  // namespace tileprof::hlo
