// Typed reads of JSON that kevo stored itself but another process may have written (an older or
// newer kevo, a hand edit of the run database): a missing key takes its default, a key of another
// type is an error that names it instead of nlohmann's type_error escaping to the process edge.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>

#include "util/result.h"

namespace kevo {

class JsonFields {
 public:
  // `where` names the document in errors, e.g. "run 3: stored configuration". A document passed
  // as a temporary (`JsonFields(f.object("info"), ...)`) is kept; otherwise it is only referred to.
  JsonFields(const nlohmann::json& j, std::string where) : j_(&j), where_(std::move(where)) { check_object(); }
  JsonFields(nlohmann::json&& j, std::string where) : owned_(std::move(j)), j_(&owned_), where_(std::move(where)) {
    check_object();
  }
  JsonFields(const JsonFields&) = delete;
  JsonFields& operator=(const JsonFields&) = delete;

  // The value at key, or fallback when it is missing (or null); a value of another type records
  // an error (the first one is kept) and gives fallback.
  template <class T>
  T get(const char* key, T fallback) {
    if (!j_->is_object()) return fallback;
    auto it = j_->find(key);
    if (it == j_->end() || it->is_null()) return fallback;
    if (!fits<T>(*it)) {
      note(std::string("field '") + key + "' is " + it->type_name() + ", expected " + expected<T>());
      return fallback;
    }
    return it->template get<T>();
  }

  // The object at key (an empty one when missing); another type records an error.
  nlohmann::json object(const char* key) { return get<nlohmann::json>(key, nlohmann::json::object()); }

  bool ok() const { return !error_; }
  // Ok, or "<where>: field 'max_calls' is string, expected a number".
  Status status() const {
    if (error_) return fail("{}: {}", where_, *error_);
    return {};
  }

 private:
  template <class T>
  static bool fits(const nlohmann::json& v) {
    if constexpr (std::is_same_v<T, bool>) return v.is_boolean();
    else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    else if constexpr (std::is_integral_v<T>) return v.is_number_integer();
    else if constexpr (std::is_floating_point_v<T>) return v.is_number();
    else if constexpr (std::is_same_v<T, std::string>) return v.is_string();
    else if constexpr (std::is_same_v<T, nlohmann::json>) return v.is_object();
    else return false;
  }
  template <class T>
  static const char* expected() {
    if constexpr (std::is_same_v<T, bool>) return "true or false";
    else if constexpr (std::is_integral_v<T>) return "an integer";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else if constexpr (std::is_same_v<T, std::string>) return "a string";
    else return "an object";
  }
  void check_object() {
    if (!j_->is_object() && !j_->is_null()) note("is " + std::string(j_->type_name()) + ", expected an object");
  }
  void note(std::string what) {
    if (!error_) error_ = std::move(what);
  }

  nlohmann::json owned_;
  const nlohmann::json* j_;
  std::string where_;
  std::optional<std::string> error_;
};

// The value at key, or fallback when it is missing or of another type: for stored JSON that only
// informs (a report's figures), where a hand-edited field should read as absent, not stop the report.
template <class T>
T field_or(const nlohmann::json& j, const char* key, T fallback) {
  return JsonFields(j, "").get<T>(key, std::move(fallback));
}
inline std::string field_or(const nlohmann::json& j, const char* key, const char* fallback) {
  return field_or<std::string>(j, key, fallback);
}

}  // namespace kevo
