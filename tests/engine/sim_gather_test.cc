// The simulator on gather, scatter and sort with hand-checked results:
// clamped gather starts (s32, s64, u32 indices, batching dimensions),
// scatters with duplicate and out-of-bounds indices, stable sorts with ties,
// total orders and jax's float comparator; and the codelet names rebuilt by
// CompilerCodelets::FromName.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/compiler/opaque.h"
#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

sim::HostData RunText(const std::string& text, sim::HostData inputs, uint32_t tiles = 8) {
  Compiled compiled = CompileText(text, "ipu2", tiles);
  auto simulator = MustCreate(compiled);
  return MustRun(*simulator, std::move(inputs));
}

TEST(SimGather, RowsWithS64IndicesAreClamped) {
  sim::HostData out =
      RunText(R"(
HloModule g
ENTRY main {
  t = f32[3,2] parameter(0)
  i = s64[3] parameter(1)
  ROOT g = f32[3,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
})",
              {{"t", Encode<float>({1, 2, 3, 4, 5, 6})}, {"i", Encode<int64_t>({2, -1, 7})}});
  // Starts 2, clamp(-1) = 0, clamp(7) = 2.
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(5, 6, 1, 2, 5, 6));
}

TEST(SimGather, WindowsClampedPerDimension) {
  sim::HostData out = RunText(
      R"(
HloModule g
ENTRY main {
  t = f32[3,3] parameter(0)
  s = s32[2,2] parameter(1)
  ROOT g = f32[2,2,2] gather(t, s), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}
})",
      {{"t", Encode<float>({0, 1, 2, 3, 4, 5, 6, 7, 8})}, {"s", Encode<int32_t>({1, 1, 5, -3})}});
  // (1,1) -> [[4,5],[7,8]]; (5,-3) clamps to (1,0) -> [[3,4],[6,7]].
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(4, 5, 7, 8, 3, 4, 6, 7));
}

TEST(SimGather, U32IndicesWithTheIndexVectorFirstAndOffsetsBeforeBatch) {
  sim::HostData out =
      RunText(R"(
HloModule g
ENTRY main {
  t = f32[2,3] parameter(0)
  i = u32[1,2] parameter(1)
  ROOT g = f32[2,2] gather(t, i), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=0, slice_sizes={2,1}
})",
              {{"t", Encode<float>({1, 2, 3, 4, 5, 6})}, {"i", Encode<uint32_t>({2, 0})}});
  // out[r][b] = t[r][i[0][b]]
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(3, 1, 6, 4));
}

TEST(SimGather, OperandBatchingDimensions) {
  sim::HostData out =
      RunText(R"(
HloModule g
ENTRY main {
  t = f32[2,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = f32[2] gather(t, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}
})",
              {{"t", Encode<float>({1, 2, 3, 4, 5, 6})}, {"i", Encode<int32_t>({2, 0})}});
  // Row b of t at column i[b].
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(3, 4));
}

constexpr const char* kAdd = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(SimScatter, AddWithDuplicatesAndOutOfBoundsIndices) {
  // Many tiles: every vertex scans all updates and keeps those in its run.
  sim::HostData out = RunText(std::string("HloModule s\n") + kAdd + R"(
ENTRY main {
  o = f32[4,2] parameter(0)
  i = s32[4] parameter(1)
  u = f32[4,2] parameter(2)
  ROOT s = f32[4,2] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})",
                              {{"o", Encode<float>({1, 1, 1, 1, 1, 1, 1, 1})},
                               {"i", Encode<int32_t>({1, 3, 1, -1})},
                               {"u", Encode<float>({10, 20, 30, 40, 50, 60, 70, 80})}},
                              64);
  // Row 1 gets updates 0 and 2, row 3 update 1; index -1 is skipped.
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(1, 1, 61, 81, 1, 1, 31, 41));
}

TEST(SimScatter, AssignWithDuplicatesKeepsTheLastUpdate) {
  sim::HostData out = RunText(R"(
HloModule s
overwrite {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
ENTRY main {
  o = s32[3] parameter(0)
  i = u32[3,1] parameter(1)
  u = s32[3] parameter(2)
  ROOT s = s32[3] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=false, to_apply=overwrite
})",
                              {{"o", Encode<int32_t>({0, 0, 0})},
                               {"i", Encode<uint32_t>({1, 1, 2})},
                               {"u", Encode<int32_t>({10, 20, 30})}});
  EXPECT_THAT(Decode<int32_t>(out["out.0"]), ElementsAre(0, 20, 30));
}

TEST(SimScatter, SkipsAWindowThatDoesNotFitWhole) {
  sim::HostData out = RunText(std::string("HloModule s\n") + kAdd + R"(
ENTRY main {
  o = f32[4] parameter(0)
  i = s64[2,1] parameter(1)
  u = f32[2,2] parameter(2)
  ROOT s = f32[4] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})",
                              {{"o", Encode<float>({1, 1, 1, 1})},
                               {"i", Encode<int64_t>({3, 1})},
                               {"u", Encode<float>({10, 20, 30, 40})}});
  // The window at 3 would cover [3, 5): skipped whole, element 3 included.
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(1, 31, 41, 1));
}

TEST(SimScatter, MaxCombiner) {
  sim::HostData out = RunText(R"(
HloModule s
mx {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(b, a)
}
ENTRY main {
  o = s32[3] parameter(0)
  i = s32[4,1] parameter(1)
  u = s32[4] parameter(2)
  ROOT s = s32[3] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mx
})",
                              {{"o", Encode<int32_t>({5, 5, 5})},
                               {"i", Encode<int32_t>({0, 0, 2, 2})},
                               {"u", Encode<int32_t>({7, 9, 1, -4})}});
  EXPECT_THAT(Decode<int32_t>(out["out.0"]), ElementsAre(9, 5, 5));
}

constexpr const char* kKeyValue = R"(
HloModule s
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=DIRECTION
}
ENTRY main {
  k = s32[6] parameter(0)
  v = s32[6] iota(), iota_dimension=0
  ROOT s = (s32[6], s32[6]) sort(k, v), dimensions={0}, is_stable=STABLE, to_apply=cmp
})";

std::string KeyValue(std::string direction, std::string stable) {
  std::string text = kKeyValue;
  text.replace(text.find("DIRECTION"), 9, direction);
  text.replace(text.find("STABLE"), 6, stable);
  return text;
}

TEST(SimSort, StableKeyValueWithTies) {
  sim::HostData up = RunText(KeyValue("LT", "true"), {{"k", Encode<int32_t>({3, 1, 3, 2, 1, 3})}});
  EXPECT_THAT(Decode<int32_t>(up["out.0"]), ElementsAre(1, 1, 2, 3, 3, 3));
  EXPECT_THAT(Decode<int32_t>(up["out.1"]), ElementsAre(1, 4, 3, 0, 2, 5));
  // Descending; is_stable=false is served by the same stable sort.
  sim::HostData down =
      RunText(KeyValue("GT", "false"), {{"k", Encode<int32_t>({3, 1, 3, 2, 1, 3})}});
  EXPECT_THAT(Decode<int32_t>(down["out.0"]), ElementsAre(3, 3, 3, 2, 1, 1));
  EXPECT_THAT(Decode<int32_t>(down["out.1"]), ElementsAre(0, 2, 5, 3, 1, 4));
}

TEST(SimSort, AlongTheOuterDimensionWithSwappedParameters) {
  sim::HostData out = RunText(R"(
HloModule s
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(b, a), direction=GT
}
ENTRY main {
  x = f32[3,2] parameter(0)
  ROOT s = f32[3,2] sort(x), dimensions={0}, to_apply=cmp
})",
                              {{"x", Encode<float>({3, 0, 1, 5, 2, -1})}});
  // compare(b, a) GT is a < b: ascending columns.
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(1, -1, 2, 0, 3, 5));
}

TEST(SimSort, TotalOrderPlacesNanAndSignedZeros) {
  sim::HostData out = RunText(R"(
HloModule s
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GT, type=TOTALORDER
}
ENTRY main {
  x = f32[5] parameter(0)
  ROOT s = f32[5] sort(x), dimensions={0}, is_stable=true, to_apply=cmp
})",
                              {{"x", Encode<float>({-0.0f, NAN, 0.0f, -INFINITY, 1.0f})}});
  const std::vector<float> v = Decode<float>(out["out.0"]);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 1.0f);
  EXPECT_TRUE(v[2] == 0 && !std::signbit(v[2]));  // +0 before -0 descending
  EXPECT_TRUE(v[3] == 0 && std::signbit(v[3]));
  EXPECT_EQ(v[4], -INFINITY);
}

// jnp.sort's comparator (as in the corpus's jit_median): NaNs last, -0 == +0.
constexpr const char* kJaxComparator = R"(
HloModule s
cmp {
  a = f32[] parameter(0)
  ne.a = pred[] compare(a, a), direction=NE
  nan = s32[] constant(2143289344)
  fzero = f32[] constant(0)
  eq.a = pred[] compare(a, fzero), direction=EQ
  zero = s32[] constant(0)
  bits.a = s32[] bitcast-convert(a)
  z.a = s32[] select(eq.a, zero, bits.a)
  n.a = s32[] select(ne.a, nan, z.a)
  neg.a = pred[] compare(n.a, zero), direction=LT
  max = u32[] constant(2147483647)
  ubits.a = u32[] bitcast-convert(a)
  flip.a = u32[] subtract(max, ubits.a)
  sflip.a = s32[] bitcast-convert(flip.a)
  key.a = s32[] select(neg.a, sflip.a, n.a)
  b = f32[] parameter(1)
  ne.b = pred[] compare(b, b), direction=NE
  eq.b = pred[] compare(b, fzero), direction=EQ
  bits.b = s32[] bitcast-convert(b)
  z.b = s32[] select(eq.b, zero, bits.b)
  n.b = s32[] select(ne.b, nan, z.b)
  neg.b = pred[] compare(n.b, zero), direction=LT
  ubits.b = u32[] bitcast-convert(b)
  flip.b = u32[] subtract(max, ubits.b)
  sflip.b = s32[] bitcast-convert(flip.b)
  key.b = s32[] select(neg.b, sflip.b, n.b)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT r = pred[] compare(key.a, key.b), direction=LT
}
ENTRY main {
  x = f32[6] parameter(0)
  v = s32[6] iota(), iota_dimension=0
  ROOT s = (f32[6], s32[6]) sort(x, v), dimensions={0}, is_stable=true, to_apply=cmp
})";

TEST(SimSort, JaxFloatComparator) {
  sim::HostData out =
      RunText(kJaxComparator, {{"x", Encode<float>({NAN, -0.0f, 2.0f, 0.0f, -1.0f, -NAN})}});
  // -1, then -0 and +0 tied (stable: input order), 2, then both NaNs tied.
  EXPECT_THAT(Decode<int32_t>(out["out.1"]), ElementsAre(4, 1, 3, 2, 0, 5));
}

TEST(SimSort, ComparatorsAreProbedNotMatchedByShape) {
  // compare(-a, -b) LT on f32 is a descending sort (probing finds GT). On
  // s32 it is not (-INT_MIN wraps), and probing refuses it.
  const std::string text = R"(
HloModule s
cmp {
  a = TYPE[] parameter(0)
  b = TYPE[] parameter(1)
  na = TYPE[] negate(a)
  nb = TYPE[] negate(b)
  ROOT r = pred[] compare(na, nb), direction=LT
}
ENTRY main {
  x = TYPE[4] parameter(0)
  ROOT s = TYPE[4] sort(x), dimensions={0}, to_apply=cmp
})";
  const auto with = [&](std::string type) {
    std::string t = text;
    for (size_t at; (at = t.find("TYPE")) != std::string::npos;) t.replace(at, 4, type);
    return t;
  };
  sim::HostData out = RunText(with("f32"), {{"x", Encode<float>({2, -5, 9, 0})}});
  EXPECT_THAT(Decode<float>(out["out.0"]), ElementsAre(9, 2, 0, -5));
  Compiled wraps = CompileText(with("s32"));
  EXPECT_FALSE(sim::Simulator::Create(wraps.result, {.threads = 1}).has_value());
  // The jax comparator with a wrong NaN constant (a negative NaN: NaNs
  // first) matches no known order.
  std::string jax = kJaxComparator;
  jax.replace(jax.find("2143289344"), 10, "-4194304");
  Compiled compiled = CompileText(jax);
  EXPECT_FALSE(sim::Simulator::Create(compiled.result, {.threads = 1}).has_value());
}

// LE is not a strict order: no sort order matches it on equal values.
TEST(SimSort, OtherComparatorsAreRefusedNamingTheSort) {
  Compiled compiled = CompileText(R"(
HloModule s
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LE
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT sort.3 = f32[4] sort(x), dimensions={0}, to_apply=cmp
})");
  auto simulator =
      sim::Simulator::Create(compiled.result, {.threads = 1, .module = &compiled.module});
  ASSERT_FALSE(simulator.has_value());
  EXPECT_THAT(simulator.error().message(), HasSubstr("sort.3 (sort): tileprof::OpaqueOp<sort"));
}

// Results spread over many tiles: each vertex reads only the box of the
// operand / updates its run can touch; checked against a plain loop.
TEST(SimGather, ManyTilesAgreeWithAReferenceLoop) {
  constexpr int kRows = 40, kCols = 8, kIds = 50;
  std::vector<float> table(kRows * kCols), updates(kIds * kCols);
  std::vector<int32_t> gather_ids(kIds), scatter_ids(kIds);
  for (int i = 0; i < kRows * kCols; ++i)
    table[i] = static_cast<float>(100 * (i / kCols) + i % kCols);
  for (int i = 0; i < kIds; ++i) {
    gather_ids[i] = (i * 7) % 45 - 2;    // -2..42: clamped to 0..39
    scatter_ids[i] = (i * 11) % 44 - 2;  // -2..41: out of range skipped
    for (int c = 0; c < kCols; ++c) updates[i * kCols + c] = static_cast<float>(i * kCols + c);
  }
  const auto bytes = [](const auto& v) {
    std::vector<std::byte> b(v.size() * sizeof(v[0]));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  sim::HostData out = RunText(std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  t = f32[40,8] parameter(0)
  g = s32[50] parameter(1)
  s = s32[50] parameter(2)
  u = f32[50,8] parameter(3)
  rows = f32[50,8] gather(t, g), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  sums = f32[40,8] scatter(t, s, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = (f32[50,8], f32[40,8]) tuple(rows, sums)
})",
                              {{"t", bytes(table)},
                               {"g", bytes(gather_ids)},
                               {"s", bytes(scatter_ids)},
                               {"u", bytes(updates)}});
  std::vector<float> rows(kIds * kCols), sums = table;
  for (int i = 0; i < kIds; ++i) {
    const int r = std::clamp(gather_ids[i], 0, kRows - 1);
    for (int c = 0; c < kCols; ++c) rows[i * kCols + c] = table[r * kCols + c];
    if (scatter_ids[i] < 0 || scatter_ids[i] >= kRows) continue;
    for (int c = 0; c < kCols; ++c) sums[scatter_ids[i] * kCols + c] += updates[i * kCols + c];
  }
  EXPECT_EQ(Decode<float>(out["out.0"]), rows);
  EXPECT_EQ(Decode<float>(out["out.1"]), sums);

  // A key-value sort along the outer dimension of [64,6], with ties.
  std::vector<int32_t> keys(64 * 6);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<int32_t>((i * 37) % 11);
  sim::HostData sorted = RunText(R"(
HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY main {
  k = s32[64,6] parameter(0)
  v = s32[64,6] iota(), iota_dimension=0
  ROOT s = (s32[64,6], s32[64,6]) sort(k, v), dimensions={0}, is_stable=true, to_apply=cmp
})",
                                 {{"k", bytes(keys)}});
  std::vector<int32_t> want_keys(keys.size()), want_rows(keys.size());
  for (int col = 0; col < 6; ++col) {
    std::vector<int32_t> order(64);
    for (int r = 0; r < 64; ++r) order[r] = r;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return keys[a * 6 + col] < keys[b * 6 + col]; });
    for (int r = 0; r < 64; ++r) {
      want_keys[r * 6 + col] = keys[order[r] * 6 + col];
      want_rows[r * 6 + col] = order[r];
    }
  }
  EXPECT_EQ(Decode<int32_t>(sorted["out.0"]), want_keys);
  EXPECT_EQ(Decode<int32_t>(sorted["out.1"]), want_rows);
}

bool UsesCodelet(const Compiled& compiled, std::string_view prefix) {
  for (const auto& usage : compiled.result.graph_stats.by_codelet)
    if (usage.codelet->name().starts_with(prefix)) return true;
  return false;
}

TEST(SimGather, TableLookupsArePlannedOverTheTablesTilesAndExact) {
  // 512 rows of 4 on 8 tiles (64 rows each): the lookups are computed as
  // partials on the tiles holding the rows and summed across them. Row 63
  // holds -0.0, whose sign the sum keeps (the partials' identity is -0.0);
  // indices -1 and 700 clamp to rows 0 and 511 as XLA's gather clamps.
  const std::string text = R"(
HloModule lookup
ENTRY main {
  t = f32[512,4] parameter(0)
  i = s32[2,3,1] parameter(1)
  ROOT g = f32[2,3,4] gather(t, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,4}
})";
  const Compiled compiled = CompileText(text);
  EXPECT_TRUE(UsesCodelet(compiled, "tileprof::LookupPartial<float,int>"));
  EXPECT_FALSE(UsesCodelet(compiled, "tileprof::Gather<"));
  std::vector<float> table(512 * 4);
  for (size_t k = 0; k < table.size(); ++k) table[k] = static_cast<float>(k);
  table[63 * 4 + 1] = -0.0f;
  table[64 * 4 + 2] = std::nanf("");
  // On 8 tiles the 8 blocks' partials are summed at once; on 64 tiles (8
  // rows a block) in two stages, groups of 8 blocks first.
  for (uint32_t tiles : {8u, 64u}) {
    SCOPED_TRACE(tiles);
    sim::HostData out = RunText(text,
                                {{"t", Encode(std::span<const float>(table))},
                                 {"i", Encode<int32_t>({511, -1, 700, 63, 64, 128})}},
                                tiles);
    const std::vector<float> got = Decode<float>(out["out.0"]);
    ASSERT_EQ(got.size(), 24u);
    const int rows[] = {511, 0, 511, 63, 64, 128};
    for (size_t l = 0; l < 6; ++l) {
      for (size_t w = 0; w < 4; ++w) {
        const float want = table[static_cast<size_t>(rows[l]) * 4 + w];
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got[l * 4 + w]));
        } else {
          EXPECT_EQ(got[l * 4 + w], want) << "lookup " << l << " element " << w;
          EXPECT_EQ(std::signbit(got[l * 4 + w]), std::signbit(want)) << "lookup " << l;
        }
      }
    }
  }
  const Compiled two_stage = CompileText(text, "ipu2", 64);
  bool grouped = false;
  for (const report::Variable& v : two_stage.result.report.variables)
    grouped = grouped || v.name == "g/group sums";
  EXPECT_TRUE(grouped);
}

TEST(SimGather, SmallTablesStayUnplanned) {
  // Four rows read by many lookups: every tile reading the whole table (64
  // B) costs less than partials of every lookup on each table tile.
  const Compiled compiled = CompileText(R"(
HloModule lookup
ENTRY main {
  t = s32[4,4] parameter(0)
  i = s32[256] parameter(1)
  ROOT g = s32[256,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})");
  EXPECT_TRUE(UsesCodelet(compiled, "tileprof::Gather<"));
  EXPECT_FALSE(UsesCodelet(compiled, "tileprof::LookupPartial<"));
}

TEST(SimGather, BadDimensionNumbersAreCompileErrorsNamingTheInstruction) {
  Expected<hlo::Module> module = hlo::ParseModule(R"(
HloModule g
ENTRY main {
  t = f32[3,2] parameter(0)
  i = s32[3] parameter(1)
  ROOT gather.9 = f32[3,2] gather(t, i), offset_dims={5}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
})",
                                                  {.source_name = "bad.hlo"});
  ASSERT_TRUE(module.has_value());
  Expected<compiler::CompileResult> result =
      compiler::CompileModule(*module, *Target::FromPreset("ipu2", 1, 8), {});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message(), HasSubstr("gather.9 (gather)"));
}

TEST(SimGather, CompilerCodeletNamesRoundTrip) {
  Graph graph(*Target::FromPreset("ipu2", 1, 4));
  compiler::CompilerCodelets codelets(graph);
  for (std::string_view name :
       {"tileprof::Gather<float,int,2,1,2>", "tileprof::Gather<half,long long,3,0,2>",
        "tileprof::Scatter<float,int,add,2,1,2>",
        "tileprof::Scatter<int,unsigned int,assign,1,2,0>", "tileprof::Sort<2,0,lt,float,int>",
        "tileprof::Sort<1,1,gt_nanlast,int,float>", "tileprof::Sort<1,0,lt_total,double>",
        "tileprof::SortMerge<0,gt,float,int>", "tileprof::SortMerge<1,lt_nanlast,int,half>",
        "tileprof::LookupPartial<half,int>", "tileprof::LookupPartial<bool,unsigned int>"}) {
    EXPECT_TRUE(compiler::CompilerCodelets::IsCompilerCodeletName(name)) << name;
    Expected<const Codelet*> codelet = codelets.FromName(name);
    ASSERT_TRUE(codelet.has_value()) << name << ": " << codelet.error().message();
    EXPECT_EQ((*codelet)->name(), name);
  }
  for (std::string_view bad :
       {"tileprof::Gather<float,float,2,1,2>", "tileprof::Scatter<float,int,sub,2,1,2>",
        "tileprof::Scatter<float,int,and,1,1,1>", "tileprof::Sort<1,2,lt,float,int>",
        "tileprof::Sort<1,0,lt_total,int>", "tileprof::Sort<1,0,lt>",
        "tileprof::SortMerge<2,lt,float,int>", "tileprof::SortMerge<0,gt_total,int>",
        "tileprof::SortMerge<0,lt>", "tileprof::LookupPartial<float,float>",
        "tileprof::LookupPartial<float>"}) {
    EXPECT_FALSE(codelets.FromName(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace tileprof::engine::sim_test
