// StableVector (engine/graph/stable_vector.h): elements stay where they are
// as the vector grows across chunks, which ChunkAhead (chunk_ahead.h) makes.
#include "engine/graph/stable_vector.h"

#include <set>

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <string>

namespace tileprof::engine {
namespace {

TEST(StableVector, ElementsKeepTheirAddressesAcrossChunks) {
  StableVector<std::string, 4> v;  // chunks of 16
  std::vector<const std::string*> addresses;
  for (int i = 0; i < 100; ++i) {
    v.push_back(std::to_string(i));
    addresses.push_back(&v.back());
  }
  ASSERT_EQ(v.size(), 100u);
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(&v[i], addresses[i]);
    EXPECT_EQ(v[i], std::to_string(i));
  }
  const StableVector<std::string, 4> moved = std::move(v);
  EXPECT_EQ(&moved[37], addresses[37]);
}

TEST(StableVector, IteratesInOrderAndChecksAt) {
  StableVector<int, 2> v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.begin(), v.end());
  v.reserve(9);
  for (int i = 0; i < 9; ++i) v.push_back(i * i);
  int sum = 0, count = 0;
  for (int x : v) {
    EXPECT_EQ(x, count * count);
    sum += x;
    ++count;
  }
  EXPECT_EQ(count, 9);
  EXPECT_EQ(sum, 204);
  v[4] = -1;
  EXPECT_EQ(v.at(4), -1);
  EXPECT_EQ(v.at(8), 64);
  EXPECT_THROW(v.at(9), std::out_of_range);
}

TEST(ChunkAhead, HandsOutDistinctValueInitialisedChunks) {
  // The third chunk on is made on a helper thread: each must still be a
  // fresh, zeroed array of its own.
  ChunkAhead<uint64_t, 1000> ahead;
  std::set<const uint64_t*> seen;
  std::vector<std::unique_ptr<uint64_t[]>> kept;
  for (int i = 0; i < 8; ++i) {
    std::unique_ptr<uint64_t[]> chunk = ahead.Next();
    ASSERT_NE(chunk, nullptr);
    for (size_t j = 0; j < 1000; ++j) ASSERT_EQ(chunk[j], 0u) << "chunk " << i << " element " << j;
    std::fill_n(chunk.get(), 1000, uint64_t{7});
    EXPECT_TRUE(seen.insert(chunk.get()).second);
    kept.push_back(std::move(chunk));
  }
}

}  // namespace
}  // namespace tileprof::engine
