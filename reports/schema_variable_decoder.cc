#include "reports/schema_variable_decoder.h"

#include <limits>

namespace tileprof::report::schema::internal {
namespace {

enum VariableKey : int { kName, kTile, kBytes, kCategory, kAlwaysLive, kOffset };
constexpr std::string_view kKeys[] = {"name", "tile", "bytes", "category", "alwaysLive", "offset"};
constexpr uint32_t kRequired = (1u << kName) | (1u << kTile) | (1u << kBytes) | (1u << kCategory);

}  // namespace

std::string_view VariableDecoder::KeyName(uint64_t key) { return kKeys[key]; }

void VariableDecoder::Begin() {
  variable_ = Variable{};
  events_.clear();
  key_ = -1;
  seen_ = 0;
  events_.push_back(Event{Event::Kind::kStartObject});
}

VariableDecoder::Result VariableDecoder::Key(std::string_view key) {
  if (key_ != -1) return Result::kBail;
  for (int i = 0; i < static_cast<int>(std::size(kKeys)); ++i) {
    if (kKeys[i] != key) continue;
    // A repeated key is the general path's error to report.
    if ((seen_ & (1u << i)) != 0) return Result::kBail;
    seen_ |= 1u << i;
    key_ = i;
    return Accept(Event::Kind::kKey, static_cast<uint64_t>(i));
  }
  return Result::kBail;  // unknown members are the general path's to skip
}

VariableDecoder::Result VariableDecoder::Uint(uint64_t value) {
  switch (key_) {
    case kTile:
      if (value > std::numeric_limits<uint32_t>::max()) return Result::kBail;
      variable_.tile = static_cast<uint32_t>(value);
      break;
    case kBytes:
      variable_.bytes = value;
      break;
    case kOffset:
      variable_.offset = value;
      break;
    default:
      return Result::kBail;
  }
  key_ = -1;
  return Accept(Event::Kind::kUint, value);
}

VariableDecoder::Result VariableDecoder::String(std::string& value) {
  std::string* slot = nullptr;
  if (key_ == kName) {
    slot = &variable_.name;
  } else if (key_ == kCategory) {
    const std::optional<Category> category = CategoryFromMachineName(value);
    if (!category) return Result::kBail;
    variable_.category = *category;
    slot = &category_;
  } else {
    return Result::kBail;
  }
  *slot = std::move(value);
  const auto member = static_cast<uint64_t>(key_);
  key_ = -1;
  return Accept(Event::Kind::kString, member);
}

VariableDecoder::Result VariableDecoder::Bool(bool value) {
  if (key_ != kAlwaysLive) return Result::kBail;
  variable_.always_live = value;
  key_ = -1;
  return Accept(Event::Kind::kBool, value ? 1 : 0);
}

VariableDecoder::Result VariableDecoder::EndObject() {
  if (key_ != -1 || (seen_ & kRequired) != kRequired) return Result::kBail;
  return Result::kDone;
}

const std::string& VariableDecoder::Text(const Event& event) const {
  return event.value == kName ? variable_.name : category_;
}

}  // namespace tileprof::report::schema::internal
