#include "common/format.h"

#include <limits>

#include <gtest/gtest.h>

namespace tileprof {
namespace {

// Values from ../shared/spec/text-report.md section 2.
TEST(Format, ThousandsSeparators) {
  EXPECT_EQ(WithThousands(uint64_t{0}), "0");
  EXPECT_EQ(WithThousands(uint64_t{999}), "999");
  EXPECT_EQ(WithThousands(uint64_t{1216}), "1,216");
  EXPECT_EQ(WithThousands(uint64_t{23878396}), "23,878,396");
  EXPECT_EQ(WithThousands(int64_t{-1234}), "-1,234");
  EXPECT_EQ(WithThousands(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
  EXPECT_EQ(WithThousands(1600.0, 1), "1,600.0");
  EXPECT_EQ(WithThousands(-0.04, 1), "0.0");
}

TEST(Format, BinarySizesUseTheReportLabels) {
  EXPECT_EQ(BinarySize(262144), "256.0 kB");
  EXPECT_EQ(BinarySize(1216ull * 262144), "304.0 MB");
  EXPECT_EQ(BinarySize(638976), "624.0 kB");
  EXPECT_EQ(BinarySize(1472ull * 638976), "897.0 MB");
  EXPECT_EQ(BinarySize(100), "100 B");
}

TEST(Format, KibiK) { EXPECT_EQ(KibiK(49184), "48.0 K"); }

}  // namespace
}  // namespace tileprof
