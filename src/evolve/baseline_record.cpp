#include "evolve/baseline_record.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <mutex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "check/verdict_json.h"
#include "run/runner_client.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/subprocess.h"

namespace kevo::evolve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Result<std::string> file_sha(const fs::path& p) {
  auto bytes = read_file(p);
  if (!bytes) return bytes.unexpected();
  return sha256_hex(*bytes);
}

// kevo by content: this executable and the runner it starts (hashed once per process).
Result<std::string> kevo_identity() {
  static std::once_flag once;
  static Result<std::string> id = fail("not computed");
  std::call_once(once, [] {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    auto runner = find_runner();
    if (ec || !runner) {
      id = fail("cannot find the kevo executables to identify this kevo");
      return;
    }
    auto a = file_sha(self), b = file_sha(*runner);
    id = a && b ? Result<std::string>(sha256_hex(*a + *b)) : fail("cannot read the kevo executables");
  });
  return id;
}

Result<std::string> gpu_models() {
  auto smi = find_program("nvidia-smi");
  if (!smi) return fail("no nvidia-smi");
  RunOptions ro;
  ro.argv = {*smi, "--query-gpu=name,driver_version", "--format=csv,noheader"};
  ro.timeout = std::chrono::seconds(20);
  auto r = run_process(ro);
  if (!r || !r->ok()) return fail("nvidia-smi failed");
  std::set<std::string> models;
  std::stringstream ss(r->out);
  for (std::string line; std::getline(ss, line);)
    if (auto c = line.find(", "); c != std::string::npos)
      models.insert(fmt::format("{} (driver {})", line.substr(0, c), line.substr(c + 2)));
  if (models.empty()) return fail("nvidia-smi lists no GPU");
  return fmt::format("{}", fmt::join(models, "; "));
}

Result<std::string> task_files_sha(const Task& task) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(task.dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == "__pycache__" || name.front() == '.')) it.disable_recursion_pending();
    else if (it->is_regular_file()) files.push_back(it->path());
  }
  if (ec) return fail("task {}: {}", task.dir.string(), ec.message());
  std::sort(files.begin(), files.end());
  Sha256 h;
  for (const auto& f : files) {
    auto s = file_sha(f);
    if (!s) return s.unexpected();
    h.add(fs::relative(f, task.dir).string()).add(*s);
  }
  return h.hex();
}

}  // namespace

json BaselineKey::to_json() const {
  return {{"task_sha256", task_sha256}, {"gpus", gpus}, {"toolkit", toolkit}, {"kevo_sha256", kevo}};
}

std::string BaselineKey::digest() const {
  Sha256 h;
  h.add(task_sha256).add(gpus).add(toolkit).add(kevo);
  return h.hex();
}

Result<BaselineKey> baseline_key(const Task& task, const std::string& toolkit) {
  if (toolkit.empty()) return fail("the CUDA toolkit's version is unknown");
  BaselineKey k;
  k.toolkit = toolkit;
  auto t = task_files_sha(task);
  if (!t) return t.unexpected();
  k.task_sha256 = *t;
  auto g = gpu_models();
  if (!g) return g.unexpected();
  k.gpus = *g;
  auto id = kevo_identity();
  if (!id) return id.unexpected();
  k.kevo = *id;
  return k;
}

fs::path baseline_record_dir() { return cache_dir() / "baselines"; }

std::optional<BaselineRecord> load_baseline_record(const BaselineKey& key, const fs::path& dir) {
  auto text = read_file(dir / (key.digest() + ".json"));
  if (!text) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  // The stored key must be this one (a digest collision or a hand-edited file is not a match).
  if (!j.is_object() || j.value("key", json()) != key.to_json() || !j.contains("summary") ||
      !j["summary"].is_object() || parse_outcome(j["summary"].value("outcome", "")) != Outcome::Pass)
    return std::nullopt;
  return BaselineRecord{j["summary"], j.value("verified_at", 0.0)};
}

Status save_baseline_record(const BaselineKey& key, const json& summary, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("cannot create {}: {}", dir.string(), ec.message());
  json j = {{"key", key.to_json()}, {"summary", summary},
            {"verified_at", static_cast<double>(std::time(nullptr))}};
  return write_file_atomic(dir / (key.digest() + ".json"), j.dump(2));
}

}  // namespace kevo::evolve
