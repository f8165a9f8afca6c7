#include "engine/compiler/opaque.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "engine/codelets/bits.h"
#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/indexed.h"
#include "engine/codelets/linalg.h"
#include "engine/codelets/lookup.h"
#include "engine/codelets/random.h"
#include "engine/codelets/reduce_expr.h"
#include "engine/codelets/window.h"

namespace tileprof::engine::compiler {
namespace {

class AccountedCodelet final : public Codelet {
 public:
  AccountedCodelet(std::string name, std::vector<FieldSpec> fields, uint32_t code_bytes,
                   uint64_t cycles_per_element)
      : Codelet(std::move(name), ExecutionKind::kWorker, std::move(fields), {}, code_bytes),
        cycles_per_element_(cycles_per_element) {}

  // kWorkerOverhead + cycles per output element (the last field).
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    const uint64_t out = shape.field_elements.empty() ? 0 : shape.field_elements.back();
    return cost::WorkerLoop(out, 1, cycles_per_element_);
  }
  bool executable() const override { return false; }

 protected:
  Status Compute(const VertexIo&) const override {
    return MakeError("{}: executing this vertex is not supported by the simulator", name());
  }

 private:
  uint64_t cycles_per_element_;
};

}  // namespace

Expected<const Codelet*> CompilerCodelets::Get(std::string name, std::vector<ElementType> inputs,
                                               ElementType output, uint32_t code_bytes,
                                               uint64_t cycles) {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second.get();
  std::vector<FieldSpec> fields;
  for (size_t i = 0; i < inputs.size(); ++i) {
    fields.push_back(In(fmt::format("in{}", i), inputs[i], VectorLayout::kSpan));
  }
  fields.push_back(Out("out", output, VectorLayout::kSpan));
  auto codelet = std::make_shared<AccountedCodelet>(name, std::move(fields), code_bytes, cycles);
  TILEPROF_RETURN_IF_ERROR(graph_.AddCodelet(codelet));
  const Codelet* raw = codelet.get();
  by_name_.emplace(std::move(name), std::move(codelet));
  return raw;
}

Expected<const Codelet*> CompilerCodelets::Opaque(std::string_view opcode,
                                                  const std::vector<ElementType>& inputs,
                                                  ElementType output) {
  std::string name = fmt::format("tileprof::OpaqueOp<{},{}", opcode, PoplarName(output));
  for (ElementType type : inputs) name += fmt::format(",{}", PoplarName(type));
  name += ">";
  return Get(std::move(name), inputs, output, kOpaqueCodeBytes, kOpaqueCyclesPerElement);
}

Expected<const Codelet*> CompilerCodelets::Register(Expected<std::unique_ptr<Codelet>> made) {
  if (!made) return made.error();
  std::shared_ptr<const Codelet> codelet = std::move(*made);
  if (auto it = by_name_.find(codelet->name()); it != by_name_.end()) return it->second.get();
  TILEPROF_RETURN_IF_ERROR(graph_.AddCodelet(codelet));
  const Codelet* raw = codelet.get();
  by_name_.emplace(codelet->name(), std::move(codelet));
  return raw;
}

Expected<const Codelet*> CompilerCodelets::Rearrange(ElementType type, uint32_t in_rank,
                                                     uint32_t out_rank, bool padded) {
  if (auto it = by_name_.find(RearrangeCodeletName(type, in_rank, out_rank, padded));
      it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeRearrangeCodelet(type, in_rank, out_rank, padded));
}

Expected<const Codelet*> CompilerCodelets::DynamicSlice(ElementType type, ElementType index,
                                                        uint32_t rank, bool update) {
  const std::string name = update ? DynamicUpdateSliceCodeletName(type, index, rank)
                                  : DynamicSliceCodeletName(type, index, rank);
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second.get();
  return Register(update ? MakeDynamicUpdateSliceCodelet(type, index, rank)
                         : MakeDynamicSliceCodelet(type, index, rank));
}

Expected<const Codelet*> CompilerCodelets::BitcastConvert(ElementType in, ElementType out) {
  if (auto it = by_name_.find(BitcastConvertCodeletName(in, out)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeBitcastConvertCodelet(in, out));
}

Expected<const Codelet*> CompilerCodelets::Threefry() {
  if (auto it = by_name_.find(ThreefryCodeletName()); it != by_name_.end()) return it->second.get();
  return Register(MakeThreefryCodelet());
}

Expected<const Codelet*> CompilerCodelets::Getrf(ElementType type) {
  if (auto it = by_name_.find(GetrfCodeletName(type)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeGetrfCodelet(type));
}

Expected<const Codelet*> CompilerCodelets::Potrf(ElementType type) {
  if (auto it = by_name_.find(PotrfCodeletName(type)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakePotrfCodelet(type));
}

Expected<const Codelet*> CompilerCodelets::Trsm(ElementType type) {
  if (auto it = by_name_.find(TrsmCodeletName(type)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeTrsmCodelet(type));
}

Expected<const Codelet*> CompilerCodelets::Geqrf(ElementType type) {
  if (auto it = by_name_.find(GeqrfCodeletName(type)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeGeqrfCodelet(type));
}

Expected<const Codelet*> CompilerCodelets::Orgqr(ElementType type) {
  if (auto it = by_name_.find(OrgqrCodeletName(type)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeOrgqrCodelet(type));
}

Expected<const Codelet*> CompilerCodelets::LuPivotsToPermutation() {
  if (auto it = by_name_.find(LuPivotsToPermutationCodeletName()); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeLuPivotsToPermutationCodelet());
}

Expected<const Codelet*> CompilerCodelets::Iota(ElementType type) {
  if (auto it = by_name_.find(IotaCodeletName(type)); it != by_name_.end()) return it->second.get();
  return Register(MakeIotaCodelet(type));
}

Expected<const Codelet*> CompilerCodelets::SelectAndScatter(ElementType type, uint32_t rank) {
  if (auto it = by_name_.find(SelectAndScatterCodeletName(type, rank)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeSelectAndScatterCodelet(type, rank));
}

Expected<const Codelet*> CompilerCodelets::ReduceWindow(ElementType type, uint32_t rank) {
  if (auto it = by_name_.find(ReduceWindowCodeletName(type, rank)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeReduceWindowCodelet(type, rank));
}

Expected<const Codelet*> CompilerCodelets::Rng(ElementType type, bool normal) {
  if (auto it = by_name_.find(RngCodeletName(type, normal)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeRngCodelet(type, normal));
}

Expected<const Codelet*> CompilerCodelets::ReduceExpr(const std::vector<ElementType>& types,
                                                      uint32_t nodes) {
  if (auto it = by_name_.find(ReduceExprCodeletName(types, nodes)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeReduceExprCodelet(types, nodes));
}

Expected<const Codelet*> CompilerCodelets::Gather(ElementType type, ElementType index,
                                                  uint32_t op_rank, uint32_t idx_rank,
                                                  uint32_t out_rank) {
  if (auto it = by_name_.find(GatherCodeletName(type, index, op_rank, idx_rank, out_rank));
      it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeGatherCodelet(type, index, op_rank, idx_rank, out_rank));
}

Expected<const Codelet*> CompilerCodelets::LookupPartial(ElementType type, ElementType index) {
  if (auto it = by_name_.find(LookupPartialCodeletName(type, index)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeLookupPartialCodelet(type, index));
}

Expected<const Codelet*> CompilerCodelets::Scatter(ElementType type, ElementType index,
                                                   ScatterCombiner combiner, uint32_t op_rank,
                                                   uint32_t idx_rank, uint32_t upd_rank) {
  if (auto it =
          by_name_.find(ScatterCodeletName(type, index, combiner, op_rank, idx_rank, upd_rank));
      it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeScatterCodelet(type, index, combiner, op_rank, idx_rank, upd_rank));
}

Expected<const Codelet*> CompilerCodelets::Sort(uint32_t rank, uint32_t key, SortOrder order,
                                                const std::vector<ElementType>& types) {
  if (auto it = by_name_.find(SortCodeletName(rank, key, order, types)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeSortCodelet(rank, key, order, types));
}

Expected<const Codelet*> CompilerCodelets::SortMerge(uint32_t key, SortOrder order,
                                                     const std::vector<ElementType>& types) {
  if (auto it = by_name_.find(SortMergeCodeletName(key, order, types)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeSortMergeCodelet(key, order, types));
}

namespace {
constexpr std::string_view kPrefix = "tileprof::";
constexpr std::string_view kKinds[] = {"OpaqueOp",
                                       "Rearrange",
                                       "RearrangePadded",
                                       "DynamicSlice",
                                       "DynamicUpdateSlice",
                                       "Iota",
                                       "SelectAndScatter",
                                       "ReduceWindow",
                                       "RngUniform",
                                       "RngNormal",
                                       "LookupPartial",
                                       "ReduceExpr",
                                       "Gather",
                                       "Scatter",
                                       "Sort",
                                       "SortMerge",
                                       "BitcastConvert",
                                       "Threefry2x32",
                                       "Getrf",
                                       "Potrf",
                                       "Trsm",
                                       "LuPivotsToPermutation",
                                       "Geqrf",
                                       "Orgqr"};

// "tileprof::Kind<a,b,c>" -> {"Kind", {"a","b","c"}}; nullopt otherwise.
std::optional<std::pair<std::string_view, std::vector<std::string_view>>> SplitName(
    std::string_view name) {
  if (!name.starts_with(kPrefix) || !name.ends_with('>')) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  name.remove_suffix(1);
  const size_t open = name.find('<');
  if (open == std::string_view::npos) return std::nullopt;
  std::string_view kind = name.substr(0, open), args = name.substr(open + 1);
  std::vector<std::string_view> parts;
  while (true) {
    size_t comma = args.find(',');
    parts.push_back(args.substr(0, comma));
    if (comma == std::string_view::npos) break;
    args.remove_prefix(comma + 1);
  }
  return std::pair{kind, std::move(parts)};
}

std::optional<uint32_t> Rank(std::string_view text) {
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The element types parts[from..] name; nullopt if one names none.
std::optional<std::vector<ElementType>> TypesFrom(std::span<const std::string_view> parts,
                                                  size_t from) {
  std::vector<ElementType> types;
  for (size_t k = from; k < parts.size(); ++k) {
    auto type = ParsePoplarElementType(parts[k]);
    if (!type) return std::nullopt;
    types.push_back(*type);
  }
  return types;
}
}  // namespace

Expected<const Codelet*> CompilerCodelets::MapExpr(const std::vector<MapInput>& inputs,
                                                   const std::vector<MapNode>& nodes) {
  if (auto it = by_name_.find(MapExprCodeletName(inputs, nodes)); it != by_name_.end()) {
    return it->second.get();
  }
  return Register(MakeMapExprCodelet(inputs, nodes));
}

bool CompilerCodelets::IsCompilerCodeletName(std::string_view name) {
  if (IsMapExprCodeletName(name)) return true;
  auto split = SplitName(name);
  return split && std::find(std::begin(kKinds), std::end(kKinds), split->first) != std::end(kKinds);
}

// Long on purpose: the inverse of every compiler codelet's name, one
// branch per kind, kept together so a new kind is added in one place.
Expected<const Codelet*> CompilerCodelets::FromName(std::string_view name) {
  const auto bad = [&] { return MakeError("'{}' is not a compiler codelet name", name); };
  if (IsMapExprCodeletName(name)) {
    if (auto it = by_name_.find(std::string(name)); it != by_name_.end()) return it->second.get();
    return Register(MakeMapExprCodeletFromName(name));
  }
  auto split = SplitName(name);
  if (!split) return bad();
  const auto& [kind, parts] = *split;
  std::vector<ElementType> types;  // the leading element-type arguments
  size_t i = 0;
  for (; i < parts.size(); ++i) {
    auto type = ParsePoplarElementType(parts[i]);
    if (!type) break;
    types.push_back(*type);
  }
  Expected<const Codelet*> codelet = bad();
  if (kind == "OpaqueOp") {
    // OpaqueOp<opcode,output,inputs...>
    if (parts.size() < 2 || parts[0].empty()) return bad();
    auto output = ParsePoplarElementType(parts[1]);
    auto inputs = TypesFrom(parts, 2);
    if (!output || !inputs) return bad();
    codelet = Opaque(parts[0], *inputs, *output);
  } else if ((kind == "Rearrange" || kind == "RearrangePadded") && types.size() == 1 &&
             parts.size() == 3) {
    auto in_rank = Rank(parts[1]), out_rank = Rank(parts[2]);
    if (!in_rank || !out_rank) return bad();
    codelet = Rearrange(types[0], *in_rank, *out_rank, kind == "RearrangePadded");
  } else if ((kind == "DynamicSlice" || kind == "DynamicUpdateSlice") && types.size() == 2 &&
             parts.size() == 3) {
    auto rank = Rank(parts[2]);
    if (!rank) return bad();
    codelet = DynamicSlice(types[0], types[1], *rank, kind == "DynamicUpdateSlice");
  } else if (kind == "BitcastConvert" && types.size() == 2 && parts.size() == 2) {
    codelet = BitcastConvert(types[0], types[1]);
  } else if (kind == "Threefry2x32" && types.size() == 1 && parts.size() == 1) {
    codelet = Threefry();
  } else if (kind == "Getrf" && types.size() == 1 && parts.size() == 1) {
    codelet = Getrf(types[0]);
  } else if (kind == "Potrf" && types.size() == 1 && parts.size() == 1) {
    codelet = Potrf(types[0]);
  } else if (kind == "Trsm" && types.size() == 1 && parts.size() == 1) {
    codelet = Trsm(types[0]);
  } else if (kind == "Geqrf" && types.size() == 1 && parts.size() == 1) {
    codelet = Geqrf(types[0]);
  } else if (kind == "Orgqr" && types.size() == 1 && parts.size() == 1) {
    codelet = Orgqr(types[0]);
  } else if (kind == "LuPivotsToPermutation" && types.size() == 1 && parts.size() == 1) {
    codelet = LuPivotsToPermutation();
  } else if (kind == "Iota" && types.size() == 1 && parts.size() == 1) {
    codelet = Iota(types[0]);
  } else if (kind == "SelectAndScatter" && types.size() == 1 && parts.size() == 2) {
    auto rank = Rank(parts[1]);
    if (!rank) return bad();
    codelet = SelectAndScatter(types[0], *rank);
  } else if (kind == "ReduceWindow" && types.size() == 1 && parts.size() == 2) {
    auto rank = Rank(parts[1]);
    if (!rank) return bad();
    codelet = ReduceWindow(types[0], *rank);
  } else if ((kind == "RngUniform" || kind == "RngNormal") && types.size() == 1 &&
             parts.size() == 1) {
    codelet = Rng(types[0], kind == "RngNormal");
  } else if (kind == "ReduceExpr" && !types.empty() && parts.size() == types.size() + 1) {
    auto nodes = Rank(parts.back());
    if (!nodes) return bad();
    codelet = ReduceExpr(types, *nodes);
  } else if (kind == "LookupPartial" && types.size() == 2 && parts.size() == 2) {
    codelet = LookupPartial(types[0], types[1]);
  } else if (kind == "Gather" && types.size() == 2 && parts.size() == 5) {
    auto op = Rank(parts[2]), idx = Rank(parts[3]), out = Rank(parts[4]);
    if (!op || !idx || !out) return bad();
    codelet = Gather(types[0], types[1], *op, *idx, *out);
  } else if (kind == "Scatter" && types.size() == 2 && parts.size() == 6) {
    // Scatter<T,Idx,combiner,opRank,idxRank,updRank>
    auto combiner = ParseScatterCombiner(parts[2]);
    auto op = Rank(parts[3]), idx = Rank(parts[4]), upd = Rank(parts[5]);
    if (!combiner || !op || !idx || !upd) return bad();
    codelet = Scatter(types[0], types[1], *combiner, *op, *idx, *upd);
  } else if (kind == "Sort" && parts.size() >= 4) {
    // Sort<rank,key,order,T0,...>
    auto rank = Rank(parts[0]), key = Rank(parts[1]);
    auto order = ParseSortOrder(parts[2]);
    auto operands = TypesFrom(parts, 3);
    if (!rank || !key || !order || !operands) return bad();
    codelet = Sort(*rank, *key, *order, *operands);
  } else if (kind == "SortMerge" && parts.size() >= 3) {
    // SortMerge<key,order,T0,...>
    auto key = Rank(parts[0]);
    auto order = ParseSortOrder(parts[1]);
    auto operands = TypesFrom(parts, 2);
    if (!key || !order || !operands) return bad();
    codelet = SortMerge(*key, *order, *operands);
  }
  if (!codelet) return codelet.error();
  // The name must round-trip, or two names could stand for one codelet.
  if ((*codelet)->name() != name) return bad();
  return codelet;
}

}  // namespace tileprof::engine::compiler
