// Internal to engine/compiler: the HLO -> graph lowering. One Lowering per
// compilation; lower.cc walks computations and control flow, the other
// lower_*.cc files lower families of instructions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/expected.h"
#include "engine/codelets/codelets.h"
#include "engine/compiler/compiler.h"
#include "engine/compiler/conv_plan.h"
#include "engine/compiler/mapping.h"
#include "engine/compiler/opaque.h"
#include "engine/compiler/runs.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"
#include "engine/hlo/attributes.h"
#include "engine/hlo/module.h"
#include "engine/hlo/peak_live.h"

namespace tileprof::engine::compiler {

// An HLO value: an array (tensor), a tuple of values, or nothing (token,
// opaque handle).
struct Value {
  Tensor tensor;
  std::vector<Value> elements;
  bool is_tuple = false;

  static Value Array(Tensor tensor) { return Value{std::move(tensor), {}, false}; }
  bool IsArray() const { return !is_tuple && tensor.valid(); }
  // The array leaves in order (tokens skipped).
  void Leaves(std::vector<Tensor>& out) const;
  std::vector<Tensor> Leaves() const {
    std::vector<Tensor> out;
    Leaves(out);
    return out;
  }
};

// How a vertex input relates to the output elements the vertex writes.
enum class Access : uint8_t {
  kSame,          // the same flat positions of an operand of the output's size
  kWhole,         // the whole operand (a scalar)
  kProportional,  // the same fraction of the operand: exact volume, location
                  // approximate (the element order of the op is not modelled)
  kScaled,        // positions scaled by operand size / output size, a whole
                  // multiple either way (bitcast-convert between types of
                  // different sizes reads r elements per output, or 1/r)
};

// How a rearrangement (tileprof::Rearrange, engine/codelets/indexed.h)
// finds source coordinate j from output coordinates o:
// c = add + mul * o[src] + mul2 * o[src2], an element when c >= 0,
// c % div == 0 and c / div is inside the source (else padding).
struct SourceDim {
  uint32_t src = 0;
  uint32_t src2 = 0;
  int64_t mul = 1;
  int64_t mul2 = 0;
  int64_t add = 0;
  uint64_t div = 1;
};

struct FieldInput {
  std::string field;
  Tensor tensor;
  Access access = Access::kSame;
};

using Scope = std::unordered_map<const hlo::Instruction*, Value>;

// What expression fusion (lower_fusion.cc) makes of each instruction of a
// computation, by index.
enum class FusionRole : uint8_t {
  kNone,    // lowered on its own
  kInner,   // computed inside its one user's expression, never stored
  kScalar,  // a broadcast scalar every user reads as a scalar, never filled
  kSpread,  // another broadcast read only by expressions: a view, a spread
            // input of their vertices, or a copy where each result lies
            // (LowerFused); never stored on its own
  kRoot,    // an expression's root: one fused vertex per tile
};
struct Fusion {
  std::vector<FusionRole> role;
};
// A broadcast read by a fused expression as a spread input: result element
// p reads operand element (p / inner) % size.
struct SpreadForm {
  uint64_t inner = 1;
  uint64_t size = 1;
};
std::optional<SpreadForm> SpreadFormOf(const hlo::Instruction& broadcast);
Fusion AnalyseFusion(const hlo::Computation& computation);
// Whether `i` is an instruction of `computation` (operands may be parameters
// of an enclosing one).
bool InComputation(const hlo::Computation& computation, const hlo::Instruction* i);

class Lowering {
 public:
  Lowering(Graph& graph, const CompileOptions& options, LoweringStats& stats);

  // Lowers the entry computation: host streams for parameters and results,
  // the seed vertices, the body.
  Status LowerEntry(const hlo::Module& module, program::Sequence& program);

 private:
  Status LowerComputation(const hlo::Computation& computation, std::span<const Value> args,
                          program::Sequence& program, Value* result);
  Status LowerInstruction(const hlo::Instruction& instruction, Scope& scope,
                          program::Sequence& program);
  Expected<Value> Lower(const hlo::Instruction& instruction, std::span<const Value> operands,
                        program::Sequence& program);

  // lower_elementwise.cc
  Expected<Value> LowerUnary(const hlo::Instruction& instruction, const Value& operand,
                             program::Sequence& program);
  Expected<Value> LowerBinary(const hlo::Instruction& instruction, std::span<const Value> operands,
                              program::Sequence& program);
  Expected<Value> LowerSelectOrClamp(const hlo::Instruction& instruction,
                                     std::span<const Value> operands, program::Sequence& program);
  Expected<Value> LowerConvert(const hlo::Instruction& instruction, const Value& operand,
                               program::Sequence& program);
  // `in` converted to `type` (itself if of that type), mapped like it; an
  // error if no codelet converts between the two.
  Expected<Tensor> Cast(const Tensor& in, ElementType type, std::string_view name,
                        program::Sequence& program);
  // `out`, computed in ComputedShape(instruction), rounded to the
  // instruction's float type when that differs (XLA's mixed precision).
  Expected<Value> RoundToResult(const hlo::Instruction& instruction, Tensor out,
                                program::Sequence& program);
  // XLA's mixed precision (HloVerifier's allow_mixed_precision; TPU dumps
  // after optimisation have it): the operands of an elementwise op, each
  // floating-point one converted to the op's type (a compare's to the wider
  // of the two). Empty when every operand already has it.
  Expected<std::vector<Value>> MatchPrecision(const hlo::Instruction& instruction,
                                              std::span<const Value> operands,
                                              program::Sequence& program);
  // lower_spread.cc: whether `tensor` lies in more than a few runs a tile.
  bool Fragmented(const Tensor& tensor) const;
  // lower_spread.cc: a fused expression with spread inputs, one vertex per
  // run of `out` (its parameters say where the run lies).
  Status EmitSpreadRuns(ComputeSetId cs, const Codelet& codelet, const Tensor& out,
                        std::span<const MapInput> inputs, std::span<const Tensor> leaves,
                        std::span<const std::pair<uint32_t, SpreadForm>> spread_inputs,
                        std::string_view name);
  // lower_fusion.cc: the expression rooted at `root`.
  Expected<Value> LowerFused(const hlo::Instruction& root, const Fusion& fusion, const Scope& scope,
                             program::Sequence& program);
  // lower_data.cc
  Expected<Value> LowerConstant(const hlo::Instruction& instruction);
  // The broadcast as a view of its operand (a reshape, or copies of long
  // runs), or nullopt when it must be copied.
  Expected<std::optional<Tensor>> BroadcastAsView(const hlo::Instruction& instruction,
                                                  const Value& operand);
  // `like`: a result that is copied is mapped like it (else linearly).
  Expected<Value> LowerBroadcast(const hlo::Instruction& instruction, const Value& operand,
                                 program::Sequence& program, const Tensor* like = nullptr);
  Expected<Value> LowerTranspose(const hlo::Instruction& instruction, const Value& operand,
                                 program::Sequence& program);
  Expected<Value> LowerSlice(const hlo::Instruction& instruction, const Value& operand,
                             program::Sequence& program);
  Expected<Value> LowerConcatenate(const hlo::Instruction& instruction,
                                   std::span<const Value> operands, program::Sequence& program);
  // lower_rms_norm.cc: torch-neuronx's AwsNeuronRmsNorm; nullopt when the
  // call is not one of the form it documents.
  Expected<std::optional<Value>> LowerRmsNorm(const hlo::Instruction& instruction,
                                              const hlo::CustomCall& call,
                                              std::span<const Value> operands,
                                              program::Sequence& program);
  // lower_x64.cc: the TPU compiler's X64SplitLow/X64SplitHigh/X64Combine;
  // nullopt when the call is not of their form.
  Expected<std::optional<Value>> LowerX64(const hlo::Instruction& instruction,
                                          const hlo::CustomCall& call,
                                          std::span<const Value> operands,
                                          program::Sequence& program);
  Expected<Value> LowerCopyStart(const hlo::Instruction& instruction, const Value& operand,
                                 program::Sequence& program);
  Expected<Value> LowerCopy(const hlo::Instruction& instruction, const Value& operand,
                            program::Sequence& program);
  // lower_index.cc
  Expected<Value> LowerMapped(const hlo::Instruction& instruction, const Value& operand,
                              std::span<const SourceDim> map, const Tensor* padding,
                              program::Sequence& program, const Tensor* like = nullptr);
  Expected<Value> LowerReverse(const hlo::Instruction& instruction, const Value& operand,
                               program::Sequence& program);
  Expected<Value> LowerPad(const hlo::Instruction& instruction, std::span<const Value> operands,
                           program::Sequence& program);
  Expected<Value> LowerTransposeRearrange(const hlo::Instruction& instruction, const Value& operand,
                                          std::span<const size_t> permutation,
                                          program::Sequence& program);
  // lower_transpose.cc: `source` transposed by `permutation` as blocks of
  // the two dimensions that swap, the result mapped block by block; a view
  // when only size-1 dimensions move; nullopt when the transpose keeps rows
  // (EmitRearrange's runs are then cheap) or has more slabs than tiles.
  Expected<std::optional<Tensor>> EmitBlockedTranspose(const Tensor& source,
                                                       std::span<const size_t> permutation,
                                                       std::string_view name,
                                                       program::Sequence& program);
  Expected<Value> LowerBroadcastRearrange(const hlo::Instruction& instruction, const Value& operand,
                                          program::Sequence& program, const Tensor* like = nullptr);
  Expected<Value> LowerSliceRearrange(const hlo::Instruction& instruction, const Value& operand,
                                      std::span<const hlo::SliceDimension> slice,
                                      program::Sequence& program);
  Expected<Value> LowerIota(const hlo::Instruction& instruction, program::Sequence& program);
  Expected<Value> LowerDynamicSlice(const hlo::Instruction& instruction,
                                    std::span<const Value> operands, program::Sequence& program);
  // lower_dynamic_lookup.cc: a dynamic-slice of one row of a table at a
  // run-time start, written out as the gather of that row (the lookup plans
  // below); nullopt when not of that form or too small to gain.
  Expected<std::optional<Value>> LowerDynamicLookup(const hlo::Instruction& instruction,
                                                    std::span<const Value> operands,
                                                    program::Sequence& program);
  // lower_dynamic_blocks.cc: the dynamic-slice `out` (a new, unmapped
  // variable) of `base` cut into column blocks when that costs a tile far
  // less than the linear mapping (dynamic_slice.h): `out` mapped by blocks
  // and its vertices added to `cs`. False, `out` untouched, otherwise.
  Expected<bool> EmitDynamicSliceBlocks(const Tensor& out, const Tensor& base,
                                        std::span<const Tensor> starts, std::string_view name,
                                        ComputeSetId cs);
  // lower_gather.cc, lower_sort.cc
  // lower_sum.cc: sums rows of partials (each flat, as many elements as
  // its job's target) into each job's flat, mapped target; `tiles` holds
  // the tile of each row (where a two-stage sum puts its group sums).
  struct SumJob {
    std::vector<Tensor> rows;
    std::vector<uint32_t> tiles;
    Tensor target;
  };
  struct RowSum {
    ReduceOp op = ReduceOp::kAdd;
    ElementType type = ElementType::kF32;
    // Whether the targets hold a value the sum adds to (filled by the
    // caller); else the sum starts from the op's identity.
    bool into_target = false;
    // Fills the group sums of a two-stage sum before they are summed into
    // (null: the first stage starts from the op's identity).
    std::function<Status(const Tensor&)> fill_groups;
  };
  Status SumRows(std::span<SumJob> jobs, const RowSum& how, std::string_view name,
                 program::Sequence& program);
  // lower_lookup.cc: a gather of whole table rows planned over the tiles
  // holding the table; nullopt when the gather is not of that form or the
  // unplanned gather receives less.
  struct LookupForm {
    std::span<const uint64_t> dims;        // the result's
    std::span<const uint32_t> res_src;     // per result dimension (gather.h)
    std::span<const uint32_t> start;       // per operand dimension
    std::span<const int64_t> slice_sizes;  // per operand dimension
    uint64_t components = 1;               // of the index vector
    // Elements a tile receives or holds at most under another plan of the
    // same gather (the column lookup's): the lookup is chosen only when
    // it needs fewer.
    uint64_t rival = UINT64_MAX;
  };
  Expected<std::optional<Value>> LowerLookup(const hlo::Instruction& instruction,
                                             const Tensor& table, const Tensor& indices,
                                             const LookupForm& form, program::Sequence& program);
  // The same lookup along the minor dimension of a [w, r] table (each of
  // the w rows picks at the same L ids: the column plan's gather of the
  // transposed table, jnp.take(x, ids, axis=1)), result [w, L...]: each
  // tile run of the table, within one row, writes a partial of that row's
  // L lookups, and the partials are summed row by row. nullopt when not
  // of that form or not cheaper than the gather as it is.
  Expected<std::optional<Value>> LowerMinorLookup(const hlo::Instruction& instruction,
                                                  const Tensor& table, const Tensor& indices,
                                                  program::Sequence& program);
  // Both lookups' sum of their partials into `out`, the jobs' targets.
  Status SumLookupPartials(const hlo::Instruction& instruction, const Tensor& out,
                           std::span<SumJob> jobs, program::Sequence& program);
  // lower_lookup_views.cc: a gather of whole rows chosen by an index
  // vector of several components (index_vector_dim `ivd`), written out as
  // the lookup above on the table's flat view of rows; nullopt when not of
  // that form.
  Expected<std::optional<Value>> LowerFlatLookup(const hlo::Instruction& instruction,
                                                 std::span<const Value> operands,
                                                 const LookupForm& form, uint32_t ivd,
                                                 program::Sequence& program);
  // A gather of one block (every index dimension but the index vector's of
  // size 1, no batching dimensions, more than one element in a dimension an
  // index chooses): XLA's dynamic-slice written as a gather (JAX's
  // x[i:i+n] under jit), written out as that dynamic-slice so that its
  // planning applies; nullopt when not of that form.
  Expected<std::optional<Value>> LowerSliceGather(const hlo::Instruction& instruction,
                                                  std::span<const Value> operands,
                                                  std::span<const int64_t> start_map,
                                                  std::span<const int64_t> slice_sizes,
                                                  uint32_t ivd, program::Sequence& program);
  // A one-component lookup written out as the gather of the transposed
  // table, when a tile run of its result would otherwise read every row in
  // many columns; nullopt when `form.rival` (ColumnLookupElements' estimate,
  // set by LowerGather) is unset.
  Expected<std::optional<Value>> LowerColumnLookup(const hlo::Instruction& instruction,
                                                   std::span<const Value> operands,
                                                   const LookupForm& form, uint32_t ivd,
                                                   program::Sequence& program);
  // The elements a tile receives or holds at most under the column lookup,
  // nullopt when it does not apply or is not much cheaper than the gather
  // as it is.
  std::optional<uint64_t> ColumnLookupElements(const hlo::Instruction& instruction,
                                               std::span<const Value> operands,
                                               const LookupForm& form);
  Expected<Value> LowerGather(const hlo::Instruction& instruction, std::span<const Value> operands,
                              program::Sequence& program);
  Expected<Value> LowerScatter(const hlo::Instruction& instruction, std::span<const Value> operands,
                               program::Sequence& program);
  Expected<Value> LowerSort(const hlo::Instruction& instruction, std::span<const Value> operands,
                            program::Sequence& program);
  // Maps a sort's first result, whole lines of `dimension` per tile when it
  // is the innermost.
  Status MapSortLines(const Tensor& out, size_t dimension);
  // lower_sort_spread.cc: the blocks each line of a sort along `dimension`
  // is cut into, one per tile; 1 when a line is sorted on one tile.
  uint64_t SortBlocks(const Tensor& first, size_t dimension,
                      std::span<const ElementType> types) const;
  // The sort's results, each line cut into `blocks` sorted on their tiles
  // and merged across them.
  Expected<std::vector<Tensor>> LowerSpreadSort(const hlo::Instruction& instruction,
                                                std::span<const Value> operands,
                                                const std::vector<ElementType>& types, uint32_t key,
                                                SortOrder order, uint64_t blocks,
                                                program::Sequence& program);
  // lower_transpose.cc
  // A transpose whose every user is a dot is folded into them, as XLA's
  // TransposeFolding pass does: each dot reads the transpose's operand with
  // its dimension numbers mapped through the permutation, and the
  // transposed copy is never made. `foldable` (by index) are the
  // computation's transposes read by dots only; FoldTranspose folds one
  // when its operand is an array in `scope` (true), and FoldedTranspose
  // gives a folded transpose's permutation, else null (public, below).
  static std::vector<bool> FoldableTransposes(const hlo::Computation& computation);
  bool FoldTranspose(const hlo::Instruction& transpose, Scope& scope);
  // lower_dot.cc
  Expected<Value> LowerDotLike(const hlo::Instruction& instruction, std::span<const Value> operands,
                               program::Sequence& program);
  // lower_reduce.cc
  Expected<Value> LowerReduce(const hlo::Instruction& instruction, std::span<const Value> operands,
                              program::Sequence& program);
  // The reduction of `in` (standing for the instruction's operand 0) over
  // `reduced` with the instruction's init (operand 1), computation and shape.
  Expected<Value> ReduceArray(const hlo::Instruction& instruction, std::span<const Value> operands,
                              const Tensor& in, std::span<const int64_t> reduced,
                              program::Sequence& program);
  using FillFn = std::function<Status(const Tensor&)>;
  // lower_reduce_held.cc: a reduction of [A, R, I] over R (I > 1, or a
  // row reduction: I = 1, A > 1) computed
  // on the input's tiles into a new result of `shape`; nullopt
  // when not of that form or the [F, outputs] view receives less.
  // `fill_init`: fills `out` with a non-identity init (else null).
  Expected<std::optional<Value>> ReduceWhereHeld(const hlo::Instruction& instruction,
                                                 const Tensor& in,
                                                 const std::vector<bool>& is_reduced, ReduceOp op,
                                                 const hlo::Shape& shape, const FillFn& fill_init,
                                                 program::Sequence& program);
  // The same where the input's tiles hold pieces of its rows (a range of
  // I of each): nullopt when too fragmented for a vertex per piece.
  Expected<std::optional<Value>> ReduceColumnsWhereHeld(const hlo::Instruction& instruction,
                                                        const Tensor& flat_in, uint64_t outer,
                                                        uint64_t reduced, uint64_t inner,
                                                        ReduceOp op, const hlo::Shape& shape,
                                                        const FillFn& fill_init,
                                                        program::Sequence& program);
  // Reduces each run of in.NumElements() / out.NumElements() consecutive
  // elements of `in` into one element of the mapped `out`: a compute set of
  // ContinuousReduce vertices (`codelet`), one per mapped piece of `out`.
  Status EmitContinuousReduce(const Tensor& in, const Tensor& out, const Codelet& codelet,
                              std::string_view name, program::Sequence& program);
  // lower_reduce_expr.cc: reduce with several operands or a reducer that
  // is not one binary op.
  Expected<Value> LowerReduceExpr(const hlo::Instruction& instruction,
                                  std::span<const Value> operands, program::Sequence& program);
  // lower_window.cc
  Expected<Value> LowerReduceWindow(const hlo::Instruction& instruction,
                                    std::span<const Value> operands, program::Sequence& program);
  // reduce-window whose window is long along one dimension: a sliding
  // reduction by doubling (lower_sliding.cc); nullopt when patches are the
  // cheaper plan or the window is not of that form.
  Expected<std::optional<Value>> LowerSlidingWindow(const hlo::Instruction& instruction,
                                                    std::span<const Value> operands,
                                                    std::span<const hlo::WindowDimension> window,
                                                    std::span<const uint64_t> out_dims,
                                                    program::Sequence& program);
  Expected<Value> LowerSelectAndScatter(const hlo::Instruction& instruction,
                                        std::span<const Value> operands,
                                        program::Sequence& program);
  // lower_bits.cc
  Expected<Value> LowerBitcastConvert(const hlo::Instruction& instruction, const Value& operand,
                                      program::Sequence& program);
  Expected<Value> LowerThreefry(const hlo::Instruction& instruction,
                                std::span<const Value> operands, program::Sequence& program);
  // lower_linalg.cc: the LAPACK, cuSOLVER and cuBLAS calls of linalg_call.h,
  // and XLA's triangular-solve and cholesky, which share their codelets.
  Expected<Value> LowerLinalg(const hlo::Instruction& instruction, const hlo::CustomCall& call,
                              std::span<const Value> operands, program::Sequence& program);
  Expected<Value> LowerLinalgOp(const hlo::Instruction& instruction,
                                std::span<const Value> operands, program::Sequence& program);
  // A call read (nullopt: not supported, opaque): on a tile per group of
  // matrices, blocked when it is one Cholesky too large for a tile.
  Expected<Value> LowerLinalgCall(const hlo::Instruction& instruction,
                                  const std::optional<struct LinalgCall>& linalg,
                                  std::span<const Value> operands, program::Sequence& program);
  // lower_custom_call.cc
  Expected<Value> LowerCustomCall(const hlo::Instruction& instruction,
                                  std::span<const Value> operands, program::Sequence& program);
  Expected<Value> LowerCollective(const hlo::Instruction& instruction,
                                  std::span<const Value> operands, program::Sequence& program);
  Expected<Value> LowerGetDimensionSize(const hlo::Instruction& instruction,
                                        std::span<const Value> operands,
                                        program::Sequence& program);
  // An op written out as an HLO module of its own (`text`, whose entry
  // takes `args`), lowered like a call whose compute sets are the op's.
  Expected<Value> LowerExpansion(const hlo::Instruction& instruction, std::string text,
                                 std::span<const Value> args, program::Sequence& program);
  // lower_cholesky_blocked.cc: a Cholesky factorisation of one n x n
  // `matrix` too large for a tile, blocked over tiles; nullopt for forms it
  // does not take (batched matrices).
  Expected<std::optional<Value>> LowerBlockedCholesky(const hlo::Instruction& instruction,
                                                      const Value& matrix, uint64_t n, bool lower,
                                                      program::Sequence& program);
  // lower_batch_norm.cc: batch-norm-training, -inference and -grad as the
  // reductions and elementwise ops they stand for.
  Expected<Value> LowerBatchNorm(const hlo::Instruction& instruction,
                                 std::span<const Value> operands, program::Sequence& program);
  // lower_rng.cc
  Expected<Value> LowerRng(const hlo::Instruction& instruction, std::span<const Value> operands,
                           program::Sequence& program);
  // lower_control.cc
  Expected<Value> LowerWhile(const hlo::Instruction& instruction, const Value& operand,
                             program::Sequence& program);
  Expected<Value> LowerConditional(const hlo::Instruction& instruction,
                                   std::span<const Value> operands, program::Sequence& program);

 public:
  // ---- Shared helpers (used by every lower_*.cc) ------------------------
  const std::vector<size_t>* FoldedTranspose(const hlo::Instruction& instruction) const;
  // A new value of `shape`, every array leaf a new variable; mapped linearly
  // when `map` (else the caller maps it).
  Expected<Value> NewValue(const hlo::Shape& shape, std::string_view name, bool map);
  Expected<Tensor> NewTensor(const hlo::Shape& shape, std::string_view name, bool map);
  Expected<Tensor> NewTensor(ElementType type, std::vector<uint64_t> shape, std::string_view name,
                             bool map);
  // An opaque op: new output variables, one vertex per output tile per leaf
  // reading its share of every operand; with `leafwise` (a collective of
  // several arrays), leaf i of the result reads the operands' leaf i only.
  Expected<Value> LowerOpaque(const hlo::Instruction& instruction, std::span<const Value> operands,
                              program::Sequence& program, bool leafwise = false);
  // out[o] = source[map(o)] (or *padding) as tileprof::Rearrange vertices,
  // one per tile run of the new result of `out_dims`, mapped linearly or
  // like `like` (a tensor of as many elements).
  Expected<Tensor> EmitRearrange(const Tensor& source, std::span<const SourceDim> map,
                                 const Tensor* padding, std::vector<uint64_t> out_dims,
                                 std::string_view name, program::Sequence& program,
                                 const Tensor* like = nullptr);
  // A compute set named after the instruction, executed by `program`.
  ComputeSetId AddComputeSet(std::string_view name, program::Sequence& program);
  // One vertex of `codelet` per tile of `out` (grouping the tile's elements),
  // its `out_field` connected to them and each input per its access.
  Status EmitPerTile(ComputeSetId compute_set, const Codelet& codelet, std::string_view out_field,
                     const Tensor& out, std::span<const FieldInput> inputs,
                     std::string_view debug_name);
  // The share of an n-element operand, as (first element, count), that
  // `count` of `total` output elements starting at `position` read: same
  // fraction, at least one element (none when n or total is zero).
  static std::pair<uint64_t, uint64_t> ProportionalRange(uint64_t n, uint64_t position,
                                                         uint64_t count, uint64_t total);
  // A tensor of `shape` filled with the scalar `scalar` (popops::Fill).
  Expected<Tensor> Fill(const Tensor& scalar, const hlo::Shape& shape, std::string_view name,
                        program::Sequence& program);
  void NoteOpaque(std::string_view opcode);

  // Variables standing for constants whose values are unknown (elided in
  // the HLO text, or of a type the engine has no arithmetic for).
  const std::vector<VariableId>& valueless_constants() const { return valueless_constants_; }
  // Of those, the ones whose values the HLO text elides and whose type the
  // engine computes on: a run may fill them (CompileResult::elided_constants).
  const std::vector<VariableId>& elided_constants() const { return elided_constants_; }

  // The HLO instructions that made compute sets (PopVision's operations).
  // A compute set is named after the instruction it computes ("dot.3",
  // "convolution.7/step2"), but may be made later, while another is lowered
  // (an elementwise chain is computed when a consumer needs it, a loop body's
  // results at the loop's end): it belongs to the instruction it is named
  // after, else to the one being lowered. A computation lowered at several
  // calls gives its instructions' compute sets of every call to the one
  // operation.
  struct OperationOrigin {
    std::string name;
    std::string opcode;
    std::optional<uint64_t> flops;  // hlo::EstimateOperationFlops
  };
  static constexpr uint32_t kNoOperation = UINT32_MAX;
  const std::vector<OperationOrigin>& operations() const { return operations_; }
  // By compute set (shorter than the graph's list when the last ones belong
  // to no instruction); kNoOperation for a compute set of none (the seed's).
  const std::vector<uint32_t>& compute_set_operations() const { return compute_set_operations_; }

  // Tensor map recording (tensor_map.cc): RecordOutputs is called for every
  // instruction once its value is complete; FinishTensorMap orders the map.
  void RecordTensorMapInto(report::TensorMap* map) { tensor_map_ = map; }
  // Called once per HLO instruction visited (parameters included, a called
  // computation once per call): the Graph Construction ticks of the
  // progress bar. InstructionVisits(module) is how many there will be.
  void OnVisit(std::function<void()> visited) { visited_ = std::move(visited); }
  void RecordOutputs(const hlo::Instruction& instruction, const Value& value);
  void FinishTensorMap();

  // Plans of contractions by ContractionShape::Key(): a model repeats the
  // same convolution shapes many times.
  const Partition* FindPlan(const std::string& key) const {
    auto it = plans_.find(key);
    return it == plans_.end() ? nullptr : &it->second;
  }
  void RememberPlan(const std::string& key, const Partition& plan) { plans_[key] = plan; }
  // The bytes each tile has free at `instruction`'s step below the module's
  // peak-live bound (PlanTarget::free_temporary_bytes), at most the
  // available memory proportion of a tile, rounded down to 8 KiB so that
  // plans of one shape at similar steps share a memo entry.
  uint64_t FreeBytesPerTile(const hlo::Instruction& instruction) const;
  // The module's own peak-live bound (DESIGN.md), in bytes.
  uint64_t PeakLiveBytes() const {
    return static_cast<uint64_t>(std::max<int64_t>(peak_live_.bytes, 0));
  }
  void NotePlan(std::string line) { stats_.plans.push_back(std::move(line)); }
  // Whether every element of `tensor` belongs to an entry parameter that no
  // instruction has read yet: its layout is still free, and the first op
  // that plans it may map it (TensorFlow's allocation finder).
  bool IsUnread(const Tensor& tensor) const;
  // Marks the operands' variables read, except those `result` views.
  void MarkRead(std::span<const Value> operands, const Value& result);

  Graph& graph() { return graph_; }
  LinearMapper& mapper() { return mapper_; }
  CompilerCodelets& codelets() { return codelets_; }
  const CompileOptions& options() const { return options_; }

 private:
  Graph& graph_;
  const CompileOptions& options_;
  LoweringStats& stats_;
  LinearMapper mapper_;
  CompilerCodelets codelets_;
  uint32_t call_depth_ = 0;
  // EmitPerTile's output positions by tile and the tiles it touched, kept
  // from op to op: a vector per tile allocated for each op was a tenth of
  // its time.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> tile_ranges_;
  std::vector<uint32_t> ranged_tiles_;
  std::function<void()> visited_;
  std::vector<VariableId> valueless_constants_;
  std::vector<VariableId> elided_constants_;  // a subset of valueless_constants_
  // The module LowerEntry lowers: its devices (collectives on one device
  // are identities).
  const hlo::Module* module_ = nullptr;
  std::vector<OperationOrigin> operations_;
  std::vector<uint32_t> compute_set_operations_;
  std::unordered_map<const hlo::Instruction*, uint32_t> operation_of_;
  std::unordered_map<std::string_view, const hlo::Instruction*> instruction_named_;
  // Gives the compute sets from `first` on that have no operation yet to
  // the instruction each is named after, else to `instruction`.
  void ClaimComputeSets(const hlo::Instruction& instruction, size_t first);
  uint32_t OperationOf(const hlo::Instruction& instruction);
  std::unordered_map<std::string, Partition> plans_;
  std::unordered_map<const hlo::Instruction*, std::vector<size_t>> folded_transposes_;
  hlo::PeakLive peak_live_;  // of the module LowerEntry lowers
  // Computations written out for ops lowered as others (LowerBatchNorm):
  // the graph's names and the tensor map refer to their instructions.
  std::vector<std::unique_ptr<hlo::Module>> expansions_;
  // While set, every new compute set is this instruction's operation (an
  // expansion's are the op it expands).
  const hlo::Instruction* claim_for_ = nullptr;
  // Entry parameters' variables not read by any instruction yet.
  std::unordered_set<VariableId> unread_;
  // Tensor map state (see RecordTensorMapInto).
  report::TensorMap* tensor_map_ = nullptr;
  // Instruction names recorded: consumers key tensors by "<name>,<index>"
  // across the whole map, so a name seen again (a computation lowered per
  // call, or a name reused in another computation) keeps its first record.
  std::unordered_set<std::string_view> recorded_;
  std::unordered_set<VariableId> constant_variables_;
  size_t valueless_seen_ = 0;
  // By computation index, then (instruction index, tensor) in record order.
  std::map<uint32_t, std::pair<std::string, std::vector<std::pair<uint32_t, report::MappedTensor>>>>
      recorded_tensors_;
  // Tensors holding an entry parameter not read yet, whose tiles are
  // counted at the end: a planned conv or dot lays such an operand out on
  // its cells when it first reads it (its weights), after it is recorded.
  struct DeferredTiles {
    uint32_t computation = 0;
    size_t position = 0;  // in recorded_tensors_[computation].second
    Tensor tensor;
  };
  std::vector<DeferredTiles> deferred_tiles_;
};

// How many instructions lowering `module` visits: the entry's, and those of
// every computation a call, fusion, while or conditional lowers in place,
// once per call site. (A computation that calls itself, invalid HLO, counts
// its own instructions once; the lowering then fails.)
uint64_t InstructionVisits(const hlo::Module& module);

// lower_elementwise.cc: the catalogue operation of an elementwise HLO op
// (nullopt when it has none), and the operand an elementwise output is
// mapped like (the first that is neither a constant nor a broadcast view).
std::optional<UnaryOp> UnaryOpOf(hlo::Opcode op, ElementType type);
std::optional<BinaryOp> BinaryOpOf(const hlo::Instruction& instruction);
const Tensor& Leader(const Graph& graph, std::span<const Tensor* const> operands);

// Whether a reduction computation is one binary op (add, multiply, maximum,
// minimum, and, or) of its two parameters: what popops::Reduce runs.
bool IsSimpleReducer(const hlo::Computation& computation);
std::optional<ReduceOp> ReduceOpOf(const hlo::Computation& computation);
// True when `init` is a constant equal to the identity of `op` (integer
// max/min identities are not recognised: that needs the type's range).
bool IsReduceIdentity(const hlo::Instruction& init, ReduceOp op);

// Runs of a contiguous tensor of `shape` after Dimshuffle(permutation),
// without building the view: the trailing dimensions the permutation keeps
// in place stay contiguous.
uint64_t EstimatedRuns(std::span<const uint64_t> shape, std::span<const size_t> permutation);

// An integer attribute such as iota_dimension=1 (nullopt when absent).
Expected<std::optional<int64_t>> IntAttribute(const hlo::Instruction& instruction,
                                              std::string_view name);

// Poplar views are cheap up to a few thousand regions; beyond that each
// vertex reading the view would need a long region list in its state, and
// the data is rearranged into a new tensor instead (lower_data.cc).
inline constexpr uint64_t kMaxViewRegions = 4096;
// A view made of runs shorter than this (a broadcast repeating single
// elements, a reverse of the innermost dimension) would cost a region per
// few elements: such data is rearranged instead.
inline constexpr uint64_t kMinViewRunBytes = 64;

// Rows one popops::Reduce vertex of SumRows sums; more take two stages.
inline constexpr size_t kMaxSumFanIn = 32;
// A group's sum in a two-stage SumRows is cut into pieces of at least this
// many bytes, one per tile (at most one per row).
inline constexpr uint64_t kMinSumPieceBytes = 256;
// The rows per group of a two-stage sum of `rows` rows (rows when one).
size_t SumFanIn(size_t rows);

// lower_lookup.cc: whether a gather's result (`dims`, each from `res_src`:
// an operand dimension below `op_rank`, else an index dimension) is in
// [lookups, row] order: its dimensions of more than one element are the
// indices' in order, then the table's row dimensions in order.
bool IsLookupMajor(std::span<const uint64_t> dims, std::span<const uint32_t> res_src,
                   size_t op_rank);

// lower_lookup.cc: whether a gather chooses dimension 0 of `table` by the
// one index component and takes every other dimension whole.
bool TakesWholeRows(const Tensor& table, std::span<const uint32_t> start,
                    std::span<const int64_t> slice_sizes, uint64_t components);

// linalg_call.cc: whether a custom call's target is one LowerLinalg reads.
bool IsLinalgTarget(std::string_view target);

// Error prefix naming the instruction: "add.3 (add)".
std::string Describe(const hlo::Instruction& instruction);

}  // namespace tileprof::engine::compiler
