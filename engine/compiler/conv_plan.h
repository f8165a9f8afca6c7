// Internal to engine/compiler: the planner of convolutions and matrix
// products (lower_conv.cc, lower_dot.cc), in the spirit of poplin's: a
// contraction out[g, n, f.., co] = sum over ci and kernel positions k.. of
// in[g, n, f*stride + k*dilation.., ci] * w[g, k.., ci, co] is partitioned
// over its dimensions into cells, one tile each. A cell computes the block
// of outputs of its (g, n, f.., co) ranges over its (ci, k..) ranges: when
// the contraction is split, the cells' partial sums are added up across
// tiles afterwards. Each cell's tile receives only the operand slices its
// block reads.
//
// The choice is made by a cost model (docs/memory-model.md, "Planning"):
// per cell, the bytes it receives and holds (operand slices, partial sums,
// the reduction's inputs), the exchange code those transfers take, and the
// cycles of compute, exchange and reduction; a plan whose temporaries do not
// fit the tile's available memory is never chosen while one that fits
// exists. It is a pure function of the shape and the target, so plans are
// tested and memoised on their own.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tileprof::engine::compiler {

// The dimensions a contraction is partitioned over. Splitting a dimension
// divides the operands that have it; it replicates the operand that lacks
// it (batch and fields: the weights; output channels: the input), and
// splitting a reduced one (input channels, kernel positions) makes partial
// sums.
enum class PlanDim : uint8_t {
  kGroup,
  kBatch,
  kField0,
  kField1,
  kField2,
  kKernel0,
  kKernel1,
  kKernel2,
  kInChan,
  kOutChan,
  kCount,
};
inline constexpr size_t kPlanDims = static_cast<size_t>(PlanDim::kCount);
inline constexpr size_t kPlanMaxFields = 3;

// The output-field and kernel-position dimensions of spatial dimension s.
constexpr PlanDim FieldDim(size_t s) {
  return static_cast<PlanDim>(static_cast<size_t>(PlanDim::kField0) + s);
}
constexpr PlanDim KernelDim(size_t s) {
  return static_cast<PlanDim>(static_cast<size_t>(PlanDim::kKernel0) + s);
}

// One spatial dimension of a convolution (a matrix product has none).
struct PlanField {
  uint64_t out = 1;     // output positions
  uint64_t in = 1;      // input positions
  uint64_t kernel = 1;  // kernel positions
  uint64_t stride = 1;
  uint64_t window_dilation = 1;
  uint64_t base_dilation = 1;
};

// What the planner needs to know of a contraction.
struct ContractionShape {
  uint64_t groups = 1;
  uint64_t batch = 1;
  uint64_t in_chans = 1;   // per group
  uint64_t out_chans = 1;  // per group
  std::vector<PlanField> fields;
  // Channels (input and output) are split in blocks of this many times a
  // power of two, or not at all: the channel groups of the accumulating
  // unit (poplin's in/outChansPerGroup).
  uint64_t channel_grain = 8;
  uint64_t in_bytes = 4;   // element size of both operands
  uint64_t acc_bytes = 4;  // element size of partial sums (f32 for a 16-bit float result)
  uint64_t out_bytes = 4;  // element size of the result
  // Each operand's dimensions in storage order (outermost first), for the
  // regions an operand slice is made of. A tensor dimension that combines
  // two (features: group-major, then channel) is listed as both.
  std::vector<PlanDim> input_order, weights_order, output_order;
  // Vertex state a cell adds per step: its products' vertices and its
  // reduction's (always live, so the objective counts it with the code).
  uint64_t cell_state_bytes = 0;
  // An operand nothing has read yet (an entry parameter) can be laid out
  // for the plan (as poplin's createWeights / TensorFlow's allocation
  // finder do): then a cell's slice is on its tile unless replicated.
  bool input_placeable = false;
  bool weights_placeable = false;
  // Where the input is already mapped (not placeable): per dimension, the
  // elements in a row that one tile holds, as its producer's plan left
  // them (a convolution's output split over columns and channels); 0 when
  // unknown. A cell's slice of the input comes from about one tile per
  // such block it overlaps, each a message of its own.
  std::array<uint64_t, kPlanDims> input_tile_block{};
  // Element type names, for the memo key only.
  std::string types;

  // Every field in a string: equal keys plan equally.
  std::string Key() const;
  // "groups 1, batch 16, 28x28 from 28x28 with a 3x3 kernel, 128 -> 128
  // channels" for logs.
  std::string Describe() const;
};

struct PlanTarget {
  uint32_t tiles = 1;
  uint64_t tile_bytes = 0;
  uint32_t workers = 6;
  // MACs per cycle of the tile's accumulating matrix product unit for the
  // operand types (0: none, the vector unit does them).
  uint32_t amp_macs_per_cycle = 0;
  // Vector width (elements) for the vector unit's dot products.
  uint32_t vector_width = 2;
  // Temporaries of one operation may use at most this share of a tile
  // (Poplar's availableMemoryProportion, default 0.6).
  double available_memory_proportion = 0.6;
  // Bytes a tile has free at the contraction's step below the module's own
  // peak: (peak-live bound - bytes live at the step) / tiles. Temporaries
  // up to this much do not raise the module's peak, so the objective does
  // not charge them.
  uint64_t free_temporary_bytes = 0;
  // The module's own peak-live bound over the memory plans may use (the
  // available memory proportion of every tile), in thousandths, at most
  // 1000.
  uint64_t pressure_permille = 1000;
};

// Ways each dimension is split, and in how many serial steps the
// contraction runs (poplin's serial splits): each step computes a slice of
// `serial_dim` (an output dimension) on the same cells, so a step's
// temporaries are a slice's.
struct Partition {
  std::array<uint64_t, kPlanDims> ways{};  // 0 read as 1
  uint64_t serial = 1;
  PlanDim serial_dim = PlanDim::kOutChan;
  uint64_t Ways(PlanDim d) const {
    const uint64_t w = ways[static_cast<size_t>(d)];
    return w == 0 ? 1 : w;
  }
  // Cells of one step.
  uint64_t Cells() const;
  // Partial sums per output block: input channels x kernel positions.
  uint64_t ReduceWays() const;
  // "ci4 co8 f0x16" for logs and tests.
  std::string ToString() const;
};

// How a block's partial sums are added: in one step when there are at most
// kMaxReduceFanIn of them; past that in two, a reduction tree as popops'
// multi-stage reductions are: groups of about sqrt(R) partials first, each
// group's piece on the tile of one of its cells, then the groups' sums. A
// reducing tile then listens to about 2 sqrt(R) senders instead of R (a
// weight gradient's 112 x 3 kernel split had each of 1,344 tiles listen to
// 336, 3.6 MB of exchange code in one step), for one more step's sync and
// control code on every tile. Why not from 17 partials: the plan's figures
// for the products of a plan with more channel splits are less exact than
// for its reduction, and with trees from 17 the planner traded ResNet-50's
// forward convolutions into such plans (ci4 co4 -> ci8 co2), whose operand
// slices cost more than their reductions saved (training at batch 1 in
// f32: 760.3 -> 773.5 MB, a tile out of memory), and MNIST's first layer
// into ci98 (8% more cycles, 0.2 MB more memory). From 129 neither moves
// (docs/memory-model.md).
inline constexpr uint64_t kMaxReduceFanIn = 128;
// The vertex state of a reduction vertex (popops::Reduce: partials and out
// spans), which a cell adds when the contraction is split, and again for a
// second stage: for the plan's objective.
inline constexpr uint64_t kReduceVertexStateBytes = 16;
struct ReduceStages {
  uint64_t group = 1;   // partials each first-stage sum adds (all R in one stage)
  uint64_t groups = 1;  // group sums the second stage adds; 1: one stage
  bool TwoStages() const { return groups > 1; }
  // Senders a reducing tile listens to, over the stages.
  uint64_t FanIn() const { return group + (TwoStages() ? groups : 0); }
};
ReduceStages ReduceStagesOf(uint64_t reduce_ways);
// ceil(sqrt(n)): the group size of a two-stage sum, here and in the
// lowering's SumRows (SumFanIn).
uint64_t CeilSqrt(uint64_t n);

// A cell whose operand and output slices are cut into more runs than this
// does not fit: the graph would hold a region per run for every cell (host
// memory growing with the tensors, not the graph), and its exchange code
// would be mostly descriptors. A plan splits outer dimensions instead (the
// batch of a large model gives every cell whole images).
inline constexpr uint64_t kMaxCellRegions = 4096;
// Likewise the output's tile mapping: every later operation on it maps its
// own output alike, so its runs are held many times over. At most this many
// per tile of the target (64 x 1,472 = 94,208 runs, 2 MB, on an ipu2),
// whatever the size of the tensor.
inline constexpr uint64_t kMaxOutputRunsPerTile = 64;

// What a byte on a cell's tile costs in the objective, in cycles. A byte
// per cell is a byte on every tile of the plan (1,472 on an ipu2), where a
// cycle is one cycle of one step, so a plan may be slower to be smaller:
// by 4 cycles for each byte of exchange code or vertex state (always live,
// so every byte counts) and as much for each charged byte of temporaries.
// Those are the bytes beyond what the module leaves free at the step
// (PlanTarget::free_temporary_bytes), the ones that raise the module's
// peak, so a byte of them costs the total what a byte of code does.
inline constexpr uint64_t kCyclesPerTemporaryByte = 4;
inline constexpr uint64_t kCyclesPerCodeByte = 4;

// The model's figures for one partition, per cell (the largest cell).
struct PlanCost {
  uint64_t cells = 0;
  uint64_t macs = 0;             // of one cell
  uint64_t received_bytes = 0;   // operand slices received for the products
  uint64_t partial_bytes = 0;    // partial sums held (0 when not split)
  uint64_t reduce_received = 0;  // partial sums received for the reduction
  uint64_t temporary_bytes = 0;  // the most held at once: max of the two steps
  uint64_t exchange_code = 0;    // bytes of exchange code for the transfers
  uint64_t vertex_state = 0;     // bytes of vertex state (all steps)
  uint64_t field_regions = 0;    // runs of the input, weights and output slices
  uint64_t output_runs = 0;      // runs of the output's mapping, all cells
  uint64_t compute_cycles = 0;
  uint64_t exchange_cycles = 0;
  uint64_t reduce_cycles = 0;
  uint64_t charged_temporary_bytes = 0;  // beyond the target's free_temporary_bytes
  uint64_t output_held_bytes = 0;        // of the result, on the largest cell
  // The result's bytes on a cell beyond an even share of every tile, less
  // the memory the step leaves free after its temporaries: a plan on fewer
  // tiles piles its output onto them for as long as it lives.
  uint64_t output_excess_bytes = 0;
  bool fits = false;                  // temporary_bytes within the available memory
  uint64_t tiles = 1;                 // the target's (PlanTarget::tiles)
  uint64_t pressure_permille = 1000;  // PlanTarget::pressure_permille
  // The objective: cycles, plus kCyclesPerTemporaryByte per charged byte
  // of temporaries and kCyclesPerCodeByte per byte of exchange code and
  // vertex state, per tile of the target: a cell's bytes times the share
  // of the tiles that hold a cell (a plan on a few tiles adds little to
  // the module's total), or 1 - pressure if more (docs/memory-model.md
  // says why).
  uint64_t Objective() const;
};

// The block sizes of the largest cell, per dimension.
std::array<uint64_t, kPlanDims> BlockSizes(const ContractionShape& shape, const Partition& p);

PlanCost EstimatePlan(const ContractionShape& shape, const Partition& partition,
                      const PlanTarget& target);

// The cheapest partition that fits (the one with the smallest temporaries
// when none fits). Deterministic.
Partition ChoosePartition(const ContractionShape& shape, const PlanTarget& target);

// The number of elements of [0, size) that range `index` of `ways` covers,
// and where it starts: ranges are ceil(size / ways) long, the last ones
// shorter or empty.
struct Range {
  uint64_t begin = 0;
  uint64_t size = 0;
};
Range SplitRange(uint64_t size, uint64_t ways, uint64_t index);

}  // namespace tileprof::engine::compiler
