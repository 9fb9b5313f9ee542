// The whole loop on a CPU: a scripted model on loopback, the marker evaluator for the GPU.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "evolve/fingerprint.h"
#include "harness.h"

namespace kevo::evolve {
namespace {

using namespace testing;

// ---- what each preset sends --------------------------------------------------------------------

void expect_never_held_out(const std::vector<std::string>& prompts) {
  for (const auto& p : prompts) {
    EXPECT_FALSE(contains(p, kHeldName)) << p;
    EXPECT_FALSE(contains(p, kHeldValue)) << p;
  }
}

struct PresetRun {
  std::vector<std::string> prompts;
  std::vector<store::CandidateRow> rows;
  RunOutcome out;
};

PresetRun run_preset(const std::string& name, int candidates = 8) {
  Harness h(improving_kernels());
  auto o = h.options(name, candidates);
  auto out = h.run(o);
  EXPECT_TRUE(out) << (out ? "" : out.error().message);
  PresetRun r;
  r.prompts = h.server.prompts();
  r.rows = h.candidates(out->run_id);
  r.out = *out;
  return r;
}

int count_with(const std::vector<std::string>& ps, const std::string& what) {
  int n = 0;
  for (const auto& p : ps) n += contains(p, what);
  return n;
}

TEST(Presets, AllShareTheTaskContextAndNeverTheHeldOutShapes) {
  for (const auto& name : preset_names()) {
    SCOPED_TRACE(name);
    auto r = run_preset(name, 6);
    ASSERT_EQ(r.prompts.size(), 6u);
    EXPECT_EQ(r.out.candidates, 6);
    // Where the run's time went: three consecutive spans inside its wall time.
    EXPECT_GT(r.out.search_s, 0);
    EXPECT_GE(r.out.baseline_s, 0);
    EXPECT_GE(r.out.verify_s, 0);
    EXPECT_LE(r.out.baseline_s + r.out.search_s + r.out.verify_s, r.out.wall_s);
    expect_never_held_out(r.prompts);
    for (const auto& p : r.prompts) {
      EXPECT_TRUE(contains(p, "y[i] = 2 * x[i]"));          // description
      EXPECT_TRUE(contains(p, "KEVO_EXPORT int kevo_forward"));  // the ABI
      EXPECT_TRUE(contains(p, "x: f32 [N]"));                 // the interface
      EXPECT_TRUE(contains(p, "Fake H100"));                  // the GPU
      EXPECT_TRUE(contains(p, "CUDA 12.4"));                  // the toolkit
      EXPECT_TRUE(contains(p, "ragged: N=1001"));             // visible shapes
      EXPECT_TRUE(contains(p, "main (timed): N=1048576"));
      EXPECT_TRUE(contains(p, "Speed of light"));
    }
    // The first proposal starts from the baseline, with its time.
    EXPECT_TRUE(contains(r.prompts[0], "Baseline implementation"));
    EXPECT_TRUE(contains(r.prompts[0], "It takes 2 ms"));
    // The held-out config was used once, after the search, for the winner only.
    EXPECT_NE(r.out.winner, 0);
  }
}

TEST(Presets, EvoEngineerFreeSendsTheTaskOnly) {
  auto r = run_preset("evoengineer-free");
  EXPECT_EQ(count_with(r.prompts, "Insights from earlier attempts"), 0);
  EXPECT_EQ(count_with(r.prompts, "speedup over the baseline:"), 0);
  EXPECT_EQ(count_with(r.prompts, "Current kernel"), 0);
  EXPECT_EQ(count_with(r.prompts, "Earlier solution"), 0);
  EXPECT_EQ(count_with(r.prompts, "idea number"), 0);  // no earlier rationale
  for (const auto& c : r.rows) EXPECT_TRUE(c.op == "init" || c.op == "rewrite") << c.op;
}

TEST(Presets, EvoEngineerInsightAddsInsightsButNoCode) {
  auto r = run_preset("evoengineer-insight");
  EXPECT_GE(count_with(r.prompts, "Insights from earlier attempts"), 6);
  EXPECT_GE(count_with(r.prompts, ": unroll more"), 6);
  EXPECT_EQ(count_with(r.prompts, "speedup over the baseline:"), 0);
  EXPECT_EQ(count_with(r.prompts, "Current kernel"), 0);
  EXPECT_EQ(count_with(r.prompts, "Earlier solution"), 0);
}

TEST(Presets, EvoEngineerFullAddsSolutionsWithTimesAndInsights) {
  auto r = run_preset("evoengineer-full");
  EXPECT_GE(count_with(r.prompts, "Current kernel"), 6);
  EXPECT_GE(count_with(r.prompts, "speedup over the baseline:"), 6);
  EXPECT_GE(count_with(r.prompts, "Insights from earlier attempts"), 6);
  std::set<std::string> ops;
  for (const auto& c : r.rows) ops.insert(c.op);
  EXPECT_TRUE(ops.count("mutate"));
}

TEST(Presets, FunSearchShowsVersionsWithoutInsights) {
  auto r = run_preset("funsearch");
  // Each island starts from the baseline, then works from its own versions.
  EXPECT_GE(count_with(r.prompts, "Version v0"), 3);
  EXPECT_EQ(count_with(r.prompts, "Insights from earlier attempts"), 0);
  EXPECT_EQ(count_with(r.prompts, "THOUGHT:"), 0);  // FunSearch asks for code only
  std::set<int> islands;
  for (const auto& c : r.rows) islands.insert(c.island);
  EXPECT_GE(islands.size(), 2u);
}

TEST(Presets, EohUsesItsThreeOperatorsWithThoughts) {
  auto r = run_preset("eoh", 20);
  std::set<std::string> ops;
  for (const auto& c : r.rows) ops.insert(c.op);
  EXPECT_TRUE(ops.count("rewrite"));
  EXPECT_TRUE(ops.count("crossover"));
  EXPECT_TRUE(ops.count("mutate"));
  EXPECT_GE(count_with(r.prompts, "different from the ones above"), 1);
  EXPECT_GE(count_with(r.prompts, "Parent 2"), 1);
  EXPECT_GE(count_with(r.prompts, "THOUGHT:"), 20);
}

TEST(Presets, AiCudaEngineerShowsTimedSolutionsWithoutInsights) {
  auto r = run_preset("ai-cuda-engineer", 12);
  EXPECT_GE(count_with(r.prompts, "speedup over the baseline:"), 11);
  EXPECT_EQ(count_with(r.prompts, "Insights from earlier attempts"), 0);
  EXPECT_EQ(count_with(r.prompts, "idea: "), 0);
}

TEST(Presets, KevoDefaultUsesDiffEditsAndMapElites) {
  auto r = run_preset("kevo-default", 12);
  EXPECT_GE(count_with(r.prompts, "<<<<<<< SEARCH"), 1);
  for (const auto& c : r.rows)  // full files are accepted too
    EXPECT_NE(c.outcome, store::CandidateOutcome::kInvalidAnswer) << c.message;
}

// ---- diff edits ---------------------------------------------------------------------------------

TEST(DiffEdit, EditsApplyToTheParent) {
  // Diff-edit prompts get a SEARCH/REPLACE block against the marker line of the current kernel.
  Harness h([](const std::string& prompt, int n) {
    std::smatch m;
    static const std::regex marker(R"(// fake: pass time_ms=([0-9.]+) noise=0.01)");
    if (contains(prompt, "edit blocks against the current kernel") && std::regex_search(prompt, m, marker)) {
      double t = std::stod(m[1]) * 0.8;
      return "NAME: faster\nTHOUGHT: shave time\n<<<<<<< SEARCH\n" + m[0].str() + "\n=======\n// fake: pass time_ms=" +
             std::to_string(t) + " noise=0.01\n>>>>>>> REPLACE\n";
    }
    return answer("v" + std::to_string(n), "start", kernel_source("pass time_ms=1.9 noise=0.01"));
  });
  auto o = h.options("kevo-default", 10);
  o.strategy.operators = {{Op::kDiffEdit, 1.0}};
  auto out = h.run(o);
  ASSERT_TRUE(out) << out.error().message;
  auto rows = h.candidates(out->run_id);
  int edits = 0;
  for (const auto& c : rows) {
    if (c.op != "diff_edit") continue;
    ++edits;
    EXPECT_EQ(c.outcome, store::CandidateOutcome::kPass) << c.message;
    ASSERT_EQ(c.parents.size(), 1u);
    auto parent = h.db->candidate(c.parents[0]);
    ASSERT_TRUE(parent);
    EXPECT_NEAR(c.speedup, parent->speedup / 0.8, 1e-3);  // the edit changed the parent's time
    EXPECT_NE(c.source, parent->source);
    EXPECT_TRUE(contains(c.source, "__global__ void scale"));  // the rest of the parent is intact
  }
  EXPECT_GE(edits, 5);
}

// ---- noise-aware replacement ------------------------------------------------------------------

TEST(Selection, NoisyImprovementDoesNotReplaceTheBest) {
  // 1.0 ms +-5%, then 0.97 ms +-5% (overlapping intervals), then 0.7 ms +-1% (clearly faster).
  Harness h([](const std::string&, int n) {
    const char* m[] = {"pass time_ms=1.0 noise=0.05", "pass time_ms=0.97 noise=0.05", "pass time_ms=0.7 noise=0.01"};
    return answer("k" + std::to_string(n), "t", kernel_source(m[std::min(n, 2)]));
  });
  auto o = h.options("evoengineer-full", 3);
  auto out = h.run(o);
  ASSERT_TRUE(out) << out.error().message;
  auto rows = h.candidates(out->run_id);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].accepted);
  EXPECT_FALSE(rows[1].accepted);  // faster by its median, not with confidence
  EXPECT_GT(rows[1].speedup, rows[0].speedup);
  EXPECT_TRUE(rows[2].accepted);
  EXPECT_EQ(out->best_candidate, rows[2].id);
}

// ---- repair ------------------------------------------------------------------------------------

// Distinct code per answer (a repeated program is not evaluated again, see Dedup).
std::string variant(int n) { return "#define VARIANT " + std::to_string(n) + "\n"; }

TEST(Repair, FailuresGoBackWithTheirDiagnosticABoundedNumberOfTimes) {
  // Fresh answers fail to compile; repairs compile but are incorrect: every chain must stop
  // after repair_rounds.
  Harness h([](const std::string& prompt, int n) {
    if (contains(prompt, "Fix this kernel"))
      return answer("fix" + std::to_string(n), "fix", kernel_source("incorrect y[7] = 3, expected 4", variant(n)));
    return answer("k" + std::to_string(n), "t",
                  kernel_source("compile_error kernel.cu(12): error: identifier \"foo\" is undefined", variant(n)));
  });
  // A checker whose mismatch text names a held-out config (it never should during the search):
  // the engine scrubs it before the text goes back to the model.
  struct Leaky final : CandidateEvaluator {
    Verdict evaluate(const Task& t, const std::filesystem::path& f, const EvalOptions& o) override {
      Verdict v = inner.evaluate(t, f, o);
      for (auto& c : v.configs)
        if (!c.ok) c.detail += " (and on config 'secret_holdout')";
      return v;
    }
    Verdict evaluate_baseline(const Task& t, const EvalOptions& o) override { return inner.evaluate_baseline(t, o); }
    std::string fingerprint(const std::string& s) const override { return inner.fingerprint(s); }
    MarkerEvaluator inner;
  } leaky;
  h.eval = &leaky;
  auto o = h.options("kevo-default", 9);
  o.strategy.repair_rounds = 2;
  auto out = h.run(o);
  ASSERT_TRUE(out) << out.error().message;
  auto rows = h.candidates(out->run_id);
  ASSERT_EQ(rows.size(), 9u);
  std::map<int64_t, store::CandidateRow> by_id;
  for (const auto& c : rows) by_id[c.id] = c;
  int repairs = 0;
  for (const auto& c : rows) {
    EXPECT_LE(c.repair_round, 2);
    if (c.op != "repair") continue;
    ++repairs;
    ASSERT_EQ(c.parents.size(), 1u);
    const auto& parent = by_id.at(c.parents[0]);
    EXPECT_EQ(c.repair_round, parent.repair_round + 1);
    EXPECT_TRUE(contains(c.prompt, "Kernel that failed"));
    EXPECT_TRUE(contains(c.prompt, parent.source.substr(0, 40)));
    if (parent.outcome == store::CandidateOutcome::kCompileError) {
      EXPECT_TRUE(contains(c.prompt, "identifier \"foo\" is undefined"));
    }
    if (parent.outcome == store::CandidateOutcome::kIncorrect) {
      EXPECT_TRUE(contains(c.prompt, "y[7] = 3, expected 4"));
    }
  }
  EXPECT_EQ(repairs, 6);  // 3 chains of 1 original + 2 repairs
  expect_never_held_out(h.server.prompts());  // a mismatch naming a held-out config is scrubbed
  EXPECT_EQ(out->winner, 0);
}

TEST(Repair, PresetsWithoutRepairNeverSendFailuresBack) {
  Harness h([](const std::string&, int n) {
    return answer("k" + std::to_string(n), "t", kernel_source("compile_error boom"));
  });
  auto out = h.run(h.options("evoengineer-full", 5));
  ASSERT_TRUE(out);
  for (const auto& p : h.server.prompts()) EXPECT_FALSE(contains(p, "Fix this kernel"));
}

// ---- budgets -----------------------------------------------------------------------------------

TEST(Budgets, CandidatesCallsMoneyAndStagnation) {
  {
    Harness h(improving_kernels());
    auto out = h.run(h.options("evoengineer-full", 7, /*parallel=*/4));
    ASSERT_TRUE(out);
    EXPECT_EQ(out->candidates, 7);
    EXPECT_EQ(out->stop_reason, "budget_candidates");
    EXPECT_EQ(h.server.prompts().size(), 7u);  // never more calls than candidates left
  }
  {
    Harness h(improving_kernels());
    auto o = h.options("evoengineer-full", 45, 4);
    o.budgets.max_calls = 5;
    auto out = h.run(o);
    ASSERT_TRUE(out);
    EXPECT_EQ(h.server.prompts().size(), 5u);
    EXPECT_EQ(out->stop_reason, "budget_calls");
  }
  {
    // Each answer costs 100 x $1/M + 50 x $2/M = $0.0002.
    Harness h(improving_kernels());
    auto o = h.options("evoengineer-full", 45, 1);
    o.budgets.max_usd = 0.0005;
    auto out = h.run(o);
    ASSERT_TRUE(out);
    EXPECT_EQ(h.server.prompts().size(), 3u);
    EXPECT_EQ(out->stop_reason, "budget_usd");
    auto t = h.db->totals(out->run_id);
    EXPECT_NEAR(t->cost_usd, 0.0006, 1e-9);
  }
  {
    Harness h(improving_kernels());
    auto o = h.options("evoengineer-full", 45, 1);
    o.budgets.max_tokens = 400;  // 150 per call
    auto out = h.run(o);
    ASSERT_TRUE(out);
    EXPECT_EQ(h.server.prompts().size(), 3u);
    EXPECT_EQ(out->stop_reason, "budget_tokens");
  }
  {
    // Nothing ever improves on the first kernel: stop after 4 without a new best.
    Harness h([](const std::string&, int n) {
      return answer("k" + std::to_string(n), "t", kernel_source("pass time_ms=1.0 noise=0.02"));
    });
    auto o = h.options("evoengineer-full", 45, 1);
    o.strategy.stagnation = 4;
    auto out = h.run(o);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->candidates, 5);
    EXPECT_EQ(out->stop_reason, "stagnation");
  }
}

// ---- held-out re-verification -----------------------------------------------------------------

TEST(Verification, AWinnerFailingHeldOutIsReportedAndARunnerUpTried) {
  Harness h([](const std::string&, int n) {
    if (n == 1) return answer("fitted", "fits the shapes it saw", kernel_source("pass time_ms=0.5 noise=0.01 held_out_fail"));
    return answer("honest" + std::to_string(n), "t", kernel_source("pass time_ms=1.5 noise=0.01"));
  });
  auto out = h.run(h.options("evoengineer-full", 3));
  ASSERT_TRUE(out) << out.error().message;
  auto rows = h.candidates(out->run_id);
  EXPECT_EQ(out->best_candidate, rows[1].id);
  EXPECT_TRUE(out->best_failed_held_out);
  ASSERT_GE(out->verification.size(), 2u);
  EXPECT_EQ(out->verification[0].candidate, rows[1].id);
  EXPECT_EQ(out->verification[0].outcome, Outcome::Incorrect);
  EXPECT_NE(out->winner, rows[1].id);
  EXPECT_NE(out->winner, 0);
  // During the search nothing was checked on held-out configs; verification only on them, with
  // a fresh seed.
  int verifications = 0;
  for (const auto& c : h.evaluator.calls()) {
    if (c.baseline) continue;
    if (c.held_out_only) {
      ++verifications;
      EXPECT_FALSE(c.seed.has_value());
      EXPECT_FALSE(c.visible_only);
    } else {
      EXPECT_TRUE(c.visible_only);
    }
  }
  EXPECT_EQ(verifications, 2);
  auto run = h.db->get_run(out->run_id);
  EXPECT_TRUE(contains(run->final_json, "\"best_failed_held_out\":true"));
  expect_never_held_out(h.server.prompts());
}

// Racing: each search evaluation is raced against the line a candidate must clear to matter (the
// baseline, then the best so far); the baseline's check and the held-out re-verification are timed
// to precision, and so is everything with race_timing off.
TEST(Verification, SearchEvaluationsAreRacedAgainstTheBestSoFar) {
  auto responder = [](const std::string&, int n) {
    if (n == 0) return answer("fast", "t", kernel_source("pass time_ms=1.0 noise=0.01"));  // 2x
    return answer("slow" + std::to_string(n), "t", kernel_source("pass time_ms=4.0 noise=0.01 n" + std::to_string(n)));
  };
  Harness h(responder);
  EngineOptions o = h.options("evoengineer-full", 3);
  o.strategy.parallel = 1;  // each result recorded before the next is submitted
  auto out = h.run(o);
  ASSERT_TRUE(out) << out.error().message;
  std::vector<double> search, other;
  for (const auto& c : h.evaluator.calls())
    (c.baseline || c.held_out_only ? other : search).push_back(c.timing_stop_below);
  ASSERT_EQ(search.size(), 3u);
  EXPECT_EQ(search[0], 1.0) << "no best yet: raced against the baseline";
  EXPECT_NEAR(search[1], 2.0, 1e-9) << "raced against the 2x best";
  EXPECT_NEAR(search[2], 2.0, 1e-9);
  ASSERT_FALSE(other.empty());
  for (double line : other) EXPECT_EQ(line, 0.0) << "the baseline and the winner are timed to precision";
  // Every evaluation after the baseline's carries the run's baseline figure and its GPU, so a
  // baseline slowed in a candidate's session credits nothing (check/timing's baseline_slowed).
  const auto& calls = h.evaluator.calls();
  ASSERT_TRUE(calls.front().baseline);
  EXPECT_EQ(calls.front().baseline_ms, 0.0);
  for (size_t i = 1; i < calls.size(); ++i) {
    EXPECT_GT(calls[i].baseline_ms, 0.0) << calls[i].source;
    EXPECT_FALSE(calls[i].baseline_gpu.empty()) << calls[i].source;
  }

  Harness off(responder);
  EngineOptions p = off.options("evoengineer-full", 3);
  p.strategy.parallel = 1;
  p.race_timing = false;
  ASSERT_TRUE(off.run(p));
  for (const auto& c : off.evaluator.calls()) EXPECT_EQ(c.timing_stop_below, 0.0);
}

TEST(Verification, NoValidCandidateMeansNoWinner) {
  Harness h([](const std::string&, int n) {
    return answer("k" + std::to_string(n), "t", kernel_source("unsafe static:stream_create"));
  });
  auto out = h.run(h.options("evoengineer-full", 3));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->winner, 0);
  EXPECT_EQ(out->valid, 0);
  EXPECT_TRUE(out->verification.empty());
}

// A candidate that passes held-out re-verification but is not faster than the baseline beyond
// noise (its interval not above 1) is no winner: the run says the baseline stands.
TEST(Verification, NotFasterThanTheBaselineIsNoWinner) {
  Harness h([](const std::string&, int n) {
    return answer("k" + std::to_string(n), "t", kernel_source("pass time_ms=1.98 noise=0.05"));  // 1.01x +-5%
  });
  auto out = h.run(h.options("evoengineer-full", 3));
  ASSERT_TRUE(out);
  EXPECT_GT(out->valid, 0);
  EXPECT_EQ(out->winner, 0);
  EXPECT_TRUE(out->not_faster);
  ASSERT_FALSE(out->verification.empty());
  EXPECT_EQ(out->verification.back().outcome, Outcome::Pass);
  EXPECT_LE(out->verification.back().speedup_lo, 1.0);
  auto run = h.db->get_run(out->run_id);
  EXPECT_TRUE(contains(run->final_json, "\"not_faster\":true")) << run->final_json;
  EXPECT_TRUE(contains(run->final_json, "\"winner\":0")) << run->final_json;
}

// ---- interruption ------------------------------------------------------------------------------

TEST(Interrupt, CancelStopsCleanlyAndResumeFinishes) {
  Harness h(improving_kernels());
  h.server.set_delay_ms(30);
  h.progress = [&](const Progress& p) {
    if (p.done >= 3) h.cancel.cancel();
  };
  auto o = h.options("evoengineer-full", 12, 3);
  auto out = h.run(o);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->status, store::RunStatus::kInterrupted);
  EXPECT_EQ(out->stop_reason, "interrupted");
  EXPECT_GE(out->candidates, 3);
  EXPECT_LT(out->candidates, 12);
  EXPECT_TRUE(out->verification.empty());  // no re-verification of an unfinished search
  auto run = h.db->get_run(out->run_id);
  EXPECT_EQ(run->status, store::RunStatus::kInterrupted);
  int done = out->candidates;
  // Resume: same run, same population, the rest of the budget.
  h.cancel.reset();
  h.progress = nullptr;
  Engine e(h.task, h.evaluator, *h.db, h.client.get(), nullptr, h.cancel);
  auto more = e.resume(out->run_id, o);
  ASSERT_TRUE(more) << more.error().message;
  EXPECT_EQ(more->status, store::RunStatus::kFinished);
  EXPECT_EQ(more->candidates, 12);
  auto rows = h.candidates(out->run_id);
  ASSERT_EQ(rows.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(rows[static_cast<size_t>(i)].seq, i + 1);
  EXPECT_GT(done, 0);
  EXPECT_NE(more->winner, 0);
}

// ---- kill -9 -----------------------------------------------------------------------------------

TEST(Crash, KillNineLosesOnlyWhatWasInFlight) {
  Harness h([](const std::string&, int n) {
    return answer("k" + std::to_string(n), "idea " + std::to_string(n),
                  kernel_source("pass time_ms=" + std::to_string(1.8 * std::pow(0.9, n)) + " noise=0.01 sleep_ms=60"));
  });
  auto o = h.options("evoengineer-full", 20, 2);
  std::filesystem::path dbpath = h.dir / "runs.db";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child: its own connection and model client, the parent's server on loopback.
    auto db = store::RunDb::open(dbpath);
    if (!db) ::_exit(3);
    auto cache = llm::ResponseCache::attach((*db)->handle());
    auto ctx = llm::make_context(llm::testing::test_config(h.server.base_url()), {.cache = std::move(*cache), .seed = 5});
    auto client = llm::make_client("fake:m1", ctx);
    MarkerEvaluator ev;
    llm::CancelToken cancel;
    Engine e(h.task, ev, **db, client->get(), nullptr, cancel);
    auto out = e.start(o);
    ::_exit(out ? 0 : 4);
  }
  // Wait for a few committed candidates, then kill the child mid-run.
  int64_t run_id = 0;
  size_t before = 0;
  for (int i = 0; i < 400 && before < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    auto runs = h.db->list_runs();
    if (!runs || runs->empty()) continue;
    run_id = runs->back().id;
    before = h.candidates(run_id).size();
  }
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child finished before it was killed";
  auto survived = h.candidates(run_id);
  ASSERT_GE(survived.size(), before);  // committed before the kill: all there
  ASSERT_LT(survived.size(), 20u);
  EXPECT_EQ(h.db->get_run(run_id)->status, store::RunStatus::kRunning);  // it never said goodbye
  auto best_before = std::max_element(survived.begin(), survived.end(),
                                      [](const auto& a, const auto& b) { return a.speedup < b.speedup; });

  Engine e(h.task, h.evaluator, *h.db, h.client.get(), nullptr, h.cancel);
  auto out = e.resume(run_id, o);
  ASSERT_TRUE(out) << out.error().message;
  auto all = h.candidates(run_id);
  ASSERT_EQ(all.size(), 20u);
  for (size_t i = 0; i < survived.size(); ++i) {  // nothing completed was lost or changed
    EXPECT_EQ(all[i].id, survived[i].id);
    EXPECT_EQ(all[i].source, survived[i].source);
    EXPECT_EQ(all[i].seq, survived[i].seq);
  }
  // The resumed run built on the population it had: its first new prompt shows a survivor.
  const auto& first_new = all[survived.size()];
  EXPECT_FALSE(first_new.parents.empty());
  EXPECT_TRUE(first_new.op == "mutate");
  EXPECT_GE(out->best_speedup, best_before->speedup * 0.97);
  EXPECT_EQ(out->status, store::RunStatus::kFinished);
}


// ---- duplicates --------------------------------------------------------------------------------

TEST(Dedup, TheSameProgramIsNotEvaluatedTwice) {
  // Answer 0: a kernel. Answer 1: the same kernel again. Answer 2: the baseline itself. Answer 3:
  // a different kernel.
  // (The marker evaluator's fingerprint is the raw text, since its markers are comments; the real
  // one ignores comments and spacing, tested below.)
  Harness h([](const std::string&, int n) {
    std::string k = kernel_source("pass time_ms=1.0 noise=0.01");
    if (n == 2) k = kernel_source("pass time_ms=2.0");  // the harness's baseline
    if (n >= 3) k = kernel_source("pass time_ms=0.8 noise=0.01");
    return answer("k" + std::to_string(n), "t", k);
  });
  auto o = h.options("evoengineer-free", 4);
  auto out = h.run(o);
  ASSERT_TRUE(out) << out.error().message;
  auto rows = h.candidates(out->run_id);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].outcome, store::CandidateOutcome::kPass);
  EXPECT_EQ(rows[1].outcome, store::CandidateOutcome::kDuplicate);
  EXPECT_NE(rows[1].message.find("candidate #" + std::to_string(rows[0].id)), std::string::npos) << rows[1].message;
  EXPECT_EQ(rows[2].outcome, store::CandidateOutcome::kDuplicate);
  EXPECT_NE(rows[2].message.find("baseline"), std::string::npos) << rows[2].message;
  EXPECT_EQ(rows[3].outcome, store::CandidateOutcome::kPass);
  // Evaluations: the baseline, candidates 0 and 3, and the winner's re-verification; never the
  // two repeats.
  int candidate_evals = 0;
  for (const auto& c : h.evaluator.calls())
    if (!c.baseline && !c.held_out_only) ++candidate_evals;
  EXPECT_EQ(candidate_evals, 2);
}

TEST(Dedup, NormalizationKeepsWhatChangesThePrograms) {
  EXPECT_EQ(normalize_source("int  a = 1; // x\n/* y */ int b;"), "int a=1;int b;");
  EXPECT_EQ(normalize_source("#include <a.h>\n#define N  4\nint x = N;"), "#include <a.h>\n#define N 4\nint x=N;");
  EXPECT_NE(source_fingerprint("#define F (x)\n"), source_fingerprint("#define F(x)\n"));
  EXPECT_NE(source_fingerprint("int a = 1;"), source_fingerprint("int a = 2;"));
  EXPECT_NE(source_fingerprint("const char* s = \"a  b\";"), source_fingerprint("const char* s = \"a b\";"));
  EXPECT_NE(source_fingerprint("unsigned int x;"), source_fingerprint("unsignedint x;"));
  EXPECT_EQ(source_fingerprint("a\n+\tb"), source_fingerprint("a+b"));
  EXPECT_EQ(normalize_source("#define S \"//x\"\nint y;"), "#define S \"//x\"\nint y;");
}

}  // namespace
}  // namespace kevo::evolve

namespace kevo::evolve {
namespace {
using namespace testing;

// ---- PyTorch next to the winner ----------------------------------------------------------------

TEST(Verification, TheWinnerIsTimedAgainstPyTorchOnceWhenTheTaskHasAReference) {
  Harness h(improving_kernels());
  // Give the task a PyTorch reference (the oracle stays the baseline).
  std::string toml = std::string("torch_reference = \"reference.py\"\n") + kTaskToml;
  write(h.dir / "task" / "task.toml", toml);
  write(h.dir / "task" / "reference.py", "import torch\ndef forward(x):\n    return 2 * x\n");
  auto t = load_task(h.dir / "task");
  ASSERT_TRUE(t) << t.error().message;
  h.task = *t;
  auto o = h.options("evoengineer-free", 3);
  auto out = h.run(o);
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_NE(out->winner, 0);
  auto run = h.db->get_run(out->run_id);
  ASSERT_TRUE(run);
  auto fin = nlohmann::json::parse(run->final_json);
  ASSERT_TRUE(fin.contains("winner_pytorch")) << fin.dump();
  EXPECT_DOUBLE_EQ(fin["winner_pytorch"]["pytorch"]["eager_ms"].get<double>(), 2.0);
  EXPECT_GT(fin["winner_pytorch"]["speedup_vs_eager"].get<double>(), 1.0);
  // Only the re-verification asks for PyTorch times: the search never pays for them.
  int asked = 0;
  for (const auto& a : out->verification) asked += !a.pytorch.is_null();
  EXPECT_EQ(asked, 1);
  EXPECT_NE(out->verification.back().pytorch_line.find("vs PyTorch: eager"), std::string::npos);
}

// Profiles: with --profile every passing candidate and the baseline carry a profile,
// and a child's prompt carries its parent's diagnosis next to its speedup; the switch leaves it out.
PresetRun run_profiled(bool feedback, bool profile = true) {
  Harness h([](const std::string&, int n) {
    double t = 1.8 * std::pow(0.9, n);
    return answer("v" + std::to_string(n), "idea " + std::to_string(n),
                  kernel_source("pass time_ms=" + std::to_string(t) + " noise=0.01 dram=85 sm=12"));
  });
  auto o = h.options("evoengineer-full", 6);
  o.eval.profile = profile;
  o.strategy.profile_feedback = feedback;
  auto out = h.run(o);
  EXPECT_TRUE(out) << (out ? "" : out.error().message);
  PresetRun r;
  r.prompts = h.server.prompts();
  r.rows = h.candidates(out->run_id);
  r.out = *out;
  return r;
}

TEST(Profiles, ChildPromptsCarryTheParentsDiagnosis) {
  auto r = run_profiled(true);
  int profiled = 0;
  for (const auto& c : r.rows) {
    auto v = nlohmann::json::parse(c.verdict_json);
    if (c.passed()) profiled += v.contains("profile") && v["profile"]["status"] == "profiled";
  }
  EXPECT_GE(profiled, 5);
  EXPECT_GE(count_with(r.prompts, "profile: memory-bound: DRAM 85% of peak\n"), 4);
  // The first prompt has no parent yet, only the baseline and its profile.
  EXPECT_TRUE(contains(r.prompts.at(0), "Profile: neither bound: DRAM 45%, SM 10% of peak"));
}

TEST(Profiles, TheSwitchLeavesThemOutAndNoProfileMeansNoLine) {
  auto off = run_profiled(false);
  EXPECT_EQ(count_with(off.prompts, "profile: "), 0);
  EXPECT_EQ(count_with(off.prompts, "Profile: "), 0);
  auto none = run_profiled(true, false);
  EXPECT_EQ(count_with(none.prompts, "profile: "), 0);
  for (const auto& c : none.rows) EXPECT_FALSE(nlohmann::json::parse(c.verdict_json).contains("profile"));
}

}  // namespace
}  // namespace kevo::evolve
