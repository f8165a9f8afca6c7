#include "engine/codelets/bits.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cstring>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"

namespace tileprof::engine {
namespace {

class BitcastConvertCodelet final : public Codelet {
 public:
  BitcastConvertCodelet(ElementType in, ElementType out)
      : Codelet(BitcastConvertCodeletName(in, out), ExecutionKind::kWorker,
                {In("in", in, VectorLayout::kSpan), Out("out", out, VectorLayout::kSpan)}, {},
                kBitcastConvertCodeBytes),
        in_(in),
        out_(out) {}

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t in_bytes = shape.field_elements[0] * SizeOf(in_);
    const uint64_t out_bytes = shape.field_elements[1] * SizeOf(out_);
    if (in_bytes != out_bytes) {
      return MakeError("in has {} bytes, out {}: a bitcast keeps every byte", in_bytes, out_bytes);
    }
    return {};
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    const uint64_t words = (shape.field_elements[1] * SizeOf(out_) + 7) / 8;
    return cost::WorkerLoop(words, 1, kBitcastCyclesPerWord);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    std::memcpy(io.fields[1].data(), io.fields[0].data(), io.fields[1].size());
    return {};
  }

 private:
  ElementType in_;
  ElementType out_;
};

class ThreefryCodelet final : public Codelet {
 public:
  ThreefryCodelet()
      : Codelet(
            ThreefryCodeletName(), ExecutionKind::kWorker,
            {In("key0", ElementType::kU32), In("key1", ElementType::kU32),
             In("x0", ElementType::kU32), In("x1", ElementType::kU32),
             Out("out0", ElementType::kU32), Out("out1", ElementType::kU32, VectorLayout::kSpan)},
            {}, kThreefryCodeBytes) {}

  Status CheckShape(const VertexShape& shape) const override {
    for (size_t i = 0; i < 5; ++i) {
      if (shape.field_elements[i] != shape.field_elements[5]) {
        return MakeError("field {} has {} elements, out1 {}: threefry works element by element",
                         fields()[i].name, shape.field_elements[i], shape.field_elements[5]);
      }
    }
    return {};
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    return cost::WorkerLoop(shape.field_elements[5], 1, kThreefryCyclesPerPair);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t n = Count(io, 5);
    auto load = [&](size_t field, uint64_t i) {
      uint32_t v;
      std::memcpy(&v, io.fields[field].data() + i * 4, 4);
      return v;
    };
    for (uint64_t i = 0; i < n; ++i) {
      const auto [y0, y1] = Threefry2x32(load(0, i), load(1, i), load(2, i), load(3, i));
      std::memcpy(io.fields[4].data() + i * 4, &y0, 4);
      std::memcpy(io.fields[5].data() + i * 4, &y1, 4);
    }
    return {};
  }
};

}  // namespace

std::pair<uint32_t, uint32_t> Threefry2x32(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1) {
  // The rotation constants of Threefry-2x32 and the key-schedule parity
  // constant (the paper's C240).
  constexpr std::array<std::array<int, 4>, 2> kRotations = {{{13, 15, 26, 6}, {17, 29, 16, 24}}};
  const std::array<uint32_t, 3> keys = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += keys[0];
  x1 += keys[1];
  for (uint32_t block = 0; block < 5; ++block) {
    for (const int r : kRotations[block % 2]) {
      x0 += x1;
      x1 = std::rotl(x1, r) ^ x0;
    }
    x0 += keys[(block + 1) % 3];
    x1 += keys[(block + 2) % 3] + block + 1;
  }
  return {x0, x1};
}

std::string BitcastConvertCodeletName(ElementType in, ElementType out) {
  return fmt::format("tileprof::BitcastConvert<{},{}>", PoplarName(in), PoplarName(out));
}
std::string ThreefryCodeletName() { return "tileprof::Threefry2x32<unsigned int>"; }

Expected<std::unique_ptr<Codelet>> MakeBitcastConvertCodelet(ElementType in, ElementType out) {
  if (in == ElementType::kPred || out == ElementType::kPred) {
    return MakeError("bitcast-convert of pred (XLA defines it on numeric types)");
  }
  return std::unique_ptr<Codelet>(new BitcastConvertCodelet(in, out));
}

Expected<std::unique_ptr<Codelet>> MakeThreefryCodelet() {
  return std::unique_ptr<Codelet>(new ThreefryCodelet());
}

}  // namespace tileprof::engine
