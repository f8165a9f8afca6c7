// The .npy layout (numpy/lib/format.py documents it): the magic
// "\x93NUMPY", a major and a minor version byte, the header length (2 bytes
// little-endian in 1.0, 4 bytes in 2.0 and 3.0), then the header: a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline; the data follows. 3.0 only allows UTF-8
// in the header, which changes nothing for the keys this reader accepts.
#include "common/npy.h"

#include <fmt/format.h>

#include <cstring>

#include "common/file.h"

namespace tileprof::npy {
namespace {

struct DtypeInfo {
  Dtype dtype;
  std::string_view descr;
  std::string_view name;
  size_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {Dtype::kBool, "|b1", "bool", 1},  {Dtype::kI1, "|i1", "int8", 1},
    {Dtype::kU1, "|u1", "uint8", 1},   {Dtype::kI2, "<i2", "int16", 2},
    {Dtype::kU2, "<u2", "uint16", 2},  {Dtype::kI4, "<i4", "int32", 4},
    {Dtype::kU4, "<u4", "uint32", 4},  {Dtype::kI8, "<i8", "int64", 8},
    {Dtype::kU8, "<u8", "uint64", 8},  {Dtype::kF2, "<f2", "float16", 2},
    {Dtype::kF4, "<f4", "float32", 4}, {Dtype::kF8, "<f8", "float64", 8},
};

const DtypeInfo& Info(Dtype dtype) { return kDtypes[static_cast<size_t>(dtype)]; }

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kAlignment = 64;

// The header dict: a small recursive-descent reader over the literal.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view text) : text_(text) {}

  struct Fields {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<uint64_t>> shape;
  };

  Expected<Fields> Read() {
    Fields fields;
    SkipSpace();
    if (!Eat('{')) return Fail("expected '{' to start the header dict");
    SkipSpace();
    while (!Eat('}')) {
      TILEPROF_ASSIGN_OR_RETURN(std::string key, String());
      SkipSpace();
      if (!Eat(':')) return Fail(fmt::format("expected ':' after '{}'", key));
      SkipSpace();
      if (key == "descr") {
        if (fields.descr) return Fail("'descr' appears twice");
        if (Peek() == '[') {
          return Fail(
              "'descr' is a list: structured dtypes are not supported (one numeric array per "
              "file)");
        }
        TILEPROF_ASSIGN_OR_RETURN(std::string descr, String());
        fields.descr = std::move(descr);
      } else if (key == "fortran_order") {
        if (fields.fortran_order) return Fail("'fortran_order' appears twice");
        if (Word("True"))
          fields.fortran_order = true;
        else if (Word("False"))
          fields.fortran_order = false;
        else
          return Fail("'fortran_order' is not True or False");
      } else if (key == "shape") {
        if (fields.shape) return Fail("'shape' appears twice");
        TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> shape, Tuple());
        fields.shape = std::move(shape);
      } else {
        return Fail(fmt::format(
            "unexpected key '{}' (a .npy header has descr, fortran_order and shape)", key));
      }
      SkipSpace();
      if (Eat(',')) {
        SkipSpace();
        continue;
      }
      if (Peek() != '}') return Fail("expected ',' or '}' in the header dict");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text after the header dict");
    return fields;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool Word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  Error Fail(std::string_view what) const { return MakeError("header offset {}: {}", pos_, what); }

  Expected<std::string> String() {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Fail("expected a quoted string");
    ++pos_;
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return Fail("escapes in header strings are not supported");
      ++pos_;
    }
    if (pos_ == text_.size()) return Fail("unterminated string");
    std::string value(text_.substr(start, pos_ - start));
    ++pos_;
    return value;
  }

  Expected<std::vector<uint64_t>> Tuple() {
    if (!Eat('(')) return Fail("'shape' is not a tuple");
    std::vector<uint64_t> dims;
    SkipSpace();
    while (!Eat(')')) {
      if (dims.size() == kMaxDims) return Fail(fmt::format("more than {} dimensions", kMaxDims));
      const size_t start = pos_;
      uint64_t value = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        const uint64_t digit = static_cast<uint64_t>(Peek() - '0');
        if (value > (UINT64_MAX - digit) / 10) return Fail("dimension too large");
        value = value * 10 + digit;
        ++pos_;
      }
      if (pos_ == start) return Fail("expected a non-negative integer dimension");
      Eat('L');  // Python 2 wrote long integers as 2L
      dims.push_back(value);
      SkipSpace();
      if (Eat(',')) {
        SkipSpace();
        continue;
      }
      if (Peek() != ')') return Fail("expected ',' or ')' in 'shape'");
    }
    return dims;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

uint32_t ReadLittle(const std::byte* p, size_t size) {
  uint32_t value = 0;
  for (size_t i = 0; i < size; ++i) value |= std::to_integer<uint32_t>(p[i]) << (8 * i);
  return value;
}

Error DescrError(std::string_view descr) {
  if (descr.size() >= 2 && descr[0] == '>' && descr[1] != '\0') {
    return MakeError(
        "dtype '{}' is big-endian; only little-endian arrays are supported "
        "(use arr.astype(arr.dtype.newbyteorder('<')))",
        descr);
  }
  if (descr == "<V2" || descr == "|V2" || descr.find("bfloat16") != std::string_view::npos) {
    return MakeError(
        "dtype '{}' is not supported: bfloat16 is not a NumPy dtype (ml_dtypes saves it "
        "as raw 2-byte voids); save the array as float32",
        descr);
  }
  return MakeError(
      "dtype '{}' is not supported (bool, int8..int64, uint8..uint64, float16, float32, "
      "float64 are)",
      descr);
}

}  // namespace

size_t ItemSize(Dtype dtype) { return Info(dtype).size; }
std::string_view Descr(Dtype dtype) { return Info(dtype).descr; }
std::string_view Name(Dtype dtype) { return Info(dtype).name; }

std::optional<Dtype> ParseDescr(std::string_view descr) {
  if (descr.size() < 2) return std::nullopt;
  for (const DtypeInfo& info : kDtypes) {
    if (descr.substr(1) != info.descr.substr(1)) continue;
    // One-byte types have no byte order: NumPy writes '|', but any order
    // mark means the same bytes.
    if (info.size == 1 &&
        (descr[0] == '|' || descr[0] == '<' || descr[0] == '>' || descr[0] == '=')) {
      return info.dtype;
    }
    if (info.size > 1 && descr[0] == '<') return info.dtype;
  }
  return std::nullopt;
}

uint64_t Array::NumElements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

std::string Array::Describe() const {
  return fmt::format("{}[{}]", Name(dtype), fmt::join(shape, ","));
}

Expected<Array> Parse(std::span<const std::byte> bytes, std::string_view source) {
  auto fail = [&](std::string_view what) { return Error(fmt::format("{}: {}", source, what)); };
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    return fail("not a .npy file (no \\x93NUMPY magic)");
  }
  const uint8_t major = std::to_integer<uint8_t>(bytes[6]);
  const uint8_t minor = std::to_integer<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return fail(
        fmt::format("format version {}.{} is not supported (1.0, 2.0 and 3.0 are)", major, minor));
  }
  const size_t length_size = major == 1 ? 2 : 4;
  const size_t prefix = kMagicSize + 2 + length_size;
  if (bytes.size() < prefix) return fail("truncated before the header length");
  const uint64_t header_size = ReadLittle(bytes.data() + kMagicSize + 2, length_size);
  if (header_size > bytes.size() - prefix) {
    return fail(fmt::format("header of {} bytes runs past the end of the file ({} bytes)",
                            header_size, bytes.size()));
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + prefix), header_size);
  Expected<HeaderReader::Fields> fields = HeaderReader(header).Read();
  if (!fields) return fields.error().Within(source);
  if (!fields->descr) return fail("header has no 'descr'");
  if (!fields->fortran_order) return fail("header has no 'fortran_order'");
  if (!fields->shape) return fail("header has no 'shape'");
  std::optional<Dtype> dtype = ParseDescr(*fields->descr);
  if (!dtype) return DescrError(*fields->descr).Within(source);
  Array array;
  array.dtype = *dtype;
  array.shape = std::move(*fields->shape);
  if (*fields->fortran_order && array.shape.size() > 1) {
    return fail("the array is in Fortran order; save it in C order (np.ascontiguousarray)");
  }
  uint64_t count = 1;
  for (uint64_t d : array.shape) {
    if (d != 0 && count > UINT64_MAX / d)
      return fail(fmt::format("shape {} overflows", array.Describe()));
    count *= d;
  }
  const uint64_t data_size = bytes.size() - prefix - header_size;
  const uint64_t item = ItemSize(array.dtype);
  if (count > data_size / item || count * item != data_size) {
    return fail(fmt::format(
        "{} needs {} bytes of data, the file has {}", array.Describe(),
        count > UINT64_MAX / item ? std::string("more than 2^64") : fmt::format("{}", count * item),
        data_size));
  }
  const std::byte* data = bytes.data() + prefix + header_size;
  array.data.assign(data, data + data_size);
  return array;
}

Expected<Array> ReadFile(const std::string& path) {
  TILEPROF_ASSIGN_OR_RETURN(std::string text, tileprof::ReadFile(path));
  return Parse(std::as_bytes(std::span<const char>(text.data(), text.size())), path);
}

Expected<std::string> Serialize(const Array& array) {
  uint64_t count = 1;
  for (uint64_t d : array.shape) {
    if (d != 0 && count > UINT64_MAX / d) return MakeError("shape {} overflows", array.Describe());
    count *= d;
  }
  if (count > UINT64_MAX / ItemSize(array.dtype) ||
      count * ItemSize(array.dtype) != array.data.size()) {
    return MakeError("{} has {} bytes of data", array.Describe(), array.data.size());
  }
  std::string shape;
  for (uint64_t d : array.shape) shape += fmt::format("{}, ", d);
  if (array.shape.size() > 1)
    shape.resize(shape.size() - 2);  // (2, 3), but (2,)
  else if (array.shape.size() == 1)
    shape.pop_back();
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   Descr(array.dtype), shape);
  // Version 1.0 unless the padded header outgrows its 16-bit length.
  auto padded = [&](size_t length_size) {
    const size_t prefix = kMagicSize + 2 + length_size;
    return (prefix + header.size() + 1 + kAlignment - 1) / kAlignment * kAlignment - prefix;
  };
  const size_t length_size = padded(2) <= 0xffff ? 2 : 4;
  const uint8_t major = length_size == 2 ? 1 : 2;
  const size_t header_size = padded(length_size);
  header.append(header_size - header.size() - 1, ' ');
  header.push_back('\n');
  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < length_size; ++i)
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out += header;
  out.append(reinterpret_cast<const char*>(array.data.data()), array.data.size());
  return out;
}

Status WriteFile(const std::string& path, const Array& array) {
  TILEPROF_ASSIGN_OR_RETURN(std::string bytes, Serialize(array));
  return WriteFileAtomic(path, bytes);
}

}  // namespace tileprof::npy
