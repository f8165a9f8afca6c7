// .npy reading and writing: round trips for every dtype, headers as NumPy
// writes them (versions 1, 2 and 3, Python 2 long integers), and malformed
// files rejected with messages naming the source and the problem.
#include "common/npy.h"

#include <cstring>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tileprof::npy {
namespace {

using ::testing::HasSubstr;

std::span<const std::byte> Bytes(const std::string& text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

// A file with `header` (padded as NumPy pads it) and `data`.
std::string File(uint8_t major, const std::string& header, const std::string& data) {
  std::string padded = header;
  const size_t length_size = major == 1 ? 2 : 4;
  while ((10 - 2 + length_size + padded.size() + 1) % 64 != 0) padded += ' ';
  padded += '\n';
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < length_size; ++i)
    out.push_back(static_cast<char>((padded.size() >> (8 * i)) & 0xff));
  return out + padded + data;
}

std::string Floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out.append(reinterpret_cast<const char*>(&v), 4);
  return out;
}

TEST(Npy, ReadsWhatNumpyWrites) {
  // np.save(f, np.array([[1, 2, 3], [4, 5, 6]], np.float32))
  const std::string file = File(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                Floats({1, 2, 3, 4, 5, 6}));
  Expected<Array> array = Parse(Bytes(file), "a.npy");
  ASSERT_TRUE(array.has_value()) << array.error().message();
  EXPECT_EQ(array->dtype, Dtype::kF4);
  EXPECT_EQ(array->shape, (std::vector<uint64_t>{2, 3}));
  ASSERT_EQ(array->data.size(), 24u);
  float last;
  std::memcpy(&last, array->data.data() + 20, 4);
  EXPECT_EQ(last, 6.0f);
  EXPECT_EQ(array->Describe(), "float32[2,3]");
}

TEST(Npy, ScalarsVersionsAndSpellings) {
  Expected<Array> scalar =
      Parse(Bytes(File(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                       std::string(8, '\0'))),
            "s.npy");
  ASSERT_TRUE(scalar.has_value()) << scalar.error().message();
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->NumElements(), 1u);
  // Version 2 and 3 headers, keys in another order, Python 2 longs, no trailing comma.
  Expected<Array> v2 = Parse(
      Bytes(File(2, "{'shape': (3L,), 'fortran_order': False, 'descr': '|u1'}", "abc")), "v2.npy");
  ASSERT_TRUE(v2.has_value()) << v2.error().message();
  EXPECT_EQ(v2->dtype, Dtype::kU1);
  EXPECT_EQ(v2->shape, (std::vector<uint64_t>{3}));
  Expected<Array> v3 =
      Parse(Bytes(File(3, "{\"descr\": \"|b1\", \"fortran_order\": True, \"shape\": (2,)}",
                       std::string("\1\0", 2))),
            "v3.npy");
  ASSERT_TRUE(v3.has_value()) << v3.error().message();  // Fortran order is C order in 1-D
  EXPECT_EQ(v3->dtype, Dtype::kBool);
  Expected<Array> empty = Parse(
      Bytes(File(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 5), }", "")), "e.npy");
  ASSERT_TRUE(empty.has_value()) << empty.error().message();
  EXPECT_EQ(empty->NumElements(), 0u);
}

TEST(Npy, RoundTripsEveryDtype) {
  for (Dtype dtype : {Dtype::kBool, Dtype::kI1, Dtype::kU1, Dtype::kI2, Dtype::kU2, Dtype::kI4,
                      Dtype::kU4, Dtype::kI8, Dtype::kU8, Dtype::kF2, Dtype::kF4, Dtype::kF8}) {
    Array array{dtype, {2, 1, 3}, {}};
    for (size_t i = 0; i < 6 * ItemSize(dtype); ++i) array.data.push_back(std::byte(i * 7 % 2));
    Expected<std::string> bytes = Serialize(array);
    ASSERT_TRUE(bytes.has_value()) << bytes.error().message();
    EXPECT_EQ((bytes->size() - array.data.size()) % 64, 0u) << Name(dtype);
    EXPECT_EQ(bytes->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    Expected<Array> back = Parse(Bytes(*bytes), "rt.npy");
    ASSERT_TRUE(back.has_value()) << back.error().message();
    EXPECT_EQ(back->dtype, dtype);
    EXPECT_EQ(back->shape, array.shape);
    EXPECT_EQ(back->data, array.data);
  }
  // 1-D shapes keep Python's trailing comma, scalars are ().
  Expected<std::string> one = Serialize(Array{Dtype::kF4, {3}, std::vector<std::byte>(12)});
  ASSERT_TRUE(one.has_value());
  EXPECT_THAT(*one, HasSubstr("'shape': (3,), }"));
  Expected<std::string> scalar = Serialize(Array{Dtype::kF4, {}, std::vector<std::byte>(4)});
  ASSERT_TRUE(scalar.has_value());
  EXPECT_THAT(*scalar, HasSubstr("'shape': (), }"));
}

TEST(Npy, SerializeRejectsDataOfTheWrongSize) {
  Expected<std::string> bytes = Serialize(Array{Dtype::kF4, {2, 2}, std::vector<std::byte>(12)});
  ASSERT_FALSE(bytes.has_value());
  EXPECT_THAT(bytes.error().message(), HasSubstr("float32[2,2] has 12 bytes"));
}

std::string ErrorOf(const std::string& file) {
  Expected<Array> array = Parse(Bytes(file), "bad.npy");
  return array.has_value() ? std::string("(parsed)") : array.error().message();
}

TEST(Npy, MalformedFilesAreErrorsNamingTheProblem) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_THAT(ErrorOf("PK\3\4"), HasSubstr("bad.npy: not a .npy file"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("not a .npy file"));
  std::string v9 = File(1, f4, Floats({1, 2}));
  v9[6] = 9;
  EXPECT_THAT(ErrorOf(v9), HasSubstr("format version 9.0 is not supported"));
  std::string long_header = File(1, f4, Floats({1, 2}));
  long_header[8] = '\xff';
  long_header[9] = '\xff';
  EXPECT_THAT(ErrorOf(long_header), HasSubstr("runs past the end of the file"));
  EXPECT_THAT(ErrorOf(std::string("\x93NUMPY\x02\x00\x01", 9)), HasSubstr("truncated"));
  EXPECT_THAT(ErrorOf(File(1, f4, Floats({1}))),
              HasSubstr("float32[2] needs 8 bytes of data, the file has 4"));
  EXPECT_THAT(ErrorOf(File(1, f4, Floats({1, 2, 3}))), HasSubstr("the file has 12"));
  EXPECT_THAT(
      ErrorOf(File(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", Floats({1, 2}))),
      HasSubstr("big-endian"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", "abcd")),
              HasSubstr("bfloat16 is not a NumPy dtype"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "")),
              HasSubstr("dtype '<c8' is not supported"));
  EXPECT_THAT(
      ErrorOf(File(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", "")),
      HasSubstr("structured dtypes"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }",
                           Floats({1, 2}))),
              HasSubstr("Fortran order"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<f4', 'fortran_order': False}", "")),
              HasSubstr("no 'shape'"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<f4', 'shape': (1,), 'shape': (1,)}", "")),
              HasSubstr("'shape' appears twice"));
  EXPECT_THAT(
      ErrorOf(File(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "")),
      HasSubstr("unexpected key 'x'"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,)}", "")),
              HasSubstr("not True or False"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "")),
              HasSubstr("non-negative integer"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ", "")),
              HasSubstr("expected ',' or '}'"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<f4}", "")), HasSubstr("unterminated string"));
  EXPECT_THAT(
      ErrorOf(File(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
                   "")),
      HasSubstr("dimension too large"));
  EXPECT_THAT(
      ErrorOf(File(
          1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4)}", "")),
      HasSubstr("overflows"));
  EXPECT_THAT(ErrorOf(File(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", "")),
              HasSubstr("unexpected text after the header dict"));
  std::string dims = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 70; ++i) dims += "1,";
  EXPECT_THAT(ErrorOf(File(1, dims + ")}", Floats({1}))), HasSubstr("more than 64 dimensions"));
}

}  // namespace
}  // namespace tileprof::npy
