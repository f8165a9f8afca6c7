// Codelet: a vertex type. Like a Poplar vertex class (seed 003, listing 4.3:
// `class AdderVertex : public Vertex { Input<float> x; ... bool compute(); }`)
// it declares typed fields, and it carries what the compiler, the memory
// model and the simulator need: its execution kind, the bytes of state each
// vertex instance takes, the bytes of code the type takes once per tile, a
// cycle estimate, and a compute function with real numerics over typed spans
// of tile memory.
//
// Units. EstimateCycles returns, for a worker codelet, worker cycles: the
// instructions one worker context issues (a tile's 6 worker contexts take
// turns, so one worker cycle is 6 tile clock cycles and up to 6 worker
// vertices run at once). For a supervisor codelet it returns tile clock
// cycles for the whole vertex, its workers included.
//
// Thread safety: codelets are immutable after construction; Compute may run
// on many threads at once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/target/element_type.h"
#include "engine/target/target.h"

namespace tileprof::engine {

enum class FieldDirection : uint8_t { kInput, kOutput, kInOut };
// kScalar: exactly one element (`Input<float>`); kVector: a run of one or
// more elements (`Input<Vector<float>>`).
enum class FieldKind : uint8_t { kScalar, kVector };
// How a vector field is stored in the vertex state: kOnePtr is a 4-byte
// pointer whose length another field implies; kSpan adds a 4-byte length.
enum class VectorLayout : uint8_t { kOnePtr, kSpan };
enum class ExecutionKind : uint8_t { kWorker, kSupervisor };

// Bytes of vertex state per field, the split the text report's "Vertex Data /
// By Category" uses (text-report.md §4): a pointer per edge ("Edge
// pointers") and lengths and parameters ("Internal vertex state"). Tile
// addresses fit 32 bits on both targets, hence 4-byte pointers and lengths.
// Calibration: seed 004's adder graph has 1,216 SetSeedSupervisor vertices
// and 9,736 B of internal state with 4,904 B of edge pointers, i.e. 8 B of
// parameters and one 4-byte pointer each.
inline constexpr uint32_t kEdgePointerBytes = 4;
inline constexpr uint32_t kVectorLengthBytes = 4;
inline constexpr uint32_t kParamBytes = 4;

struct FieldSpec {
  std::string name;
  FieldDirection direction = FieldDirection::kInput;
  FieldKind kind = FieldKind::kVector;
  ElementType type = ElementType::kF32;
  VectorLayout layout = VectorLayout::kOnePtr;

  bool IsWritten() const { return direction != FieldDirection::kInput; }
  uint32_t EdgePointerBytes() const { return kEdgePointerBytes; }
  uint32_t InternalStateBytes() const {
    return kind == FieldKind::kVector && layout == VectorLayout::kSpan ? kVectorLengthBytes : 0;
  }
};

// The sizes a vertex instance was given: elements per field and parameter
// values, both in the codelet's declaration order.
struct VertexShape {
  std::span<const uint64_t> field_elements;
  std::span<const uint32_t> params;
};

// Per-tile state a codelet may read or change (the hardware PRNG seed).
struct TileState {
  uint32_t tile = 0;
  std::array<uint64_t, 2> prng = {0, 0};
};

// An input field handed over where it lies instead of gathered: `rows` runs
// of `row_bytes` bytes, the first at the start of the field's span (which
// covers them all, and the bytes between them, which belong to other
// tensors). Rows are `stride` bytes apart; with block_rows != 0 they come in
// blocks of block_rows rows, each block block_stride bytes after the one
// before (a block of a 4-D kernel: input channels within a kernel position).
// rows == 0: a plain span.
struct FieldRows {
  uint64_t rows = 0;
  uint64_t row_bytes = 0;
  uint64_t stride = 0;
  uint64_t block_rows = 0;
  uint64_t block_stride = 0;
  bool strided() const { return rows != 0; }
  uint64_t bytes() const { return rows * row_bytes; }
  // Where row r starts, from the span's start.
  uint64_t Offset(uint64_t r) const {
    return block_rows == 0 ? r * stride : r / block_rows * block_stride + r % block_rows * stride;
  }
  uint64_t extent() const { return rows == 0 ? 0 : Offset(rows - 1) + row_bytes; }
  // Whether a kernel reading rows of `want_row_bytes` whose elements are
  // `align` bytes can read these in place: rows of exactly that length,
  // aligned strides, and blocks of rows only where the kernel walks them
  // (`blocks`).
  bool Fits(uint64_t want_row_bytes, uint64_t align, bool blocks) const {
    return row_bytes == want_row_bytes && stride % align == 0 &&
           (blocks ? block_stride % align == 0 : block_rows == 0);
  }
};

// What a compute function works on: one contiguous byte span per field (the
// simulator gathers fragmented tensors into one), the parameter values, and
// the tile's state. Spans of input fields are only read. The graph never lets
// a written field overlap another field of its vertex, so compute functions
// may assume written spans alias nothing (in-place updates use one in/out
// field, as ScaledAdd's `data` does).
// `rows`, when not empty, has an entry per field: a field whose entry is
// strided() is given as rows (FieldRows), which only happens to the input
// fields the codelet's ReadsRows accepts; a matmul reads an operand's rows
// where they lie, which saves copying a fragmented operand on every run.
struct VertexIo {
  std::span<const std::span<std::byte>> fields;
  std::span<const uint32_t> params;
  TileState* tile_state = nullptr;
  std::span<const FieldRows> rows = {};

  const FieldRows* Rows(size_t field) const {
    return field < rows.size() && rows[field].strided() ? &rows[field] : nullptr;
  }
  // The field's own bytes (its span's size unless it is given as rows).
  uint64_t Bytes(size_t field) const {
    const FieldRows* r = Rows(field);
    return r ? r->bytes() : fields[field].size();
  }
};

class Codelet {
 public:
  virtual ~Codelet() = default;
  Codelet(const Codelet&) = delete;
  Codelet& operator=(const Codelet&) = delete;

  // "popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::ADD,float>".
  const std::string& name() const { return name_; }
  ExecutionKind execution_kind() const { return execution_kind_; }
  std::span<const FieldSpec> fields() const { return fields_; }
  // Parameters: unsigned 32-bit values set per vertex (Poplar's
  // `graph.setInitialValue(v["n"], 4)`), such as matmul sizes.
  std::span<const std::string> params() const { return params_; }
  std::optional<size_t> FindField(std::string_view field) const;
  // FindField, or an error naming the codelet and the field: for lowerings
  // that look their fields up once for every vertex of an op.
  Expected<size_t> FieldNumber(std::string_view field) const;
  std::optional<size_t> FindParam(std::string_view param) const;

  // Bytes of state one vertex instance takes, and its split.
  uint32_t edge_pointer_bytes() const;
  uint32_t internal_state_bytes() const;
  uint32_t state_bytes() const { return edge_pointer_bytes() + internal_state_bytes(); }
  // Bytes of code the type takes on each tile that runs it (once per tile).
  uint32_t code_bytes() const { return code_bytes_; }

  // Checks the sizes of the fields against each other and the parameters
  // (field_elements and params have one entry per field and parameter).
  // Errors name the field: "field 'in2' has 3 elements, 'in1' has 4".
  virtual Status CheckShape(const VertexShape& shape) const;
  // Cycle estimate for the given sizes (units: see the file comment). Never
  // decreases as the vertex's work grows (field sizes growing together as
  // CheckShape requires).
  virtual uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const = 0;
  // Runs the vertex. Checks that there is one span per field, that each span
  // holds whole elements, scalars exactly one, and CheckShape; never reads or
  // writes outside the spans.
  Status Run(const VertexIo& io) const {
    TILEPROF_RETURN_IF_ERROR(Check(io));
    return Compute(io);
  }
  // Run's checks alone. They depend only on the spans' sizes, the rows and
  // the parameters, which a simulator's plan fixes for every execution:
  // it checks each vertex once and then runs it with RunChecked (the checks
  // were a tenth of the MNIST sample's training step, run at every
  // execution of every vertex).
  Status Check(const VertexIo& io) const;
  // Runs a vertex whose `io` passed Check: the same spans' sizes, rows and
  // parameters (the bytes in the spans may differ).
  Status RunChecked(const VertexIo& io) const { return Compute(io); }
  // False for codelets that carry memory and cycle costs but no compute
  // function (the compiler's opaque ops): the simulator refuses a program
  // that would run one, before it starts, rather than invent results.
  virtual bool executable() const { return true; }
  // True for an input field that Compute can read as rows (FieldRows), in
  // place, when the simulator finds it so laid out.
  virtual bool ReadsRows(size_t /*field*/) const { return false; }

 protected:
  Codelet(std::string name, ExecutionKind kind, std::vector<FieldSpec> fields,
          std::vector<std::string> params, uint32_t code_bytes);

  // Elements in field `index` of `io` (Run has checked divisibility).
  uint64_t Count(const VertexIo& io, size_t index) const {
    return io.Bytes(index) / SizeOf(fields_[index].type);
  }
  // The computation proper; called by Run after the checks.
  virtual Status Compute(const VertexIo& io) const = 0;

 private:
  std::string name_;
  ExecutionKind execution_kind_;
  std::vector<FieldSpec> fields_;
  std::vector<std::string> params_;
  uint32_t code_bytes_;
};

// Field `field` of `io` as one contiguous span: its own, or, when it is
// given as rows, the rows copied into a per-thread buffer (one per field
// index, valid until the thread's next call for that index).
std::span<const std::byte> DenseField(const VertexIo& io, size_t field);

// Helpers for CheckShape implementations.
// Error unless fields `a` and `b` have the same number of elements.
Status CheckSameSize(const Codelet& codelet, const VertexShape& shape, size_t a, size_t b);

}  // namespace tileprof::engine
