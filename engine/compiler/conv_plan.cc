// The contraction planner; see conv_plan.h and docs/memory-model.md
// ("Planning") for the cost model.
#include "engine/compiler/conv_plan.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/codelets/cost_model.h"
#include "engine/compiler/conv_plan_internal.h"
#include "engine/compiler/memory_model.h"

namespace tileprof::engine::compiler {

using plan_internal::Add;
using plan_internal::CeilDiv;
using plan_internal::FullSizes;
using plan_internal::Index;
using plan_internal::Mul;
using plan_internal::SliceShape;

std::array<uint64_t, kPlanDims> plan_internal::FullSizes(const ContractionShape& shape) {
  std::array<uint64_t, kPlanDims> size;
  size.fill(1);
  size[Index(PlanDim::kGroup)] = shape.groups;
  size[Index(PlanDim::kBatch)] = shape.batch;
  size[Index(PlanDim::kInChan)] = shape.in_chans;
  size[Index(PlanDim::kOutChan)] = shape.out_chans;
  for (size_t s = 0; s < shape.fields.size() && s < kPlanMaxFields; ++s) {
    size[Index(FieldDim(s))] = shape.fields[s].out;
    size[Index(KernelDim(s))] = shape.fields[s].kernel;
  }
  return size;
}

namespace {

// Input positions that `outputs` consecutive outputs read with `kernel`
// consecutive kernel positions (the window's span, in input elements).
uint64_t InputSpan(const PlanField& f, uint64_t outputs, uint64_t kernel) {
  if (outputs == 0 || kernel == 0) return 0;
  const uint64_t dilated = Add(Mul(outputs - 1, f.stride), Mul(kernel - 1, f.window_dilation)) + 1;
  return std::min(f.in, CeilDiv(dilated, std::max<uint64_t>(f.base_dilation, 1)));
}

// Contiguous regions of a slice of an operand stored in `order` with
// `block` elements of each dimension out of `full`: one per combination of
// the dimensions outside the innermost one the slice does not cover whole.
uint64_t Regions(std::span<const PlanDim> order, std::span<const uint64_t> block,
                 std::span<const uint64_t> full) {
  size_t partial = order.size();
  for (size_t i = order.size(); i-- > 0;) {
    if (block[i] < full[i]) {
      partial = i;
      break;
    }
  }
  if (partial == order.size()) return 1;
  uint64_t regions = 1;
  for (size_t i = 0; i < partial; ++i) regions = Mul(regions, block[i]);
  return regions;
}

}  // namespace

std::string ContractionShape::Key() const {
  std::string key = fmt::format("g{} n{} ci{} co{} {} {}/{} p{}{} c{} s{}", groups, batch, in_chans,
                                out_chans, types, in_bytes, acc_bytes, input_placeable ? 1 : 0,
                                weights_placeable ? 1 : 0, channel_grain, cell_state_bytes);
  for (const PlanField& f : fields) {
    key += fmt::format(" f{}:{}:{}:{}:{}:{}", f.out, f.in, f.kernel, f.stride, f.window_dilation,
                       f.base_dilation);
  }
  key += fmt::format(" b{}", fmt::join(input_tile_block, ","));
  for (const auto* order : {&input_order, &weights_order, &output_order}) {
    key += ' ';
    for (PlanDim d : *order) key += static_cast<char>('a' + Index(d));
  }
  return key;
}

std::string ContractionShape::Describe() const {
  std::string text = fmt::format("groups {}, batch {}", groups, batch);
  if (!fields.empty()) {
    std::vector<uint64_t> out, in, kernel;
    for (const PlanField& f : fields) {
      out.push_back(f.out);
      in.push_back(f.in);
      kernel.push_back(f.kernel);
    }
    text += fmt::format(", {} from {} with a {} kernel", fmt::join(out, "x"), fmt::join(in, "x"),
                        fmt::join(kernel, "x"));
  }
  return text + fmt::format(", {} -> {} channels", in_chans, out_chans);
}

uint64_t Partition::Cells() const {
  uint64_t cells = 1;
  for (size_t d = 0; d < kPlanDims; ++d) cells = Mul(cells, Ways(static_cast<PlanDim>(d)));
  return cells;
}

uint64_t Partition::ReduceWays() const {
  return Ways(PlanDim::kInChan) * Ways(PlanDim::kKernel0) * Ways(PlanDim::kKernel1) *
         Ways(PlanDim::kKernel2);
}

namespace {
constexpr const char* kDimNames[kPlanDims] = {"g",  "n",  "f0", "f1", "f2",
                                              "k0", "k1", "k2", "ci", "co"};
}  // namespace

std::string Partition::ToString() const {
  std::string out;
  for (size_t d = 0; d < kPlanDims; ++d) {
    const uint64_t w = Ways(static_cast<PlanDim>(d));
    if (w == 1) continue;
    if (!out.empty()) out += ' ';
    out += fmt::format("{}{}", kDimNames[d], w);
  }
  if (serial > 1)
    out += fmt::format("{}serial {} x{}", out.empty() ? "" : " ", kDimNames[Index(serial_dim)],
                       serial);
  return out.empty() ? "1" : out;
}

namespace {

// What a cell holding `held` bytes of the result holds beyond an even
// share of the whole result over the target's tiles, less what the step
// leaves free after its temporaries: the result outlives the step, but a
// pile that fits in memory free at the step raises no peak there.
uint64_t OutputExcess(const ContractionShape& shape, uint64_t held, uint64_t temporaries,
                      const PlanTarget& target) {
  const std::array<uint64_t, kPlanDims> full = FullSizes(shape);
  uint64_t elements = 1;
  for (PlanDim d : {PlanDim::kGroup, PlanDim::kBatch, PlanDim::kOutChan, PlanDim::kField0,
                    PlanDim::kField1, PlanDim::kField2})
    elements = Mul(elements, full[Index(d)]);
  const uint64_t even =
      CeilDiv(Mul(elements, shape.out_bytes), std::max<uint32_t>(target.tiles, 1));
  const uint64_t excess = held - std::min(held, even);
  const uint64_t free = target.free_temporary_bytes;
  const uint64_t left = free - std::min(free, temporaries);
  return excess - std::min(excess, left);
}

}  // namespace

uint64_t PlanCost::Objective() const {
  const uint64_t temporaries = Mul(charged_temporary_bytes, kCyclesPerTemporaryByte);
  const uint64_t code = Mul(Add(exchange_code, vertex_state), kCyclesPerCodeByte);
  // A cell's bytes count for the share of the target's tiles that hold a
  // cell, as the module's total counts them, but only as far as memory is
  // scarce: a module using little of the chip pays for a plan on fewer
  // tiles in cycles (its later ops run on those tiles too) and saves bytes
  // it does not need. The result a plan piles onto fewer tiles counts
  // whole (beyond what its step leaves free).
  const uint64_t held = std::max<uint64_t>(tiles, 1);
  const uint64_t pressure = std::min<uint64_t>(pressure_permille, 1000);
  const uint64_t share = std::max(Mul(std::min(cells, held), 1000) / held, 1000 - pressure);
  const uint64_t pile = Mul(output_excess_bytes, kCyclesPerTemporaryByte);
  return Add(Add(Add(compute_cycles, exchange_cycles), reduce_cycles),
             Add(Mul(Add(temporaries, code), share) / 1000, pile));
}

uint64_t CeilSqrt(uint64_t n) {
  auto root = static_cast<uint64_t>(std::sqrt(static_cast<double>(n)));
  while (root * root < n) ++root;  // exact where the double is not
  while (root > 1 && (root - 1) * (root - 1) >= n) --root;
  return root;
}

ReduceStages ReduceStagesOf(uint64_t reduce_ways) {
  if (reduce_ways <= kMaxReduceFanIn) return {std::max<uint64_t>(reduce_ways, 1), 1};
  // R = 336 is 18 groups of 18 or 19 (the lowering balances them).
  const uint64_t groups = CeilDiv(reduce_ways, CeilSqrt(reduce_ways));
  return {CeilDiv(reduce_ways, groups), groups};
}

Range SplitRange(uint64_t size, uint64_t ways, uint64_t index) {
  const uint64_t block = CeilDiv(size, std::max<uint64_t>(ways, 1));
  const uint64_t begin = std::min(size, Mul(block, index));
  return {begin, std::min(size, Add(begin, block)) - begin};
}

std::array<uint64_t, kPlanDims> BlockSizes(const ContractionShape& shape, const Partition& p) {
  std::array<uint64_t, kPlanDims> block = FullSizes(shape);
  for (size_t d = 0; d < kPlanDims; ++d)
    block[d] = CeilDiv(block[d], p.Ways(static_cast<PlanDim>(d)));
  return block;
}

ContractionShape plan_internal::SliceShape(const ContractionShape& shape, PlanDim dim,
                                           uint64_t steps) {
  ContractionShape slice = shape;
  auto cut = [&](uint64_t& size) { size = CeilDiv(size, std::max<uint64_t>(steps, 1)); };
  switch (dim) {
    case PlanDim::kGroup:
      cut(slice.groups);
      break;
    case PlanDim::kBatch:
      cut(slice.batch);
      break;
    case PlanDim::kOutChan:
      cut(slice.out_chans);
      break;
    case PlanDim::kField0:
    case PlanDim::kField1:
    case PlanDim::kField2: {
      const size_t s = Index(dim) - Index(PlanDim::kField0);
      if (s < slice.fields.size()) cut(slice.fields[s].out);
      break;
    }
    default:
      break;
  }
  return slice;
}

namespace {

PlanCost EstimateStep(const ContractionShape& shape, const Partition& p, const PlanTarget& target,
                      const std::array<uint64_t, kPlanDims>& layout);

}  // namespace

PlanCost EstimatePlan(const ContractionShape& shape, const Partition& p, const PlanTarget& target) {
  if (p.serial <= 1) return EstimateStep(shape, p, target, FullSizes(shape));
  // Each step is the plan of a slice, run in turn: its cycles and its
  // exchange programs (code) add up, its temporaries come and go. The
  // slice's blocks are cut from the whole operands, so their regions are
  // counted in the whole operands' layout: a slice of the innermost
  // (channel) dimension of NHWC is a piece of every pixel.
  PlanCost cost =
      EstimateStep(SliceShape(shape, p.serial_dim, p.serial), p, target, FullSizes(shape));
  cost.compute_cycles = Mul(cost.compute_cycles, p.serial);
  cost.exchange_cycles = Mul(cost.exchange_cycles, p.serial);
  cost.reduce_cycles = Mul(cost.reduce_cycles, p.serial);
  cost.exchange_code = Mul(cost.exchange_code, p.serial);
  cost.vertex_state = Mul(cost.vertex_state, p.serial);
  cost.output_runs = Mul(cost.output_runs, p.serial);
  cost.output_held_bytes = Mul(cost.output_held_bytes, p.serial);
  cost.output_excess_bytes =
      OutputExcess(shape, cost.output_held_bytes, cost.temporary_bytes, target);
  return cost;
}

namespace {

// The largest cell's blocks: of the output, the input (its fields the spans
// its outputs and kernel positions read) and the weights, and their sizes.
struct CellBlock {
  std::array<uint64_t, kPlanDims> block{};     // per dimension, the output's
  std::array<uint64_t, kPlanDims> in_block{};  // the input's (fields: spans read)
  std::array<uint64_t, kPlanDims> in_full{};   // the input's whole sizes
  uint64_t g = 1, n = 1, ci = 1, co = 1;       // groups, batch, channels in and out
  uint64_t out_positions = 1, kernel_positions = 1;
  uint64_t in_elements = 0, w_elements = 0, out_elements = 0;
  ReduceStages stages;  // how its block's partial sums are added
};

CellBlock CellBlockOf(const ContractionShape& shape, const Partition& p) {
  const std::array<uint64_t, kPlanDims> full = FullSizes(shape);
  const std::array<uint64_t, kPlanDims> block = BlockSizes(shape, p);
  auto b = [&](PlanDim d) { return block[Index(d)]; };
  // The block of each operand, per dimension (the input's fields are the
  // spans its outputs and kernel positions read).
  CellBlock c;
  c.in_block = block;
  c.in_full = full;
  uint64_t in_positions = 1;
  for (size_t s = 0; s < shape.fields.size() && s < kPlanMaxFields; ++s) {
    const PlanField& f = shape.fields[s];
    const uint64_t span = InputSpan(f, b(FieldDim(s)), b(KernelDim(s)));
    c.in_block[Index(FieldDim(s))] = span;
    c.in_full[Index(FieldDim(s))] = f.in;
    c.out_positions = Mul(c.out_positions, b(FieldDim(s)));
    c.kernel_positions = Mul(c.kernel_positions, b(KernelDim(s)));
    in_positions = Mul(in_positions, span);
  }
  c.g = b(PlanDim::kGroup);
  c.n = b(PlanDim::kBatch);
  c.ci = b(PlanDim::kInChan);
  c.co = b(PlanDim::kOutChan);
  c.in_elements = Mul(Mul(Mul(c.g, c.n), in_positions), c.ci);
  c.w_elements = Mul(Mul(Mul(c.g, c.kernel_positions), c.ci), c.co);
  c.out_elements = Mul(Mul(Mul(c.g, c.n), c.out_positions), c.co);
  c.block = block;
  c.stages = ReduceStagesOf(p.ReduceWays());
  return c;
}

// Exchange code: a region sent and received costs code at both ends.
void AddExchangeCode(const ContractionShape& shape, const Partition& p,
                     const std::array<uint64_t, kPlanDims>& layout, const CellBlock& c,
                     uint64_t input_replicas, uint64_t weight_replicas, PlanCost& cost) {
  const std::array<uint64_t, kPlanDims>& block = c.block;
  const uint64_t reduce_ways = p.ReduceWays();
  const auto regions = [&](const std::vector<PlanDim>& order, const auto& blk, const auto& all) {
    std::array<uint64_t, 2 * kPlanDims> bs{}, fs{};
    const size_t rank = std::min(order.size(), bs.size());
    for (size_t i = 0; i < rank; ++i) {
      bs[i] = blk[Index(order[i])];
      fs[i] = all[Index(order[i])];
    }
    return Regions(std::span(order).first(rank), std::span(bs).first(rank),
                   std::span(fs).first(rank));
  };
  std::array<uint64_t, kPlanDims> in_layout = layout;
  for (size_t s = 0; s < shape.fields.size() && s < kPlanMaxFields; ++s)
    in_layout[Index(FieldDim(s))] = c.in_full[Index(FieldDim(s))];
  const uint64_t in_regions = regions(shape.input_order, c.in_block, in_layout);
  const uint64_t w_regions = regions(shape.weights_order, block, layout);
  // The output block's runs: its consumers read them (an elementwise op on
  // the tile runs over each), so they count as the operands' do.
  const uint64_t out_regions = regions(shape.output_order, block, layout);
  cost.field_regions = Add(Add(in_regions, w_regions), out_regions);
  cost.output_runs = Mul(cost.cells / std::max<uint64_t>(reduce_ways, 1), out_regions);
  // Where the input is mapped already, its slice comes from the tiles of
  // its producer's layout it overlaps (about 1 + (B - 1) / b blocks of b
  // at an arbitrary offset, per dimension), each sending the runs of its
  // own storage (its block, row-major) that the slice covers: one when the
  // slice takes the block's inner dimensions whole. Unknown, the input is
  // one block.
  std::array<uint64_t, kPlanDims> in_tile = in_layout, in_piece = c.in_block;
  uint64_t in_senders = 1;
  for (size_t d = 0; d < kPlanDims; ++d) {
    const uint64_t b = std::min(shape.input_tile_block[d], in_layout[d]);
    if (b == 0 || c.in_block[d] == 0) continue;
    in_tile[d] = b;
    in_piece[d] = std::min(c.in_block[d], b);
    in_senders = Mul(in_senders, 1 + (c.in_block[d] - 1) / b);
  }
  const uint64_t in_sent = Mul(in_senders, regions(shape.input_order, in_piece, in_tile));
  uint64_t code_regions = out_regions;
  if (!shape.input_placeable || input_replicas > 1) code_regions = Add(code_regions, in_sent);
  if (!shape.weights_placeable || weight_replicas > 1) code_regions = Add(code_regions, w_regions);
  const ReduceStages& stages = c.stages;
  if (reduce_ways > 1) code_regions = Add(code_regions, Mul(stages.FanIn(), 2));
  // The sender's code counts the runs it sends; a receiver's, the tiles it
  // listens to (schedule_walk.cc), a few per operand slice.
  const uint64_t listened = 1 + in_senders + (reduce_ways > 1 ? stages.FanIn() : 0);
  cost.exchange_code = Add(Mul(Add(code_regions, listened), memory::kExchangeCodePerRegion),
                           stages.TwoStages() ? memory::kExchangeCodePerStep : 0);
}

// Cycles: the conv partial's own estimate (engine/codelets/conv.cc), the
// exchange of what the cell receives and the reduction of partials.
void AddCycles(const ContractionShape& shape, const Partition& p, const PlanTarget& target,
               const CellBlock& c, PlanCost& cost) {
  const uint64_t g = c.g, n = c.n, ci = c.ci, out_positions = c.out_positions,
                 kernel_positions = c.kernel_positions, w_elements = c.w_elements,
                 out_elements = c.out_elements;
  const uint64_t reduce_ways = p.ReduceWays();
  const uint64_t piece = CeilDiv(out_elements, reduce_ways);  // outputs a cell reduces
  const uint64_t workers = std::max<uint32_t>(target.workers, 1);
  if (target.amp_macs_per_cycle > 0) {
    const uint64_t pixels = Mul(Mul(g, n), out_positions);
    cost.compute_cycles =
        cost::kSupervisorOverhead +
        workers * (cost::kWorkerOverhead +
                   CeilDiv(Mul(pixels, kernel_positions), workers) * cost::kConvPerPixelCycles) +
        CeilDiv(cost.macs, target.amp_macs_per_cycle) + CeilDiv(Mul(w_elements, shape.in_bytes), 8);
  } else {
    const uint64_t per_output =
        cost::kDotPerOutputCycles +
        Mul(kernel_positions, CeilDiv(ci, std::max<uint32_t>(target.vector_width, 1))) * 3;
    cost.compute_cycles =
        cost::kSupervisorOverhead +
        workers * (cost::kWorkerOverhead + Mul(CeilDiv(out_elements, workers), per_output));
  }
  constexpr uint64_t kExchangeBytesPerCycle = 4, kExchangeSetup = 32, kSync = 100;
  cost.exchange_cycles = kExchangeSetup + CeilDiv(cost.received_bytes, kExchangeBytesPerCycle);
  // An exchange and a reduction step per stage: `sums` outputs of `adds`
  // partials each, one add per partial on the vector unit, split over the
  // workers.
  const auto stage = [&](uint64_t sums, uint64_t adds) {
    const uint64_t received = Mul(Mul(sums, adds - 1), shape.acc_bytes);
    return kSync + kExchangeSetup + CeilDiv(received, kExchangeBytesPerCycle) +
           cost::kSupervisorOverhead +
           workers * (cost::kWorkerOverhead +
                      CeilDiv(CeilDiv(Mul(sums, adds), target.vector_width), workers));
  };
  const ReduceStages& stages = c.stages;
  if (stages.TwoStages()) {
    cost.reduce_cycles =
        Add(stage(CeilDiv(out_elements, stages.group), stages.group), stage(piece, stages.groups));
  } else if (reduce_ways > 1) {
    cost.reduce_cycles = stage(piece, reduce_ways);
  }
}

PlanCost EstimateStep(const ContractionShape& shape, const Partition& p, const PlanTarget& target,
                      const std::array<uint64_t, kPlanDims>& layout) {
  PlanCost cost;
  cost.cells = p.Cells();
  cost.tiles = target.tiles;
  cost.pressure_permille = target.pressure_permille;
  const CellBlock c = CellBlockOf(shape, p);
  const uint64_t in_elements = c.in_elements, w_elements = c.w_elements,
                 out_elements = c.out_elements;
  cost.macs = Mul(Mul(out_elements, c.ci), c.kernel_positions);
  // The cell's vertices' state (always live: counted with the code).
  cost.vertex_state =
      Add(shape.cell_state_bytes, c.stages.TwoStages() ? kReduceVertexStateBytes : 0);

  // Received: what is not on the cell's tile. A placeable operand's slice
  // is on the tile of one of the cells that read it.
  auto received = [&](uint64_t elements, bool placeable, uint64_t replicas) {
    const uint64_t bytes = Mul(elements, shape.in_bytes);
    return placeable ? bytes / replicas * (replicas - 1) : bytes;
  };
  uint64_t weight_replicas = p.Ways(PlanDim::kBatch);
  for (size_t s = 0; s < shape.fields.size(); ++s) weight_replicas *= p.Ways(FieldDim(s));
  // The input is read by the cells of every output-channel block, and by
  // those of every kernel position block (their windows are shifted).
  uint64_t input_replicas = p.Ways(PlanDim::kOutChan);
  for (size_t s = 0; s < shape.fields.size(); ++s) input_replicas *= p.Ways(KernelDim(s));
  cost.received_bytes = Add(received(in_elements, shape.input_placeable, input_replicas),
                            received(w_elements, shape.weights_placeable, weight_replicas));
  const uint64_t reduce_ways = p.ReduceWays();
  const uint64_t piece = CeilDiv(out_elements, reduce_ways);  // outputs a cell reduces
  if (reduce_ways > 1) {
    cost.partial_bytes = Mul(out_elements, shape.acc_bytes);
    cost.reduce_received = Mul(Mul(piece, reduce_ways - 1), shape.acc_bytes);
    const ReduceStages& stages = c.stages;
    if (stages.TwoStages()) {
      // The first stage receives its group's other partials of a piece and
      // holds the piece's sum until the second stage; that one receives the
      // other groups' sums of its piece.
      const uint64_t first = Mul(CeilDiv(out_elements, stages.group), stages.group);
      cost.reduce_received = Mul(std::max(first, Mul(piece, stages.groups - 1)), shape.acc_bytes);
    }
  }
  cost.temporary_bytes = std::max(Add(cost.received_bytes, cost.partial_bytes),
                                  Add(cost.partial_bytes, cost.reduce_received));

  AddExchangeCode(shape, p, layout, c, input_replicas, weight_replicas, cost);
  AddCycles(shape, p, target, c, cost);
  const uint64_t available = static_cast<uint64_t>(target.available_memory_proportion *
                                                   static_cast<double>(target.tile_bytes));
  cost.fits = cost.temporary_bytes <= available && cost.field_regions <= kMaxCellRegions;
  cost.charged_temporary_bytes =
      cost.temporary_bytes - std::min(cost.temporary_bytes, target.free_temporary_bytes);
  cost.output_held_bytes = Mul(CeilDiv(out_elements, reduce_ways), shape.out_bytes);
  cost.output_excess_bytes =
      OutputExcess(shape, cost.output_held_bytes, cost.temporary_bytes, target);
  return cost;
}

}  // namespace

}  // namespace tileprof::engine::compiler
