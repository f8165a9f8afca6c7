#include "common/expected.h"

#include <gtest/gtest.h>

namespace tileprof {
namespace {

Expected<int> Half(int x) {
  if (x % 2 != 0) return MakeError("{} is odd", x);
  return x / 2;
}

Expected<int> Quarter(int x) {
  TILEPROF_ASSIGN_OR_RETURN(int half, Half(x));
  TILEPROF_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status CheckEven(int x) {
  TILEPROF_RETURN_IF_ERROR(Half(x));
  return {};
}

TEST(Expected, HoldsValueOrError) {
  auto ok = Half(8);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 4);
  auto bad = Half(7);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "7 is odd");
}

TEST(Expected, MacrosPropagateTheFirstError) {
  EXPECT_EQ(*Quarter(12), 3);
  EXPECT_EQ(Quarter(6).error().message(), "3 is odd");
  EXPECT_TRUE(CheckEven(2));
  EXPECT_EQ(CheckEven(3).error().message(), "3 is odd");
}

TEST(Expected, WithinAddsThePlace) {
  Error e = MakeError("bad magic").Within("tiles.a(tile0.o)");
  EXPECT_EQ(e.message(), "tiles.a(tile0.o): bad magic");
}

TEST(Expected, MoveOnlyValues) {
  Expected<std::unique_ptr<int>> p = std::make_unique<int>(5);
  std::unique_ptr<int> taken = std::move(p).value();
  EXPECT_EQ(*taken, 5);
}

}  // namespace
}  // namespace tileprof
