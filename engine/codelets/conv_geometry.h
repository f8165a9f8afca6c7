// Internal to engine/codelets/conv.cc: the general convolution partial's
// parameters decoded (codelets.h, ConvParam), and the output coordinates it
// follows along a run.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "engine/codelets/codelets.h"

namespace tileprof::engine::conv_internal {

constexpr size_t kSpatial = kConvMaxSpatialDims;

// One coordinate of an output, flat / stride % size, followed as the flat
// index grows: a step smaller than the stride (the usual one, to the next
// run of features or the next pixel) costs no division. Working the five
// coordinates of each output run out by division took more than the
// products of a convolution with one input channel. Needs flat >= 0 and,
// for size > 1, stride >= 1 (CheckShape).
struct OutputDigit {
  int64_t stride = 1, size = 1, rem = 0, value = 0;

  OutputDigit() = default;
  OutputDigit(int64_t stride_, int64_t size_, int64_t flat) : stride(stride_), size(size_) {
    if (size == 1) return;  // an unused dimension: no division
    rem = flat % stride;
    value = flat / stride % size;
  }
  void Advance(int64_t step) {
    if (size == 1) return;
    rem += step;
    if (rem < stride) return;
    const int64_t carry = rem < 2 * stride ? 1 : rem / stride;
    rem -= carry * stride;
    value += carry < size ? carry : carry % size;
    if (value >= size) value -= size;
  }
};

// The parameters decoded, signed where that matters.
struct Geometry {
  int64_t out_start = 0;
  int64_t out_size_b = 1, out_stride_b = 1, out_size_f = 1, out_stride_f = 1;
  std::array<int64_t, kSpatial> out_size{}, out_stride{};
  int64_t in_start = 0, in_stride_b = 0, in_stride_f = 0;
  std::array<int64_t, kSpatial> in_size{}, in_stride{};
  int64_t w_start = 0, w_stride_i = 0, w_stride_o = 0;
  std::array<int64_t, kSpatial> k_size{}, w_stride{};
  std::array<int64_t, kSpatial> stride{}, pad_low{}, lhs_dilation{}, rhs_dilation{};
  uint32_t reversal = 0;
  int64_t in_chans_per_group = 1, out_chans_per_group = 1;
  bool groups_split_batch = false;
  int64_t in_chan_start = 0, in_chans = 1;
  int64_t out_offset_b = 0, out_offset_f = 0;
  std::array<int64_t, kSpatial> out_offset{}, k_offset{}, k_full{};
  int64_t batch_per_group = 1;

  explicit Geometry(std::span<const uint32_t> p) {
    using P = ConvParam;
    using G = Geometry;
    static constexpr std::pair<P, int64_t G::*> kScalars[] = {
        {P::kOutStart, &G::out_start},
        {P::kOutSizeB, &G::out_size_b},
        {P::kOutStrideB, &G::out_stride_b},
        {P::kOutSizeF, &G::out_size_f},
        {P::kOutStrideF, &G::out_stride_f},
        {P::kInStart, &G::in_start},
        {P::kInStrideB, &G::in_stride_b},
        {P::kInStrideF, &G::in_stride_f},
        {P::kWeightsStart, &G::w_start},
        {P::kWeightsStrideI, &G::w_stride_i},
        {P::kWeightsStrideO, &G::w_stride_o},
        {P::kInChansPerGroup, &G::in_chans_per_group},
        {P::kOutChansPerGroup, &G::out_chans_per_group},
        {P::kInChanStart, &G::in_chan_start},
        {P::kInChans, &G::in_chans},
        {P::kOutOffsetB, &G::out_offset_b},
        {P::kOutOffsetF, &G::out_offset_f},
        {P::kBatchPerGroup, &G::batch_per_group}};
    // Per spatial dimension: the first dimension's parameter and the
    // distance to the next dimension's (2 where two arrays interleave).
    struct PerDim {
      P first;
      size_t step;
      std::array<int64_t, kSpatial> G::*member;
    };
    static constexpr PerDim kPerDim[] = {{P::kOutSize0, 2, &G::out_size},
                                         {P::kOutStride0, 2, &G::out_stride},
                                         {P::kInSize0, 2, &G::in_size},
                                         {P::kInStride0, 2, &G::in_stride},
                                         {P::kKernelSize0, 2, &G::k_size},
                                         {P::kWeightsStride0, 2, &G::w_stride},
                                         {P::kStride0, 1, &G::stride},
                                         {P::kPadLow0, 1, &G::pad_low},
                                         {P::kLhsDilation0, 1, &G::lhs_dilation},
                                         {P::kRhsDilation0, 1, &G::rhs_dilation},
                                         {P::kOutOffset0, 1, &G::out_offset},
                                         {P::kKernelOffset0, 1, &G::k_offset},
                                         {P::kKernelFull0, 1, &G::k_full}};
    for (const auto& [param, member] : kScalars) this->*member = p[static_cast<size_t>(param)];
    for (const PerDim& dim : kPerDim)
      for (size_t d = 0; d < kSpatial; ++d)
        (this->*dim.member)[d] = p[static_cast<size_t>(dim.first) + d * dim.step];
    // The low padding is signed (negative: the input cropped).
    for (int64_t& pad : pad_low) pad = static_cast<int32_t>(static_cast<uint32_t>(pad));
    reversal = p[static_cast<size_t>(P::kReversal)];
    groups_split_batch = p[static_cast<size_t>(P::kGroupsSplitBatch)] != 0;
  }

  uint64_t OutputElements() const {
    uint64_t n = static_cast<uint64_t>(out_size_b) * static_cast<uint64_t>(out_size_f);
    for (size_t d = 0; d < kSpatial; ++d) n *= static_cast<uint64_t>(out_size[d]);
    return n;
  }
  uint64_t KernelPositions() const {
    uint64_t n = 1;
    for (size_t d = 0; d < kSpatial; ++d)
      n *= static_cast<uint64_t>(std::max<int64_t>(k_size[d], 1));
    return n;
  }
};

}  // namespace tileprof::engine::conv_internal
