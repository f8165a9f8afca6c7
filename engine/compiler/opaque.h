// Internal to engine/compiler: codelets the compiler defines for work the
// built-in catalogue has no vertex for. They carry honest memory costs
// (state from their fields, code bytes below) and a cycle estimate, and
// their Compute is an explicit "not supported" error: the simulator must
// refuse them rather than invent results.
//
//   tileprof::OpaqueOp<gather,float,int>  an HLO op the engine cannot run
//                                         (gather, sort, custom-call, ...):
//                                         inputs in0.., output out
//
// It also registers, once per name, the executable index-mapped codelets of
// engine/codelets/indexed.h that the lowering creates per rank.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "engine/codelets/gather.h"
#include "engine/codelets/map_expr.h"
#include "engine/codelets/sort.h"
#include "engine/graph/graph.h"

namespace tileprof::engine::compiler {

// An opaque op is a generic loop around unknown work: dispatch over the
// workers, index arithmetic and a per-element body. 512 B is about twice a
// supervisor elementwise vertex (274 B, calibrated on seed 004), for the
// extra index computations.
inline constexpr uint32_t kOpaqueCodeBytes = 512;
// Worker cycles per output element: an opaque op does an unknown amount of
// work per element; 8 (a load, a few index operations, a store) is a floor,
// not a measurement.
inline constexpr uint64_t kOpaqueCyclesPerElement = 8;

// Creates and registers (once per name) the compiler's codelets on a graph.
class CompilerCodelets {
 public:
  explicit CompilerCodelets(Graph& graph) : graph_(graph) {}

  // Fields in0..in<k-1> of `inputs` types (vectors) and `out`.
  Expected<const Codelet*> Opaque(std::string_view opcode, const std::vector<ElementType>& inputs,
                                  ElementType output);
  // The codelets of engine/codelets/indexed.h.
  Expected<const Codelet*> Rearrange(ElementType type, uint32_t in_rank, uint32_t out_rank,
                                     bool padded);
  Expected<const Codelet*> DynamicSlice(ElementType type, ElementType index, uint32_t rank,
                                        bool update);
  Expected<const Codelet*> Iota(ElementType type);
  // engine/codelets/bits.h.
  Expected<const Codelet*> BitcastConvert(ElementType in, ElementType out);
  Expected<const Codelet*> Threefry();
  // engine/codelets/linalg.h (f32 and f64).
  Expected<const Codelet*> Getrf(ElementType type);
  Expected<const Codelet*> Potrf(ElementType type);
  Expected<const Codelet*> Trsm(ElementType type);
  Expected<const Codelet*> Geqrf(ElementType type);
  Expected<const Codelet*> Orgqr(ElementType type);
  Expected<const Codelet*> LuPivotsToPermutation();
  // engine/codelets/window.h and random.h.
  Expected<const Codelet*> SelectAndScatter(ElementType type, uint32_t rank);
  Expected<const Codelet*> ReduceWindow(ElementType type, uint32_t rank);
  Expected<const Codelet*> Rng(ElementType type, bool normal);
  Expected<const Codelet*> ReduceExpr(const std::vector<ElementType>& types, uint32_t nodes);
  // engine/codelets/map_expr.h: a fused elementwise expression.
  Expected<const Codelet*> MapExpr(const std::vector<MapInput>& inputs,
                                   const std::vector<MapNode>& nodes);
  // engine/codelets/gather.h and sort.h.
  Expected<const Codelet*> Gather(ElementType type, ElementType index, uint32_t op_rank,
                                  uint32_t idx_rank, uint32_t out_rank);
  // engine/codelets/lookup.h: a planned gather's partial.
  Expected<const Codelet*> LookupPartial(ElementType type, ElementType index);
  Expected<const Codelet*> Scatter(ElementType type, ElementType index, ScatterCombiner combiner,
                                   uint32_t op_rank, uint32_t idx_rank, uint32_t upd_rank);
  Expected<const Codelet*> Sort(uint32_t rank, uint32_t key, SortOrder order,
                                const std::vector<ElementType>& types);
  Expected<const Codelet*> SortMerge(uint32_t key, SortOrder order,
                                     const std::vector<ElementType>& types);
  // The codelet a name of the forms above stands for, created and registered
  // as the compiler would (rebuilding a serialised graph, engine/exec).
  // Error: not a name this class makes.
  Expected<const Codelet*> FromName(std::string_view name);
  // Whether `name` has the form of a compiler codelet's name.
  static bool IsCompilerCodeletName(std::string_view name);

 private:
  Expected<const Codelet*> Get(std::string name, std::vector<ElementType> inputs,
                               ElementType output, uint32_t code_bytes, uint64_t cycles);
  Expected<const Codelet*> Register(Expected<std::unique_ptr<Codelet>> made);

  Graph& graph_;
  std::map<std::string, std::shared_ptr<const Codelet>> by_name_;
};

}  // namespace tileprof::engine::compiler
