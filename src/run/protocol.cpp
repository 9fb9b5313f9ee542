#include "run/protocol.h"

#include "util/json_fields.h"

namespace kevo::proto {

void to_json(json& j, const TensorDesc& d) {
  j = json{{"name", d.name}, {"dtype", d.dtype}, {"shape", d.shape}, {"numel", d.numel},
           {"nbytes", d.nbytes}, {"offset", d.offset}};
  if (d.gen) j["gen"] = *d.gen;
}

void from_json(const json& j, TensorDesc& d) {
  d.name = j.at("name").get<std::string>();
  d.dtype = j.at("dtype").get<int>();
  d.shape = j.at("shape").get<std::vector<int64_t>>();
  d.nbytes = j.at("nbytes").get<uint64_t>();
  d.numel = j.value("numel", int64_t(0));
  if (d.numel == 0 && !d.shape.empty()) {
    d.numel = 1;
    for (auto x : d.shape) d.numel *= x;
  }
  d.offset = j.value("offset", uint64_t(0));
  if (j.contains("gen")) d.gen = j["gen"].get<Gen>();
}

std::string DeviceState::diff(const DeviceState& after) const {
  std::string out;
  for (size_t i = 0; i < values.size() || i < after.values.size(); ++i) {
    const auto* a = i < values.size() ? &values[i] : nullptr;
    const auto* b = i < after.values.size() ? &after.values[i] : nullptr;
    if (a && b && *a == *b) continue;
    if (!out.empty()) out += "; ";
    out += (a ? a->first : b->first) + ": " + (a ? std::to_string(a->second) : "?") + " -> " +
           (b ? std::to_string(b->second) : "?");
  }
  return out;
}

void to_json(json& j, const DeviceState& s) {
  j = json::array();
  for (const auto& [k, v] : s.values) j.push_back(json::array({k, v}));
}

void from_json(const json& j, DeviceState& s) {
  s.values.clear();
  for (const auto& e : j) s.values.emplace_back(e.at(0).get<std::string>(), e.at(1).get<uint64_t>());
}

void to_json(json& j, const ErrorReply& r) {
  j = json{{"ok", false}, {"error", r.error}};
  if (r.fatal) j["fatal"] = true;
  if (r.cuda_error != 0) j["cuda_error"] = r.cuda_error;
}

void from_json(const json& j, ErrorReply& r) {
  r.error = field_or(j, "error", std::string());
  r.fatal = field_or(j, "fatal", false);
  r.cuda_error = field_or(j, "cuda_error", 0);
}

void to_json(json& j, const TimeBatchReply& r) {
  j = json{{"ok", r.ok},
           {"error", r.error},
           {"fatal", r.fatal},
           {"call_ms", r.call_ms},
           {"flush_ms", r.flush_ms},
           {"sums", r.sums},
           {"rc", r.rc},
           {"launch_error", r.launch_error},
           {"span_ms", r.span_ms},
           {"after_stream_ms", r.after_stream_ms},
           {"after_stream_cpu_ms", r.after_stream_cpu_ms},
           {"threads_before", r.threads_before},
           {"threads_after", r.threads_after},
           {"violations", r.violations},
           {"outputs_ipc", r.outputs_ipc}};
  if (r.state_before) j["state_before"] = *r.state_before;
  if (r.state_after) j["state_after"] = *r.state_after;
}

void from_json(const json& j, TimeBatchReply& r) {
  r.ok = j.value("ok", false);
  r.error = field_or(j, "error", std::string());
  r.fatal = j.value("fatal", false);
  if (!r.ok) return;
  r.call_ms = j.at("call_ms").get<std::vector<double>>();
  r.flush_ms = j.value("flush_ms", std::vector<double>{});
  r.sums = j.at("sums").get<std::vector<std::vector<Sums>>>();
  r.rc = j.value("rc", std::vector<int>{});
  r.launch_error = j.value("launch_error", std::string());
  r.span_ms = j.value("span_ms", 0.0);
  r.after_stream_ms = j.value("after_stream_ms", 0.0);
  r.after_stream_cpu_ms = j.value("after_stream_cpu_ms", 0.0);
  r.threads_before = j.value("threads_before", 0);
  r.threads_after = j.value("threads_after", 0);
  r.violations = j.value("violations", std::vector<Violation>{});
  r.outputs_ipc = j.value("outputs_ipc", std::vector<std::string>{});
  if (j.contains("state_before")) r.state_before = j["state_before"].get<DeviceState>();
  if (j.contains("state_after")) r.state_after = j["state_after"].get<DeviceState>();
}

}  // namespace kevo::proto
