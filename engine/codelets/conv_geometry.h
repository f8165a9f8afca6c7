// Internal to engine/codelets/conv.cc: the general convolution partial's
// parameters decoded (codelets.h, ConvParam), and the output coordinates it
// follows along a run.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

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
    auto at = [&](ConvParam param) -> int64_t { return p[static_cast<size_t>(param)]; };
    auto spatial = [&](ConvParam first, size_t d, size_t step) -> int64_t {
      return p[static_cast<size_t>(first) + d * step];
    };
    out_start = at(ConvParam::kOutStart);
    out_size_b = at(ConvParam::kOutSizeB);
    out_stride_b = at(ConvParam::kOutStrideB);
    out_size_f = at(ConvParam::kOutSizeF);
    out_stride_f = at(ConvParam::kOutStrideF);
    in_start = at(ConvParam::kInStart);
    in_stride_b = at(ConvParam::kInStrideB);
    in_stride_f = at(ConvParam::kInStrideF);
    w_start = at(ConvParam::kWeightsStart);
    w_stride_i = at(ConvParam::kWeightsStrideI);
    w_stride_o = at(ConvParam::kWeightsStrideO);
    for (size_t d = 0; d < kSpatial; ++d) {
      out_size[d] = spatial(ConvParam::kOutSize0, d, 2);
      out_stride[d] = spatial(ConvParam::kOutStride0, d, 2);
      in_size[d] = spatial(ConvParam::kInSize0, d, 2);
      in_stride[d] = spatial(ConvParam::kInStride0, d, 2);
      k_size[d] = spatial(ConvParam::kKernelSize0, d, 2);
      w_stride[d] = spatial(ConvParam::kWeightsStride0, d, 2);
      stride[d] = spatial(ConvParam::kStride0, d, 1);
      pad_low[d] = static_cast<int32_t>(p[static_cast<size_t>(ConvParam::kPadLow0) + d]);
      lhs_dilation[d] = spatial(ConvParam::kLhsDilation0, d, 1);
      rhs_dilation[d] = spatial(ConvParam::kRhsDilation0, d, 1);
    }
    reversal = p[static_cast<size_t>(ConvParam::kReversal)];
    in_chans_per_group = at(ConvParam::kInChansPerGroup);
    out_chans_per_group = at(ConvParam::kOutChansPerGroup);
    groups_split_batch = at(ConvParam::kGroupsSplitBatch) != 0;
    in_chan_start = at(ConvParam::kInChanStart);
    in_chans = at(ConvParam::kInChans);
    out_offset_b = at(ConvParam::kOutOffsetB);
    out_offset_f = at(ConvParam::kOutOffsetF);
    for (size_t d = 0; d < kSpatial; ++d) {
      out_offset[d] = spatial(ConvParam::kOutOffset0, d, 1);
      k_offset[d] = spatial(ConvParam::kKernelOffset0, d, 1);
      k_full[d] = spatial(ConvParam::kKernelFull0, d, 1);
    }
    batch_per_group = at(ConvParam::kBatchPerGroup);
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
