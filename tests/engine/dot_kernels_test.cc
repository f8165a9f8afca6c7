// The panel product of engine/codelets/dot_kernels.h against the one-output
// loop it replaced: the same sums in the same order, so equal bit for bit,
// for every block width and tail (f32 through both the AVX2 and the 16-byte
// kernels), f64, and wrapping integers; the several-row kernel likewise.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/codelets/dot_kernels.h"

namespace tileprof::engine::dot {
namespace {

template <typename C>
std::vector<C> RandomValues(size_t n, std::mt19937& rng) {
  std::vector<C> v(n);
  for (C& x : v) {
    if constexpr (std::is_floating_point_v<C>) {
      // Magnitudes over several binades, so that rounding order matters.
      x = static_cast<C>(std::uniform_real_distribution<double>(-1, 1)(rng) *
                         std::ldexp(1.0, std::uniform_int_distribution<int>(-8, 8)(rng)));
    } else {
      x = static_cast<C>(rng());
    }
  }
  return v;
}

// acc[r] + a[0] * p[0][r] + a[1] * p[1][r] + ..., left to right.
template <typename C>
std::vector<C> Sequential(const std::vector<C>& a, const std::vector<C>& panel, uint64_t stride,
                          uint64_t width, std::vector<C> acc) {
  for (uint64_t r = 0; r < width; ++r)
    for (uint64_t t = 0; t < a.size(); ++t) acc[r] = MulAdd<C>(acc[r], a[t], panel[t * stride + r]);
  return acc;
}

template <typename C, typename Kernel>
void ExpectSameAsSequential(Kernel kernel) {
  std::mt19937 rng(7);
  for (uint64_t width : {1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 64, 70}) {
    for (uint64_t count : {0, 1, 5, 40}) {
      const uint64_t stride = width + 3;  // rows need not be adjacent
      const auto a = RandomValues<C>(count, rng);
      const auto panel = RandomValues<C>(count * stride, rng);
      const auto start = RandomValues<C>(width, rng);
      const auto expected = Sequential(a, panel, stride, width, start);
      auto acc = start;
      kernel(a.data(), count, panel.data(), stride, width, acc.data());
      for (uint64_t r = 0; r < width; ++r) {
        if constexpr (std::is_floating_point_v<C>) {
          using Bits = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
          ASSERT_EQ(std::bit_cast<Bits>(acc[r]), std::bit_cast<Bits>(expected[r]))
              << "width " << width << " count " << count << " output " << r;
        } else {
          ASSERT_EQ(acc[r], expected[r]) << "width " << width << " count " << count;
        }
      }
    }
  }
}

TEST(PanelDot, F32MatchesTheSequentialSumBitForBit) {
  ExpectSameAsSequential<float>(PanelDot<float>);  // AVX2 when the host has it
  ExpectSameAsSequential<float>([](const float* a, uint64_t count, const float* panel,
                                   uint64_t stride, uint64_t width, float* acc) {
    if (count > 0) detail::PanelDotIn<float, 16>(a, count, panel, stride, width, acc);
  });
}

TEST(PanelDot, F64AndIntegersMatchTheSequentialSum) {
  ExpectSameAsSequential<double>(PanelDot<double>);
  ExpectSameAsSequential<int8_t>(PanelDot<int8_t>);
  ExpectSameAsSequential<uint16_t>(PanelDot<uint16_t>);
  ExpectSameAsSequential<int32_t>(PanelDot<int32_t>);
  ExpectSameAsSequential<int64_t>(PanelDot<int64_t>);
}

// PanelDotRows: each of `rows` rows (a's rows `a_stride` apart, acc's
// `acc_stride` apart) the same as PanelDot on it alone, for row counts around
// the groups of four and widths around the two-vector blocks.
template <typename C, typename Kernel>
void ExpectRowsSameAsOneByOne(Kernel kernel) {
  std::mt19937 rng(11);
  for (uint64_t rows : {1, 3, 4, 5, 8, 9}) {
    for (uint64_t width : {1, 7, 8, 15, 16, 17, 32, 33, 70}) {
      for (uint64_t count : {1, 5, 40}) {
        const uint64_t stride = width + 3, a_stride = count + 2, acc_stride = width + 5;
        const auto a = RandomValues<C>(rows * a_stride, rng);
        const auto panel = RandomValues<C>(count * stride, rng);
        const auto start = RandomValues<C>(rows * acc_stride, rng);
        auto acc = start;
        kernel(a.data(), a_stride, rows, count, panel.data(), stride, width, acc.data(),
               acc_stride);
        for (uint64_t i = 0; i < rows; ++i) {
          const std::vector<C> a_row(a.begin() + i * a_stride, a.begin() + i * a_stride + count);
          const std::vector<C> start_row(start.begin() + i * acc_stride,
                                         start.begin() + i * acc_stride + width);
          const auto expected = Sequential(a_row, panel, stride, width, start_row);
          for (uint64_t r = 0; r < width; ++r) {
            ASSERT_EQ(0, std::memcmp(&acc[i * acc_stride + r], &expected[r], sizeof(C)))
                << "rows " << rows << " width " << width << " count " << count << " row " << i
                << " output " << r;
          }
          // The gap between acc rows is left alone.
          for (uint64_t r = width; r < acc_stride && i + 1 < rows; ++r)
            ASSERT_EQ(0,
                      std::memcmp(&acc[i * acc_stride + r], &start[i * acc_stride + r], sizeof(C)));
        }
      }
    }
  }
}

TEST(PanelDotRows, MatchesTheSequentialSumOfEachRow) {
  ExpectRowsSameAsOneByOne<float>(PanelDotRows<float>);  // AVX2 when the host has it
  ExpectRowsSameAsOneByOne<float>([](const float* a, uint64_t a_stride, uint64_t rows,
                                     uint64_t count, const float* panel, uint64_t stride,
                                     uint64_t width, float* acc, uint64_t acc_stride) {
    detail::PanelDotRowsIn<float, 16>(a, a_stride, rows, count, panel, stride, width, acc,
                                      acc_stride);
  });
  ExpectRowsSameAsOneByOne<double>(PanelDotRows<double>);
  ExpectRowsSameAsOneByOne<int8_t>(PanelDotRows<int8_t>);
  ExpectRowsSameAsOneByOne<uint16_t>(PanelDotRows<uint16_t>);
  ExpectRowsSameAsOneByOne<int32_t>(PanelDotRows<int32_t>);
}

TEST(PanelDot, IntegerSumsWrap) {
  const std::vector<int8_t> a = {100, 100};
  const std::vector<int8_t> panel = {2, 2};
  std::vector<int8_t> acc = {0};
  PanelDot<int8_t>(a.data(), 2, panel.data(), 1, 1, acc.data());
  EXPECT_EQ(acc[0], static_cast<int8_t>(400 - 512));  // 400 mod 256, as two's complement
}

TEST(InPlace, OnlyForFieldsStoredAsTheComputeTypeAndAligned) {
  alignas(8) std::byte bytes[16] = {};
  EXPECT_EQ((InPlace<ElementType::kF32, float>(std::span<const std::byte>(bytes, 16))),
            reinterpret_cast<const float*>(bytes));
  EXPECT_EQ((InPlace<ElementType::kF32, float>(std::span<const std::byte>(bytes + 1, 8))), nullptr);
  EXPECT_EQ((InPlace<ElementType::kF16, float>(std::span<const std::byte>(bytes, 16))), nullptr);
  EXPECT_EQ((InPlace<ElementType::kS8, int32_t>(std::span<const std::byte>(bytes, 16))), nullptr);
}

}  // namespace
}  // namespace tileprof::engine::dot
