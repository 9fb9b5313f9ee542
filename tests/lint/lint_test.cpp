// Tests of `kevo task lint` (src/lint): every filter catches its deliberately degenerate fixture
// task (tests/lint/data), a clean fixture passes, the baseline check compares through its callback,
// suites parse and name real tasks, and every bundled task passes lint on its small configs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "check/oracle.h"
#include "check/tolerance_check.h"
#include "lint/lint.h"
#include "lint/suite.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;
using namespace kevo;

namespace {

const fs::path kData = fs::path(KEVO_SOURCE_DIR) / "tests" / "lint" / "data";
const fs::path kTasks = fs::path(KEVO_SOURCE_DIR) / "tasks";

#define REQUIRE_GXX() \
  if (!find_program("g++")) GTEST_SKIP() << "g++ not found: cannot compile references"

LintReport lint_dir(const fs::path& dir, const LintOptions& opts = {}) {
  auto task = load_task(dir);
  EXPECT_TRUE(task) << (task ? "" : task.error().message);
  if (!task) return {};
  auto ref = cpu_reference_outputs(*task);
  EXPECT_TRUE(ref) << (ref ? "" : ref.error().message);
  if (!ref) return {};
  auto rep = lint_outputs(*task, *ref, opts);
  EXPECT_TRUE(rep) << (rep ? "" : rep.error().message);
  return rep ? *rep : LintReport{};
}

Severity severity_of(const LintReport& r, const std::string& check) {
  for (const auto& f : r.findings)
    if (f.check == check) return f.severity;
  ADD_FAILURE() << "no finding for check " << check << " in\n" << format_report(r);
  return Severity::Pass;
}

std::string message_of(const LintReport& r, const std::string& check) {
  for (const auto& f : r.findings)
    if (f.check == check) return f.message;
  return "";
}

// ---------------------------------------------------------------------------------------------
TEST(Lint, CleanFixturePasses) {
  REQUIRE_GXX();
  LintReport r = lint_dir(kData / "clean");
  EXPECT_TRUE(r.ok()) << format_report(r);
  EXPECT_EQ(r.count(Severity::Warn), 0) << format_report(r);
  EXPECT_EQ(r.findings.size(), 5u);
  EXPECT_EQ(r.configs.size(), 3u);  // max_configs, smallest first
  EXPECT_EQ(r.configs.front(), "c");
}

TEST(Lint, TinyBandCatchesNearZeroOutputs) {
  REQUIRE_GXX();
  LintReport r = lint_dir(kData / "near_zero");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(severity_of(r, "tiny_band"), Severity::Fail) << format_report(r);
  EXPECT_EQ(severity_of(r, "nonfinite"), Severity::Pass);
}

TEST(Lint, SeedConstantCatchesIndexOnlyOutputs) {
  REQUIRE_GXX();
  LintReport r = lint_dir(kData / "index_only");
  EXPECT_EQ(severity_of(r, "seed_constant"), Severity::Fail) << format_report(r);
  EXPECT_EQ(severity_of(r, "input_unused"), Severity::Fail) << format_report(r);
  // sin(i) varies along the output: not a band, not uniform.
  EXPECT_EQ(severity_of(r, "tiny_band"), Severity::Pass) << format_report(r);
  EXPECT_EQ(severity_of(r, "uniform_axis"), Severity::Pass) << format_report(r);
}

TEST(Lint, UniformAxisCatchesBroadcastRows) {
  REQUIRE_GXX();
  LintReport r = lint_dir(kData / "broadcast_rows");
  EXPECT_EQ(severity_of(r, "uniform_axis"), Severity::Fail) << format_report(r);
  EXPECT_NE(message_of(r, "uniform_axis").find("axis 0"), std::string::npos) << format_report(r);
  EXPECT_EQ(message_of(r, "uniform_axis").find("axis 1 passes"), std::string::npos)
      << format_report(r);
  EXPECT_EQ(severity_of(r, "seed_constant"), Severity::Pass) << format_report(r);
  EXPECT_EQ(severity_of(r, "input_unused"), Severity::Pass) << format_report(r);
}

TEST(Lint, InputUnusedNamesTheIgnoredInput) {
  REQUIRE_GXX();
  LintReport r = lint_dir(kData / "unused_weight");
  EXPECT_EQ(severity_of(r, "input_unused"), Severity::Fail) << format_report(r);
  std::string m = message_of(r, "input_unused");
  EXPECT_NE(m.find("input 'w'"), std::string::npos) << m;
  EXPECT_EQ(m.find("input 'x' can"), std::string::npos) << m;
  EXPECT_EQ(severity_of(r, "tiny_band"), Severity::Pass) << format_report(r);
}

TEST(Lint, NonfiniteCatchesNanReference) {
  REQUIRE_GXX();
  LintReport r = lint_dir(kData / "nan_ref");
  EXPECT_EQ(severity_of(r, "nonfinite"), Severity::Fail) << format_report(r);
}

TEST(Lint, PropertyOnSomeConfigsIsAWarning) {
  // Outputs that are only degenerate on part of the configs: y = x * w, but 0 when N is odd.
  auto parsed = load_task(kData / "clean");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const Task& t = *parsed;
  OutputsFn fn =
      [&](const Config& c,
          const std::vector<HostTensor>& ins) -> Result<std::vector<std::vector<double>>> {
    const auto& x = ins[0];
    const auto n = static_cast<size_t>(c.dims.at("N"));
    std::vector<double> y(static_cast<size_t>(x.numel()));
    for (size_t i = 0; i < y.size(); ++i) y[i] = n % 2 ? 0.0 : x.at(i) * ins[1].at(i % n);
    return std::vector<std::vector<double>>{y};
  };
  auto r = lint_outputs(t, fn, {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(severity_of(*r, "tiny_band"), Severity::Warn) << format_report(*r);  // N=7, 33 odd
  EXPECT_TRUE(r->ok()) << format_report(*r);
}

TEST(Lint, ConfigSelection) {
  auto t = load_task(kData / "clean");
  ASSERT_TRUE(t) << t.error().message;
  LintOptions o;
  o.max_configs = 10;
  auto all = lint_configs(*t, o);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0]->name, "c");  // 14 + 7 elements... smallest first
  o.include_held_out = false;
  EXPECT_EQ(lint_configs(*t, o).size(), 3u);
  o.max_elements = 1;  // nothing fits: the smallest is still checked
  auto one = lint_configs(*t, o);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]->name, "c");
  o.configs = {"held", "a"};
  auto named = lint_configs(*t, o);
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0]->name, "held");
}

TEST(Lint, BaselineCheckComparesThroughTheCallback) {
  REQUIRE_GXX();
  auto t = load_task(kData / "clean");
  ASSERT_TRUE(t) << t.error().message;
  auto ref = cpu_reference_outputs(*t);
  ASSERT_TRUE(ref) << ref.error().message;
  auto same = lint_baseline(*t, *ref, *ref);
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_EQ(same->severity, Severity::Pass) << same->message;

  OutputsFn off =
      [&](const Config& c,
          const std::vector<HostTensor>& ins) -> Result<std::vector<std::vector<double>>> {
    auto r = (*ref)(c, ins);
    if (r && c.name == "a") (*r)[0][5] *= 1.01;  // one element 1% off, on one config
    return r;
  };
  auto bad = lint_baseline(*t, *ref, off);
  ASSERT_TRUE(bad) << bad.error().message;
  EXPECT_EQ(bad->severity, Severity::Fail);
  EXPECT_NE(bad->message.find("a: output 'y'"), std::string::npos) << bad->message;

  OutputsFn broken = [](const Config&, const std::vector<HostTensor>&)
      -> Result<std::vector<std::vector<double>>> { return fail("no GPU"); };
  auto crash = lint_baseline(*t, *ref, broken);
  ASSERT_TRUE(crash) << crash.error().message;
  EXPECT_EQ(crash->severity, Severity::Fail);
  EXPECT_NE(crash->message.find("no GPU"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
TEST(Suite, ParsesNamesAndComments) {
  auto s = parse_suite("# a comment\ngelu\n\n  softmax   # trailing\nrow_sum\n", "x.txt");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s, (std::vector<std::string>{"gelu", "softmax", "row_sum"}));
  auto dup = parse_suite("gelu\ngelu\n", "x.txt");
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message.find("x.txt:2"), std::string::npos) << dup.error().message;
  EXPECT_EQ(dup.error().code, ErrorCode::kParse);
  for (const char* bad : {"Gelu\n", "gelu softmax\n", "# nothing\n"}) {
    auto s = parse_suite(bad, "x.txt");
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code, ErrorCode::kParse) << s.error().message;
  }
  auto none = load_suite("no_such_suite_anywhere");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound) << none.error().message;
}

TEST(Suite, BundledSuitesNameBundledTasks) {
  auto tasks = bundled_tasks();
  std::set<std::string> all(tasks.begin(), tasks.end());
  EXPECT_GE(all.size(), 50u);
  auto quick = load_suite("quick");
  ASSERT_TRUE(quick) << quick.error().message;
  EXPECT_GE(quick->size(), 6u);
  EXPECT_LE(quick->size(), 12u);
  auto full = load_suite("full");
  ASSERT_TRUE(full) << full.error().message;
  for (const auto& n : *quick) EXPECT_TRUE(all.count(n)) << "quick names unknown task " << n;
  std::set<std::string> in_full(full->begin(), full->end());
  EXPECT_EQ(in_full, all) << "suites/full.txt must list every bundled task";
}

// ---------------------------------------------------------------------------------------------
// Every bundled task passes lint on its small configurations (the GPU run adds the baseline
// check). A failure here means the task is degenerate and must be fixed, not shipped.
class BundledTask : public testing::TestWithParam<std::string> {};

TEST_P(BundledTask, IsNotDegenerate) {
  REQUIRE_GXX();
  LintOptions o;
  o.max_elements = 1 << 17;
  o.max_configs = 2;
  o.seeds = 2;
  LintReport r = lint_dir(kTasks / GetParam(), o);
  EXPECT_TRUE(r.ok()) << format_report(r);
  if (r.count(Severity::Warn)) std::printf("%s", format_report(r).c_str());
}

// The evaluator's check at load (check/tolerance_check.h) on the configs it picks, with the CPU
// reference as the oracle: no bundled task is refused by it (the GPU run checks the same with the
// baselines as oracles).
TEST_P(BundledTask, ToleranceRejectsAConstantAtLoad) {
  REQUIRE_GXX();
  auto task = load_task(kTasks / GetParam());
  ASSERT_TRUE(task) << task.error().message;
  ASSERT_FALSE(tolerance_check_configs(*task).empty());
  auto ref = CpuReference::compile(*task);
  ASSERT_TRUE(ref) << ref.error().message;
  auto oracle = make_cpu_oracle(*task, std::move(*ref));
  auto st = check_tolerance_at_load(*task, *oracle, 1);  // the evaluator's draw
  EXPECT_TRUE(st) << st.error().message;
}

std::vector<std::string> task_params() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kTasks, ec))
    if (fs::exists(e.path() / "task.toml")) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Tasks, BundledTask, testing::ValuesIn(task_params()),
                         [](const auto& i) { return i.param; });

}  // namespace
