// The checker's decisions, tested without a GPU: kevo::evaluate runs as usual (real nvcc, real
// processes, the real protocol) but against fake_runner.py, a CPU stand-in for kevo-runner whose
// behaviour per candidate is set by a marker string compiled into the candidate library.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "check/evaluator.h"
#include "check/verdict_json.h"
#include "run/runner_pool.h"
#include "run/warm_runners.h"
#include "support/runner_pool.h"
#include "support/noisy_host.h"
#include "util/fs.h"
#include "util/subprocess.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace kevo;
using ::testing::HasSubstr;

// Every scratch file of this test binary lives in one folder removed at exit (support/temp_dir.h).
static std::filesystem::path scratch() {
  static const std::filesystem::path p = kevo::test::temp_dir_until_exit("kevo-checker-test");
  return p;
}

namespace {

const fs::path kDir = fs::path(KEVO_SOURCE_DIR) / "tests" / "check" / "fake_runner";

struct Case {
  std::string behaviour;
  Outcome outcome;
  Reason reason;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.behaviour; }

void use_fake_runner() {
  setenv("KEVO_RUNNER", (kDir / "fake_runner.py").c_str(), 1);
  setenv("KEVO_CACHE_DIR", (scratch() / "kevo-fake-runner-cache").c_str(), 1);
}

// Options for evaluating scale2's baseline marked with a fake runner behaviour.
EvalOptions fake_candidate(const std::string& base, const std::string& behaviour, int seeds, uint64_t seed) {
  fs::path cand = scratch() / ("fake_" + behaviour + ".cu");
  std::ofstream(cand) << base << "\n__attribute__((used)) static const char kevo_fake[] = \"fake-runner: " << behaviour
                      << "\";\n";
  EvalOptions o;
  o.candidate = cand;
  o.seeds = seeds;
  o.seed = seed;
  o.time_budget_s = 0.5;
  o.call_timeout = std::chrono::milliseconds(3000);
  return o;
}

// scale2's own baseline as the candidate: one seed, a short timing.
EvalOptions scale2_baseline_once() {
  EvalOptions o;
  o.candidate = kDir / "scale2" / "baseline.cu";
  o.seeds = 1;
  o.seed = 1;
  o.time_budget_s = 0.2;
  return o;
}

// The fake runner with scale2's task and baseline source loaded (skipped without nvcc or python3).
class FakeScale2 : public testing::Test {
 protected:
  void SetUp() override {
    if (!find_program("nvcc") || !find_program("python3")) GTEST_SKIP() << "nvcc or python3 missing";
    use_fake_runner();
    auto t = load_task(kDir / "scale2");
    ASSERT_TRUE(t) << t.error().message;
    task_ = std::move(*t);
    auto b = read_file(kDir / "scale2" / "baseline.cu");
    ASSERT_TRUE(b);
    base_ = std::move(*b);
  }
  Task task_;
  std::string base_;
};
using FakeRunnerTiming = FakeScale2;
using FakeRunnerFaults = FakeScale2;

class FakeRunner : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!find_program("nvcc")) GTEST_SKIP() << "nvcc not found: checker tests with the fake runner skipped";
    if (!find_program("python3")) GTEST_SKIP() << "python3 not found";
    use_fake_runner();
  }
};

}  // namespace

using kevo::testing_support::too_noisy;  // a host too loaded for the checker's clock: said visibly

TEST_P(FakeRunner, Verdict) {
  const Case& c = GetParam();
  auto task = load_task(kDir / "scale2");
  ASSERT_TRUE(task) << task.error().message;
  auto base = read_file(kDir / "scale2" / "baseline.cu");
  ASSERT_TRUE(base);
  EvalOptions o = fake_candidate(*base, c.behaviour, 2, 42);
  Verdict v = evaluate(*task, o);
  if (too_noisy(v)) {
    if (c.outcome == Outcome::Pass) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
    return;
  }
  EXPECT_EQ(outcome_name(v.outcome), std::string(outcome_name(c.outcome))) << v.to_text();
  EXPECT_EQ(v.reason, c.reason) << "expected reason '" << to_string(c.reason) << "'\n" << v.to_text();
  // Ended after replying: found when the oracle's runner could not open its buffers.
  if (c.behaviour == "exit_after") {
    EXPECT_NE(v.message.find("(after the call)"), std::string::npos) << v.to_text();
  }
  if (c.outcome == Outcome::Pass) {
    ASSERT_TRUE(v.timing);
    EXPECT_NEAR(v.timing->speedup.value, 2.0, 0.05);  // fake times: baseline 20 ms, candidate 10 ms
    // The candidate's figure was confirmed by the checker's own clock (the fake sleeps what it reports).
    EXPECT_EQ(v.timing->outside.verdict, OutsideVerdict::Agree) << v.to_text();
    EXPECT_NEAR(v.timing->outside.outside_ms, 10.0, 2.5) << v.to_text();
    EXPECT_EQ(v.configs.size(), 4u);                   // held-out included by default
    // Where the time went: the phases that ran, in order, adding up to the verdict's seconds.
    std::vector<EvalPhase> phases;
    double sum = 0;
    for (const auto& [p, s] : v.phases) phases.push_back(p), sum += s;
    EXPECT_EQ(phases, (std::vector<EvalPhase>{EvalPhase::kSetup, EvalPhase::kCorrectness, EvalPhase::kTiming}));
    EXPECT_NEAR(sum, v.seconds, 0.05);
    for (const auto& cc : v.configs) EXPECT_GT(cc.seconds, 0) << cc.config;
    EXPECT_NE(v.to_text().find("seconds   setup"), std::string::npos) << v.to_text();
    // Device data (the default): inputs drawn and outputs compared by the runners.
    for (const char* w : {"oracle", "candidate", "compare", "timing_session"})
      EXPECT_TRUE(v.work.count(w)) << w << "\n" << v.to_text();
    EXPECT_FALSE(v.work.count("arena")) << v.to_text();
    EXPECT_TRUE(v.to_json()["work_seconds"].contains("oracle"));
    // The host path reaches the same verdict, with the checker drawing and comparing.
    o.device_data = false;
    Verdict h = evaluate(*task, o);
    if (too_noisy(h)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
    EXPECT_EQ(h.outcome, Outcome::Pass) << h.to_text();
    for (const char* w : {"inputs", "oracle", "arena", "candidate", "compare", "timing_session"})
      EXPECT_TRUE(h.work.count(w)) << w << "\n" << h.to_text();
  } else {
    ASSERT_FALSE(v.phases.empty());  // a failed verdict still says where its time went
    EXPECT_EQ(v.phases.front().first, EvalPhase::kSetup);
    // The host data path (the checker draws inputs and compares) decides the same way.
    o.device_data = false;
    Verdict h = evaluate(*task, o);
    if (too_noisy(h)) return;
    EXPECT_EQ(outcome_name(h.outcome), std::string(outcome_name(c.outcome))) << h.to_text();
    EXPECT_EQ(h.reason, c.reason) << h.to_text();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Checker, FakeRunner,
    testing::Values(Case{"pass", Outcome::Pass, Reason::kNone},
                    Case{"noop", Outcome::Incorrect, Reason::kUnwritten},
                    Case{"partial", Outcome::Incorrect, Reason::kUnwritten},
                    Case{"wrong", Outcome::Incorrect, Reason::kMismatch},
                    Case{"nondet", Outcome::Incorrect, Reason::kMismatch},
                    Case{"mutate", Outcome::Incorrect, Reason::kInputModified},
                    Case{"cache", Outcome::Incorrect, Reason::kMismatch},
                    Case{"timed_cache", Outcome::Incorrect, Reason::kTimedOutput},
                    Case{"forged", Outcome::Unsafe, Reason::kTimingForged},
                    Case{"state", Outcome::Unsafe, Reason::kDeviceState},
                    Case{"foreign_stream", Outcome::Unsafe, Reason::kForeignStream},
                    Case{"thread", Outcome::Unsafe, Reason::kHostThread},
                    Case{"load_thread", Outcome::Unsafe, Reason::kHostThread},
                    Case{"hidden", Outcome::Unsafe, Reason::kHiddenWork},
                    Case{"garbled", Outcome::Unsafe, Reason::kGuard},  // a reply not of the protocol's types
                    Case{"too_fast", Outcome::Unsafe, Reason::kBelowSol},
                    Case{"rc", Outcome::Crash, Reason::kReturnedError},
                    Case{"segfault", Outcome::Crash, Reason::kSignal},
                    Case{"abort", Outcome::Crash, Reason::kAbort},
                    Case{"exit_zero", Outcome::Crash, Reason::kExit},
                    Case{"exit_after", Outcome::Crash, Reason::kExit},
                    Case{"illegal_address", Outcome::Crash, Reason::kIllegalAddress},
                    Case{"launch_failure", Outcome::Crash, Reason::kCudaError},
                    Case{"old_fatal", Outcome::Crash, Reason::kCudaError},  // no number: not read from the text
                    Case{"hang", Outcome::Timeout, Reason::kTimeout}),
    [](const auto& i) { return i.param.behaviour; });

// A batch tells its runners nothing about any other: each batch's inputs are drawn under a key of
// its own (so the candidate cannot draw a later batch's inputs in an untimed one and bank the
// results), the candidate's and the baseline's batch on the same call numbers share it (the same
// inputs), and it does not follow from the seed (another evaluation with the same seed differs).
TEST_F(FakeRunnerTiming, EveryBatchDrawsUnderAKeyOfItsOwn) {
  const fs::path log = scratch() / "fake-runner-batches.txt";
  std::map<uint64_t, std::set<uint64_t>> keys_by_call;  // first call -> keys its batches drew under
  std::set<uint64_t> first_eval;
  for (int eval = 0; eval < 2; ++eval) {
    fs::remove(log);
    setenv("KEVO_FAKE_RUNNER_BATCHES", log.c_str(), 1);
    Verdict v = evaluate(task_, fake_candidate(base_, "pass", 1, 5));
    unsetenv("KEVO_FAKE_RUNNER_BATCHES");
    ASSERT_TRUE(v.timing) << v.to_text();
    auto text = read_file(log);
    ASSERT_TRUE(text);
    std::istringstream in(*text);
    std::map<uint64_t, std::set<uint64_t>> by_call;
    std::string slot;
    for (uint64_t first = 0, key = 0; in >> slot >> first >> key;) by_call[first].insert(key);
    ASSERT_GE(by_call.size(), 4u) << *text;
    std::set<uint64_t> keys;
    for (const auto& [first, ks] : by_call) {
      EXPECT_EQ(ks.size(), 1u) << "the series of one round drew under different keys: " << *text;
      keys.insert(*ks.begin());
    }
    EXPECT_EQ(keys.size(), by_call.size()) << "two batches drew under one key: " << *text;
    if (eval == 0) first_eval = keys;
    else
      for (uint64_t k : keys) EXPECT_EQ(first_eval.count(k), 0u) << "a key came back in another evaluation";
  }
  fs::remove(log);
}

// A candidate's runner that names a buffer outside the allocation it exported (as one with a slab
// could, by any offset) gets nothing compared: the oracle's runner refuses to read it, and the
// verdict is the candidate's (unsafe), not the checker's infra error.
TEST_F(FakeRunnerTiming, ABufferNamedOutsideItsAllocationIsUnsafe) {
  Verdict v = evaluate(task_, fake_candidate(base_, "bad_offset", 1, 3));
  EXPECT_EQ(v.outcome, Outcome::Unsafe) << v.to_text();
  EXPECT_EQ(v.reason, Reason::kGuard) << v.to_text();
  EXPECT_NE(v.message.find("outside its own allocation"), std::string::npos) << v.to_text();
  EXPECT_NE(v.message.find("at offset 1099511627776"), std::string::npos) << v.to_text();
}

// Timing batches one call and 2k calls first, and where the checker's clock then disagrees with the
// candidate's events, times again with k and 2k calls: an honest kernel that one-call batches
// misread passes on the second session's figures; a forger is caught by both.
TEST_F(FakeRunnerTiming, OneCallMisreadsAreRetimedAndForgersStillCaught) {
  auto retimed = [](const Verdict& v) {
    return std::any_of(v.flags.begin(), v.flags.end(), [](const Flag& f) { return f.reason == Reason::kTimingRetimed; });
  };
  auto floored = [](const Verdict& v) {
    return std::any_of(v.flags.begin(), v.flags.end(), [](const Flag& f) { return f.reason == Reason::kTimingFloored; });
  };
  Verdict honest = evaluate(task_, fake_candidate(base_, "one_call_cheap", 1, 5));
  if (too_noisy(honest)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  EXPECT_EQ(honest.outcome, Outcome::Pass) << honest.to_text();
  ASSERT_TRUE(honest.timing);
  if (retimed(honest)) {
    EXPECT_EQ(honest.timing->small_calls, honest.timing->batch_calls) << "the figures are the k/2k session's";
    EXPECT_NEAR(honest.timing->speedup.value, 2.0, 0.05);
  } else if (floored(honest)) {
    // A loaded host widens the clock's margin past the 1 ms misread: the checker cannot tell it from
    // noise, so it credits no more than its own clock allows (below the events' 2.0x).
    std::printf("NOTE: the checker's clock was too noisy to see the misread; the figure was floored\n");
    EXPECT_LT(honest.timing->speedup.value, 2.0) << honest.to_text();
  } else {
    // Noisier still: the events' figure lies inside the clock's margin, so the clock agrees with it
    // and the candidate's own 2.0x stands (never more).
    std::printf("NOTE: the misread lies inside the checker's clock margin; the events' figure stands\n");
    EXPECT_THAT(honest.to_text(), HasSubstr("allowed"));
    EXPECT_LE(honest.timing->speedup.value, 2.0 + 1e-9) << honest.to_text();
  }
  Verdict pass = evaluate(task_, fake_candidate(base_, "pass", 1, 5));
  if (too_noisy(pass)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  EXPECT_EQ(pass.outcome, Outcome::Pass) << pass.to_text();
  EXPECT_FALSE(retimed(pass)) << "an agreeing first session decides\n" << pass.to_text();
  ASSERT_TRUE(pass.timing);
  EXPECT_EQ(pass.timing->small_calls, 1);
  Verdict forged = evaluate(task_, fake_candidate(base_, "forged", 1, 5));
  if (too_noisy(forged)) return;
  EXPECT_EQ(forged.reason, Reason::kTimingForged) << forged.to_text();
  EXPECT_TRUE(retimed(forged)) << forged.to_text();
}

// A baseline that runs slower than the run measured it (here: 20 ms a call against the run's 10 ms)
// gives the candidate nothing: the 2x is credited against the run's figure (1x) and flagged. The
// run's figure holds only on the kind of GPU it was measured on; a slower baseline with a speedup
// below 1 is not the candidate's gain either way.
TEST_F(FakeRunnerTiming, ASlowedBaselineIsCreditedAgainstTheRunsFigure) {
  auto slowed = [](const Verdict& v) {
    return std::any_of(v.flags.begin(), v.flags.end(), [](const Flag& f) { return f.reason == Reason::kBaselineSlowed; });
  };
  EvalOptions o = fake_candidate(base_, "pass", 1, 5);
  o.baseline_ms = 10.0;
  o.baseline_gpu = "Fake GPU";
  Verdict v = evaluate(task_, o);
  if (too_noisy(v)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  EXPECT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  ASSERT_TRUE(v.timing);
  EXPECT_TRUE(slowed(v)) << v.to_text();
  EXPECT_NEAR(v.timing->speedup.value, 1.0, 0.03) << v.to_text();
  EXPECT_LE(v.timing->speedup.lo, v.timing->speedup.value);
  EXPECT_THAT(v.to_text(), HasSubstr("baseline_slowed"));
  o.baseline_gpu = "Another GPU";  // measured elsewhere: this session's own baseline decides
  Verdict other = evaluate(task_, o);
  if (too_noisy(other)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_TRUE(other.timing);
  EXPECT_FALSE(slowed(other)) << other.to_text();
  EXPECT_NEAR(other.timing->speedup.value, 2.0, 0.05);
  o.baseline_gpu = "Fake GPU";
  o.baseline_ms = 19.0;  // within 15% of the session's 20 ms: noise, not a slowed baseline
  Verdict near = evaluate(task_, o);
  if (too_noisy(near)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_TRUE(near.timing);
  EXPECT_FALSE(slowed(near)) << near.to_text();
}

// A batch that stalls (40 ms over its size's median) is not fitted: its round is timed again, and
// the session still ends at its minimum rounds with the stall in none of the figures.
TEST_F(FakeRunnerTiming, AStalledRoundIsTimedAgain) {
  Verdict v = evaluate(task_, fake_candidate(base_, "stall_once", 1, 5));
  if (too_noisy(v)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  EXPECT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  ASSERT_TRUE(v.timing);
  EXPECT_GE(v.timing->retried_rounds, 1) << v.to_json()["timing"].dump();
  EXPECT_EQ(v.to_json()["timing"]["outside_clock"]["retried_rounds"], v.timing->retried_rounds);
  EXPECT_THAT(v.to_text(), HasSubstr("dropped for a stall")) << v.to_json()["timing"].dump();
  // Every batch left in the fit is within the stall margin of its size's median.
  for (const auto* walls : {&v.timing->walls_candidate, &v.timing->walls_baseline, &v.timing->walls_around}) {
    std::map<int, std::vector<double>> by_size;
    for (const auto& w : *walls) by_size[w.calls].push_back(w.wall_ms);
    for (auto& [calls, x] : by_size) {
      std::sort(x.begin(), x.end());
      EXPECT_LT(x.back() - x[x.size() / 2], 30.0) << "a " << calls << "-call batch kept its stall\n" << v.to_text();
    }
  }
  EXPECT_NEAR(v.timing->speedup.value, 2.0, 0.05);
}

// Racing: against a line it is clearly below (its whole interval under 1.0x), an honest slower
// candidate's session ends after 4 rounds, flagged, with the outside clock agreeing; a faster one
// raced against the same line, and the slower one not raced, run to the stopping rule.
TEST_F(FakeRunnerTiming, AClearlySlowerCandidateStopsEarlyWhenRaced) {
  EvalOptions o = fake_candidate(base_, "slow", 1, 5);
  o.timing_stop_below = 1.0;
  Verdict v = evaluate(task_, o);
  if (too_noisy(v)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  EXPECT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  ASSERT_TRUE(v.timing);
  EXPECT_EQ(v.timing->rounds, 4) << v.to_text();
  EXPECT_EQ(v.timing->stopped_below, 1.0);
  EXPECT_NEAR(v.timing->speedup.value, 20.0 / 30.0, 0.02);
  EXPECT_LT(v.timing->speedup.hi, 1.0);
  EXPECT_EQ(v.timing->outside.verdict, OutsideVerdict::Agree);
  EXPECT_TRUE(std::any_of(v.flags.begin(), v.flags.end(), [](const Flag& f) { return f.reason == Reason::kTimingRaced; }));
  EXPECT_THAT(v.to_text(), HasSubstr("raced: clearly below 1.000x"));
  auto back = verdict_from_json(v.to_json());
  ASSERT_TRUE(back && back->timing) << (back ? "" : back.error().message);
  EXPECT_EQ(back->timing->stopped_below, 1.0);

  EvalOptions fast = fake_candidate(base_, "pass", 1, 5);
  fast.timing_stop_below = 1.0;
  Verdict f = evaluate(task_, fast);
  if (too_noisy(f)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_TRUE(f.timing);
  EXPECT_GE(f.timing->rounds, 6) << f.to_text();
  EXPECT_EQ(f.timing->stopped_below, 0.0);
  EXPECT_FALSE(std::any_of(f.flags.begin(), f.flags.end(), [](const Flag& x) { return x.reason == Reason::kTimingRaced; }));

  Verdict unraced = evaluate(task_, fake_candidate(base_, "slow", 1, 5));
  if (too_noisy(unraced)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_TRUE(unraced.timing);
  EXPECT_GE(unraced.timing->rounds, 6) << unraced.to_text();
  EXPECT_EQ(unraced.timing->stopped_below, 0.0);
}

// A stall dropped in a first session that is then timed again (as a loaded CI host's noisy
// one-call batches cause) still counts: the report gives every session's retries.
TEST_F(FakeRunnerTiming, AStallInARetimedSessionIsStillReported) {
  Verdict v = evaluate(task_, fake_candidate(base_, "stall_then_retimed", 1, 5));
  if (too_noisy(v)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  const bool retimed =
      std::any_of(v.flags.begin(), v.flags.end(), [](const Flag& f) { return f.reason == Reason::kTimingRetimed; });
  if (!retimed) GTEST_SKIP() << "the host's noise let the one-call session agree: nothing was timed again\n" << v.to_text();
  EXPECT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  ASSERT_TRUE(v.timing);
  EXPECT_EQ(v.timing->small_calls, v.timing->batch_calls) << "the figures are the k/2k session's\n" << v.to_text();
  EXPECT_GE(v.timing->retried_rounds, 1) << v.to_text();
  EXPECT_THAT(v.to_text(), HasSubstr("dropped for a stall"));
}

// A runner killed in the middle of a call (the fake dies of SIGSEGV there) is classified, and the
// next candidate, evaluated by the same checker process, gets fresh runners and its own verdict.
TEST_F(FakeRunnerFaults, ARunnerKilledMidCallLeavesTheNextCandidateUnaffected) {
  for (const auto& [behaviour, outcome] : {std::pair{"segfault", Outcome::Crash}, std::pair{"pass", Outcome::Pass}}) {
    Verdict v = evaluate(task_, fake_candidate(base_, behaviour, 1, 7));
    EXPECT_EQ(outcome_name(v.outcome), std::string(outcome_name(outcome))) << behaviour << "\n" << v.to_text();
    if (outcome == Outcome::Crash) {
      EXPECT_EQ(v.reason, Reason::kSignal) << v.to_text();
    }
  }
}

// A task whose outputs lie inside its own absolute band (scale2 on inputs of 1e-6) is refused before
// the candidate's runner loads anything: the constant of the reference's mean would pass it. The
// same task with a tolerance scaled to its outputs evaluates as before.
TEST_F(FakeRunnerFaults, ATaskWhoseTolerancePassesAConstantIsRefused) {
  const fs::path dir = scratch() / "tiny_scale2";
  fs::create_directories(dir);
  for (const char* f : {"baseline.cu", "reference.cpp"}) fs::copy_file(kDir / "scale2" / f, dir / f);
  auto toml = read_file(kDir / "scale2" / "task.toml");
  ASSERT_TRUE(toml);
  std::string text = *toml;
  const std::string shape = "shape = [\"N\"]\n";
  text.insert(text.find(shape) + shape.size(), "init = { dist = \"normal\", std = 1e-6 }\n");
  for (const std::string tolerance : {"", "\n[tolerance]\nf32 = { atol = 1e-9, rtol = 1e-4 }\n"}) {
    std::ofstream(dir / "task.toml") << text << tolerance;
    auto task = load_task(dir);
    ASSERT_TRUE(task) << task.error().message;
    Verdict v = evaluate(*task, fake_candidate(base_, "pass", 1, 3));
    if (tolerance.empty()) {
      EXPECT_EQ(v.outcome, Outcome::InfraError) << v.to_text();
      EXPECT_EQ(v.reason, Reason::kTask) << v.to_text();
      EXPECT_THAT(v.message, HasSubstr("config 'tiny': output 'y' passes as the constant")) << v.to_text();
      EXPECT_EQ(v.work.count("candidate"), 0u) << "nothing of the candidate ran\n" << v.to_text();
    } else if (!too_noisy(v)) {
      EXPECT_EQ(v.outcome, Outcome::Pass) << v.to_text();
    }
  }
  fs::remove_all(dir);
}

// Latency: once the device's ceilings are cached, an eval starts exactly two runner processes (the
// candidate's and the oracle's); reading the ceilings must not cost a third CUDA context.
TEST(FakeRunnerLatency, TwoRunnersPerEvalOnceTheDeviceIsKnown) {
  if (!find_program("nvcc") || !find_program("python3")) GTEST_SKIP() << "nvcc or python3 missing";
  setenv("KEVO_RUNNER", (kDir / "fake_runner.py").c_str(), 1);
  setenv("KEVO_CACHE_DIR", (scratch() / "kevo-fake-runner-latency").c_str(), 1);
  fs::path log = scratch() / "fake-runner-starts.txt";
  auto task = load_task(kDir / "scale2");
  ASSERT_TRUE(task);
  EvalOptions o = scale2_baseline_once();
  Verdict first = evaluate(*task, o);  // measures the (fake) device's ceilings once
  if (too_noisy(first)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_EQ(first.outcome, Outcome::Pass) << first.to_text();
  fs::remove(log);
  setenv("KEVO_FAKE_RUNNER_LOG", log.c_str(), 1);
  Verdict v = evaluate(*task, o);
  unsetenv("KEVO_FAKE_RUNNER_LOG");
  if (too_noisy(v)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  auto text = read_file(log);
  ASSERT_TRUE(text);
  EXPECT_EQ(std::count(text->begin(), text->end(), '\n'), 2) << *text;
  EXPECT_TRUE(v.device.has_value()) << v.to_text();  // the ceilings came from the cache
}

// --sanitize with a stand-in compute-sanitizer on PATH: it runs the (fake) runner and, like the
// real tool, writes its report to the --log-file it was given, not to stderr. The checker must
// read the report, and turn reported errors into an incorrect verdict.
class FakeSanitizer : public testing::TestWithParam<std::string> {};

TEST_P(FakeSanitizer, ReportComesFromTheLogFile) {
  if (!find_program("nvcc") || !find_program("python3")) GTEST_SKIP() << "nvcc or python3 missing";
  fs::path bin = scratch() / ("fake-cs-" + GetParam());
  fs::create_directories(bin);
  std::string errors = GetParam() == "clean" ? "0" : "2";
  std::ofstream(bin / "compute-sanitizer")
      << "#!/bin/sh\n"
         "log=''; tool=''\n"
         "while [ $# -gt 0 ]; do case \"$1\" in\n"
         "  --log-file) log=$2; shift 2;; --tool) tool=$2; shift 2;;\n"
         "  --error-exitcode|--print-limit) shift 2;; *) break;; esac; done\n"
         "\"$@\"; rc=$?\n"
         "echo \"========= COMPUTE-SANITIZER ($tool)\" > \"$log\"\n"
         "if [ \"$tool\" = racecheck ]; then\n"
         "  echo \"========= RACECHECK SUMMARY: " << errors << " hazards displayed (" << errors << " errors, 0 warnings)\" >> \"$log\"\n"
         "else echo \"========= ERROR SUMMARY: " << errors << " errors\" >> \"$log\"; fi\n"
         "exit $rc\n";
  fs::permissions(bin / "compute-sanitizer", fs::perms::owner_all);
  std::string path = bin.string() + ":" + getenv("PATH");
  setenv("PATH", path.c_str(), 1);
  use_fake_runner();
  auto task = load_task(kDir / "scale2");
  ASSERT_TRUE(task) << task.error().message;
  auto base = read_file(kDir / "scale2" / "baseline.cu");
  ASSERT_TRUE(base);
  EvalOptions o = fake_candidate(*base, "pass", 1, 7);
  o.time = false;
  o.sanitize = true;
  o.visible_only = true;
  Verdict v = evaluate(*task, o);
  std::string old = path.substr(path.find(':') + 1);
  setenv("PATH", old.c_str(), 1);
  for (const char* tool : {"memcheck", "initcheck"})
    EXPECT_NE(v.sanitizer.find(std::string(tool) + ": ERROR SUMMARY: " + errors + " errors"), std::string::npos)
        << v.sanitizer;
  EXPECT_NE(v.sanitizer.find("racecheck: RACECHECK SUMMARY: " + errors + " hazards displayed"), std::string::npos)
      << v.sanitizer;
  if (GetParam() == "clean") {
    EXPECT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  } else {
    EXPECT_EQ(v.outcome, Outcome::Incorrect) << v.to_text();
    EXPECT_EQ(v.reason, Reason::kSanitizerMemcheck) << v.to_text();
    EXPECT_EQ(v.to_json()["reason"], "sanitizer:memcheck");
  }
}
INSTANTIATE_TEST_SUITE_P(Checker, FakeSanitizer, testing::Values("clean", "errors"));

// An evaluation on a GPU picked through CUDA_VISIBLE_DEVICES (a pool's GPU 1) gets that GPU's
// ceilings, measured there, not the host's first GPU's; a runner that reports another GPU than
// the one asked for is an error, not someone else's figures.
TEST(FakeRunnerDevice, CeilingsComeFromTheGpuEvaluatedOn) {
  if (!find_program("nvcc") || !find_program("python3")) GTEST_SKIP() << "nvcc or python3 missing";
  setenv("KEVO_RUNNER", (kDir / "fake_runner.py").c_str(), 1);
  setenv("KEVO_CACHE_DIR", (scratch() / "kevo-fake-runner-devices").c_str(), 1);
  auto task = load_task(kDir / "scale2");
  ASSERT_TRUE(task);
  EvalOptions o = scale2_baseline_once();
  o.gpu = "1";
  Verdict v = evaluate(*task, o);
  ASSERT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  ASSERT_TRUE(v.device.has_value()) << v.to_text();
  EXPECT_EQ(v.device->uuid, "fake-uuid-1");
  auto wrong = device_ceilings(true, "fake-uuid-1", "");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("reports GPU fake-uuid"), std::string::npos) << wrong.error().message;
}

namespace {

// scale2 with its baseline marked with a fake runner behaviour (the baseline's own check).
fs::path scale2_marked(const std::string& behaviour) {
  fs::path dir = scratch() / ("scale2-" + behaviour);
  fs::create_directories(dir);
  for (const char* f : {"task.toml", "reference.cpp", "baseline.cu"})
    fs::copy_file(kDir / "scale2" / f, dir / f, fs::copy_options::overwrite_existing);
  std::ofstream(dir / "baseline.cu", std::ios::app)
      << "\n__attribute__((used)) static const char kevo_fake[] = \"fake-runner: " << behaviour << "\";\n";
  return dir;
}

EvalOptions baseline_check(double host_budget_mib) {
  EvalOptions o;
  o.baseline_mode = true;
  o.seeds = 1;
  o.seed = 3;
  o.time_budget_s = 0.2;
  o.call_timeout = std::chrono::milliseconds(3000);
  o.host_budget_mib = host_budget_mib;
  return o;
}

}  // namespace

// The baseline's own check: configs whose host data exceed the budget are not run through the CPU
// reference but on the device data plane, the baseline against itself in a second process (the
// verdict says which config was checked how); the smaller ones against the reference as before.
TEST(FakeRunnerBaselineCheck, ConfigsOverTheHostBudgetAreCheckedOnTheDevice) {
  if (!find_program("nvcc") || !find_program("python3")) GTEST_SKIP() << "nvcc or python3 missing";
  use_fake_runner();
  auto task = load_task(scale2_marked("pass"));
  ASSERT_TRUE(task) << task.error().message;
  // main (4096 values) is ~160 KiB on the host, ragged (1001) ~39 KiB: a 0.1 MiB budget splits them.
  Verdict v = evaluate(*task, baseline_check(0.1));
  if (too_noisy(v)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  std::map<std::string, CheckedAgainst> against;
  for (const auto& c : v.configs) against[c.config] = c.against;
  EXPECT_EQ(against["main"], CheckedAgainst::kConsistency) << v.to_text();
  for (const char* c : {"ragged", "tiny", "held"}) EXPECT_EQ(against[c], CheckedAgainst::kOracle) << c;
  EXPECT_TRUE(v.work.count("inputs")) << v.to_text();  // the host path ran for the small ones
  EXPECT_NE(v.to_text().find("consistency only"), std::string::npos) << v.to_text();
  EXPECT_EQ(v.to_json()["configs"][0]["against"].get<std::string>().empty(), false);
  // No budget: every config against the reference (the old way).
  Verdict all = evaluate(*task, baseline_check(0));
  if (too_noisy(all)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_EQ(all.outcome, Outcome::Pass) << all.to_text();
  for (const auto& c : all.configs) EXPECT_EQ(c.against, CheckedAgainst::kOracle) << c.config;
}

// What the consistency check still catches in a baseline over the budget: outputs it leaves
// unwritten (the second process's run, with the other poison, disagrees there: a mismatch), runs
// that disagree. (A baseline wrong the same way twice passes there: its values are checked against
// the reference on the configs within the budget.)
TEST(FakeRunnerBaselineCheck, ConsistencyCatchesUnwrittenAndNondeterministicBaselines) {
  if (!find_program("nvcc") || !find_program("python3")) GTEST_SKIP() << "nvcc or python3 missing";
  use_fake_runner();
  for (const auto& [behaviour, reason] :
       {std::pair{"partial", Reason::kMismatch}, std::pair{"nondet", Reason::kMismatch}}) {
    auto task = load_task(scale2_marked(behaviour));
    ASSERT_TRUE(task) << task.error().message;
    Verdict v = evaluate(*task, baseline_check(1e-6));  // every config over the budget
    EXPECT_EQ(v.outcome, Outcome::Incorrect) << behaviour << "\n" << v.to_text();
    EXPECT_EQ(v.reason, reason) << behaviour << "\n" << v.to_text();
    ASSERT_FALSE(v.configs.empty());
    EXPECT_EQ(v.configs.back().against, CheckedAgainst::kConsistency) << v.to_text();
  }
}

// Runners started ahead: after a first evaluation asked for them, the next takes both of its
// runners ready (none waited for), each fresh; the verdict is the same.
TEST(FakeRunnerLatency, WarmRunnersAreTakenReadyByTheNextEvaluation) {
  if (!find_program("nvcc") || !find_program("python3")) GTEST_SKIP() << "nvcc or python3 missing";
  use_fake_runner();
  auto task = load_task(kDir / "scale2");
  ASSERT_TRUE(task);
  EvalOptions o = scale2_baseline_once();
  o.warm_runners = true;
  WarmRunners::set_spares(2);
  Verdict first = evaluate(*task, o);
  if (too_noisy(first)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_EQ(first.outcome, Outcome::Pass) << first.to_text();
  const int taken = WarmRunners::taken(), reused = WarmRunners::reused();
  for (int i = 0; i < 200 && WarmRunners::started() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_GE(WarmRunners::started(), 2);
  Verdict second = evaluate(*task, o);
  if (too_noisy(second)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  EXPECT_EQ(second.outcome, Outcome::Pass) << second.to_text();
  // The candidate's runner is a fresh spare; the oracle's is the first evaluation's, kept.
  EXPECT_EQ(WarmRunners::taken() - taken, 1);
  EXPECT_EQ(WarmRunners::reused() - reused, 1);
  EXPECT_LT(second.work["runner_wait"], 0.05) << second.to_text();
  // A candidate's runner is never kept: each evaluation takes a fresh one.
  Verdict third = evaluate(*task, o);
  WarmRunners::set_spares(0);
  if (too_noisy(third)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  EXPECT_EQ(third.outcome, Outcome::Pass) << third.to_text();
  EXPECT_EQ(WarmRunners::reused() - reused, 2);
  EXPECT_EQ(WarmRunners::taken() - taken, 2);
}

// kevo eval's runners from the runner pool (run/runner_pool.h): the same verdicts as its own
// runners, a crash still the candidate's crash with its signal, and no runner handed out twice.
TEST(FakeRunnerPool, PooledRunnersGiveTheSameVerdicts) {
  if (!find_program("nvcc") || !find_program("python3")) GTEST_SKIP() << "nvcc or python3 missing";
  use_fake_runner();
  auto task = load_task(kDir / "scale2");
  ASSERT_TRUE(task);
  auto base = read_file(kDir / "scale2" / "baseline.cu");
  ASSERT_TRUE(base);
  test::PoolForTest pool(2);
  ASSERT_TRUE(pool.ok()) << pool.log();
  EvalOptions o = scale2_baseline_once();
  Verdict first = evaluate(*task, o);  // asks, finds none: starts its own, and the pool keeps the kind
  ASSERT_TRUE(pool.wait_ready(2)) << pool.log();
  Verdict second = evaluate(*task, o);
  auto s = pool_status();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->taken, 2);  // the candidate's runner and the trusted one, each fresh
  if (!too_noisy(first) && !too_noisy(second)) {
    EXPECT_EQ(first.outcome, Outcome::Pass) << first.to_text();
    EXPECT_EQ(second.outcome, Outcome::Pass) << second.to_text();
    EXPECT_LT(second.work["runner_wait"], 0.05) << second.to_text();
  }
  ASSERT_TRUE(pool.wait_ready(2)) << pool.log();
  Verdict crash = evaluate(*task, fake_candidate(*base, "segfault", 1, 7));
  EXPECT_EQ(crash.outcome, Outcome::Crash) << crash.to_text();
  EXPECT_EQ(crash.reason, Reason::kSignal) << crash.to_text();
  auto t = pool_status();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->taken, 4);
}
