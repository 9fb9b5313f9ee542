#include "run/protocol.h"

#include <cmath>

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
  r.outputs_ipc = j.value("outputs_ipc", std::vector<IpcBuffer>{});
  if (j.contains("state_before")) r.state_before = j["state_before"].get<DeviceState>();
  if (j.contains("state_after")) r.state_after = j["state_after"].get<DeviceState>();
}

void to_json(json& j, const HelloRequest&) { j = json{{"cmd", HelloRequest::kCmd}}; }
void from_json(const json&, HelloRequest&) {}

void to_json(json& j, const LoadRequest& r) {
  j = json{{"cmd", LoadRequest::kCmd}, {"slot", r.slot}, {"path", r.path}, {"untrusted", r.untrusted}};
  if (!r.python_entry.empty()) j["python_entry"] = r.python_entry;
}

void from_json(const json& j, LoadRequest& r) {
  r.slot = j.at("slot").get<std::string>();
  r.path = j.at("path").get<std::string>();
  r.untrusted = j.value("untrusted", false);
  r.python_entry = j.value("python_entry", "");
}

void to_json(json& j, const ConfineReply& r) {
  j = json{{"isolation", r.isolation}, {"state", nullptr}};
  if (r.state) j["state"] = *r.state;
}

void from_json(const json& j, ConfineReply& r) {
  r = ConfineReply{};
  r.isolation = j.value("isolation", Isolation{});
  if (auto it = j.find("state"); it != j.end() && !it->is_null()) r.state = it->get<DeviceState>();
}

void to_json(json& j, const RunRequest& r) {
  j = json{{"cmd", RunRequest::kCmd}, {"slot", r.slot},     {"arena_size", r.arena_size}, {"inputs", r.inputs},
           {"outputs", r.outputs},    {"scalars", r.scalars}, {"dims", r.dims},
           {"workspace_bytes", r.workspace_bytes}, {"poison", r.poison}, {"placement", r.placement},
           {"alloc_limit", r.alloc_limit}, {"keep", r.keep}, {"export", r.export_ipc}};
  // Absent, not empty: the runner keeps its flush setting, and copies no inputs back.
  if (r.flush_bytes) j["flush_bytes"] = *r.flush_bytes;
  if (!r.inputs_after.empty()) j["inputs_after"] = r.inputs_after;
}

void from_json(const json& j, RunRequest& r) {
  const RunRequest d{};
  r.slot = j.at("slot").get<std::string>();
  r.arena_size = j.at("arena_size").get<uint64_t>();
  r.inputs = j.at("inputs").get<std::vector<TensorDesc>>();
  r.outputs = j.at("outputs").get<std::vector<TensorDesc>>();
  r.scalars = j.at("scalars").get<std::vector<double>>();
  r.dims = j.at("dims").get<std::vector<int64_t>>();
  r.workspace_bytes = j.value("workspace_bytes", d.workspace_bytes);
  r.inputs_after = j.value("inputs_after", d.inputs_after);
  r.poison = j.value("poison", d.poison);
  r.placement = j.value("placement", d.placement);
  r.alloc_limit = j.value("alloc_limit", d.alloc_limit);
  r.flush_bytes.reset();
  if (j.contains("flush_bytes")) r.flush_bytes = j["flush_bytes"].get<uint64_t>();
  r.keep = j.value("keep", d.keep);
  r.export_ipc = j.value("export", d.export_ipc);
}

void to_json(json& j, const RunReply& r) {
  j = json{{"rc", r.rc},
           {"span_ms", r.span_ms},
           {"wall_ms", r.wall_ms},
           {"after_stream_ms", r.after_stream_ms},
           {"after_stream_cpu_ms", r.after_stream_cpu_ms},
           {"threads_before", r.threads_before},
           {"threads_after", r.threads_after},
           {"launch_error", r.launch_error},
           {"violations", r.violations}};
  if (!r.outputs_ipc.empty() || !r.inputs_ipc.empty()) {
    j["outputs_ipc"] = r.outputs_ipc;
    j["inputs_ipc"] = r.inputs_ipc;
  }
}

void from_json(const json& j, RunReply& r) {
  r.rc = j.value("rc", 0);
  r.span_ms = j.value("span_ms", 0.0);
  r.wall_ms = j.value("wall_ms", 0.0);
  r.after_stream_ms = j.value("after_stream_ms", 0.0);
  // A runner before the CPU figure: the wall figure alone decides (check/runner_replies.h hidden_ms).
  r.after_stream_cpu_ms = j.value("after_stream_cpu_ms", r.after_stream_ms);
  r.threads_before = j.value("threads_before", 0);
  r.threads_after = j.value("threads_after", 0);
  r.launch_error = j.value("launch_error", std::string());
  r.violations = j.value("violations", std::vector<Violation>{});
  r.outputs_ipc = j.value("outputs_ipc", std::vector<IpcBuffer>{});
  r.inputs_ipc = j.value("inputs_ipc", std::vector<IpcBuffer>{});
}

namespace {
json figure(double x) {
  if (std::isfinite(x)) return x;
  return std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf";
}
// A figure back: a number, or the name of a non-finite one; missing is 0 and anything else NaN
// (as the checker read them before these types).
double figure_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return 0.0;
  if (it->is_number()) return it->get<double>();
  std::string t = it->is_string() ? it->get<std::string>() : "nan";
  return t == "inf" ? HUGE_VAL : t == "-inf" ? -HUGE_VAL : std::nan("");
}
}  // namespace

void to_json(json& j, const CompareCounts& c) {
  j = json{{"count", c.count},
           {"mismatches", c.mismatches},
           {"unwritten", c.unwritten},
           {"nonfinite", c.nonfinite},
           {"first_bad", c.first_bad},
           {"first_got", figure(c.first_got)},
           {"first_want", figure(c.first_want)},
           {"max_abs_err", figure(c.max_abs_err)},
           {"max_rel_err", figure(c.max_rel_err)}};
}

void from_json(const json& j, CompareCounts& c) {
  if (!j.is_object()) throw json::type_error::create(302, "comparison is not an object", &j);
  c.count = j.value("count", int64_t(0));
  c.mismatches = j.value("mismatches", int64_t(0));
  c.unwritten = j.value("unwritten", int64_t(0));
  c.nonfinite = j.value("nonfinite", int64_t(0));
  c.first_bad = j.value("first_bad", int64_t(-1));
  c.first_got = figure_of(j, "first_got");
  c.first_want = figure_of(j, "first_want");
  c.max_abs_err = figure_of(j, "max_abs_err");
  c.max_rel_err = figure_of(j, "max_rel_err");
}

void to_json(json& j, const CompareOutput& o) {
  j = json{{"ipc", o.ipc},         {"dtype", o.dtype}, {"numel", o.numel}, {"nbytes", o.nbytes},
           {"ref", o.ref},         {"ref_nbytes", o.ref_nbytes}, {"check_poison", o.check_poison}};
  if (o.ref_dtype) j["ref_dtype"] = *o.ref_dtype;
  if (o.runs_ref) j["runs_ref"] = *o.runs_ref;
  if (o.snapshot) j["snapshot"] = *o.snapshot;
}

void from_json(const json& j, CompareOutput& o) {
  o.ipc = j.at("ipc").get<IpcBuffer>();
  o.dtype = j.at("dtype").get<int>();
  o.numel = j.at("numel").get<int64_t>();
  o.nbytes = j.at("nbytes").get<uint64_t>();
  o.ref = j.at("ref").get<std::string>();
  o.ref_nbytes = j.at("ref_nbytes").get<uint64_t>();
  o.check_poison = j.value("check_poison", true);
  o.ref_dtype.reset(), o.runs_ref.reset(), o.snapshot.reset();
  if (j.contains("ref_dtype")) o.ref_dtype = j["ref_dtype"].get<int>();
  if (j.contains("runs_ref")) o.runs_ref = j["runs_ref"].get<std::string>();
  if (j.contains("snapshot")) o.snapshot = j["snapshot"].get<std::string>();
}

void to_json(json& j, const CompareInput& i) { j = json{{"ipc", i.ipc}, {"nbytes", i.nbytes}, {"ref", i.ref}}; }

void from_json(const json& j, CompareInput& i) {
  i.ipc = j.at("ipc").get<IpcBuffer>();
  i.nbytes = j.at("nbytes").get<uint64_t>();
  i.ref = j.at("ref").get<std::string>();
}

void to_json(json& j, const CompareOutputResult& r) {
  j = json{{"cmp", r.cmp}};
  if (r.runs) j["runs"] = *r.runs;
}

void from_json(const json& j, CompareOutputResult& r) {
  r.cmp = j.at("cmp").get<CompareCounts>();
  r.runs.reset();
  if (j.contains("runs")) r.runs = j["runs"].get<CompareCounts>();
}

void to_json(json& j, const CompareRequest& r) {
  j = json{{"cmd", CompareRequest::kCmd}, {"atol", r.atol}, {"rtol", r.rtol}, {"outputs", r.outputs},
           {"inputs", r.inputs}};
}

void from_json(const json& j, CompareRequest& r) {
  r.atol = j.at("atol").get<double>();
  r.rtol = j.at("rtol").get<double>();
  r.outputs = j.value("outputs", std::vector<CompareOutput>{});
  r.inputs = j.value("inputs", std::vector<CompareInput>{});
}

void to_json(json& j, const CollectReply&) { j = json::object(); }
void from_json(const json&, CollectReply&) {}
void to_json(json& j, const ReleaseReply&) { j = json::object(); }
void from_json(const json&, ReleaseReply&) {}

void to_json(json& j, const ProbeRequest& r) { j = json{{"cmd", ProbeRequest::kCmd}, {"path", r.path}}; }
void from_json(const json& j, ProbeRequest& r) { r.path = j.at("path").get<std::string>(); }

}  // namespace kevo::proto
