// Programs: the control flow that runs on the device, in the style of
// Poplar's poplar::program namespace (seed 003, listing 4.2: `Sequence prog;
// prog.add(Copy(c1, v1));` and executing a compute set). A Program is a
// handle to an immutable-once-built node (Sequence::Add is the one mutator),
// so programs are cheap to copy and one sub-program may appear in several
// places, as in Poplar.
//
//   program::Sequence prog;
//   prog.Add(program::Copy(c1, v1));
//   prog.Add(program::Execute(compute_set));
//   prog.Add(program::Repeat(10, body));
//
// Validation against a graph (ValidateProgram) checks compute-set ids,
// tensor types and sizes, written tensors, predicates and streams, and that a
// sequence does not contain itself.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/expected.h"
#include "engine/graph/graph.h"
#include "engine/graph/tensor.h"

namespace tileprof::engine::program {

enum class ProgramKind : uint8_t {
  kSequence,         // steps(), run in order
  kExecute,          // compute_set()
  kCopy,             // source() -> destination(), on the device
  kCopyFromStream,   // stream() -> destination() (host to device)
  kCopyToStream,     // source() -> stream() (device to host)
  kRepeat,           // body() count() times
  kRepeatWhileTrue,  // condition(); while predicate(): body(); condition()
  kIf,               // predicate() ? then_body() : else_body()
};

std::string_view KindName(ProgramKind kind);  // "Sequence", "Execute", ...

class Program;
// The name a program's step carries in the report's program tree and in the
// execution trace ("Copy to x", "Host to device: s", a compute set's name,
// "Repeat(3)"): one function, so the two always agree.
std::string StepName(const Graph& graph, const Program& program);

class Program {
 public:
  ProgramKind kind() const;
  // Accessors; each is valid only for the kinds named beside ProgramKind.
  std::span<const Program> steps() const;
  ComputeSetId compute_set() const;
  const Tensor& source() const;
  const Tensor& destination() const;
  DataStream stream() const;
  uint32_t count() const;
  const Tensor& predicate() const;
  const Program& body() const;
  const Program& condition() const;
  const Program& then_body() const;
  const Program& else_body() const;

  // Identity of the underlying node (equal for copies of one program).
  const void* id() const { return node_.get(); }

  struct Node;

 protected:
  explicit Program(std::shared_ptr<Node> node) : node_(std::move(node)) {}
  std::shared_ptr<Node> node_;
};

class Sequence : public Program {
 public:
  Sequence();
  Sequence(std::initializer_list<Program> steps);
  // Appends a step. Adding a sequence to itself (directly or through other
  // programs) is reported by ValidateProgram.
  void Add(Program step);
  // Removes every step (which also breaks a cycle made by adding a sequence
  // to itself, which would otherwise keep its nodes alive).
  void Clear();
};

class Execute : public Program {
 public:
  explicit Execute(ComputeSetId compute_set);
};

class Copy : public Program {
 public:
  // Device copy; same element type and count (shapes may differ).
  Copy(Tensor source, Tensor destination);
  // Host stream to tensor (a host-to-device FIFO).
  Copy(DataStream source, Tensor destination);
  // Tensor to host stream (a device-to-host FIFO).
  Copy(Tensor source, DataStream destination);
};

class Repeat : public Program {
 public:
  Repeat(uint32_t count, Program body);
};

class RepeatWhileTrue : public Program {
 public:
  // Runs `condition`, then while the scalar `predicate` is nonzero runs
  // `body` and `condition` again (HLO while).
  RepeatWhileTrue(Program condition, Tensor predicate, Program body);
};

class If : public Program {
 public:
  If(Tensor predicate, Program then_body, Program else_body = Sequence());
};

// Checks `program` against `graph`. Errors name the step by its path from
// the root, e.g. "program[2].body[0] (Copy): destination includes constant
// 1 'c1' (f32[4])".
Status ValidateProgram(const Graph& graph, const Program& program);

struct ProgramStats {
  uint64_t steps = 0;        // nodes, counting a shared sub-program once per use
  uint64_t by_kind[8] = {};  // indexed by ProgramKind
  uint64_t max_depth = 0;    // nesting depth; a lone step is depth 1
};
// Statistics of a valid (acyclic) program.
ProgramStats CountSteps(const Program& program);

}  // namespace tileprof::engine::program
