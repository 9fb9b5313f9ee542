// Expected failures are values: Result<T> holds a T or an Error (Debian 12 ships no tl::expected,
// and std::expected needs C++23, so this is the minimal subset kevo uses).
#pragma once

#include <fmt/format.h>

#include <cassert>
#include <string>
#include <utility>
#include <variant>

#include "util/error_code.h"

namespace kevo {

// A message for people and, where a caller acts on the kind of failure, a code (never the text).
struct Error {
  std::string message;
  ErrorCode code = ErrorCode::kUnspecified;
};

// Tag for constructing a Result that holds an error.
struct Unexpected {
  Error error;
};

template <class... Args>
Unexpected fail(fmt::format_string<Args...> f, Args&&... args) {
  return Unexpected{Error{fmt::format(f, std::forward<Args>(args)...)}};
}

// The same with the kind of failure a caller can act on.
template <class... Args>
Unexpected fail(ErrorCode code, fmt::format_string<Args...> f, Args&&... args) {
  return Unexpected{Error{fmt::format(f, std::forward<Args>(args)...), code}};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { assert(has_value()); return std::get<0>(v_); }
  const T& value() const& { assert(has_value()); return std::get<0>(v_); }
  T&& value() && { assert(has_value()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { assert(!has_value()); return std::get<1>(v_); }
  // Propagate this result's error into a Result of another type.
  Unexpected unexpected() const { return Unexpected{error()}; }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Unexpected u) : err_(std::move(u.error)), ok_(false) {}
  Result(Error e) : err_(std::move(e)), ok_(false) {}
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { assert(!ok_); return err_; }
  Unexpected unexpected() const { return Unexpected{err_}; }

 private:
  Error err_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace kevo

// Early return of an error from a function returning any Result.
#define KEVO_TRY(expr)                                 \
  do {                                                 \
    auto&& kevo_try_r_ = (expr);                       \
    if (!kevo_try_r_) return kevo_try_r_.unexpected(); \
  } while (0)
