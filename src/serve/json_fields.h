// Tolerant reads of stored JSON (verdicts, configs, job results written by any kevo version): a
// missing or mistyped field is its default, never an exception.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "store/records.h"

namespace kevo::serve {

// Parses text; anything but an object is an empty object.
inline nlohmann::json parse_object(const std::string& text) {
  if (text.empty()) return nlohmann::json::object();
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

inline const nlohmann::json& field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json null_json;
  if (!j.is_object()) return null_json;
  auto it = j.find(key);
  return it == j.end() ? null_json : *it;
}

inline double num_field(const nlohmann::json& j, const char* key, double fallback = 0) {
  const auto& v = field(j, key);
  return v.is_number() ? v.get<double>() : fallback;
}

inline std::string str_field(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// A candidate document's "outcome" (store/records.h's text) as the enum; kUnknown when missing.
inline store::CandidateOutcome outcome_field(const nlohmann::json& j) {
  return store::candidate_outcome_or_unknown(str_field(j, "outcome"));
}

}  // namespace kevo::serve
