// GPU suite: every bundled baseline passes against its CPU reference, every adversarial kernel is
// rejected with the expected reason, every good kernel is accepted, and bundled baselines get an
// Nsight Compute profile (`--profile`). Runs the real `kevo eval`
// binary (checker + runner processes). Skips, visibly, on a machine without a GPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

#include "check/kernel_profile.h"
#include "check/profile_diagnosis.h"
#include "check/verdict_json.h"
#include "kernel_manifest.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Overridable so a build carried to another machine finds the tree it runs in.
fs::path env_or(const char* var, const char* def) {
  const char* v = getenv(var);
  return v && *v ? fs::path(v) : fs::path(def);
}
const fs::path kSrc = env_or("KEVO_HOME", KEVO_SOURCE_DIR);
const fs::path kKevo = env_or("KEVO_BUILD", KEVO_BINARY_DIR) / "bin" / "kevo";

bool have_gpu(std::string* why) {
  auto r = kevo::run_process({.argv = {"nvidia-smi", "-L"}, .timeout = std::chrono::seconds(30)});
  if (!r || !r->ok() || r->out.find("GPU") == std::string::npos) {
    *why = r ? "nvidia-smi found no GPU" : "nvidia-smi is not installed";
    return false;
  }
  return true;
}

#define REQUIRE_GPU()                                                        \
  do {                                                                       \
    std::string why_;                                                        \
    if (!have_gpu(&why_)) GTEST_SKIP() << "GPU test skipped: no GPU (" << why_ << ")"; \
  } while (0)

json eval(const std::vector<std::string>& args, std::string* raw) {
  std::vector<std::string> argv = {kKevo.string(), "eval", "--json", "--time-budget", "1",
                                   "--timeout", "10"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = kevo::run_process({.argv = argv, .timeout = std::chrono::seconds(400)});
  if (!r) return json{{"outcome", "harness_error"}, {"message", r.error().message}};
  *raw = r->out + r->err;
  json j = json::parse(r->out, nullptr, false);
  if (j.is_discarded()) return json{{"outcome", "harness_error"}, {"message", r->describe() + " " + r->err}};
  j["_exit"] = r->exit_code;
  return j;
}

using kevo::gpu_suite::KernelCase;

}  // namespace

namespace kevo::gpu_suite {
void PrintTo(const KernelCase& k, std::ostream* os) { *os << k.file << " on " << k.task; }
}  // namespace kevo::gpu_suite

namespace {

const fs::path kManifest = kSrc / "tests" / "gpu" / "kernels" / "manifest.toml";

// The manifest's cases; a manifest that does not read runs none, and Manifest.Reads says why.
std::vector<KernelCase> manifest_cases() {
  auto m = kevo::gpu_suite::load_kernel_manifest(kManifest);
  return m ? *m : std::vector<KernelCase>{};
}

std::vector<std::string> bundled_tasks() {
  std::vector<std::string> v;
  for (auto& e : fs::directory_iterator(kSrc / "tasks"))
    if (fs::exists(e.path() / "task.toml")) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

std::string case_name(const std::string& s) {
  std::string r;
  for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return r;
}

}  // namespace

class Baseline : public testing::TestWithParam<std::string> {};

TEST_P(Baseline, PassesAgainstCpuReference) {
  REQUIRE_GPU();
  std::string raw;
  // One seed (plus the wide draw) per config: the double-precision CPU reference on the main
  // configs dominates the run time, and the baseline is trusted code being validated, not a
  // candidate.
  json j = eval({(kSrc / "tasks" / GetParam()).string(), "--baseline", "--seeds", "1"}, &raw);
  EXPECT_EQ(j.value("outcome", ""), "pass") << j.value("message", "") << "\n" << raw;
  if (j.contains("timing")) {
    double ms = j["timing"]["candidate"]["median_ms"];
    RecordProperty("baseline_ms", std::to_string(ms));
    std::printf("BASELINE %s %.4f ms\n", GetParam().c_str(), ms);
  }
}
INSTANTIATE_TEST_SUITE_P(Tasks, Baseline, testing::ValuesIn(bundled_tasks()),
                         [](const auto& i) { return case_name(i.param); });

// `kevo eval --baseline --profile` on the first 12 bundled tasks (KEVO_PROFILE_TASKS, space-
// separated, picks others): a profile with figures, read back and diagnosed. Without ncu or
// without counter permission the profile says so, and the test skips visibly.
std::vector<std::string> profiled_tasks() {
  std::vector<std::string> v;
  if (const char* e = getenv("KEVO_PROFILE_TASKS"); e && *e) {
    std::istringstream in(e);
    for (std::string t; in >> t;) v.push_back(t);
    return v;
  }
  v = bundled_tasks();
  if (v.size() > 12) v.resize(12);
  return v;
}

class Profiled : public testing::TestWithParam<std::string> {};

TEST_P(Profiled, BaselineGetsAProfile) {
  REQUIRE_GPU();
  std::string raw;
  json j = eval({(kSrc / "tasks" / GetParam()).string(), "--baseline", "--seeds", "1", "--profile"}, &raw);
  ASSERT_EQ(j.value("outcome", ""), "pass") << raw;
  ASSERT_TRUE(j.contains("profile")) << raw;
  auto p = kevo::profile_from_json(j["profile"]);
  ASSERT_TRUE(p) << p.error().message;
  if (p->status == kevo::ProfileStatus::kNoNcu || p->status == kevo::ProfileStatus::kNoPermission)
    GTEST_SKIP() << "not profiled: " << p->note;
  ASSERT_EQ(p->status, kevo::ProfileStatus::kProfiled) << p->note << "\n" << raw;
  ASSERT_FALSE(p->kernels.empty());
  const auto& k = p->kernels.front();
  EXPECT_GT(k.duration_us, 0);
  EXPECT_GE(k.dram_pct, 0);
  EXPECT_GE(k.sm_pct, 0);
  EXPECT_GT(k.registers_per_thread, 0);
  EXPECT_GT(k.block_size, 0);
  std::printf("PROFILE %s %s\nDIAGNOSIS %s %s\n", GetParam().c_str(), j["profile"].dump().c_str(), GetParam().c_str(),
              kevo::diagnose_profile(*p).c_str());
  // What the profile cost, and where the kernel sits against the device's measured ceilings (the
  // checker's SOL line: floor_ms from the task's bytes or flops over the ceiling kevo measured).
  const json t = j.value("timing", json::object()), ph = j.value("phases", json::object());
  std::printf("PROFILE_COST %s profile %.1f s of an eval of %.1f s | SOL %s-bound floor %.4f ms, median %.4f ms: "
              "%.0f%% of the measured ceiling\n",
              GetParam().c_str(), ph.value("profile", 0.0), j.value("seconds", 0.0), t.value("bound", "?").c_str(),
              t.value("floor_ms", 0.0), t.value("candidate", json::object()).value("median_ms", 0.0),
              100 * t.value("sol_fraction", 0.0));
}
INSTANTIATE_TEST_SUITE_P(Tasks, Profiled, testing::ValuesIn(profiled_tasks()),
                         [](const auto& i) { return case_name(i.param); });

TEST(Manifest, Reads) {
  auto m = kevo::gpu_suite::load_kernel_manifest(kManifest);
  ASSERT_TRUE(m) << m.error().message;
}

class Kernel : public testing::TestWithParam<KernelCase> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Kernel);

TEST_P(Kernel, GetsTheExpectedVerdict) {
  REQUIRE_GPU();
  const KernelCase& k = GetParam();
  std::vector<std::string> args = {(kSrc / "tasks" / k.task).string(),
                                   (kSrc / "tests" / "gpu" / "kernels" / k.file).string()};
  if (k.no_static) args.push_back("--no-static-gate");
  std::string raw;
  json j = eval(args, &raw);
  std::string outcome = j.value("outcome", ""), reason = j.value("reason", "");
  std::printf("VERDICT %s -> %s [%s] %s\n", k.file.c_str(), outcome.c_str(), reason.c_str(),
              j.value("message", "").substr(0, 300).c_str());
  // The verdict's codes, read back from its JSON text (harness_error and the like read as none).
  EXPECT_EQ(kevo::parse_outcome(outcome), k.expect)
      << "expected " << kevo::outcome_name(k.expect) << ", got '" << outcome << "'\n" << raw;
  if (k.reason) {
    EXPECT_TRUE(k.accepts(reason)) << "expected reason '" << k.reason_text() << "'"
                                   << (k.also.empty() ? "" : " (or one of its alternatives)") << ", got '" << reason
                                   << "'\n" << raw;
  }
  if (j.contains("timing") && j["timing"].contains("speedup")) {
    double sp = j["timing"]["speedup"]["value"].get<double>();
    std::printf("SPEEDUP %s %.3fx\n", k.file.c_str(), sp);
    if (k.max_speedup > 0) {
      EXPECT_LE(sp, k.max_speedup) << raw;
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Manifest, Kernel, testing::ValuesIn(manifest_cases()),
                         [](const auto& i) { return case_name(i.param.file + (i.param.no_static ? "_runtime" : "")); });

TEST(Sanitize, CleanKernelPassesAllThreeTools) {
  REQUIRE_GPU();
  std::string raw;
  json j = eval({(kSrc / "tasks" / "softmax").string(),
                 (kSrc / "tests/gpu/kernels/good/softmax_online.cu").string(), "--sanitize", "--seeds", "1",
                 "--visible-only", "--no-time"},
                &raw);
  EXPECT_EQ(j.value("outcome", ""), "pass") << raw;
  std::string s = j.value("sanitizer", "");
  std::printf("SANITIZE softmax_online: %s\n", s.c_str());
  for (const char* tool : {"memcheck", "initcheck"})
    EXPECT_NE(s.find(std::string(tool) + ": ERROR SUMMARY: 0 errors"), std::string::npos) << s;
  EXPECT_NE(s.find("racecheck: RACECHECK SUMMARY: 0 hazards displayed (0 errors"), std::string::npos) << s;
}
