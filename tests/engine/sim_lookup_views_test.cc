// Gathers of whole rows written out on a view of the table
// (engine/compiler/lower_lookup_views.cc) and the indices box every gather
// and scatter vertex reads: what the vertices connect to, and the values
// the simulator computes against ones worked out here.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

// The largest element count of field `field` over the vertices whose
// codelet name starts with `prefix`, and how many there are.
struct FieldUse {
  uint64_t vertices = 0, largest = 0;
};
FieldUse LargestField(const Compiled& compiled, std::string_view prefix, size_t field) {
  const Graph& graph = *compiled.result.graph;
  FieldUse use;
  for (VertexId v = 0; v < graph.num_vertices(); ++v) {
    if (!graph.vertex(v).codelet->name().starts_with(prefix)) continue;
    ++use.vertices;
    use.largest = std::max(use.largest, graph.fields(v)[field].NumElements());
  }
  return use;
}

sim::HostData Simulate(const Compiled& compiled, sim::HostData inputs) {
  auto simulator = MustCreate(compiled);
  return MustRun(*simulator, std::move(inputs));
}

TEST(LookupViews, APairOfIdsIsALookupOnTheFlatRowsClampedPerComponent) {
  // table[lang, token]: 16 x 32 rows of 4 on 8 tiles. Ids out of range in
  // one component clamp in that component only: (1, 40) is row (1, 31),
  // flat row 63, never (2, 8) = flat row 72, where an unclamped
  // 1 x 32 + 40 would land.
  const Compiled compiled = CompileText(R"(
HloModule pair
ENTRY main {
  t = f32[16,32,4] parameter(0)
  i = s32[4,2] parameter(1)
  ROOT g = f32[4,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1,4}
})");
  const FieldUse partials = LargestField(compiled, "tileprof::LookupPartial<float,int>", 0);
  EXPECT_GT(partials.vertices, 1u);
  EXPECT_EQ(LargestField(compiled, "tileprof::Gather<", 0).vertices, 0u);
  std::vector<float> table(16 * 32 * 4);
  for (size_t k = 0; k < table.size(); ++k) table[k] = static_cast<float>(k);
  sim::HostData out = Simulate(compiled, {{"t", Encode(std::span<const float>(table))},
                                          {"i", Encode<int32_t>({1, 40, -3, 5, 20, -1, 15, 31})}});
  const std::vector<float> got = Decode<float>(out["out.0"]);
  ASSERT_EQ(got.size(), 16u);
  const int rows[] = {1 * 32 + 31, 0 * 32 + 5, 15 * 32 + 0, 15 * 32 + 31};
  for (size_t l = 0; l < 4; ++l) {
    for (size_t w = 0; w < 4; ++w) {
      EXPECT_EQ(got[l * 4 + w], table[static_cast<size_t>(rows[l]) * 4 + w]) << "lookup " << l;
    }
  }
}

TEST(LookupViews, APairOfIdsIntoMoreRowsThanAVertexParameterHoldsStaysAsItIs) {
  // 80,000 x 80,000 rows of one: the flat view's 6.4e9 rows would not fit
  // the gather's vertex parameters, where each dimension of the op does.
  Expected<hlo::Module> module = hlo::ParseModule(R"(
HloModule pick
ENTRY main {
  t = f32[80000,80000] parameter(0)
  i = s64[4,2] parameter(1)
  ROOT g = f32[4] gather(t, i), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
})");
  ASSERT_TRUE(module) << module.error().message();
  Expected<Target> target = Target::FromPreset("ipu2", 1, 8);
  ASSERT_TRUE(target);
  Expected<compiler::CompileResult> result = compiler::CompileModule(*module, *target, {});
  ASSERT_TRUE(result) << result.error().message();
}

TEST(LookupViews, ManyLookupsIntoLongRowsReadOneOrTwoColumnsOfEveryRow) {
  // 400 lookups into 64 rows of 300 on 64 tiles: a tile's run of the
  // [400, 300] result is ~1,900 elements, more than a row, so the gather as
  // it is read the whole table (19,200 elements) on every tile. A run of
  // the [300, 400] result of the transposed table covers 5 or 6 columns,
  // and reads every row in those.
  const std::string text = R"(
HloModule columns
ENTRY main {
  t = f32[64,300] parameter(0)
  i = s32[400] parameter(1)
  ROOT g = f32[400,300] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,300}
})";
  const Compiled compiled = CompileText(text, "ipu2", 64);
  const FieldUse gathers = LargestField(compiled, "tileprof::Gather<", 0);
  ASSERT_GT(gathers.vertices, 0u);
  EXPECT_LE(gathers.largest, 64u * 6);
  std::vector<float> table(64 * 300);
  for (size_t k = 0; k < table.size(); ++k) table[k] = static_cast<float>(k % 9973) - 17.5f;
  std::vector<int32_t> ids(400);
  for (size_t l = 0; l < ids.size(); ++l) ids[l] = static_cast<int32_t>((l * 37) % 80) - 8;
  sim::HostData out = Simulate(compiled, {{"t", Encode(std::span<const float>(table))},
                                          {"i", Encode(std::span<const int32_t>(ids))}});
  const std::vector<float> got = Decode<float>(out["out.0"]);
  ASSERT_EQ(got.size(), 400u * 300);
  for (size_t l = 0; l < 400; ++l) {
    const size_t row = static_cast<size_t>(std::clamp(ids[l], 0, 63));
    for (size_t w = 0; w < 300; ++w) {
      ASSERT_EQ(got[l * 300 + w], table[row * 300 + w]) << "lookup " << l << " column " << w;
    }
  }
}

TEST(LookupViews, ManyLookupsIntoABigTableTakeTheColumnsOverPartials) {
  // 1,024 lookups into 4,096 rows of 64 on 16 tiles: a partial of the
  // lookup plan holds every lookup's row (65,536 elements a block), where a
  // run of the transposed table's gather reads 4,096 rows in 5 columns.
  const std::string text = R"(
HloModule embed
ENTRY main {
  t = f32[4096,64] parameter(0)
  i = s32[1024] parameter(1)
  ROOT g = f32[1024,64] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}
})";
  const Compiled compiled = CompileText(text, "ipu2", 16);
  EXPECT_EQ(LargestField(compiled, "tileprof::LookupPartial<", 0).vertices, 0u);
  const FieldUse gathers = LargestField(compiled, "tileprof::Gather<", 0);
  ASSERT_GT(gathers.vertices, 0u);
  EXPECT_LE(gathers.largest, 4096u * 5);
  std::vector<float> table(4096 * 64);
  for (size_t k = 0; k < table.size(); ++k) table[k] = static_cast<float>(k % 10007);
  std::vector<int32_t> ids(1024);
  for (size_t l = 0; l < ids.size(); ++l) ids[l] = static_cast<int32_t>((l * 4093) % 4100) - 2;
  sim::HostData out = Simulate(compiled, {{"t", Encode(std::span<const float>(table))},
                                          {"i", Encode(std::span<const int32_t>(ids))}});
  const std::vector<float> got = Decode<float>(out["out.0"]);
  ASSERT_EQ(got.size(), 1024u * 64);
  for (size_t l = 0; l < 1024; ++l) {
    const size_t row = static_cast<size_t>(std::clamp(ids[l], 0, 4095));
    for (size_t w = 0; w < 64; ++w) {
      ASSERT_EQ(got[l * 64 + w], table[row * 64 + w]) << "lookup " << l << " column " << w;
    }
  }
}

TEST(SimGather, EachVertexReadsTheIndexVectorsOfItsRunOnly) {
  // 1,024 lookups of pairs into a small table on 64 tiles: every vertex
  // reads its run's pairs, not all 2,048 ids. A scatter's vertex reads the
  // ids of every update its run can receive in its step.
  const Compiled gather = CompileText(R"(
HloModule g
ENTRY main {
  t = f32[4,4] parameter(0)
  i = s32[1024,2] parameter(1)
  ROOT g = f32[1024] gather(t, i), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
})",
                                      "ipu2", 64);
  const FieldUse ids = LargestField(gather, "tileprof::Gather<", 1);
  ASSERT_GT(ids.vertices, 1u);
  EXPECT_LT(ids.largest, 2048u / 8);
  std::vector<int32_t> pairs(2048);
  for (size_t k = 0; k < pairs.size(); ++k) pairs[k] = static_cast<int32_t>((k * 7) % 6) - 1;
  std::vector<float> table(16);
  for (size_t k = 0; k < table.size(); ++k) table[k] = static_cast<float>(k);
  sim::HostData out = Simulate(gather, {{"t", Encode(std::span<const float>(table))},
                                        {"i", Encode(std::span<const int32_t>(pairs))}});
  const std::vector<float> got = Decode<float>(out["out.0"]);
  ASSERT_EQ(got.size(), 1024u);
  for (size_t l = 0; l < 1024; ++l) {
    const int a = std::clamp(pairs[2 * l], 0, 3), b = std::clamp(pairs[2 * l + 1], 0, 3);
    ASSERT_EQ(got[l], table[static_cast<size_t>(a * 4 + b)]) << "lookup " << l;
  }

  const Compiled scatter = CompileText(R"(
HloModule s
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  o = f32[1024,8] parameter(0)
  i = s32[1024,1] parameter(1)
  u = f32[1024,8] parameter(2)
  ROOT s = f32[1024,8] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})",
                                       "ipu2", 64);
  const FieldUse scattered = LargestField(scatter, "tileprof::Scatter<", 1);
  ASSERT_GT(scattered.vertices, 1u);
  // Any update may land in any run, so each vertex reads the ids of all
  // the updates of its step (36 KB of updates and ids: two steps).
  EXPECT_EQ(scattered.largest, 512u);
}

TEST(SimScatter, DataDependentScattersAreStreamedInUpdateOrder) {
  // 6,000 updates (48 KB with their ids) that may land anywhere: each
  // vertex would receive them all at once. Streamed in steps of at most
  // 32 KiB, each step applies a range of updates to the previous step's
  // result, in update order: duplicates keep the last assignment across
  // steps, and sums add in the same order as one pass.
  const std::string text = R"(
HloModule s
overwrite {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY main {
  o = f32[64] parameter(0)
  i = s32[6000,1] parameter(1)
  u = f32[6000] parameter(2)
  ROOT s = f32[64] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=overwrite
})";
  const Compiled compiled = CompileText(text, "ipu2", 8);
  const FieldUse updates = LargestField(compiled, "tileprof::Scatter<", 2);
  EXPECT_LE(updates.largest, 3000u);
  bool stepped = false;
  for (ComputeSetId cs = 0; cs < compiled.result.graph->num_compute_sets(); ++cs)
    stepped = stepped || compiled.result.graph->compute_set(cs).name == "s/step1";
  EXPECT_TRUE(stepped);
  std::vector<float> operand(64, -1.0f), values(6000);
  std::vector<int32_t> ids(6000);
  for (size_t k = 0; k < 6000; ++k) {
    ids[k] = static_cast<int32_t>((k * 13) % 70) - 3;  // some out of range: skipped
    values[k] = static_cast<float>(k);
  }
  std::vector<float> want = operand;
  for (size_t k = 0; k < 6000; ++k)
    if (ids[k] >= 0 && ids[k] < 64) want[static_cast<size_t>(ids[k])] = values[k];
  sim::HostData out = Simulate(compiled, {{"o", Encode(std::span<const float>(operand))},
                                          {"i", Encode(std::span<const int32_t>(ids))},
                                          {"u", Encode(std::span<const float>(values))}});
  EXPECT_EQ(Decode<float>(out["out.0"]), want);
}

TEST(SimScatter, AStreamHasAtMost64Steps) {
  // 300,000 updates with their ids (2.4 MB): 74 steps of 32 KiB, each a
  // vertex per run of the result, would let the graph grow with the
  // updates. At most 64 steps, still in update order.
  const std::string text = R"(
HloModule s
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  o = f32[64] parameter(0)
  i = s32[300000,1] parameter(1)
  u = f32[300000] parameter(2)
  ROOT s = f32[64] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";
  const Compiled compiled = CompileText(text, "ipu2", 8);
  std::set<std::string> steps;
  for (ComputeSetId cs = 0; cs < compiled.result.graph->num_compute_sets(); ++cs) {
    const std::string& name = compiled.result.graph->compute_set(cs).name;
    if (name.starts_with("s/step")) steps.insert(name);
  }
  EXPECT_EQ(steps.size(), 64u);
  std::vector<float> operand(64, 0.5f), values(300000);
  std::vector<int32_t> ids(300000);
  std::vector<float> want = operand;
  for (size_t k = 0; k < ids.size(); ++k) {
    ids[k] = static_cast<int32_t>((k * 7) % 64);
    values[k] = static_cast<float>(k % 5);
    want[static_cast<size_t>(ids[k])] += values[k];
  }
  sim::HostData out = Simulate(compiled, {{"o", Encode(std::span<const float>(operand))},
                                          {"i", Encode(std::span<const int32_t>(ids))},
                                          {"u", Encode(std::span<const float>(values))}});
  EXPECT_EQ(Decode<float>(out["out.0"]), want);
}

}  // namespace
}  // namespace tileprof::engine::sim_test
