// The simulator's cycle model (engine/sim/cycle_model.h) with hand-computed
// figures, on graphs built with the Graph API; the snapshot rule of a
// compute set (every vertex reads memory as it was before the compute set);
// and determinism across host thread counts on a compiled module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/format.h"
#include "engine/codelets/codelets.h"
#include "engine/session/host_io.h"
#include "engine/sim/cycle_model.h"
#include "reports/text_writer.h"
#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CycleModel, PackTileSpreadsWorkersOverSixContexts) {
  const uint64_t seven[] = {10, 10, 10, 10, 10, 10, 10};
  // Six contexts take one each; the seventh waits for the first: 20 worker
  // cycles on the busiest context, 6 tile cycles each.
  sim::TileCompute compute = sim::PackTile(seven, {}, 6);
  EXPECT_EQ(compute.including_idle, 120u);
  EXPECT_EQ(compute.excluding_idle, 70u);
  const uint64_t one[] = {5};
  const uint64_t supervisor[] = {100};
  compute = sim::PackTile(one, supervisor, 6);
  EXPECT_EQ(compute.including_idle, 130u);
  EXPECT_EQ(compute.excluding_idle, 105u);
  // Dispatch in order onto the earliest free context: 9 then five 1s then 9
  // fills context 1 (1 + 9), so the makespan is 10, not the 9 an optimal
  // packing would reach.
  const uint64_t order[] = {9, 1, 1, 1, 1, 1, 9};
  EXPECT_EQ(sim::PackTile(order, {}, 6).including_idle, 60u);
  EXPECT_EQ(sim::PackTile({}, {}, 6).including_idle, 0u);
}

TEST(CycleModel, ExchangeAndLinks) {
  EXPECT_EQ(sim::ExchangeCycles(0, 0), 0u);
  EXPECT_EQ(sim::ExchangeCycles(10, 3), sim::kExchangeSetupCycles + 3);
  EXPECT_EQ(sim::ExchangeCycles(0, 8), sim::kExchangeSetupCycles + 2);
  Expected<Target> ipu2 = Target::FromPreset("ipu2");
  ASSERT_TRUE(ipu2.has_value());
  // The measured 20 GB/s at 1.33 GHz: 15.04 B per cycle; the IPU Model's
  // 8 GB/s, 6.02 B per cycle; Mk1's 10 GB/s at 1.6 GHz, 6.25 B per cycle.
  EXPECT_EQ(sim::HostTransferCycles(1000, *ipu2), 67u);
  EXPECT_EQ(sim::HostTransferCycles(1000, *ipu2, /*ipu_model=*/true), 167u);
  EXPECT_EQ(sim::HostTransferCycles(1000, *Target::FromPreset("ipu1")), 160u);
  EXPECT_EQ(sim::HostTransferCycles(0, *ipu2), 0u);
  EXPECT_TRUE(sim::StreamCopyUsesExchange(*ipu2));
  EXPECT_FALSE(sim::StreamCopyUsesExchange(*Target::FromPreset("ipu1")));
  // 160 GB/s at 1.33 GHz: 120.3 B per cycle.
  EXPECT_EQ(sim::IpuLinkCycles(1203, *ipu2), 10u);
  EXPECT_EQ(sim::IpuLinkCycles(1204, *ipu2), 11u);
  EXPECT_EQ(sim::LocalCopyCycles(9), 3u);
}

// A SumVertex on tile 0 adds four constants that live on tile 1, three
// times, then the result goes to the host.
TEST(CycleModel, HandComputedStepsOfASmallGraph) {
  Expected<Target> target = Target::FromPreset("ipu2", 1, 2);
  ASSERT_TRUE(target.has_value());
  Graph graph(*target);
  const double values[] = {1, 2, 3, 4};
  Tensor v = *graph.AddConstantFromDoubles(ElementType::kF32, {4}, values, "v");
  Tensor out = *graph.AddVariable(ElementType::kF32, {}, "out");
  ASSERT_TRUE(graph.SetTileMapping(v, 1).has_value());
  ASSERT_TRUE(graph.SetTileMapping(out, 0).has_value());
  const ComputeSetId cs = graph.AddComputeSet("sum");
  VertexRef vertex = *graph.AddVertex(cs, kSumVertexCodeletName, "sum.1");
  ASSERT_TRUE(graph.Connect(vertex["in"], v).has_value());
  ASSERT_TRUE(graph.Connect(vertex["out"], out).has_value());
  ASSERT_TRUE(graph.SetTileMapping(vertex, 0).has_value());
  DataStream to_host = *graph.AddDeviceToHostFifo("o", ElementType::kF32, 1);
  program::Sequence program{program::Repeat(3, program::Execute(cs)), program::Copy(out, to_host)};
  ASSERT_TRUE(graph.Validate().has_value());

  auto simulator = sim::Simulator::Create(graph, program, {}, {.threads = 2});
  ASSERT_TRUE(simulator.has_value()) << simulator.error().message();
  Expected<sim::RunResult> run = (*simulator)->Run({});
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_THAT(Decode<float>(run->outputs["o"]), ElementsAre(10.0f));

  const uint64_t worker = graph.VertexCycles(0);  // 12 + 4 x 2 + 1 = 21 worker cycles
  EXPECT_EQ(worker, 21u);
  const uint64_t exchange = sim::kExchangeSetupCycles + 16 / 4;  // 16 B from tile 1
  const uint64_t step = sim::kIpuSyncCycles + exchange + 6 * worker;
  // 4 B to the host: one cycle of link, then (Mk2) one of tile 0's port.
  const uint64_t link = sim::kHostSyncCycles + 1;
  const uint64_t host = link + 1;
  EXPECT_EQ(run->cycles, 3 * step + host);

  const report::ExecutionReport report = (*simulator)->Report();
  EXPECT_EQ(report.total_cycles, 3 * step + host);
  ASSERT_EQ(report.steps.size(), 4u);
  EXPECT_EQ(report.steps[0].program, "sum");
  EXPECT_EQ(report.steps[0].cycles, step);
  EXPECT_EQ(report.steps[3].program, "Device to host: o");
  using report::CycleKind;
  auto average = [&](CycleKind kind) {
    return *report.tile_average_cycles[static_cast<size_t>(kind)];
  };
  // Two tiles: tile 0 computes, both take part in the exchange.
  EXPECT_DOUBLE_EQ(average(CycleKind::kComputeIncludingIdle), 3.0 * 6 * worker / 2);
  EXPECT_DOUBLE_EQ(average(CycleKind::kComputeExcludingIdle), 3.0 * worker / 2);
  EXPECT_DOUBLE_EQ(average(CycleKind::kIpuExchange), 3.0 * exchange + 0.5);
  EXPECT_DOUBLE_EQ(average(CycleKind::kHostExchange), static_cast<double>(link));
  EXPECT_DOUBLE_EQ(average(CycleKind::kGlobalExchange), 0.0);
  EXPECT_DOUBLE_EQ(average(CycleKind::kComputeIncludingIdle) + average(CycleKind::kIpuExchange) +
                       average(CycleKind::kHostExchange) + average(CycleKind::kSync),
                   static_cast<double>(report.total_cycles));
  ASSERT_EQ(report.cycles_by_vertex_type.size(), 1u);
  EXPECT_EQ(report.cycles_by_vertex_type[0].name, "SumVertex");
  EXPECT_EQ(report.cycles_by_vertex_type[0].instances, 1u);
  EXPECT_EQ(report.cycles_by_vertex_type[0].cycles, 3 * worker);

  const std::string text = report::WriteTextReport({}, &report, {.show_execution_steps = true});
  EXPECT_THAT(text, HasSubstr("Programs executed:\n\n<anonymous>.\n"));
  // Values start one column after the longest label (text-report.md section 7).
  EXPECT_THAT(text, HasSubstr(fmt::format("  {:<53} {} (approx",
                                          "Total cycles:", WithThousands(report.total_cycles))));
  EXPECT_THAT(text, HasSubstr("  Cycles by vertex type:\n    SumVertex (1 instances):   63\n"));
  EXPECT_THAT(text, HasSubstr("  Execution steps:\n    sum"));
  EXPECT_TRUE(report.steps[0].cycles_by_tile.empty()) << "not a tile-level profile";

  // A tile-level profile: each tile's busy cycles in each step. Tile 0
  // receives and computes, tile 1 sends; the host transfer is costed for
  // the whole chip, so both are in it throughout.
  auto profiled = sim::Simulator::Create(graph, program, {}, {.threads = 2, .tile_cycles = true});
  ASSERT_TRUE(profiled.has_value()) << profiled.error().message();
  ASSERT_TRUE((*profiled)->Run({}).has_value());
  const report::ExecutionReport by_tile = (*profiled)->Report();
  ASSERT_EQ(by_tile.steps.size(), 4u);
  EXPECT_THAT(by_tile.steps[0].cycles_by_tile, ElementsAre(exchange + 6 * worker, exchange));
  EXPECT_THAT(by_tile.steps[3].cycles_by_tile, ElementsAre(host, host));
  EXPECT_EQ(by_tile.total_cycles, report.total_cycles);
  // Every step's tile cycles split into compute, exchange and sync, adding
  // up to the step's cycles on each of the 2 tiles; each tile's over the run.
  for (const report::ExecutionStep& step : by_tile.steps) {
    ASSERT_TRUE(step.compute_cycles && step.exchange_cycles && step.sync_cycles) << step.program;
    EXPECT_EQ(*step.compute_cycles + *step.exchange_cycles + *step.sync_cycles, 2 * step.cycles)
        << step.program;
  }
  EXPECT_EQ(*by_tile.steps[0].compute_cycles, 6 * worker);
  EXPECT_EQ(*by_tile.steps[0].exchange_cycles, 2 * exchange);
  EXPECT_EQ(*by_tile.steps[3].exchange_cycles, 2 * link + 1);  // both tiles wait on the link
  ASSERT_EQ(by_tile.tile_cycles.size(), 2u);
  EXPECT_EQ(by_tile.tile_cycles[0].compute, 3 * 6 * worker);  // the sum runs three times
  EXPECT_EQ(by_tile.tile_cycles[1].compute, 0u);              // it only sends
  for (const report::TileCycleSplit& tile : by_tile.tile_cycles) {
    EXPECT_EQ(tile.compute + tile.exchange + tile.sync, by_tile.total_cycles) << tile.tile;
    EXPECT_GE(tile.exchange, exchange + host) << tile.tile;
  }
  EXPECT_TRUE(report.tile_cycles.empty()) << "not a tile-level profile";
}

// The same sum with its inputs on the other IPU of a two-IPU target: the
// bytes cross IPU-Links (global exchange) and the step syncs both IPUs.
TEST(CycleModel, BytesBetweenIpusAreGlobalExchange) {
  Expected<Target> target = Target::FromPreset("ipu2", 2, 2);
  ASSERT_TRUE(target.has_value());
  Graph graph(*target);
  const double values[] = {1, 2, 3, 4};
  Tensor v = *graph.AddConstantFromDoubles(ElementType::kF32, {4}, values, "v");
  Tensor out = *graph.AddVariable(ElementType::kF32, {}, "out");
  ASSERT_TRUE(graph.SetTileMapping(v, 2).has_value());  // IPU 1
  ASSERT_TRUE(graph.SetTileMapping(out, 0).has_value());
  const ComputeSetId cs = graph.AddComputeSet("sum");
  VertexRef vertex = *graph.AddVertex(cs, kSumVertexCodeletName, "sum.1");
  ASSERT_TRUE(graph.Connect(vertex["in"], v).has_value());
  ASSERT_TRUE(graph.Connect(vertex["out"], out).has_value());
  ASSERT_TRUE(graph.SetTileMapping(vertex, 0).has_value());
  program::Sequence program{program::Execute(cs)};
  auto simulator = sim::Simulator::Create(graph, program, {}, {.threads = 1});
  ASSERT_TRUE(simulator.has_value()) << simulator.error().message();
  Expected<sim::RunResult> run = (*simulator)->Run({});
  ASSERT_TRUE(run.has_value()) << run.error().message();
  const uint64_t global = sim::kExchangeSetupCycles + 1;  // 16 B at 120 B per cycle
  EXPECT_EQ(run->cycles, sim::kGlobalSyncCycles + global + 6 * 21);
  const report::ExecutionReport report = (*simulator)->Report();
  // Tiles 0 and 2 take part, of 4.
  EXPECT_DOUBLE_EQ(
      *report.tile_average_cycles[static_cast<size_t>(report::CycleKind::kGlobalExchange)],
      2.0 * global / 4);
  EXPECT_DOUBLE_EQ(
      *report.tile_average_cycles[static_cast<size_t>(report::CycleKind::kIpuExchange)], 0.0);
}

// Vertex A writes v[0]; vertex B, in the same compute set, reads v[0]: B
// sees the value from before the compute set, on one tile or two, with any
// number of threads.
TEST(Simulator, AComputeSetReadsMemoryAsItWasBeforeIt) {
  for (uint32_t b_tile : {0u, 1u}) {
    for (uint32_t threads : {1u, 4u}) {
      Expected<Target> target = Target::FromPreset("ipu2", 1, 2);
      ASSERT_TRUE(target.has_value());
      Graph graph(*target);
      const double values[] = {5, 7};
      Tensor c = *graph.AddConstantFromDoubles(ElementType::kF32, {2}, values, "c");
      Tensor v = *graph.AddVariable(ElementType::kF32, {2}, "v");
      Tensor w = *graph.AddVariable(ElementType::kF32, {}, "w");
      for (const Tensor& t : {c, v, w}) ASSERT_TRUE(graph.SetTileMapping(t, 0).has_value());
      const ComputeSetId cs = graph.AddComputeSet("both");
      VertexRef a = *graph.AddVertex(cs, kAdderVertexCodeletName, "a");
      VertexRef b = *graph.AddVertex(cs, kAdderVertexCodeletName, "b");
      ASSERT_TRUE(graph.Connect(a["x"], *c.Index(0)).has_value());
      ASSERT_TRUE(graph.Connect(a["y"], *c.Index(1)).has_value());
      ASSERT_TRUE(graph.Connect(a["sum"], *v.Index(0)).has_value());
      ASSERT_TRUE(graph.Connect(b["x"], *v.Index(0)).has_value());
      ASSERT_TRUE(graph.Connect(b["y"], *c.Index(1)).has_value());
      ASSERT_TRUE(graph.Connect(b["sum"], w).has_value());
      ASSERT_TRUE(graph.SetTileMapping(a, 0).has_value());
      ASSERT_TRUE(graph.SetTileMapping(b, b_tile).has_value());
      DataStream vs = *graph.AddDeviceToHostFifo("v", ElementType::kF32, 2);
      DataStream ws = *graph.AddDeviceToHostFifo("w", ElementType::kF32, 1);
      program::Sequence program{program::Execute(cs), program::Copy(v, vs), program::Copy(w, ws)};
      auto simulator = sim::Simulator::Create(graph, program, {}, {.threads = threads});
      ASSERT_TRUE(simulator.has_value()) << simulator.error().message();
      Expected<sim::RunResult> first = (*simulator)->Run({});
      ASSERT_TRUE(first.has_value()) << first.error().message();
      EXPECT_THAT(Decode<float>(first->outputs["v"]), ElementsAre(12.0f, 0.0f));
      EXPECT_THAT(Decode<float>(first->outputs["w"]), ElementsAre(7.0f)) << "old v[0] is 0";
      // Memory persists across runs: the second run's B sees 12.
      Expected<sim::RunResult> second = (*simulator)->Run({});
      ASSERT_TRUE(second.has_value());
      EXPECT_THAT(Decode<float>(second->outputs["w"]), ElementsAre(19.0f));
    }
  }
}

TEST(Simulator, ResultsAndCyclesDoNotDependOnTheThreadCount) {
  const std::string text = R"(
HloModule mlp
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  x = f32[48,64] parameter(0)
  w = f32[64,40] parameter(1)
  h = f32[48,40] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[48,40] tanh(h)
  e = f32[48,40] exponential(t)
  z = f32[] constant(0)
  s = f32[48] reduce(e, z), dimensions={1}, to_apply=add
  ROOT out = (f32[48,40], f32[48]) tuple(e, s)
})";
  Compiled compiled = CompileText(text, "ipu2", 16);
  Expected<HostInterface> host = DescribeHostInterface(compiled.module);
  ASSERT_TRUE(host.has_value());
  sim::HostData inputs;
  for (const HostLeaf& leaf : host->inputs) inputs[leaf.stream] = RandomInput(leaf, 42);
  auto one = MustCreate(compiled, 1);
  auto four = MustCreate(compiled, 4);
  EXPECT_EQ(four->threads(), 4u);
  sim::HostData a = MustRun(*one, inputs);
  sim::HostData b = MustRun(*four, inputs);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a, b);
  EXPECT_EQ(one->Report(), four->Report());
  // Not all zeros: the inputs went through.
  const std::vector<float> sums = Decode<float>(a["out.1"]);
  EXPECT_GT(sums[0], 0.0f);
}

// The compute sets are planned on the simulator's threads and merged in
// program order: the refusals, each named once, come in the order the
// program reaches their readers, whatever the number of threads.
TEST(Simulator, RefusalsComeInProgramOrderWhateverTheThreadCount) {
  const std::string text = R"(
HloModule refused
ENTRY main {
  x = f32[64] parameter(0)
  a = f32[64] custom-call(x), custom_call_target="first_unknown_target"
  k = f32[64] constant({...})
  b = f32[64] add(a, k)
  c = f32[64] custom-call(b), custom_call_target="second_unknown_target"
  d = f32[64] multiply(c, k)
  e = f32[64] custom-call(d), custom_call_target="first_unknown_target"
  ROOT f = f32[64] custom-call(e), custom_call_target="third_unknown_target"
})";
  Compiled compiled = CompileText(text, "ipu2", 16);
  std::string messages[2];
  const uint32_t threads[2] = {1, 4};
  for (int i = 0; i < 2; ++i) {
    auto simulator = TryCreate(compiled, threads[i]);
    ASSERT_FALSE(simulator.has_value());
    messages[i] = simulator.error().message();
  }
  EXPECT_EQ(messages[0], messages[1]);
  const size_t first = messages[0].find("first_unknown_target");
  const size_t constant = messages[0].find("its values are unknown");
  const size_t second = messages[0].find("second_unknown_target");
  const size_t third = messages[0].find("third_unknown_target");
  ASSERT_NE(third, std::string::npos) << messages[0];
  EXPECT_LT(first, constant) << messages[0];
  EXPECT_LT(constant, second) << messages[0];
  EXPECT_LT(second, third) << messages[0];
  EXPECT_EQ(messages[0].find("'d' reads it"), std::string::npos) << "named once: " << messages[0];
}

// What talks to other devices or the host is refused with that reason, not
// as a vertex without a compute function; an infeed's leaves are one line.
TEST(Simulator, CollectivesAmongDevicesAndInfeedsAreRefusedForWhatTheyNeed) {
  const std::string text = R"(
HloModule devices, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  token = token[] after-all()
  fed = ((f32[8], s32[8]), token[]) infeed(token)
  data = (f32[8], s32[8]) get-tuple-element(fed), index=0
  x = f32[8] get-tuple-element(data), index=0
  ROOT r = f32[8] all-reduce(x), replica_groups={{0,1}}, to_apply=add
})";
  Compiled compiled = CompileText(text, "ipu2", 16);
  auto simulator = TryCreate(compiled, 2);
  ASSERT_FALSE(simulator.has_value());
  const std::string& message = simulator.error().message();
  EXPECT_THAT(message, HasSubstr("cannot run: 2 instruction(s)")) << message;
  EXPECT_THAT(message, HasSubstr("r (all-reduce): a collective among 2 devices (its replica "
                                 "groups): tileprof simulates one device"))
      << message;
  EXPECT_THAT(message, HasSubstr("fed (infeed): a transfer through the host's infeed/outfeed"))
      << message;
}

// XLA's dynamic shapes (a bounded dimension, its size data) are refused
// as such, not as a custom call without a compute function.
TEST(Simulator, DynamicShapesAreRefusedAsSuch) {
  const std::string text = R"(
HloModule dynamic
ENTRY main {
  p = s32[2,2,2] parameter(0)
  one = s32[] constant(1)
  two = s32[] constant(2)
  ROOT d = s32[2,<=2,2] custom-call(p, two, one, two), custom_call_target="SliceToDynamic"
})";
  Compiled compiled = CompileText(text, "ipu2", 16);
  auto simulator = TryCreate(compiled, 2);
  ASSERT_FALSE(simulator.has_value());
  EXPECT_THAT(simulator.error().message(),
              HasSubstr("d (custom-call SliceToDynamic): a dynamic shape (SliceToDynamic: a "
                        "bounded dimension whose size is known only at run time)"))
      << simulator.error().message();
}

// A collective-permute's pairs name its devices: a dump that prints no
// replica_count (older pmap dumps) is still a program for that many, not
// one device sending to itself.
TEST(Simulator, ACollectivePermuteAmongSeveralDevicesIsRefusedWithoutAReplicaCount) {
  const std::string text = R"(
HloModule ring
ENTRY main {
  x = f32[8] parameter(0)
  ROOT r = f32[8] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,0}}
})";
  Compiled compiled = CompileText(text, "ipu2", 16);
  auto simulator = TryCreate(compiled, 1);
  ASSERT_FALSE(simulator.has_value());
  EXPECT_THAT(simulator.error().message(),
              HasSubstr("r (collective-permute): a collective among 3 devices (its "
                        "source_target_pairs)"))
      << simulator.error().message();
}

}  // namespace
}  // namespace tileprof::engine::sim_test
