// StableVector (engine/graph/stable_vector.h): elements stay where they are
// as the vector grows across chunks.
#include "engine/graph/stable_vector.h"

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

}  // namespace
}  // namespace tileprof::engine
