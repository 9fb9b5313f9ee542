// The LLM verifier: its answers parsed, its confusion matrix against the checker, and a
// whole run against a loopback model that reviews by rule: every candidate is still judged by the
// checker (the verifier decides nothing), every review is recorded beside the verdict, and the
// matrix counts what the rule got right and wrong.
#include <gtest/gtest.h>

#include <atomic>
#include <toml++/toml.h>

#include "evolve/llm_verifier.h"
#include "evolve/prompts.h"
#include "results/verifier_matrix.h"
#include "harness.h"
#include "util/fs.h"

namespace kevo::evolve {
namespace {

using namespace testing;

TEST(LlmVerifier, ParsesVerdictAndReasons) {
  auto a = parse_verifier_answer("VERDICT: PASS\nREASONS: none\n");
  EXPECT_TRUE(a.parsed);
  EXPECT_TRUE(a.pass);
  EXPECT_EQ(a.reasons, "none");
  a = parse_verifier_answer("Let me look.\n**Verdict:** fail\nReasons: item 3: no bounds check on the tail\n"
                            "and a race on smem\n");
  EXPECT_TRUE(a.parsed);
  EXPECT_FALSE(a.pass);
  EXPECT_EQ(a.reasons, "item 3: no bounds check on the tail\nand a race on smem");
  a = parse_verifier_answer("I think it is fine.");
  EXPECT_FALSE(a.parsed);
  EXPECT_EQ(a.reasons, "I think it is fine.");
  a = parse_verifier_answer("VERDICT: maybe\nREASONS: \x1b[31m" + std::string(2000, 'x'));
  EXPECT_FALSE(a.parsed);
  EXPECT_EQ(a.reasons.size(), kMaxVerifierReasonChars);
  EXPECT_EQ(a.reasons.find('\x1b'), std::string::npos);
}

TEST(LlmVerifier, PromptCarriesTheKernelAndTheChecklist) {
  TaskContext ctx;
  ctx.task_name = "vec_scale";
  ctx.signature = "inputs: x";
  Prompt p = build_verifier_prompt(ctx, "__global__ void k() {}\n");
  EXPECT_TRUE(contains(p.user, "## Kernel to review\n```cuda\n__global__ void k() {}\n```"));
  for (const char* item : {"1. Compile", "2. Numerics", "3. Memory", "4. Hacks", "VERDICT: PASS"})
    EXPECT_TRUE(contains(p.user, item)) << item;
}

store::EventRow event(int64_t candidate, bool parsed, bool pass) {
  store::EventRow e;
  e.kind = results::kVerifierEvent;
  e.data_json = VerifierAnswer{.answered = true, .parsed = parsed, .pass = pass, .model = "fake:v",
                               .input_tokens = 10, .output_tokens = 5, .cost_usd = 0.01}
                    .to_json(candidate)
                    .dump();
  return e;
}

TEST(VerifierMatrix, CountsAgainstTheCheckersVerdict) {
  std::vector<store::CandidateRow> cands(7);
  using store::CandidateOutcome;
  const CandidateOutcome outcomes[] = {CandidateOutcome::kPass,         CandidateOutcome::kIncorrect,
                                       CandidateOutcome::kPass,         CandidateOutcome::kCompileError,
                                       CandidateOutcome::kUnsafe,       CandidateOutcome::kInfraError,
                                       CandidateOutcome::kPass};
  for (int i = 0; i < 7; ++i) cands[i].id = i + 1, cands[i].outcome = outcomes[i];
  std::vector<store::EventRow> ev{event(1, true, true),  event(2, true, false), event(3, true, false),
                                  event(4, true, true),  event(5, true, false), event(6, true, false),
                                  event(7, false, false), event(99, true, true)};
  ev.push_back({.kind = "candidate", .data_json = "{}"});
  results::VerifierMatrix m = results::verifier_matrix(ev, cands);
  EXPECT_EQ(m.tp, 2);  // incorrect, unsafe: failed by both
  EXPECT_EQ(m.fp, 1);  // a passing kernel it would have thrown away
  EXPECT_EQ(m.tn, 1);
  EXPECT_EQ(m.fn, 1);  // compile_error it passed
  EXPECT_EQ(m.unanswered, 1);
  EXPECT_EQ(m.no_verdict, 2);  // infra_error, and a candidate that is not stored
  EXPECT_EQ(m.calls, 8);
  EXPECT_EQ(m.input_tokens, 80);
  EXPECT_NEAR(m.cost_usd, 0.08, 1e-12);
  EXPECT_NEAR(*m.precision(), 2.0 / 3, 1e-12);
  EXPECT_NEAR(*m.recall(), 2.0 / 3, 1e-12);
  std::string t = m.to_text();
  EXPECT_TRUE(contains(t, "LLM verifier (fake:v) against the checker, 5 candidates judged by both")) << t;
  EXPECT_TRUE(contains(t, "precision 0.67")) << t;
  EXPECT_EQ(m.to_json()["fp"], 1);
  EXPECT_EQ(results::verifier_matrix({}, cands).to_text(), "");
  EXPECT_FALSE(results::verifier_matrix({}, cands).precision());
}

// Proposals cycle through four kinds; the reviewing rule fails kernels that say "incorrect" in
// their marker, unless they say "looks fine", and any that say "shady": so each cell gets one.
std::string kernel_to_review(const std::string& prompt) {
  auto a = prompt.find("## Kernel to review"), b = prompt.find("## Checklist");
  return a == std::string::npos || b == std::string::npos ? "" : prompt.substr(a, b - a);
}

PromptServer::Responder proposals_and_reviews(std::atomic<int>& k) {
  return [&k](const std::string& prompt, int) {
    std::string kernel = kernel_to_review(prompt);
    if (!kernel.empty()) {
      bool fail = (contains(kernel, "fake: incorrect") && !contains(kernel, "looks fine")) || contains(kernel, "shady");
      return std::string(fail ? "VERDICT: FAIL\nREASONS: item 2: wrong results\n" : "VERDICT: PASS\nREASONS: none\n");
    }
    int i = k++;
    std::string unique = "// proposal " + std::to_string(i) + "\n";
    std::string t = std::to_string(1.8 - 0.01 * i);
    switch (i % 4) {
      case 0: return answer("p", "idea", kernel_source("pass time_ms=" + t, unique));
      case 1: return answer("p", "idea", kernel_source("incorrect", unique));
      case 2: return answer("p", "idea", kernel_source("pass time_ms=" + t, unique + "// shady\n"));
      default: return answer("p", "idea", kernel_source("incorrect", unique + "// looks fine\n"));
    }
  };
}

TEST(VerifierRun, EveryCandidateIsJudgedByTheCheckerAndTheReviewRecorded) {
  std::atomic<int> k{0};
  Harness h(proposals_and_reviews(k));
  auto verifier = llm::make_client("fake:m1", h.ctx);
  ASSERT_TRUE(verifier);
  auto o = h.options("evoengineer-free", 8);
  Engine e(h.task, *h.eval, *h.db, h.client.get(), nullptr, h.cancel);
  e.set_verifier(verifier->get());
  auto out = e.start(o);
  ASSERT_TRUE(out) << out.error().message;
  auto cands = h.candidates(out->run_id);
  ASSERT_EQ(cands.size(), 8u);
  // Never the gate: the kernels it failed were evaluated, and the passing ones passed.
  int passed = 0;
  for (const auto& c : cands) passed += c.passed();
  EXPECT_EQ(passed, 4);
  auto ev = h.db->events(out->run_id);
  ASSERT_TRUE(ev);
  results::VerifierMatrix m = results::verifier_matrix(*ev, cands);
  EXPECT_EQ(m.calls, 8);
  EXPECT_EQ(m.tp, 2);
  EXPECT_EQ(m.fp, 2);
  EXPECT_EQ(m.tn, 2);
  EXPECT_EQ(m.fn, 2);
  EXPECT_DOUBLE_EQ(*m.precision(), 0.5);
  EXPECT_EQ(m.models, "fake:m1");
  EXPECT_GT(m.input_tokens, 0);
  // Its calls are the run's calls too: proposals and reviews, one each per candidate.
  auto totals = h.db->totals(out->run_id);
  ASSERT_TRUE(totals);
  EXPECT_EQ(totals->llm_calls, 16);
}

// A verifier whose server is gone: every review fails, and the search goes on without it (it is
// never the gate). Each failed review is recorded as unanswered, with its error on the call.
TEST(VerifierRun, ADeadVerifierServerStopsNothing) {
  std::atomic<int> k{0};
  Harness h(proposals_and_reviews(k));
  llm::LlmConfig dead = llm::testing::test_config("http://127.0.0.1:1");  // port 1: refused
  dead.retry.max_attempts = 1;
  auto verifier = llm::make_client("fake:m1", llm::make_context(dead, {.seed = 3}));
  ASSERT_TRUE(verifier);
  Engine e(h.task, *h.eval, *h.db, h.client.get(), nullptr, h.cancel);
  e.set_verifier(verifier->get());
  auto out = e.start(h.options("evoengineer-free", 4));
  ASSERT_TRUE(out) << out.error().message;
  auto cands = h.candidates(out->run_id);
  ASSERT_EQ(cands.size(), 4u);
  int passed = 0;
  for (const auto& c : cands) passed += c.passed();
  EXPECT_EQ(passed, 2);
  auto ev = h.db->events(out->run_id);
  ASSERT_TRUE(ev);
  results::VerifierMatrix m = results::verifier_matrix(*ev, cands);
  EXPECT_EQ(m.calls, 4);
  EXPECT_EQ(m.unanswered, 4);
  EXPECT_EQ(m.judged(), 0);
  for (const auto& p : h.server.prompts()) EXPECT_FALSE(contains(p, "## Checklist"));  // none reached it
}

TEST(VerifierRun, WithoutAVerifierNothingIsAskedOrRecorded) {
  std::atomic<int> k{0};
  Harness h(proposals_and_reviews(k));
  auto out = h.run(h.options("evoengineer-free", 4));
  ASSERT_TRUE(out) << out.error().message;
  for (const auto& p : h.server.prompts()) EXPECT_FALSE(contains(p, "## Checklist"));
  auto ev = h.db->events(out->run_id);
  ASSERT_TRUE(ev);
  EXPECT_EQ(results::verifier_matrix(*ev, h.candidates(out->run_id)).calls, 0);
}

// kevo's adversarial and good kernels (tests/gpu/kernels/manifest.toml) reviewed by a loopback
// model that answers by rule (FAIL on a few telltale words), against the verdicts the manifest
// expects, which the GPU check asserts are the checker's (scripts/gpu-check.sh kernels). The
// matrix is printed (VERIFIER_MATRIX) for the record; the test checks that every kernel lands in
// exactly one cell, on the side the manifest puts it.
TEST(VerifierRun, MatrixOverTheManifestKernels) {
  const std::filesystem::path dir = std::filesystem::path(KEVO_SOURCE_DIR) / "tests" / "gpu" / "kernels";
  toml::table t = toml::parse_file((dir / "manifest.toml").string());
  auto* kernels = t["kernel"].as_array();
  ASSERT_TRUE(kernels);
  const char* telltales[] = {"cudaStreamCreate", "std::thread", "pthread", "static ", "cudaDeviceSetLimit",
                             "cudaCtxResetPersistingL2Cache", "__half", "fork", "dlopen", "asm"};
  Harness h([&](const std::string& prompt, int) {
    std::string kernel = kernel_to_review(prompt);
    for (const char* w : telltales)
      if (contains(kernel, w)) return "VERDICT: FAIL\nREASONS: item 4: uses " + std::string(w) + "\n";
    return std::string("VERDICT: PASS\nREASONS: none\n");
  });
  std::vector<store::CandidateRow> cands;
  std::vector<store::EventRow> events;
  int64_t bad = 0, good = 0;
  for (const auto& n : *kernels) {
    const auto& k = *n.as_table();
    auto src = read_file(dir / k["file"].value_or(std::string()));
    ASSERT_TRUE(src) << k["file"].value_or(std::string());
    TaskContext ctx;
    ctx.task_name = k["task"].value_or(std::string());
    store::CandidateRow c;
    c.id = static_cast<int64_t>(cands.size()) + 1;
    auto expect = store::parse_candidate_outcome(k["expect"].value_or(std::string()));
    ASSERT_TRUE(expect) << "unknown outcome in the manifest: " << k["expect"].value_or(std::string());
    c.outcome = *expect;
    (c.passed() ? good : bad) += 1;
    VerifierAnswer a = run_verifier(*h.client, ctx, *src, c.id, h.cancel);
    ASSERT_TRUE(a.parsed) << a.error << a.reasons;
    events.push_back({.kind = results::kVerifierEvent, .data_json = a.to_json(c.id).dump()});
    cands.push_back(c);
  }
  results::VerifierMatrix m = results::verifier_matrix(events, cands);
  std::printf("VERIFIER_MATRIX manifest %s\n", m.to_json().dump().c_str());
  EXPECT_EQ(m.tp + m.fn, bad);
  EXPECT_EQ(m.fp + m.tn, good);
  EXPECT_EQ(m.calls, static_cast<int64_t>(kernels->size()));
  EXPECT_GE(kernels->size(), 40u);
  EXPECT_GT(m.tp, 0);  // the rule catches some hacks (threads, streams)
}

}  // namespace
}  // namespace kevo::evolve
