// ByteReader: the one bounds- and overflow-checked way to read untrusted
// binary input. Every read names the field it reads so that an error says
// what, which field and at which offset:
//   "e_shoff: 4 bytes at offset 0x20 run past the end of the data (30 bytes)"
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/expected.h"

namespace tileprof {

class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> data, std::endian order = std::endian::little)
      : data_(data), order_(order) {}
  ByteReader(std::string_view data, std::endian order = std::endian::little)
      : data_(reinterpret_cast<const uint8_t*>(data.data()), data.size()), order_(order) {}

  uint64_t size() const { return data_.size(); }
  std::span<const uint8_t> data() const { return data_; }
  std::endian order() const { return order_; }
  void set_order(std::endian order) { order_ = order; }

  // Random-access reads in the reader's byte order. Errors name `field`.
  Expected<uint8_t> U8(uint64_t offset, std::string_view field) const;
  Expected<uint16_t> U16(uint64_t offset, std::string_view field) const;
  Expected<uint32_t> U32(uint64_t offset, std::string_view field) const;
  Expected<uint64_t> U64(uint64_t offset, std::string_view field) const;
  // A 4- or 8-byte word, for fields whose width depends on the ELF class.
  Expected<uint64_t> Word(uint64_t offset, unsigned width, std::string_view field) const;

  // `length` bytes at `offset`, checked without overflow.
  Expected<std::span<const uint8_t>> Bytes(uint64_t offset, uint64_t length,
                                           std::string_view field) const;
  Expected<std::string_view> Chars(uint64_t offset, uint64_t length, std::string_view field) const;

  // The same reads with no error text, for hot loops that have already
  // checked the whole range they read from. Precondition: in bounds.
  uint64_t UncheckedWord(uint64_t offset, unsigned width) const;

 private:
  Error OutOfBounds(uint64_t offset, uint64_t length, std::string_view field) const;

  std::span<const uint8_t> data_;
  std::endian order_;
};

// A ByteReader with a position, for sequential formats.
class ByteCursor {
 public:
  explicit ByteCursor(ByteReader reader, uint64_t offset = 0) : reader_(reader), offset_(offset) {}

  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return offset_ <= reader_.size() ? reader_.size() - offset_ : 0; }
  void Seek(uint64_t offset) { offset_ = offset; }

  Expected<uint8_t> U8(std::string_view field);
  Expected<uint16_t> U16(std::string_view field);
  Expected<uint32_t> U32(std::string_view field);
  Expected<uint64_t> U64(std::string_view field);
  Expected<std::span<const uint8_t>> Bytes(uint64_t length, std::string_view field);
  Status Skip(uint64_t length, std::string_view field);

 private:
  template <typename T>
  Expected<T> Advance(Expected<T> value, uint64_t width) {
    if (value) offset_ += width;
    return value;
  }

  ByteReader reader_;
  uint64_t offset_;
};

}  // namespace tileprof
