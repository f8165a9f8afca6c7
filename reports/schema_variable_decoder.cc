#include "reports/schema_variable_decoder.h"

#include <limits>
#include <type_traits>

namespace tileprof::report::schema::internal {
namespace {

static_assert(!HasSlots<Variable>(), "a variable is decoded from scalars alone");
constexpr auto kKeys = EntryNames<Variable>();

// A bit per key a reader requires.
constexpr uint32_t RequiredKeys() {
  uint32_t bits = 0;
  size_t i = 0;
  ForEachKey<Variable>([&](const auto& key) {
    using Member = MemberOf<decltype(key)>;
    if (key.presence == Presence::kRequired && !OptionalValue<Member>::kOptional) bits |= 1u << i;
    ++i;
  });
  return bits;
}
constexpr uint32_t kRequired = RequiredKeys();
static_assert(kKeys.size() <= 32, "seen_ has a bit per key");

// Calls f(key, member) for the key at `index` and the member it names, where
// the member's (optional-less) type is T; returns whether it was.
template <typename T, typename F>
bool WithMember(Variable& variable, int index, F&& f) {
  bool found = false;
  VisitEntry<Variable>(static_cast<size_t>(index), [&](const auto& key) {
    using Member = MemberOf<decltype(key)>;
    if constexpr (std::is_same_v<typename OptionalValue<Member>::type, T>) {
      found = f(variable.*key.member);
    }
  });
  return found;
}

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
  const bool taken = WithMember<uint32_t>(variable_, key_,
                                          [&](auto& member) {
                                            if (value > std::numeric_limits<uint32_t>::max())
                                              return false;
                                            member = static_cast<uint32_t>(value);
                                            return true;
                                          }) ||
                     WithMember<uint64_t>(variable_, key_, [&](auto& member) {
                       member = value;
                       return true;
                     });
  if (!taken) return Result::kBail;
  key_ = -1;
  return Accept(Event::Kind::kUint, value);
}

VariableDecoder::Result VariableDecoder::String(std::string& value) {
  const bool taken = WithMember<std::string>(variable_, key_,
                                             [&](std::string& member) {
                                               member = std::move(value);
                                               return true;
                                             }) ||
                     WithMember<Category>(variable_, key_, [&](Category& member) {
                       const std::optional<Category> category = CategoryFromMachineName(value);
                       if (!category) return false;
                       member = *category;
                       category_texts_[static_cast<size_t>(key_)] = std::move(value);
                       return true;
                     });
  if (!taken) return Result::kBail;
  const auto member = static_cast<uint64_t>(key_);
  key_ = -1;
  return Accept(Event::Kind::kString, member);
}

VariableDecoder::Result VariableDecoder::Bool(bool value) {
  const bool taken = WithMember<bool>(variable_, key_, [&](bool& member) {
    member = value;
    return true;
  });
  if (!taken) return Result::kBail;
  key_ = -1;
  return Accept(Event::Kind::kBool, value ? 1 : 0);
}

VariableDecoder::Result VariableDecoder::EndObject() {
  if (key_ != -1 || (seen_ & kRequired) != kRequired) return Result::kBail;
  return Result::kDone;
}

const std::string& VariableDecoder::Text(const Event& event) const {
  const std::string* text = &category_texts_[event.value];
  VisitEntry<Variable>(event.value, [&](const auto& key) {
    if constexpr (std::is_same_v<MemberOf<decltype(key)>, std::string>)
      text = &(variable_.*key.member);
  });
  return *text;
}

}  // namespace tileprof::report::schema::internal
