#include "evolve/job_payload.h"

#include <fmt/format.h>

#include "check/verdict_json.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/json_fields.h"

namespace kevo::evolve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A manifest path must stay inside the task's directory: relative, no "..", no empty parts.
bool safe_relative(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.size() > 512) return false;
  for (const auto& part : fs::path(p))
    if (part == ".." || part == "." || part.empty()) return false;
  return p.find('\0') == std::string::npos;
}

}  // namespace

Result<json> upload_task(store::RunDb& db, const Task& task) {
  json files = json::array();
  uint64_t total = 0;
  std::error_code ec;
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(task.dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == "__pycache__" || name.front() == '.')) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) paths.push_back(it->path());
  }
  if (ec) return fail("task {}: cannot list its files: {}", task.dir.string(), ec.message());
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    auto bytes = read_file(p);
    if (!bytes) return bytes.unexpected();
    total += bytes->size();
    if (total > kMaxTaskBytes)
      return fail("task {}: its files exceed {} MiB; a task travels to workers whole", task.dir.string(),
                  kMaxTaskBytes >> 20);
    auto sha = db.put_blob(*bytes);
    if (!sha) return fail("task {}: cannot store {}: {}", task.dir.string(), p.string(), sha.error().message);
    files.push_back({{"path", fs::relative(p, task.dir).string()}, {"sha256", *sha}});
  }
  return json{{"name", task.name}, {"files", files}};
}

Result<Task> download_task(store::RunDb& db, const json& manifest, const fs::path& root) {
  JsonFields f(manifest, "job task");
  const std::string name = f.get("name", std::string());
  KEVO_TRY(f.status());
  const json files = manifest.contains("files") && manifest["files"].is_array() ? manifest["files"] : json::array();
  if (files.empty()) return fail("job task '{}': the manifest names no files", name);
  const fs::path dir = root / sha256_hex(manifest.dump()).substr(0, 24) / (name.empty() ? "task" : name);
  for (const auto& e : files) {
    const std::string rel = field_or(e, "path", std::string()), sha = field_or(e, "sha256", std::string());
    if (!safe_relative(rel)) return fail("job task '{}': unsafe file path '{}' in the manifest", name, rel);
    const fs::path dest = dir / rel;
    if (auto have = read_file(dest); have && sha256_hex(*have) == sha) continue;  // already here
    auto bytes = db.blob(sha);
    if (!bytes) return bytes.unexpected();
    if (!*bytes) return fail("job task '{}': file {} (sha256 {}) is not in the run database", name, rel, sha);
    if (sha256_hex(**bytes) != sha) return fail("job task '{}': file {} does not match its hash", name, rel);
    std::error_code ec;
    fs::create_directories(dest.parent_path(), ec);
    KEVO_TRY(write_file_atomic(dest, **bytes));
  }
  return load_task(dir);
}

json eval_options_json(const EvalOptions& o) {
  json j = {{"baseline_mode", o.baseline_mode}, {"time", o.time}, {"visible_only", o.visible_only},
            {"held_out_only", o.held_out_only}, {"static_gate", o.static_gate}, {"sanitize", o.sanitize},
            {"seeds", o.seeds}, {"arch", o.arch}, {"call_timeout_ms", o.call_timeout.count()},
            {"time_budget_s", o.time_budget_s}, {"target_rel_ci", o.target_rel_ci}, {"torch_time", o.torch_time},
            {"torch_device", o.torch_device}, {"device_data", o.device_data}, {"profile", o.profile},
            {"profile_timeout_s", o.profile_timeout.count()}, {"timing_stop_below", o.timing_stop_below},
            {"baseline_ms", o.baseline_ms}, {"baseline_gpu", o.baseline_gpu}};
  if (o.seed) j["seed"] = *o.seed;
  return j;
}

Result<EvalOptions> eval_options_from(const json& j) {
  JsonFields f(j, "job options");
  EvalOptions o;
  o.baseline_mode = f.get("baseline_mode", o.baseline_mode);
  o.time = f.get("time", o.time);
  o.visible_only = f.get("visible_only", o.visible_only);
  o.held_out_only = f.get("held_out_only", o.held_out_only);
  o.static_gate = f.get("static_gate", o.static_gate);
  o.sanitize = f.get("sanitize", o.sanitize);
  o.seeds = f.get("seeds", o.seeds);
  o.arch = f.get("arch", o.arch);
  o.call_timeout = std::chrono::milliseconds(f.get("call_timeout_ms", int64_t{o.call_timeout.count()}));
  o.time_budget_s = f.get("time_budget_s", o.time_budget_s);
  o.target_rel_ci = f.get("target_rel_ci", o.target_rel_ci);
  o.torch_time = f.get("torch_time", o.torch_time);
  o.torch_device = f.get("torch_device", o.torch_device);
  o.device_data = f.get("device_data", o.device_data);
  o.profile = f.get("profile", o.profile);
  o.timing_stop_below = f.get("timing_stop_below", o.timing_stop_below);
  o.baseline_ms = f.get("baseline_ms", o.baseline_ms);
  o.baseline_gpu = f.get("baseline_gpu", o.baseline_gpu);
  o.profile_timeout = std::chrono::seconds(f.get("profile_timeout_s", int64_t{o.profile_timeout.count()}));
  if (j.is_object() && j.contains("seed")) o.seed = f.get("seed", uint64_t{0});
  KEVO_TRY(f.status());
  if (o.seeds < 1 || o.seeds > 1000) return fail("job options: seeds {} is out of range", o.seeds);
  if (!(o.time_budget_s > 0 && o.time_budget_s <= 3600)) return fail("job options: time_budget_s is out of range");
  if (!(o.timing_stop_below >= 0 && o.timing_stop_below <= 1e6))
    return fail("job options: timing_stop_below {} is out of range (0 to 1e6)", o.timing_stop_below);
  if (!(o.baseline_ms >= 0 && o.baseline_ms <= 3.6e6))
    return fail("job options: baseline_ms {} is out of range (0 to 3.6e6)", o.baseline_ms);
  if (o.profile_timeout.count() < 1 || o.profile_timeout.count() > 600)
    return fail("job options: profile_timeout_s {} is out of range (1 to 600)", o.profile_timeout.count());
  return o;
}

json JobPayload::to_json() const {
  return {{"kind", kind == EvalKind::kBaseline ? "baseline" : "candidate"},
          {"task", task},
          {"source_sha256", source_sha256},
          {"file_name", file_name},
          {"options", eval_options_json(opts)},
          {"fake", fake}};
}

Result<JobPayload> JobPayload::from_json(const json& j) {
  JsonFields f(j, "job");
  JobPayload p;
  const std::string kind = f.get("kind", std::string());
  if (kind != "baseline" && kind != "candidate") return fail("job: unknown kind '{}'", kind);
  p.kind = kind == "baseline" ? EvalKind::kBaseline : EvalKind::kCandidate;
  p.task = f.object("task");
  p.source_sha256 = f.get("source_sha256", std::string());
  p.file_name = f.get("file_name", std::string("candidate.cu"));
  p.fake = f.get("fake", false);
  auto o = eval_options_from(f.object("options"));
  KEVO_TRY(f.status());
  if (!o) return o.unexpected();
  p.opts = *o;
  if (p.kind == EvalKind::kCandidate && p.source_sha256.size() != 64) return fail("job: no candidate source");
  if (!safe_relative(p.file_name) || p.file_name.find('/') != std::string::npos)
    return fail("job: unsafe file name '{}'", p.file_name);
  return p;
}

json JobResult::to_json() const { return {{"verdict", verdict.to_json()}, {"busy_s", busy_s}, {"worker", worker}}; }

Result<JobResult> JobResult::from_json(const json& j) {
  JsonFields f(j, "job result");
  JobResult r;
  r.busy_s = f.get("busy_s", 0.0);
  r.worker = f.get("worker", std::string());
  auto v = verdict_from_json(f.object("verdict"));
  KEVO_TRY(f.status());
  if (!v) return v.unexpected();
  r.verdict = std::move(*v);
  return r;
}

}  // namespace kevo::evolve
