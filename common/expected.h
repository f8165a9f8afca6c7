// Expected<T> and Error: recoverable failures as values (C++20 has no
// std::expected). Library code returns these; exceptions from third-party code
// are caught at the adapter and turned into an Error.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace tileprof {

// A failure with a message that already names the place ("tiles.a(tile0.o):
// sh_offset past end of file at offset 0x34"). Lower case, no trailing period.
class Error {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}

  const std::string& message() const { return message_; }

  // Returns this error with `where: ` in front, for adding the enclosing place
  // (file, archive member, field) as an error travels outwards.
  Error Within(std::string_view where) const {
    return Error(fmt::format("{}: {}", where, message_));
  }

 private:
  std::string message_;
};

template <typename... Args>
Error MakeError(fmt::format_string<Args...> format, Args&&... args) {
  return Error(fmt::format(format, std::forward<Args>(args)...));
}

// Holds either a T or an Error. Accessing the wrong alternative is a
// programmer error (asserted), never an input error.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    assert(!has_value());
    return std::get<1>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

// Success or an Error, for functions with nothing to return.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT

  bool has_value() const { return !failed_; }
  explicit operator bool() const { return has_value(); }
  const Error& error() const {
    assert(failed_);
    return error_;
  }

 private:
  Error error_{""};
  bool failed_ = false;
};

using Status = Expected<void>;

}  // namespace tileprof

// Propagates an error from an Expected<T> expression, else binds its value.
//   TILEPROF_ASSIGN_OR_RETURN(auto header, ReadHeader(bytes));
#define TILEPROF_CONCAT_INNER(a, b) a##b
#define TILEPROF_CONCAT(a, b) TILEPROF_CONCAT_INNER(a, b)
#define TILEPROF_ASSIGN_OR_RETURN(decl, expr)                     \
  auto TILEPROF_CONCAT(tileprof_expected_, __LINE__) = (expr);    \
  if (!TILEPROF_CONCAT(tileprof_expected_, __LINE__))             \
    return TILEPROF_CONCAT(tileprof_expected_, __LINE__).error(); \
  decl = std::move(TILEPROF_CONCAT(tileprof_expected_, __LINE__)).value()

#define TILEPROF_RETURN_IF_ERROR(expr)                                                      \
  do {                                                                                      \
    if (auto tileprof_status_ = (expr); !tileprof_status_) return tileprof_status_.error(); \
  } while (0)
