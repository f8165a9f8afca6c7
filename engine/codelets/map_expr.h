// A fused elementwise expression: what popops::map builds from an
// expression tree, and what the TensorFlow IPU backend makes of chains of
// elementwise HLO ops (its expression fusion): one vertex per tile that
// reads each input once, computes the whole tree in registers and writes
// the root. The compiler (engine/compiler/lower_fusion.cc) creates one
// codelet per distinct expression.
//
//   tileprof::MapExpr<INPUTS;NODES>
//     in0..in<k-1>: the leaves, each a vector of the output's length, a
//       scalar (a broadcast scalar) or a spread vector, out: the root's
//       value per element.
//   INPUTS: the inputs' types, "f32" for a vector, "f32*" for a scalar,
//     "f32~" for a spread vector: a vector broadcast along a block of the
//     result's dimensions (a per-feature scale over [N,C,H,W]), of which the
//     vertex holds the elements [lo, lo + its length) its outputs read.
//     Output element e (of the result's flat elements first..first+n) reads
//     in[((first + e) / inner) % size - lo], as popops' broadcast-vector
//     vertices read their vector: no copy of the broadcast is made.
//     Parameters: first, firstHi (the 64-bit first element), and per spread
//     input i: inner<i>, size<i>, lo<i>.
//   NODES: the expression in evaluation order, each "i<input>",
//     "u<UnaryOp>(<node>)", "b<BinaryOp>(<node>,<node>)",
//     "s(<pred>,<on true>,<on false>)", "c(<low>,<x>,<high>)" (clamp) or
//     "v<type>(<node>)" (convert); ops by their enum value. The last node is
//     the root.
//
// The numbers are those of the separate codelets (elementwise.cc, data.cc),
// evaluated node by node over the vertex's elements: fusing never changes a
// result. The code is compiled for the expression: state holds only the
// fields, code grows with the nodes. Cycles: one pass over the elements
// loading each vector input once, every node's operation, one store.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/codelets/codelet.h"
#include "engine/codelets/codelets.h"

namespace tileprof::engine {

struct MapInput {
  ElementType type = ElementType::kF32;
  bool scalar = false;
  bool spread = false;
};

struct MapNode {
  enum class Kind : uint8_t { kInput, kUnary, kBinary, kSelect, kClamp, kConvert };
  Kind kind = Kind::kInput;
  uint8_t op = 0;                        // UnaryOp or BinaryOp
  ElementType type = ElementType::kF32;  // kConvert: the target type
  uint32_t a = 0, b = 0, c = 0;          // kInput: a is the input; else nodes
};

// Code bytes: a supervisor elementwise vertex's (274 B, calibrated on seed
// 004) plus 16 B (4 instructions) per node of the expression.
inline constexpr uint32_t kMapExprBaseCodeBytes = 274;
inline constexpr uint32_t kMapExprCodeBytesPerNode = 16;
// Nodes an expression may have.
inline constexpr size_t kMaxMapExprNodes = 128;

std::string MapExprCodeletName(std::span<const MapInput> inputs, std::span<const MapNode> nodes);
// Errors: no nodes or inputs, more than kMaxMapExprNodes, a node reading a
// later node or an input that does not exist, an operation the catalogue
// lacks for its operands' type, operands of different types.
Expected<std::unique_ptr<Codelet>> MakeMapExprCodelet(std::vector<MapInput> inputs,
                                                      std::vector<MapNode> nodes);
// The codelet a MapExprCodeletName stands for.
Expected<std::unique_ptr<Codelet>> MakeMapExprCodeletFromName(std::string_view name);
bool IsMapExprCodeletName(std::string_view name);

}  // namespace tileprof::engine
