// A small recorded run written row by row through the run database: three tasks of one strategy,
// with hand-chosen figures (tests check the table and report against them, not against the code
// that computes them).
//   alpha: baseline 2 ms; 4 candidates (compile error, 1.25x, incorrect, 2.5x from the 1.25x one);
//          the 2.5x one is the verified winner, re-timed at 2.4x. 4 LLM calls, 150 tokens, $0.01 each.
//          The winner has a profile (memory-bound, DRAM 82%); an LLM verifier reviewed all four:
//          FAIL, FAIL, PASS, PASS (TP, FP, FN, TN against the checker), 20 + 5 tokens, $0.001 each
//          (events only: not in the run's LLM calls).
//   beta:  baseline 3 ms; 1 candidate at 1.1x that FAILED held-out verification: no correct candidate.
//   gamma: baseline 1 ms; 1 candidate at 1.6x, verified (re-timed 1.6x); its source holds markup.
// Aggregates: 2 of 3 correct; median 2.000x, geomean 1.960x, mean 2.000x; fast_1 66.7%,
// fast_1.5 66.7%, fast_2 33.3%; validity 4/6 66.7%, compile 5/6 83.3%; 6 LLM calls, 900 tokens, $0.0600.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "store/run_db.h"

namespace kevo::testing {

inline constexpr const char* kEvilSource =
    "// winner of gamma: </td></tr></table><script>alert('x')</script> & \"quotes\"\n"
    "__global__ void k(float* y) { y[0] = 1.f < 2.f ? 1.f : 0.f; }\n";

inline Result<std::filesystem::path> write_fixture(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  using nlohmann::json;
  fs::create_directories(dir);
  auto dbp = dir / "fixture.db";
  fs::remove(dbp);
  auto db = store::RunDb::open(dbp);
  if (!db) return db.unexpected();
  json cfg = {{"llm", "fake:m1"}, {"fake_evaluator", true}};
  auto task_dir = [&](const std::string& name) {
    fs::create_directories(dir / name);
    std::ofstream(dir / name / "baseline.cu") << "// baseline of " << name
                                              << "\n__global__ void k(float* y) { y[0] = 1.f; }\n";
    return (dir / name).string();
  };
  auto add_run = [&](const std::string& task, double base_ms) -> Result<store::RunRow> {
    store::RunRow r;
    r.task = task;
    r.task_dir = task_dir(task);
    r.strategy = "evoengineer-full";
    r.config_json = cfg.dump();
    r.baseline_json = json{{"outcome", "pass"}, {"time_ms", base_ms}, {"sol_floor_ms", base_ms / 20},
                           {"fake_evaluator", true}}.dump();
    auto id = (*db)->create_run(r);
    if (!id) return id.unexpected();
    r.id = *id;
    return r;
  };
  int seq = 0;
  auto cand = [&](store::RunRow& run, store::CandidateOutcome outcome, bool compiled, double speedup, bool accepted,
                  std::vector<int64_t> parents, const std::string& source,
                  const json& profile = nullptr) -> Result<int64_t> {
    store::CandidateRow c;
    c.run_id = run.id;
    c.seq = ++seq;
    c.op = parents.empty() ? "init" : "mutate";
    c.parents = std::move(parents);
    c.model = "fake:m1";
    c.name = "idea" + std::to_string(seq);
    c.rationale = "rationale " + std::to_string(seq);
    c.source = source;
    c.outcome = outcome;
    c.compile_json = json{{"ok", compiled}}.dump();
    if (outcome == store::CandidateOutcome::kPass) {
      double base = json::parse(run.baseline_json).value("time_ms", 1.0);
      c.speedup = speedup;
      c.speedup_lo = speedup * 0.99;
      c.speedup_hi = speedup * 1.01;
      c.time_ms = base / speedup;
      json v{{"timing", {{"sol_fraction", (base / 20) / c.time_ms}}}};
      if (!profile.is_null()) v["profile"] = profile;
      c.verdict_json = v.dump();
    }
    c.accepted = accepted;
    store::LlmCallRow call;
    call.run_id = run.id;
    call.model = "fake:m1";
    call.purpose = c.op;
    call.input_tokens = 100;
    call.output_tokens = 50;
    call.cost_usd = 0.01;
    KEVO_TRY((*db)->add_candidate(c, {call}));
    return c.id;
  };
  auto finish = [&](store::RunRow& run, int64_t best, double best_speedup, int64_t winner, double winner_speedup) {
    run.status = store::RunStatus::kFinished;
    run.stop_reason = "budget_candidates";
    run.best_candidate = best;
    run.best_speedup = best_speedup;
    run.final_json = json{{"winner", winner}, {"winner_speedup", winner_speedup},
                          {"best_failed_held_out", winner == 0}, {"attempts", json::array()}}.dump();
    return (*db)->update_run(run);
  };
  {
    auto run = add_run("alpha", 2.0);
    if (!run) return run.unexpected();
    seq = 0;
    auto c1 = cand(*run, store::CandidateOutcome::kCompileError, false, 0, false, {}, "// fake: compile_error\n");
    auto c2 = cand(*run, store::CandidateOutcome::kPass, true, 1.25, true, {}, "// fake: pass time_ms=1.6\n");
    auto c3 = cand(*run, store::CandidateOutcome::kIncorrect, true, 0, false, {}, "// fake: incorrect\n");
    if (!c1 || !c2 || !c3) return fail("fixture: alpha candidates");
    json profile{{"status", "profiled"},
                 {"config", "main"},
                 {"kernels", json::array({json{{"name", "k"}, {"duration_us", 800.0}, {"dram_pct", 82.0},
                                               {"sm_pct", 20.0}}})}};
    auto c4 = cand(*run, store::CandidateOutcome::kPass, true, 2.5, true, {*c2},
                   "// baseline of alpha\n__global__ void k(float* y) { y[0] = 1.f; }\n// faster: vectorized\n",
                   profile);
    if (!c4) return c4.unexpected();
    int n = 0;
    for (auto [id, pass] : {std::pair{*c1, false}, {*c2, false}, {*c3, true}, {*c4, true}})
      KEVO_TRY((*db)->add_event(run->id, "verifier",
                                json{{"candidate", id}, {"model", "fake:verifier"}, {"answered", true},
                                     {"parsed", true}, {"pass", pass}, {"reasons", "r" + std::to_string(++n)},
                                     {"input_tokens", 20}, {"output_tokens", 5}, {"cost_usd", 0.001}}
                                    .dump()));
    KEVO_TRY(finish(*run, *c4, 2.5, *c4, 2.4));
  }
  {
    auto run = add_run("beta", 3.0);
    if (!run) return run.unexpected();
    seq = 0;
    auto c1 = cand(*run, store::CandidateOutcome::kPass, true, 1.1, true, {}, "// fake: held_out_fail\n");
    if (!c1) return c1.unexpected();
    KEVO_TRY(finish(*run, *c1, 1.1, 0, 0));
  }
  {
    auto run = add_run("gamma", 1.0);
    if (!run) return run.unexpected();
    seq = 0;
    auto c1 = cand(*run, store::CandidateOutcome::kPass, true, 1.6, true, {}, kEvilSource);
    if (!c1) return c1.unexpected();
    // gamma's winner came from an agent episode (evolve/episode_phase.cpp writes this event).
    json turn = {{"turn", 2}, {"calls", json::array({json{{"tool", "evaluate"}, {"candidate", *c1}, {"outcome", "pass"},
                                                          {"speedup", 1.6}, {"result", "pass"}, {"seconds", 0.5}}})}};
    KEVO_TRY((*db)->add_event(run->id, "episode",
                              json{{"episode", 7}, {"model", "fake:m1"}, {"end", "submitted"}, {"ok", true},
                                   {"submitted", true}, {"answer", *c1}, {"turn_count", 2}, {"evaluations", 1},
                                   {"input_tokens", 900}, {"output_tokens", 100}, {"turns", json::array({turn})}}
                                  .dump()));
    KEVO_TRY(finish(*run, *c1, 1.6, *c1, 1.6));
  }
  return dbp;
}

// Figures of the fixture as the table and report print them (written by hand from the comment).
inline const char* kFixtureFigures[] = {"2.400x", "1.600x", "2.000x", "1.960x", "66.7%", "33.3%", "83.3%",
                                        "$0.0600", "900", "evoengineer-full / fake:m1 (FAKE GPU)"};

}  // namespace kevo::testing
