// Tensor views: slice, index, reshape, dimshuffle, concat, and the region
// lists they produce.
#include "engine/graph/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tileprof::engine {
namespace {

using ::testing::ElementsAre;
using R = TensorRegion;

std::vector<R> Regions(const Tensor& t) { return {t.regions().begin(), t.regions().end()}; }

Tensor Var(VariableId id, std::vector<uint64_t> shape) {
  return Tensor::OfVariable(id, ElementType::kF32, std::move(shape));
}

TEST(Tensor, WholeVariable) {
  const Tensor t = Var(3, {2, 3});
  EXPECT_TRUE(t.valid());
  EXPECT_EQ(t.NumElements(), 6u);
  EXPECT_EQ(t.NumBytes(), 24u);
  EXPECT_EQ(t.Rank(), 2u);
  EXPECT_EQ(t.ShapeString(), "f32[2,3]");
  EXPECT_THAT(Regions(t), ElementsAre(R{3, 0, 6}));
  EXPECT_TRUE(t.IsContiguous());
}

TEST(Tensor, SliceOfTheSeedListing) {
  // v1.slice(i, 4) for i = 0..3: the elements a SumVertex on tile i sums.
  const Tensor v1 = Var(0, {4});
  for (uint64_t i = 0; i < 4; ++i) {
    auto s = v1.Slice(i, 4);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->shape(), std::vector<uint64_t>{4 - i});
    EXPECT_THAT(Regions(*s), ElementsAre(R{0, i, 4}));
  }
}

TEST(Tensor, SliceAlongAnInnerDimension) {
  const Tensor t = Var(0, {3, 4});
  auto s = t.Slice(1, 3, 1);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->shape(), (std::vector<uint64_t>{3, 2}));
  EXPECT_THAT(Regions(*s), ElementsAre(R{0, 1, 3}, R{0, 5, 7}, R{0, 9, 11}));
  EXPECT_FALSE(s->IsContiguous());
  // Slicing the slice keeps working on the fragmented regions.
  auto row = s->Index(2);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->shape(), std::vector<uint64_t>{2});
  EXPECT_THAT(Regions(*row), ElementsAre(R{0, 9, 11}));
}

TEST(Tensor, SliceErrors) {
  const Tensor t = Var(0, {3, 4});
  auto bad = t.Slice(2, 5, 1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "slice [2, 5) of dimension 1 out of range for f32[3,4]");
  EXPECT_FALSE(t.Slice(3, 2, 0));
  auto no_dim = t.Slice(0, 1, 2);
  ASSERT_FALSE(no_dim);
  EXPECT_EQ(no_dim.error().message(), "slice of dimension 2 of f32[3,4]: no such dimension");
  EXPECT_FALSE(Tensor().Slice(0, 0));
}

TEST(Tensor, IndexDropsTheFirstDimension) {
  const Tensor v2 = Var(1, {4});
  auto e = v2.Index(2);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->Rank(), 0u);
  EXPECT_EQ(e->NumElements(), 1u);
  EXPECT_EQ(e->ShapeString(), "f32[]");
  EXPECT_THAT(Regions(*e), ElementsAre(R{1, 2, 3}));
  auto scalar = e->Index(0);
  ASSERT_FALSE(scalar);
  EXPECT_EQ(scalar.error().message(), "cannot index scalar f32[]");
  auto out = v2.Index(4);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message(), "index 4 out of range for f32[4]");
}

TEST(Tensor, ReshapeAndFlatten) {
  const Tensor t = Var(0, {2, 6});
  auto r = t.Reshape({3, 4});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->shape(), (std::vector<uint64_t>{3, 4}));
  EXPECT_THAT(Regions(*r), ElementsAre(R{0, 0, 12}));
  auto bad = t.Reshape({5});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "cannot reshape f32[2,6] (12 elements) to [5] (5 elements)");
  EXPECT_EQ(t.Flatten().shape(), std::vector<uint64_t>{12});
}

TEST(Tensor, TransposeVisitsElementsInTheNewOrder) {
  const Tensor t = Var(0, {2, 3});
  const size_t perm[] = {1, 0};
  auto tr = t.Dimshuffle(perm);
  ASSERT_TRUE(tr);
  EXPECT_EQ(tr->shape(), (std::vector<uint64_t>{3, 2}));
  // [[0,1,2],[3,4,5]] transposed is [[0,3],[1,4],[2,5]].
  EXPECT_THAT(Regions(*tr),
              ElementsAre(R{0, 0, 1}, R{0, 3, 4}, R{0, 1, 2}, R{0, 4, 5}, R{0, 2, 3}, R{0, 5, 6}));
  // Transposing back restores one contiguous run.
  auto back = tr->Dimshuffle(perm);
  ASSERT_TRUE(back);
  EXPECT_THAT(Regions(*back), ElementsAre(R{0, 0, 6}));
}

TEST(Tensor, DimshuffleKeepingTheInnerDimensionMovesRows) {
  const Tensor t = Var(0, {2, 3, 4});
  const size_t perm[] = {1, 0, 2};
  auto d = t.Dimshuffle(perm);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->shape(), (std::vector<uint64_t>{3, 2, 4}));
  EXPECT_THAT(Regions(*d), ElementsAre(R{0, 0, 4}, R{0, 12, 16}, R{0, 4, 8}, R{0, 16, 20},
                                       R{0, 8, 12}, R{0, 20, 24}));
  const size_t bad[] = {0, 0, 1};
  auto err = t.Dimshuffle(bad);
  ASSERT_FALSE(err);
  EXPECT_EQ(err.error().message(),
            "dimshuffle [0,0,1] is not a permutation of the 3 dimensions of f32[2,3,4]");
}

TEST(Tensor, ConcatJoinsAndCoalesces) {
  const Tensor v = Var(0, {4});
  const Tensor halves[] = {*v.Slice(0, 2), *v.Slice(2, 4)};
  auto joined = Tensor::Concat(halves);
  ASSERT_TRUE(joined);
  EXPECT_THAT(Regions(*joined), ElementsAre(R{0, 0, 4}));
  EXPECT_FALSE(joined->HasAliases());

  const Tensor a = Var(1, {2, 2});
  const Tensor b = Var(2, {2, 1});
  const Tensor parts[] = {a, b};
  auto wide = Tensor::Concat(parts, 1);
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->shape(), (std::vector<uint64_t>{2, 3}));
  EXPECT_THAT(Regions(*wide), ElementsAre(R{1, 0, 2}, R{2, 0, 1}, R{1, 2, 4}, R{2, 1, 2}));
  auto mismatch = Tensor::Concat(parts, 0);
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().message(),
            "concat along dimension 0: operand 1 is f32[2,1], operand 0 is f32[2,2]");
  EXPECT_FALSE(Tensor::Concat(std::span<const Tensor>()));
}

TEST(Tensor, RepeatedElementsAreAliases) {
  const Tensor v = Var(0, {4});
  const Tensor twice[] = {v, v};
  auto doubled = Tensor::Concat(twice);
  ASSERT_TRUE(doubled);
  EXPECT_TRUE(doubled->HasAliases());
  const Tensor overlapping[] = {*v.Slice(0, 3), *v.Slice(2, 4)};
  EXPECT_TRUE(Tensor::Concat(overlapping)->HasAliases());
  const Tensor other[] = {v, Var(1, {4})};
  EXPECT_FALSE(Tensor::Concat(other)->HasAliases());
}

TEST(Tensor, ElementCountOverflowIsAnError) {
  const uint64_t big[] = {uint64_t{1} << 40, uint64_t{1} << 40};
  auto count = ElementCount(big);
  ASSERT_FALSE(count);
  EXPECT_EQ(count.error().message(), "shape [1099511627776,1099511627776] has too many elements");
  const uint64_t empty[] = {3, 0};
  EXPECT_EQ(*ElementCount(empty), 0u);
}

TEST(Tensor, EmptyTensorsHaveNoRegions) {
  const Tensor t = Var(0, {0, 3});
  EXPECT_EQ(t.NumElements(), 0u);
  EXPECT_TRUE(t.regions().empty());
  const size_t perm[] = {1, 0};
  auto d = t.Dimshuffle(perm);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->shape(), (std::vector<uint64_t>{3, 0}));
}

// The variable elements of a tensor, one per element, in element order.
std::vector<std::pair<VariableId, uint64_t>> Elements(const Tensor& t) {
  std::vector<std::pair<VariableId, uint64_t>> out;
  for (const R& r : t.regions()) {
    for (uint64_t e = r.begin; e < r.end; ++e) out.emplace_back(r.variable, e);
  }
  return out;
}

TEST(TensorIndex, BoxIsTheSlicesOfEachDimension) {
  // A fragmented source (a transpose, then a slice) so that boxes cross
  // regions; every box of every size must equal slicing one dimension at a
  // time, regions and all.
  const size_t perm[] = {2, 0, 1};
  const Tensor source = *Var(4, {3, 4, 5}).Dimshuffle(perm)->Slice(1, 4, 2);  // [5,3,3]
  const TensorIndex index(source);
  const std::vector<uint64_t>& shape = source.shape();
  size_t boxes = 0;
  for (uint64_t l0 = 0; l0 < shape[0]; ++l0)
    for (uint64_t s0 = 0; l0 + s0 <= shape[0]; ++s0)
      for (uint64_t l1 = 0; l1 < shape[1]; ++l1)
        for (uint64_t s1 = 1; l1 + s1 <= shape[1]; ++s1)
          for (uint64_t l2 = 0; l2 < shape[2]; ++l2)
            for (uint64_t s2 = 1; l2 + s2 <= shape[2]; ++s2) {
              const uint64_t lo[] = {l0, l1, l2}, size[] = {s0, s1, s2};
              Tensor expected = source;
              for (size_t d = 0; d < 3; ++d) expected = *expected.Slice(lo[d], lo[d] + size[d], d);
              auto box = index.Box(lo, size);
              ASSERT_TRUE(box) << box.error().message();
              EXPECT_EQ(box->shape(), expected.shape());
              EXPECT_EQ(Regions(*box), Regions(expected)) << l0 << s0 << l1 << s1 << l2 << s2;
              EXPECT_EQ(Elements(*box), Elements(expected));
              ++boxes;
            }
  EXPECT_GT(boxes, 500u);
}

TEST(TensorIndex, WholeBoxIsTheTensorAndBadBoxesAreErrors) {
  const Tensor t = Var(0, {3, 4});
  const TensorIndex index(t);
  const uint64_t zero[] = {0, 0}, whole[] = {3, 4};
  EXPECT_THAT(Regions(*index.Box(zero, whole)), ElementsAre(R{0, 0, 12}));
  const uint64_t lo[] = {1, 2}, too_big[] = {2, 3};
  auto bad = index.Box(lo, too_big);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "box [2, 5) of dimension 1 out of range for f32[3,4]");
  const uint64_t short_lo[] = {1};
  EXPECT_FALSE(index.Box(short_lo, too_big));
  const uint64_t huge[] = {1, UINT64_MAX};
  EXPECT_FALSE(index.Box(lo, huge));
}

// AppendBox gives Box's runs, appended after what the buffer holds and
// merged with its last run, and Box's errors.
TEST(TensorIndex, AppendBoxAppendsBoxRunsAndMergesWithTheLast) {
  const Tensor t = Var(2, {4, 5});
  const TensorIndex index(t);
  std::vector<R> runs{R{2, 0, 3}};
  const uint64_t lo[] = {0, 3}, size[] = {2, 2};
  ASSERT_TRUE(index.AppendBox(lo, size, runs));
  EXPECT_THAT(runs, ElementsAre(R{2, 0, 5}, R{2, 8, 10}));
  const uint64_t zero[] = {0, 0}, whole[] = {4, 5};
  runs = {R{7, 0, 1}};
  ASSERT_TRUE(index.AppendBox(zero, whole, runs));
  EXPECT_THAT(runs, ElementsAre(R{7, 0, 1}, R{2, 0, 20}));
  const uint64_t empty[] = {0, 5};
  runs.clear();
  ASSERT_TRUE(index.AppendBox(zero, empty, runs));
  EXPECT_TRUE(runs.empty());
  const uint64_t too_big[] = {2, 3};
  const Status bad = index.AppendBox(lo, too_big, runs);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "box [3, 6) of dimension 1 out of range for f32[4,5]");
  EXPECT_TRUE(runs.empty());
}

}  // namespace
}  // namespace tileprof::engine
