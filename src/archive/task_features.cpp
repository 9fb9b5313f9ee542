#include "archive/task_features.h"

#include <algorithm>

#include "util/json_fields.h"

namespace kevo::archive {

using nlohmann::json;

json TaskFeatures::to_json() const {
  return {{"op_kind", op_kind}, {"dtypes", dtypes}, {"bound", bound}, {"shapes", shapes},
          {"main_elements", main_elements}};
}

namespace {

Result<std::vector<std::string>> strings_at(const json& j, const char* key, const std::string& where) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) return fail("{}: field '{}' is {}, expected a list of strings", where, key, it->type_name());
  for (const auto& v : *it) {
    if (!v.is_string()) return fail("{}: field '{}' holds {}, expected strings only", where, key, v.type_name());
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

Result<TaskFeatures> TaskFeatures::from_json(const json& j, const std::string& where) {
  if (!j.is_object()) return fail("{}: is {}, expected an object", where, j.type_name());
  JsonFields f(j, where);
  TaskFeatures t;
  t.op_kind = f.get("op_kind", std::string());
  t.bound = f.get("bound", std::string());
  t.main_elements = f.get("main_elements", 0.0);
  KEVO_TRY(f.status());
  if (!t.bound.empty() && t.bound != "memory" && t.bound != "compute")
    return fail("{}: field 'bound' is '{}', expected memory, compute or empty", where, t.bound);
  if (t.main_elements < 0) return fail("{}: field 'main_elements' is negative", where);
  auto dtypes = strings_at(j, "dtypes", where);
  if (!dtypes) return dtypes.unexpected();
  t.dtypes = std::move(*dtypes);
  std::sort(t.dtypes.begin(), t.dtypes.end());
  t.dtypes.erase(std::unique(t.dtypes.begin(), t.dtypes.end()), t.dtypes.end());
  auto shapes = strings_at(j, "shapes", where);
  if (!shapes) return shapes.unexpected();
  t.shapes = std::move(*shapes);
  return t;
}

TaskFeatures TaskFeatures::from_text(const std::string& text) {
  auto j = json::parse(text, nullptr, false);
  auto t = from_json(j, "features");
  return t ? *t : TaskFeatures{};
}

}  // namespace kevo::archive
