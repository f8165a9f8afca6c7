// NumPy .npy files: the format `numpy.save` writes (format versions 1.0,
// 2.0 and 3.0), for the arrays `tileprof run` reads as inputs and writes as
// outputs. Only what a tensor needs: one little-endian, C-order array of a
// fixed-size numeric or bool dtype. Input is untrusted: every length is
// checked, and errors name the source and the offending header field.
//
//   Expected<npy::Array> a = npy::ReadFile("x.npy");   // a->dtype, a->shape, a->data
//   npy::Array out{npy::Dtype::kF4, {2, 3}, bytes};
//   Status written = npy::WriteFile("out.0.npy", out);  // atomic
//
// bfloat16 is not a NumPy dtype (ml_dtypes saves it as a raw '<V2' void
// type); such files are rejected with a message saying so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace tileprof::npy {

enum class Dtype : uint8_t { kBool, kI1, kU1, kI2, kU2, kI4, kU4, kI8, kU8, kF2, kF4, kF8 };

size_t ItemSize(Dtype dtype);
// The header's descr: "|b1", "<f4", ...
std::string_view Descr(Dtype dtype);
// NumPy's name: "bool", "float32", ...
std::string_view Name(Dtype dtype);
// Parses a descr ('<f4', '|u1', 'bool' spellings are not accepted: the
// header always has the typestr form).
std::optional<Dtype> ParseDescr(std::string_view descr);

struct Array {
  Dtype dtype = Dtype::kF4;
  std::vector<uint64_t> shape;  // empty: a scalar
  std::vector<std::byte> data;  // little-endian elements in C order

  uint64_t NumElements() const;
  // "float32[2,3]"
  std::string Describe() const;
};

// At most this many dimensions (NumPy's own limit is 64).
inline constexpr size_t kMaxDims = 64;

// Parses the bytes of a .npy file; `source` names it in errors.
Expected<Array> Parse(std::span<const std::byte> bytes, std::string_view source);
Expected<Array> ReadFile(const std::string& path);

// The file bytes: version 1.0, or 2.0 when the header does not fit 1.0's
// 16-bit length; the header is padded so the data starts at a multiple of 64.
// Error if data.size() does not match the shape and dtype.
Expected<std::string> Serialize(const Array& array);
Status WriteFile(const std::string& path, const Array& array);

}  // namespace tileprof::npy
