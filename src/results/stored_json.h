// Tolerant reads of the JSON kevo stores (verdicts, configs, baselines, job results written by any
// kevo version, or edited by hand): a missing or mistyped field reads as its default, never an
// exception. Only results/ reads stored JSON by key; everything above reads its typed views.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kevo::results {

// Parses text; anything but an object is an empty object.
inline nlohmann::json parse_object(const std::string& text) {
  if (text.empty()) return nlohmann::json::object();
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

// The value at key, or null when j is no object or has no such key.
inline const nlohmann::json& member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json null_json;
  if (!j.is_object()) return null_json;
  auto it = j.find(key);
  return it == j.end() ? null_json : *it;
}

inline double number(const nlohmann::json& j, const char* key, double fallback = 0) {
  const auto& v = member(j, key);
  return v.is_number() ? v.get<double>() : fallback;
}

inline int64_t integer(const nlohmann::json& j, const char* key, int64_t fallback = 0) {
  const auto& v = member(j, key);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

inline std::string text(const nlohmann::json& j, const char* key, const std::string& fallback = {}) {
  const auto& v = member(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

inline bool flag(const nlohmann::json& j, const char* key, bool fallback = false) {
  const auto& v = member(j, key);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

// A positive number at key, or nullopt (0 or absent is never a measurement).
inline std::optional<double> positive(const nlohmann::json& j, const char* key) {
  const double x = number(j, key);
  return x > 0 ? std::optional<double>(x) : std::nullopt;
}

}  // namespace kevo::results
