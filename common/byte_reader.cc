#include "common/byte_reader.h"

#include "common/checked.h"

namespace tileprof {

Error ByteReader::OutOfBounds(uint64_t offset, uint64_t length, std::string_view field) const {
  return MakeError("{}: {} bytes at offset {:#x} run past the end of the data ({} bytes)", field,
                   length, offset, data_.size());
}

uint64_t ByteReader::UncheckedWord(uint64_t offset, unsigned width) const {
  uint64_t value = 0;
  const uint8_t* p = data_.data() + offset;
  if (order_ == std::endian::little) {
    for (unsigned i = width; i-- > 0;) value = (value << 8) | p[i];
  } else {
    for (unsigned i = 0; i < width; ++i) value = (value << 8) | p[i];
  }
  return value;
}

Expected<uint64_t> ByteReader::Word(uint64_t offset, unsigned width, std::string_view field) const {
  if (!InBounds(offset, width, data_.size())) return OutOfBounds(offset, width, field);
  return UncheckedWord(offset, width);
}

Expected<uint8_t> ByteReader::U8(uint64_t offset, std::string_view field) const {
  if (offset >= data_.size()) return OutOfBounds(offset, 1, field);
  return data_[offset];
}

Expected<uint16_t> ByteReader::U16(uint64_t offset, std::string_view field) const {
  auto w = Word(offset, 2, field);
  if (!w) return w.error();
  return static_cast<uint16_t>(*w);
}

Expected<uint32_t> ByteReader::U32(uint64_t offset, std::string_view field) const {
  auto w = Word(offset, 4, field);
  if (!w) return w.error();
  return static_cast<uint32_t>(*w);
}

Expected<uint64_t> ByteReader::U64(uint64_t offset, std::string_view field) const {
  return Word(offset, 8, field);
}

Expected<std::span<const uint8_t>> ByteReader::Bytes(uint64_t offset, uint64_t length,
                                                     std::string_view field) const {
  if (!InBounds(offset, length, data_.size())) return OutOfBounds(offset, length, field);
  return data_.subspan(offset, length);
}

Expected<std::string_view> ByteReader::Chars(uint64_t offset, uint64_t length,
                                             std::string_view field) const {
  auto bytes = Bytes(offset, length, field);
  if (!bytes) return bytes.error();
  return std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

Expected<uint8_t> ByteCursor::U8(std::string_view field) {
  return Advance(reader_.U8(offset_, field), 1);
}
Expected<uint16_t> ByteCursor::U16(std::string_view field) {
  return Advance(reader_.U16(offset_, field), 2);
}
Expected<uint32_t> ByteCursor::U32(std::string_view field) {
  return Advance(reader_.U32(offset_, field), 4);
}
Expected<uint64_t> ByteCursor::U64(std::string_view field) {
  return Advance(reader_.U64(offset_, field), 8);
}
Expected<std::span<const uint8_t>> ByteCursor::Bytes(uint64_t length, std::string_view field) {
  return Advance(reader_.Bytes(offset_, length, field), length);
}
Status ByteCursor::Skip(uint64_t length, std::string_view field) {
  auto bytes = Bytes(length, field);
  if (!bytes) return bytes.error();
  return {};
}

}  // namespace tileprof
