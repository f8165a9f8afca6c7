// The lowering driver: computations, the entry's host streams and seed
// vertices, and the helpers every lower_*.cc uses (the dispatch from opcode to
// lowering is lower_dispatch.cc).
#include "engine/compiler/lower.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/compiler/types.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/stats.h"

namespace tileprof::engine::compiler {

using hlo::Opcode;

void Value::Leaves(std::vector<Tensor>& out) const {
  if (is_tuple) {
    for (const Value& element : elements) element.Leaves(out);
  } else if (tensor.valid()) {
    out.push_back(tensor);
  }
}

std::string Describe(const hlo::Instruction& instruction) {
  return fmt::format("{} ({})", instruction.name(), hlo::OpcodeName(instruction.opcode()));
}

uint64_t EstimatedRuns(std::span<const uint64_t> shape, std::span<const size_t> permutation) {
  uint64_t n = 1, run = 1;
  for (uint64_t d : shape) n *= d;
  for (size_t i = permutation.size(); i-- > 0 && permutation[i] == i;) run *= shape[i];
  return run == 0 ? 0 : n / run;
}

uint64_t InstructionVisits(const hlo::Module& module) {
  constexpr uint64_t kUnknown = UINT64_MAX;
  std::vector<uint64_t> visits(module.computations().size(), kUnknown);
  // Saturating: computations called twice per level, many levels deep,
  // would overflow; the bar only needs an upper bound then.
  auto add = [](uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX - 1 : a + b; };
  std::function<uint64_t(const hlo::Computation&)> count =
      [&](const hlo::Computation& computation) {
        uint64_t& memo = visits[computation.index()];
        if (memo != kUnknown) return memo;
        memo = 0;  // a call cycle counts nothing more
        uint64_t n = 0;
        for (const hlo::Instruction* instruction : computation.instructions()) {
          n = add(n, 1);
          switch (instruction->opcode()) {
            case Opcode::kCall:
            case Opcode::kFusion:
            case Opcode::kWhile:
            case Opcode::kConditional:
              for (const hlo::Computation* called : instruction->called_computations())
                n = add(n, count(*called));
              break;
            default:
              break;
          }
        }
        return memo = n;  // `visits` never grows, so `memo` still names this slot
      };
  return module.entry() == nullptr ? 0 : count(*module.entry());
}

Expected<std::optional<int64_t>> IntAttribute(const hlo::Instruction& instruction,
                                              std::string_view name) {
  const hlo::Attribute* attribute = instruction.FindAttribute(name);
  if (attribute == nullptr) return std::optional<int64_t>();
  const std::string_view text = attribute->value();
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return MakeError("bad {}={}", name, text);
  }
  return std::optional<int64_t>(value);
}

Lowering::Lowering(Graph& graph, const CompileOptions& options, LoweringStats& stats)
    : graph_(graph), options_(options), stats_(stats), mapper_(graph, options), codelets_(graph) {}

// ---- Helpers ---------------------------------------------------------------

bool Lowering::IsUnread(const Tensor& tensor) const {
  if (!tensor.valid() || tensor.regions().empty()) return false;
  for (const TensorRegion& region : tensor.regions())
    if (!unread_.contains(region.variable)) return false;
  return true;
}

void Lowering::MarkRead(std::span<const Value> operands, const Value& result) {
  // A view (reshape, tuple, get-tuple-element, a transpose kept as a view)
  // passes the parameter on unread: its result holds the same variables.
  std::unordered_set<VariableId> viewed;
  for (const Tensor& leaf : result.Leaves())
    for (const TensorRegion& region : leaf.regions()) viewed.insert(region.variable);
  for (const Value& operand : operands)
    for (const Tensor& leaf : operand.Leaves())
      for (const TensorRegion& region : leaf.regions())
        if (!viewed.contains(region.variable)) unread_.erase(region.variable);
}

Expected<Tensor> Lowering::NewTensor(ElementType type, std::vector<uint64_t> shape,
                                     std::string_view name, bool map) {
  TILEPROF_ASSIGN_OR_RETURN(Tensor tensor, graph_.AddVariable(type, std::move(shape), name));
  if (map) TILEPROF_RETURN_IF_ERROR(mapper_.Map(tensor));
  return tensor;
}

Expected<Tensor> Lowering::NewTensor(const hlo::Shape& shape, std::string_view name, bool map) {
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> dims, StorageShape(shape));
  return NewTensor(storage.type, std::move(dims), name, map);
}

Expected<Value> Lowering::NewValue(const hlo::Shape& shape, std::string_view name, bool map) {
  if (shape.IsTuple()) {
    Value value;
    value.is_tuple = true;
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      TILEPROF_ASSIGN_OR_RETURN(
          Value element, NewValue(shape.tuple_shapes[i], fmt::format("{}.{}", name, i), map));
      value.elements.push_back(std::move(element));
    }
    return value;
  }
  if (!shape.IsArray()) return Value{};  // token, opaque: no data
  TILEPROF_ASSIGN_OR_RETURN(Tensor tensor, NewTensor(shape, name, map));
  return Value::Array(std::move(tensor));
}

ComputeSetId Lowering::AddComputeSet(std::string_view name, program::Sequence& program) {
  const ComputeSetId id = graph_.AddComputeSet(name);
  program.Add(program::Execute(id));
  return id;
}

std::pair<uint64_t, uint64_t> Lowering::ProportionalRange(uint64_t n, uint64_t position,
                                                          uint64_t count, uint64_t total) {
  if (total == 0 || n == 0) return {0, 0};
  using Wide = unsigned __int128;
  uint64_t begin = static_cast<uint64_t>(Wide(position) * n / total);
  uint64_t size = static_cast<uint64_t>((Wide(count) * n + total - 1) / total);
  size = std::clamp<uint64_t>(size, 1, n);
  begin = std::min(begin, n - size);
  return {begin, size};
}

namespace {

// The positions of `out` by tile, as ranges in element order within each
// tile, and the tiles holding any, in increasing order. `by_tile` and
// `tiles` are the last op's, reused: only the tiles it used are cleared.
Status GroupByTile(const Graph& graph, const Tensor& out,
                   std::vector<std::vector<std::pair<uint64_t, uint64_t>>>& by_tile,
                   std::vector<uint32_t>& tiles) {
  const uint32_t num_tiles = graph.target().NumTiles();
  for (const uint32_t tile : tiles) by_tile[tile].clear();  // the last op's, even one that failed
  tiles.clear();
  by_tile.resize(num_tiles);
  uint64_t position = 0;
  bool mapped = true;
  graph.ForEachMappedRegion(out, [&](const MappedRegion& piece) {
    if (!piece.tile) mapped = false;
    if (!mapped) return;
    auto& ranges = by_tile[*piece.tile];
    if (ranges.empty()) tiles.push_back(*piece.tile);
    if (!ranges.empty() && ranges.back().second == position) {
      ranges.back().second += piece.region.size();
    } else {
      ranges.emplace_back(position, position + piece.region.size());
    }
    position += piece.region.size();
  });
  if (!mapped) return MakeError("output {} is not mapped", out.ShapeString());
  std::sort(tiles.begin(), tiles.end());
  return {};
}

}  // namespace

Status Lowering::EmitPerTile(ComputeSetId compute_set, const Codelet& codelet,
                             std::string_view out_field, const Tensor& out,
                             std::span<const FieldInput> inputs, std::string_view debug_name) {
  const uint64_t total = out.NumElements();
  if (total == 0) return {};
  // Positions of the output by tile, in element order within each tile, and
  // the tiles in increasing order (a map per op cost a node per tile).
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>>& by_tile = tile_ranges_;
  std::vector<uint32_t>& tiles = ranged_tiles_;
  TILEPROF_RETURN_IF_ERROR(GroupByTile(graph_, out, by_tile, tiles));
  // Field numbers, looked up once for every vertex of the op.
  TILEPROF_ASSIGN_OR_RETURN(const size_t out_field_index, codelet.FieldNumber(out_field));
  std::vector<size_t> input_fields;
  for (const FieldInput& input : inputs) {
    TILEPROF_ASSIGN_OR_RETURN(const size_t index, codelet.FieldNumber(input.field));
    input_fields.push_back(index);
  }
  // Each tile's part of the output and of the inputs it reads is cut from
  // an index of the flat tensor, built once: a Slice per tile costs
  // O(regions) each, and an operand spread over every tile has a region per
  // tile at least (quadratic in the tiles for each elementwise op).
  // Each index owns its flat tensor (a copy of a fragmented tensor's
  // regions each, not two); inputs read whole are flattened once.
  const TensorIndex out_index(out.Flatten());
  std::vector<Tensor> whole(inputs.size());
  std::vector<std::unique_ptr<TensorIndex>> input_index;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].access == Access::kWhole) {
      whole[i] = inputs[i].tensor.Flatten();
      input_index.push_back(nullptr);
    } else {
      input_index.push_back(std::make_unique<TensorIndex>(inputs[i].tensor.Flatten()));
    }
  }
  // The runs of each part are gathered in one buffer and handed to the
  // graph as they are: a Tensor per part and field was a shape and a region
  // vector allocated and freed per edge.
  std::vector<TensorRegion> runs;
  for (const uint32_t tile : tiles) {
    const std::vector<std::pair<uint64_t, uint64_t>>& ranges = by_tile[tile];
    uint64_t count = 0;
    for (const auto& [b, e] : ranges) count += e - b;
    auto range = [&](const TensorIndex& index, uint64_t lo, uint64_t size) {
      return index.AppendBox({&lo, 1}, {&size, 1}, runs);
    };
    // Connects field `field` to `size` elements of `index`'s tensor: the
    // tile's ranges of it, or the one range from `lo`.
    auto connect = [&](VertexRef vertex, size_t field, const TensorIndex& index, const uint64_t* lo,
                       uint64_t size) -> Status {
      runs.clear();
      if (lo != nullptr) {
        TILEPROF_RETURN_IF_ERROR(range(index, *lo, size));
      } else {
        for (const auto& [b, e] : ranges) TILEPROF_RETURN_IF_ERROR(range(index, b, e - b));
      }
      return graph_.ConnectRegions(vertex, field, index.tensor().element_type(), {&size, 1}, runs);
    };
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(compute_set, codelet, debug_name));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile));
    TILEPROF_RETURN_IF_ERROR(connect(vertex, out_field_index, out_index, nullptr, count));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const FieldInput& input = inputs[i];
      if (input.access == Access::kWhole) {
        TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex, input_fields[i], whole[i]));
        continue;
      }
      const Tensor& flat = input_index[i]->tensor();
      if (input.access == Access::kSame) {
        TILEPROF_RETURN_IF_ERROR(connect(vertex, input_fields[i], *input_index[i], nullptr, count));
      } else if (input.access == Access::kScaled) {
        const uint64_t n = flat.NumElements();
        const uint64_t up = n >= total ? n / total : 1, down = n >= total ? 1 : total / n;
        runs.clear();
        for (const auto& [b, e] : ranges) {
          if (b % down != 0 || e % down != 0 || n * down != total * up) {
            return MakeError("{}: output run [{}, {}) is not a whole multiple of {} elements",
                             debug_name, b, e, down);
          }
          TILEPROF_RETURN_IF_ERROR(range(*input_index[i], b / down * up, (e - b) / down * up));
        }
        const uint64_t size = count / down * up;
        TILEPROF_RETURN_IF_ERROR(
            graph_.ConnectRegions(vertex, input_fields[i], flat.element_type(), {&size, 1}, runs));
      } else {
        const auto [begin, size] =
            ProportionalRange(flat.NumElements(), ranges[0].first, count, total);
        TILEPROF_RETURN_IF_ERROR(connect(vertex, input_fields[i], *input_index[i], &begin, size));
      }
    }
  }
  return {};
}

Expected<Tensor> Lowering::Fill(const Tensor& scalar, const hlo::Shape& shape,
                                std::string_view name, program::Sequence& program) {
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, name, true));
  if (out.element_type() != scalar.element_type()) {
    return MakeError("fill of {} with a {} scalar", out.ShapeString(), scalar.ShapeString());
  }
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* fill, GetFillCodelet(out.element_type()));
  const ComputeSetId cs = AddComputeSet(name, program);
  const FieldInput in{"in", scalar, Access::kWhole};
  TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, *fill, "out", out, {&in, 1}, name));
  return out;
}

void Lowering::NoteOpaque(std::string_view opcode) {
  ++stats_.opaque_ops;
  auto& list = stats_.opaque_opcodes;
  auto it = std::lower_bound(list.begin(), list.end(), opcode);
  if (it == list.end() || *it != opcode) list.insert(it, std::string(opcode));
}

Expected<Value> Lowering::LowerOpaque(const hlo::Instruction& instruction,
                                      std::span<const Value> operands, program::Sequence& program,
                                      bool leafwise) {
  NoteOpaque(hlo::OpcodeName(instruction.opcode()));
  TILEPROF_ASSIGN_OR_RETURN(Value result, NewValue(instruction.shape(), instruction.name(), true));
  std::vector<Tensor> outputs = result.Leaves();
  std::vector<Tensor> leaves;
  for (const Value& operand : operands) {
    for (Tensor& leaf : operand.Leaves()) leaves.push_back(std::move(leaf));
  }
  // Each output reads its share of the operands' leaves (of its own leaf
  // only, leafwise: an output leaf of a few elements read all of every
  // operand, 23 MB on one tile for a DLRM step's all-reduce of 18 arrays).
  leafwise = leafwise && leaves.size() == outputs.size();
  const auto inputs_of = [&](size_t output, std::vector<FieldInput>& inputs,
                             std::vector<ElementType>& types) {
    inputs.clear();
    types.clear();
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i].NumElements() == 0 || (leafwise && i != output)) continue;
      inputs.push_back({fmt::format("in{}", inputs.size()), leaves[i], Access::kProportional});
      types.push_back(leaves[i].element_type());
    }
  };
  bool any = false;
  for (const Tensor& out : outputs) any = any || out.NumElements() > 0;
  if (!any) return result;
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  std::vector<FieldInput> inputs;
  std::vector<ElementType> input_types;
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (o == 0 || leafwise) inputs_of(o, inputs, input_types);
    TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                              codelets_.Opaque(hlo::OpcodeName(instruction.opcode()), input_types,
                                               outputs[o].element_type()));
    TILEPROF_RETURN_IF_ERROR(
        EmitPerTile(cs, *codelet, "out", outputs[o], inputs, instruction.name()));
  }
  return result;
}

// ---- Computations ----------------------------------------------------------

uint64_t Lowering::FreeBytesPerTile(const hlo::Instruction& instruction) const {
  constexpr uint64_t kGrain = 8 * 1024;
  const int64_t free =
      peak_live_.bytes - std::min(peak_live_.bytes, peak_live_.LiveAt(instruction));
  const uint64_t per_tile =
      static_cast<uint64_t>(free) / std::max<uint32_t>(graph_.target().NumTiles(), 1);
  // A module whose bound is beyond the chip can leave more than a tile
  // "free": no more than the temporaries a plan may hold is meant.
  const auto available = static_cast<uint64_t>(options_.available_memory_proportion *
                                               static_cast<double>(graph_.target().BytesPerTile()));
  return std::min(per_tile, available) / kGrain * kGrain;
}

Status Lowering::LowerEntry(const hlo::Module& module, program::Sequence& program) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return MakeError("module '{}' has no computations", module.name());
  peak_live_ = hlo::ComputePeakLive(module);
  module_ = &module;
  if (options_.set_seed_on_every_tile) {
    // One seed for the whole graph, streamed from the host to tile 0 and
    // read by a SetSeed vertex on every tile (poprand::setSeed's layout).
    TILEPROF_ASSIGN_OR_RETURN(Tensor seed, NewTensor(ElementType::kU32, {2}, "seed", false));
    TILEPROF_RETURN_IF_ERROR(mapper_.MapToTile(seed, 0));
    TILEPROF_ASSIGN_OR_RETURN(DataStream stream,
                              graph_.AddHostToDeviceFifo("seed", ElementType::kU32, 2));
    program.Add(program::Copy(stream, seed));
    const ComputeSetId cs = AddComputeSet("setSeed", program);
    for (uint32_t tile = 0; tile < graph_.target().NumTiles(); ++tile) {
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, kSetSeedCodeletName));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["seed"], seed));
      TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["seedModifierUser"], 0));
      TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["seedModifierHw"], tile));
    }
  }
  std::vector<Value> args;
  for (const hlo::Instruction* parameter : entry->parameters()) {
    if (parameter == nullptr) return MakeError("entry computation has a gap in its parameters");
    TILEPROF_ASSIGN_OR_RETURN(Value value, NewValue(parameter->shape(), parameter->name(), true));
    std::vector<Tensor> leaves = value.Leaves();
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i].NumElements() == 0) continue;
      TILEPROF_ASSIGN_OR_RETURN(DataStream stream,
                                graph_.AddHostToDeviceFifo(
                                    leaves.size() == 1 ? std::string(parameter->name())
                                                       : fmt::format("{}.{}", parameter->name(), i),
                                    leaves[i].element_type(), leaves[i].NumElements()));
      program.Add(program::Copy(stream, leaves[i]));
    }
    for (const Tensor& leaf : leaves)
      for (const TensorRegion& region : leaf.regions()) unread_.insert(region.variable);
    args.push_back(std::move(value));
  }
  Value result;
  TILEPROF_RETURN_IF_ERROR(LowerComputation(*entry, args, program, &result));
  std::vector<Tensor> outputs = result.Leaves();
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].NumElements() == 0) continue;
    TILEPROF_ASSIGN_OR_RETURN(
        DataStream stream,
        graph_.AddDeviceToHostFifo(fmt::format("out.{}", i), outputs[i].element_type(),
                                   outputs[i].NumElements()));
    program.Add(program::Copy(outputs[i], stream));
  }
  return {};
}

// For each position in the computation's order, the instructions whose
// values are read for the last time there, so the scope can drop them: a
// view with a region per row, kept to the end of a training step's
// backward pass, held gigabytes. An instruction computed inside its users'
// expressions reads its operands where its outermost user is lowered.
static std::vector<std::vector<const hlo::Instruction*>> LastReads(
    const hlo::Computation& computation, const Fusion& fusion) {
  const auto instructions = computation.instructions();
  const size_t n = instructions.size();
  std::unordered_map<const hlo::Instruction*, size_t> read_at;
  std::vector<std::vector<const hlo::Instruction*>> last(n);
  for (size_t p = n; p-- > 0;) {
    const hlo::Instruction* instruction = instructions[p];
    const FusionRole role = instruction->index() < fusion.role.size()
                                ? fusion.role[instruction->index()]
                                : FusionRole::kNone;
    const auto it = read_at.find(instruction);
    const bool inner =
        role == FusionRole::kInner || role == FusionRole::kScalar || role == FusionRole::kSpread;
    if (it != read_at.end() && instruction != computation.root())
      last[it->second].push_back(instruction);
    // An unread inner instruction is read nowhere: its operands need not wait.
    if (inner && it == read_at.end()) continue;
    const size_t at = inner ? it->second : p;
    for (const hlo::Instruction* operand : instruction->operands()) {
      size_t& slot = read_at[operand];
      slot = std::max(slot, at);
    }
  }
  return last;
}

Expected<Value> Lowering::LowerExpansion(const hlo::Instruction& instruction, std::string text,
                                         std::span<const Value> args, program::Sequence& program) {
  Expected<hlo::Module> parsed = hlo::ParseModule(text);
  if (!parsed) return parsed.error().Within("its expansion");
  expansions_.push_back(std::make_unique<hlo::Module>(std::move(*parsed)));
  const hlo::Computation* entry = expansions_.back()->entry();
  if (entry == nullptr) return MakeError("its expansion has no entry computation");
  // The expansion's compute sets are the expanded op's operation, and its
  // instructions are not the module's: no progress ticks for them.
  const hlo::Instruction* outer = std::exchange(claim_for_, &instruction);
  std::function<void()> visited = std::exchange(visited_, nullptr);
  Value value;
  Status status = LowerComputation(*entry, args, program, &value);
  claim_for_ = outer;
  visited_ = std::move(visited);
  TILEPROF_RETURN_IF_ERROR(status);
  return value;
}

Status Lowering::LowerComputation(const hlo::Computation& computation, std::span<const Value> args,
                                  program::Sequence& program, Value* result) {
  // Calls nest at most as deep as the module's call graph; a recursive call
  // graph (invalid HLO) would otherwise recurse forever.
  if (call_depth_ > 64) {
    return MakeError("computation '{}': calls nested more than 64 deep", computation.name());
  }
  ++call_depth_;
  Scope scope;
  const Fusion fusion = options_.fuse_elementwise ? AnalyseFusion(computation) : Fusion{};
  const std::vector<std::vector<const hlo::Instruction*>> last_reads =
      LastReads(computation, fusion);
  const std::vector<bool> foldable = FoldableTransposes(computation);
  size_t position = 0;
  for (const hlo::Instruction* instruction : computation.instructions()) {
    if (position > 0) {
      for (const hlo::Instruction* done : last_reads[position - 1]) scope.erase(done);
    }
    ++position;
    if (visited_) visited_();
    const FusionRole role = instruction->index() < fusion.role.size()
                                ? fusion.role[instruction->index()]
                                : FusionRole::kNone;
    if (role == FusionRole::kInner || role == FusionRole::kScalar || role == FusionRole::kSpread) {
      scope[instruction] = Value{};  // computed inside its users' expressions
      continue;
    }
    if (role == FusionRole::kRoot) {
      // The fused chain is one operation, named after its root.
      ++stats_.instructions;
      instruction_named_.emplace(instruction->name(), instruction);
      const size_t first_compute_set = graph_.num_compute_sets();
      Expected<Value> value = LowerFused(*instruction, fusion, scope, program);
      if (!value) {
        --call_depth_;
        return value.error().Within(Describe(*instruction));
      }
      ClaimComputeSets(*instruction, first_compute_set);
      RecordOutputs(*instruction, scope[instruction] = std::move(*value));
      continue;
    }
    if (instruction->index() < foldable.size() && foldable[instruction->index()] &&
        FoldTranspose(*instruction, scope))
      continue;
    if (instruction->opcode() == Opcode::kParameter) {
      const int64_t number = instruction->parameter_number();
      if (number < 0 || static_cast<size_t>(number) >= args.size()) {
        --call_depth_;
        return MakeError("{}: parameter {} of computation '{}' has no argument ({} given)",
                         instruction->name(), number, computation.name(), args.size());
      }
      scope[instruction] = args[static_cast<size_t>(number)];
      RecordOutputs(*instruction, scope[instruction]);
      continue;
    }
    if (auto status = LowerInstruction(*instruction, scope, program); !status) {
      --call_depth_;
      return status;
    }
  }
  --call_depth_;
  const hlo::Instruction* root = computation.root();
  if (root == nullptr) return MakeError("computation '{}' is empty", computation.name());
  *result = scope.at(root);
  return {};
}

Status Lowering::LowerInstruction(const hlo::Instruction& instruction, Scope& scope,
                                  program::Sequence& program) {
  std::vector<Value> operands;
  operands.reserve(instruction.operand_count());
  for (const hlo::Instruction* operand : instruction.operands()) {
    auto it = scope.find(operand);
    if (it == scope.end()) {
      return MakeError("{}: operand '{}' is not defined before it", Describe(instruction),
                       operand->name());
    }
    operands.push_back(it->second);
  }
  ++stats_.instructions;
  instruction_named_.emplace(instruction.name(), &instruction);
  const size_t first_compute_set = graph_.num_compute_sets();
  Expected<Value> value = Lower(instruction, operands, program);
  if (!value) return value.error().Within(Describe(instruction));
  ClaimComputeSets(instruction, first_compute_set);
  if (!unread_.empty()) MarkRead(operands, *value);
  RecordOutputs(instruction, scope[&instruction] = std::move(*value));
  return {};
}

uint32_t Lowering::OperationOf(const hlo::Instruction& instruction) {
  auto [it, added] = operation_of_.emplace(&instruction, static_cast<uint32_t>(operations_.size()));
  if (added) {
    const std::optional<int64_t> flops = hlo::EstimateOperationFlops(instruction);
    operations_.push_back({std::string(instruction.name()),
                           std::string(hlo::OpcodeName(instruction.opcode())),
                           flops && *flops >= 0 ? std::optional<uint64_t>(*flops) : std::nullopt});
  }
  return it->second;
}

void Lowering::ClaimComputeSets(const hlo::Instruction& instruction, size_t first) {
  const size_t count = graph_.num_compute_sets();
  if (first >= count) return;
  compute_set_operations_.resize(count, kNoOperation);
  for (size_t cs = first; cs < count; ++cs) {
    if (compute_set_operations_[cs] != kNoOperation) continue;
    if (claim_for_ != nullptr) {
      compute_set_operations_[cs] = OperationOf(*claim_for_);
      continue;
    }
    const std::string& name = graph_.compute_set(static_cast<ComputeSetId>(cs)).name;
    auto named = instruction_named_.find(std::string_view(name).substr(0, name.find('/')));
    compute_set_operations_[cs] =
        OperationOf(named != instruction_named_.end() ? *named->second : instruction);
  }
}

}  // namespace tileprof::engine::compiler
