// The contraction planner (engine/compiler/conv_plan.h): ranges, the cost
// model's figures on shapes checked by hand, and the search against an
// exhaustive one on small targets.
#include "engine/compiler/conv_plan.h"

#include <gtest/gtest.h>

#include "engine/compiler/dot_plan.h"
#include "engine/compiler/memory_model.h"

namespace tileprof::engine::compiler {
namespace {

using D = PlanDim;

PlanTarget Ipu2() {
  PlanTarget target;
  target.tiles = 1472;
  target.tile_bytes = 638976;
  target.amp_macs_per_cycle = 16;
  target.vector_width = 2;
  return target;
}

// A 2-D convolution in NHWC / HWIO, as Keras and Flax print them.
ContractionShape Conv2d(uint64_t batch, uint64_t size, uint64_t ci, uint64_t co, uint64_t kernel,
                        uint64_t stride = 1) {
  ContractionShape shape;
  shape.batch = batch;
  shape.in_chans = ci;
  shape.out_chans = co;
  const uint64_t out = (size + stride - 1) / stride;
  shape.fields = {{out, size, kernel, stride, 1, 1}, {out, size, kernel, stride, 1, 1}};
  shape.input_order = {D::kBatch, D::kField0, D::kField1, D::kInChan};
  shape.weights_order = {D::kKernel0, D::kKernel1, D::kInChan, D::kOutChan};
  shape.output_order = {D::kBatch, D::kField0, D::kField1, D::kOutChan};
  shape.weights_placeable = true;
  return shape;
}

TEST(SplitRange, CoversEveryElementOnce) {
  for (uint64_t size : {1u, 7u, 64u, 1000u}) {
    for (uint64_t ways = 1; ways <= size; ++ways) {
      uint64_t next = 0;
      for (uint64_t i = 0; i < ways; ++i) {
        const Range r = SplitRange(size, ways, i);
        if (r.size == 0) continue;
        EXPECT_EQ(r.begin, next) << size << "/" << ways;
        next = r.begin + r.size;
      }
      EXPECT_EQ(next, size) << size << "/" << ways;
    }
  }
}

TEST(ReduceStagesOf, GroupsOfAboutTheSquareRootPastTheFanIn) {
  for (uint64_t r : {1u, 2u, 128u}) {
    const ReduceStages one = ReduceStagesOf(r);
    EXPECT_FALSE(one.TwoStages()) << r;
    EXPECT_EQ(one.group, r);
    EXPECT_EQ(one.FanIn(), r);
  }
  // The weight gradient's 112 x 3 kernel split: 18 groups of at most 19,
  // 37 senders to listen to instead of 336.
  const ReduceStages tree = ReduceStagesOf(336);
  EXPECT_TRUE(tree.TwoStages());
  EXPECT_EQ(tree.group, 19u);
  EXPECT_EQ(tree.groups, 18u);
  EXPECT_EQ(tree.FanIn(), 37u);
  for (uint64_t r = 129; r < 5000; r += 7) {
    const ReduceStages s = ReduceStagesOf(r);
    EXPECT_GE(s.group * s.groups, r) << r;        // every partial in a group
    EXPECT_LT((s.groups - 1) * s.group, r) << r;  // no empty group
    EXPECT_LT(s.FanIn(), r) << r;
  }
}

TEST(EstimatePlan, FiguresOfAHandCheckedPartition) {
  // 7x7x512 -> 512, 3x3: ci in 32 ways, co in 43 (12 channels a cell, the
  // last 8). Cell: input 7x7x16 f32 = 3,136 B received; weights 3x3x16x12
  // placed on the tile; partials 7x7x12 x 4 = 2,352 B, reduced in 32
  // pieces of ceil(588 / 32) = 19 outputs, 31 of them received: 2,356 B.
  // The product step holds more: 3,136 + 2,352.
  const ContractionShape shape = Conv2d(1, 7, 512, 512, 3);
  Partition p;
  p.ways[static_cast<size_t>(D::kInChan)] = 32;
  p.ways[static_cast<size_t>(D::kOutChan)] = 43;
  const PlanCost cost = EstimatePlan(shape, p, Ipu2());
  EXPECT_EQ(cost.cells, 32u * 43);
  EXPECT_EQ(cost.macs, 7u * 7 * 12 * 16 * 9);
  EXPECT_EQ(cost.received_bytes, 7u * 7 * 16 * 4);
  EXPECT_EQ(cost.partial_bytes, 7u * 7 * 12 * 4);
  EXPECT_EQ(cost.reduce_received, 19u * 31 * 4);
  EXPECT_EQ(cost.temporary_bytes, 3136u + 2352);
  EXPECT_TRUE(cost.fits);
}

// An input already mapped comes from the tiles of its producer's layout: a
// 56x56x64 activation whose producer split columns 56 ways and channels 4
// ways (a column and 16 channels a tile). A 1x1 convolution's cell of one
// row and 19 columns reads from 19 x 4 tiles, one run each (the sender's
// block is its column, row-major); unknown, the slice is one run. A cell
// of 19 rows of one column reads from 4 tiles.
TEST(EstimatePlan, CountsTheProducersTilesAnInputSliceComesFrom) {
  ContractionShape shape = Conv2d(1, 56, 64, 256, 1);
  Partition rows;
  rows.ways[static_cast<size_t>(D::kField0)] = 56;
  rows.ways[static_cast<size_t>(D::kField1)] = 3;
  rows.ways[static_cast<size_t>(D::kOutChan)] = 8;
  Partition columns = rows;
  columns.ways[static_cast<size_t>(D::kField0)] = 3;
  columns.ways[static_cast<size_t>(D::kField1)] = 56;
  const uint64_t unknown = EstimatePlan(shape, rows, Ipu2()).exchange_code;
  shape.input_tile_block[static_cast<size_t>(D::kField0)] = 56;
  shape.input_tile_block[static_cast<size_t>(D::kField1)] = 1;
  shape.input_tile_block[static_cast<size_t>(D::kInChan)] = 16;
  const uint64_t known = EstimatePlan(shape, rows, Ipu2()).exchange_code;
  // 76 runs sent and 76 senders listened to, where one of each was counted.
  EXPECT_EQ(known - unknown, 2 * 75 * memory::kExchangeCodePerRegion);
  EXPECT_LT(EstimatePlan(shape, columns, Ipu2()).exchange_code, known);
}

// The probe of an operand's layout: a [8, 6, 16] activation whose tiles
// each hold 3 columns and 4 channels of every row (48 tiles of 8 x 3 x 4,
// as a plan splitting columns 2 ways and channels 4 ways leaves it).
TEST(OperandTileBlocks, FindsTheRunsItsProducersTilesHold) {
  Graph graph(*Target::FromPreset("ipu2", 1, 64));
  const Tensor act = *graph.AddVariable(ElementType::kF32, {8, 6, 16}, "act");
  for (uint64_t h = 0; h < 8; ++h) {
    for (uint64_t w = 0; w < 6; ++w) {
      for (uint64_t c = 0; c < 16; c += 4) {
        const uint64_t at = (h * 6 + w) * 16 + c;
        const auto tile = static_cast<uint32_t>(w / 3 * 4 + c / 4);
        ASSERT_TRUE(graph.SetTileMapping(*act.Flatten().Slice(at, at + 4), tile));
      }
    }
  }
  const std::array<OperandDim, 3> dims = {
      OperandDim{D::kField0, 8, 96}, OperandDim{D::kField1, 6, 16}, OperandDim{D::kInChan, 16, 1}};
  const std::array<uint64_t, kPlanDims> blocks = OperandTileBlocks(graph, act, dims);
  EXPECT_EQ(blocks[static_cast<size_t>(D::kField0)], 8u);
  EXPECT_EQ(blocks[static_cast<size_t>(D::kField1)], 3u);
  EXPECT_EQ(blocks[static_cast<size_t>(D::kInChan)], 4u);
  EXPECT_EQ(blocks[static_cast<size_t>(D::kBatch)], 0u);  // not given: unknown
  // A view of several regions is not probed.
  const std::array<size_t, 3> swap = {1, 0, 2};
  const Tensor view = *act.Dimshuffle(swap);
  EXPECT_EQ(OperandTileBlocks(graph, view, dims)[static_cast<size_t>(D::kField0)], 0u);
}

// A plan's vertex state is its cells' (always live, so the objective counts
// it with the code): a second reduction stage adds a reduce vertex, and
// serial steps make the cell's vertices once per step.
TEST(EstimatePlan, CountsTheCellsVertexState) {
  ContractionShape shape = Conv2d(1, 7, 512, 512, 3);
  shape.cell_state_bytes = 100;
  Partition p;
  p.ways[static_cast<size_t>(D::kOutChan)] = 43;
  EXPECT_EQ(EstimatePlan(shape, p, Ipu2()).vertex_state, 100u);
  p.ways[static_cast<size_t>(D::kInChan)] = 32;
  p.ways[static_cast<size_t>(D::kKernel0)] = 3;
  p.ways[static_cast<size_t>(D::kKernel1)] = 3;  // 288 partials: two stages
  EXPECT_EQ(EstimatePlan(shape, p, Ipu2()).vertex_state, 100u + kReduceVertexStateBytes);
  p.serial = 2;
  p.serial_dim = D::kOutChan;
  EXPECT_EQ(EstimatePlan(shape, p, Ipu2()).vertex_state, 2 * (100u + kReduceVertexStateBytes));
}

TEST(ChoosePartition, DeepResNetConvolutionNeverHoldsTheWholeKernel) {
  // The 3x3x512x512 kernel is 9.4 MB: the old lowering gave every tile
  // all of it. Planned, a cell holds a small slice and few temporaries.
  const ContractionShape shape = Conv2d(1, 7, 512, 512, 3);
  const Partition p = ChoosePartition(shape, Ipu2());
  const PlanCost cost = EstimatePlan(shape, p, Ipu2());
  EXPECT_LE(p.Cells(), 1472u) << p.ToString();
  EXPECT_GE(p.Cells(), 512u) << p.ToString();
  EXPECT_TRUE(cost.fits);
  EXPECT_LT(cost.temporary_bytes, 32u * 1024) << p.ToString();
}

TEST(ChoosePartition, WeightGradientSplitsTheKernelWindow) {
  // dW of a 3x3 conv over 56x56x64 at batch 8, as XLA prints it: the batch
  // is the contraction (input channels), the activations' spatial size the
  // kernel window, the 3x3 filter the output field.
  ContractionShape shape;
  shape.batch = 64;    // input channels of the forward conv
  shape.in_chans = 8;  // the batch
  shape.out_chans = 64;
  shape.fields = {{3, 58, 56, 1, 1, 1}, {3, 58, 56, 1, 1, 1}};
  shape.input_order = {D::kInChan, D::kField0, D::kField1, D::kBatch};
  shape.weights_order = {D::kInChan, D::kKernel0, D::kKernel1, D::kOutChan};
  shape.output_order = {D::kField0, D::kField1, D::kBatch, D::kOutChan};
  const Partition p = ChoosePartition(shape, Ipu2());
  const PlanCost cost = EstimatePlan(shape, p, Ipu2());
  EXPECT_GT(p.Ways(D::kKernel0) * p.Ways(D::kKernel1), 1u) << p.ToString();
  EXPECT_TRUE(cost.fits) << p.ToString();
}

TEST(ChoosePartition, TinyContractionsStayOnFewTiles) {
  ContractionShape shape = Conv2d(1, 4, 2, 2, 1);
  const Partition p = ChoosePartition(shape, Ipu2());
  EXPECT_LE(p.Cells(), 32u) << p.ToString();
}

TEST(ChoosePartition, GroupsOfSeveralKeepTheirChannelsWhole) {
  // Depthwise 3x3 over 56x56x256: 256 groups of one channel.
  ContractionShape shape = Conv2d(1, 56, 1, 1, 3);
  shape.groups = 256;
  shape.input_order = {D::kBatch, D::kField0, D::kField1, D::kGroup, D::kInChan};
  shape.weights_order = {D::kKernel0, D::kKernel1, D::kInChan, D::kGroup, D::kOutChan};
  shape.output_order = {D::kBatch, D::kField0, D::kField1, D::kGroup, D::kOutChan};
  const Partition p = ChoosePartition(shape, Ipu2());
  EXPECT_TRUE(EstimatePlan(shape, p, Ipu2()).fits);
  EXPECT_LE(p.Cells(), 1472u);
}

// Every partition of up to `tiles` cells, by brute force.
void AllPartitions(const ContractionShape& shape, uint64_t tiles, size_t d, Partition& p,
                   uint64_t cells, const auto& visit) {
  if (d == kPlanDims) {
    visit(p);
    return;
  }
  uint64_t size = 1;
  switch (static_cast<D>(d)) {
    case D::kGroup:
      size = shape.groups;
      break;
    case D::kBatch:
      size = shape.batch;
      break;
    case D::kInChan:
      size = shape.in_chans;
      break;
    case D::kOutChan:
      size = shape.out_chans;
      break;
    case D::kField0:
    case D::kField1:
    case D::kField2: {
      const size_t s = d - static_cast<size_t>(D::kField0);
      size = s < shape.fields.size() ? shape.fields[s].out : 1;
      break;
    }
    default: {
      const size_t s = d - static_cast<size_t>(D::kKernel0);
      size = s < shape.fields.size() ? shape.fields[s].kernel : 1;
    }
  }
  const bool channel = static_cast<D>(d) == D::kInChan || static_cast<D>(d) == D::kOutChan;
  for (uint64_t w = 1; w <= size && cells * w <= tiles; ++w) {
    if (w > 1 && (size + w - 2) / (w - 1) == (size + w - 1) / w) continue;  // same blocks
    // Channels only in as many ways as blocks of the grain times a power of
    // two make (10 channels in blocks of 8: 2 ways, of 5 each).
    if (channel && w > 1) {
      bool allowed = false;
      for (uint64_t block = shape.channel_grain; block < size; block *= 2)
        allowed = allowed || (size + block - 1) / block == w;
      if (!allowed) continue;
    }
    p.ways[d] = w;
    AllPartitions(shape, tiles, d + 1, p, cells * w, visit);
  }
  p.ways[d] = 1;
}

TEST(ChoosePartition, FindsTheBestFittingPlanOnSmallTargets) {
  for (uint32_t tiles : {4u, 16u, 24u})
    for (uint64_t free : {uint64_t{0}, uint64_t{6 * 1024}}) {
      PlanTarget target = Ipu2();
      target.tiles = tiles;
      target.tile_bytes = 64 * 1024;
      target.free_temporary_bytes = free;
      for (const ContractionShape& shape :
           {Conv2d(2, 8, 6, 10, 3), Conv2d(1, 12, 16, 8, 3, 2), Conv2d(4, 5, 3, 7, 1)}) {
        const Partition chosen = ChoosePartition(shape, target);
        const PlanCost chosen_cost = EstimatePlan(shape, chosen, target);
        uint64_t best = UINT64_MAX;
        Partition p;
        AllPartitions(shape, tiles, 0, p, 1, [&](const Partition& q) {
          const PlanCost c = EstimatePlan(shape, q, target);
          if (c.fits) best = std::min(best, c.Objective());
        });
        ASSERT_TRUE(chosen_cost.fits) << tiles << " " << shape.Key();
        EXPECT_EQ(chosen_cost.Objective(), best)
            << tiles << " " << shape.Key() << " chose " << chosen.ToString();
      }
    }
}

TEST(ChoosePartition, TemporariesInTheStepsFreeMemoryAreNotCharged) {
  // ResNet-50's 1x1 convolution 512 -> 128 at batch 16, 28x28, f16. With no
  // memory free at its step, the plan trades exchange code for smaller
  // temporaries; with 56 KiB a tile free (the module's peak is elsewhere),
  // temporaries below that cost nothing, and the plan is no worse in
  // cycles, code and state, and never larger than the free memory allows
  // beyond what the first plan held.
  ContractionShape shape = Conv2d(16, 28, 512, 128, 1);
  shape.in_bytes = 2;
  shape.channel_grain = 16;
  PlanTarget tight = Ipu2();
  tight.amp_macs_per_cycle = 64;
  PlanTarget roomy = tight;
  roomy.free_temporary_bytes = 56 * 1024;
  const Partition a = ChoosePartition(shape, tight);
  const Partition b = ChoosePartition(shape, roomy);
  const PlanCost a_cost = EstimatePlan(shape, a, roomy);
  const PlanCost b_cost = EstimatePlan(shape, b, roomy);
  EXPECT_EQ(a_cost.charged_temporary_bytes,
            a_cost.temporary_bytes - std::min<uint64_t>(a_cost.temporary_bytes, 56 * 1024));
  EXPECT_LE(b_cost.Objective(), a_cost.Objective()) << a.ToString() << " / " << b.ToString();
  const PlanCost b_tight = EstimatePlan(shape, b, tight);
  EXPECT_EQ(b_tight.charged_temporary_bytes, b_tight.temporary_bytes);
  EXPECT_LE(b_cost.temporary_bytes, std::max<uint64_t>(a_cost.temporary_bytes, 56 * 1024))
      << b.ToString();
  EXPECT_LT(b_cost.exchange_code + b_cost.vertex_state, a_cost.exchange_code + a_cost.vertex_state)
      << a.ToString() << " / " << b.ToString();
}

}  // namespace
}  // namespace tileprof::engine::compiler

namespace tileprof::engine::compiler {
namespace {

TEST(PlanCost, ObjectiveCountsACellsBytesPerTileOfTheTarget) {
  // 1,000 B of code on each of a quarter of the tiles add 250 B to each
  // tile's average: 4 cycles a byte.
  PlanCost cost;
  cost.compute_cycles = 700;
  cost.exchange_code = 600;
  cost.vertex_state = 400;
  cost.tiles = 1472;
  cost.cells = 1472;
  EXPECT_EQ(cost.Objective(), 700u + 4 * 1000);
  cost.cells = 368;
  EXPECT_EQ(cost.Objective(), 700u + 4 * 250);
  // Charged temporaries weigh as much; the result's excess on the cells'
  // tiles counts whole.
  cost.charged_temporary_bytes = 300;
  cost.output_excess_bytes = 100;
  EXPECT_EQ(cost.Objective(), 700u + 4 * (1300 / 4) + 4 * 100);
  // Only as far as memory is scarce: a module whose bound is a fifth of
  // what plans may use counts at least 80% of a cell's bytes.
  cost.pressure_permille = 200;
  EXPECT_EQ(cost.Objective(), 700u + 4 * (1300 * 800 / 1000) + 4 * 100);
  cost.pressure_permille = 0;
  EXPECT_EQ(cost.Objective(), 700u + 4 * 1300 + 4 * 100);
  cost.cells = 1472;
  EXPECT_EQ(cost.Objective(), 700u + 4 * 1300 + 4 * 100);
}

TEST(ChoosePartition, AResultIsNotPiledOntoHalfTheTiles) {
  // ResNet-50's 1x1 convolution 64 -> 256 at batch 16, 56x56, f16, with
  // 24 KiB a tile free: its 25.7 MB result spread over every tile is 17 KiB
  // a tile. Planned on 784 tiles (n2 f056 f17: fewer cells, less code),
  // each would hold 32 KiB of it until its last use, and the residual add
  // reading it with its twin (planned on 1,444 tiles) received a whole
  // operand. The excess over an even share is charged.
  ContractionShape shape = Conv2d(16, 56, 64, 256, 1);
  shape.in_bytes = shape.out_bytes = 2;
  shape.channel_grain = 16;
  PlanTarget target = Ipu2();
  target.amp_macs_per_cycle = 64;
  target.free_temporary_bytes = 24 * 1024;
  Partition half;
  half.ways[static_cast<size_t>(D::kBatch)] = 2;
  half.ways[static_cast<size_t>(D::kField0)] = 56;
  half.ways[static_cast<size_t>(D::kField1)] = 7;
  const PlanCost half_cost = EstimatePlan(shape, half, target);
  const uint64_t even = (16 * 56 * 56 * 256 * 2 + 1471) / 1472;
  EXPECT_EQ(half_cost.output_held_bytes, 8 * 1 * 8 * 256 * 2);
  EXPECT_EQ(half_cost.output_excess_bytes, half_cost.output_held_bytes - even);
  const Partition p = ChoosePartition(shape, target);
  const PlanCost cost = EstimatePlan(shape, p, target);
  EXPECT_LT(cost.Objective(), half_cost.Objective()) << p.ToString();
  EXPECT_GT(cost.cells, 1400u) << p.ToString();
  // Where the step leaves room for the pile beside its temporaries, it
  // raises no peak there: not charged.
  PlanTarget roomy = target;
  roomy.free_temporary_bytes = half_cost.temporary_bytes + half_cost.output_excess_bytes;
  EXPECT_EQ(EstimatePlan(shape, half, roomy).output_excess_bytes, 0u);
}

TEST(ChoosePartition, LargeDepthwiseStepsNeverCutThePixelsChannels) {
  // EfficientNet's first depthwise convolution at batch 250 (an HLO dump in
  // the corpus): 250x150x150x32 f32 in NHWC, 720 MB. One step holds too
  // much, so it runs in serial steps; a step over a slice of the groups
  // (channels, innermost) would write one run per pixel (180 M runs, which
  // once took 16 GB of host memory). The steps' output runs are counted in
  // the whole tensor's layout and bounded.
  ContractionShape shape;
  shape.groups = 32;
  shape.batch = 250;
  shape.fields = {{150, 150, 3, 1, 1, 1}, {150, 150, 3, 1, 1, 1}};
  shape.input_order = {D::kBatch, D::kField0, D::kField1, D::kGroup, D::kInChan};
  shape.weights_order = {D::kKernel0, D::kKernel1, D::kGroup, D::kInChan, D::kOutChan};
  shape.output_order = {D::kBatch, D::kField0, D::kField1, D::kGroup, D::kOutChan};
  shape.weights_placeable = true;
  const Partition p = ChoosePartition(shape, Ipu2());
  const PlanCost cost = EstimatePlan(shape, p, Ipu2());
  EXPECT_TRUE(cost.fits) << p.ToString();
  EXPECT_GT(p.serial, 1u) << p.ToString();
  EXPECT_LE(cost.output_runs, kMaxOutputRunsPerTile * 1472) << p.ToString();
  EXPECT_LE(cost.field_regions, kMaxCellRegions) << p.ToString();
  // A step over one channel of every pixel, costed in the whole layout.
  Partition by_group;
  by_group.ways[static_cast<size_t>(D::kBatch)] = 250;
  by_group.ways[static_cast<size_t>(D::kField0)] = 5;
  by_group.serial = 32;
  by_group.serial_dim = D::kGroup;
  EXPECT_GT(EstimatePlan(shape, by_group, Ipu2()).output_runs, 100'000'000u);
}

}  // namespace
}  // namespace tileprof::engine::compiler
