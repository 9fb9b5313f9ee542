// The agent tool layer on a CPU: the marker evaluator stands in for the GPU, a SQLite file in a
// scratch folder holds the session's run. Every attempt is a candidate, budgets are enforced by
// the session, a submission is verified on held-out shapes, and what the agent reads never names
// them.
#include "agent/kernel_session.h"

#include <gtest/gtest.h>

#include <thread>

#include "../evolve/harness.h"
#include "agent/kernel_tools.h"
#include "mcp/session.h"
#include "support/pg_server.h"

namespace kevo::agent {
namespace {

using evolve::testing::kernel_source;
using evolve::testing::kHeldName;
using evolve::testing::kHeldValue;
using nlohmann::json;

struct SessionFixture : ::testing::Test {
  std::filesystem::path dir = evolve::testing::temp_dir("agent");
  Task task = evolve::testing::make_task(dir / "task");
  evolve::MarkerEvaluator ev{2.0};
  std::unique_ptr<store::RunDb> db = store::RunDb::open(dir / "runs.db").value();

  std::unique_ptr<KernelSession> start(SessionBudgets b = {}) {
    SessionOptions o;
    o.budgets = b;
    o.work_dir = dir / "work";
    auto s = KernelSession::start(task, ev, *db, o);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    return s ? std::move(*s) : nullptr;
  }
  static Attempt ok(const ToolResultOr<Attempt>& a) {
    EXPECT_TRUE(std::holds_alternative<Attempt>(a)) << std::get<ToolError>(a).message;
    return std::holds_alternative<Attempt>(a) ? std::get<Attempt>(a) : Attempt{};
  }
  static ToolError err(const ToolResultOr<Attempt>& a) {
    EXPECT_TRUE(std::holds_alternative<ToolError>(a));
    return std::holds_alternative<ToolError>(a) ? std::get<ToolError>(a) : ToolError{};
  }
};

TEST_F(SessionFixture, EveryAttemptIsACandidateOfTheSessionsRunInTurnOrder) {
  auto s = start();
  s->set_client("claude-code", "2.1");
  Attempt good = ok(s->evaluate(kernel_source("pass time_ms=1.0"), "fast", "one pass"));
  Attempt bad = ok(s->evaluate(kernel_source("incorrect y[7] = 3 (expected 14)"), "wrong", ""));
  Attempt broken = ok(s->evaluate(kernel_source("compile_error candidate.cu(3): error: expected ';'"), "", ""));
  EXPECT_EQ(good.outcome, store::CandidateOutcome::kPass);
  EXPECT_NEAR(good.speedup, 2.0, 1e-9);
  EXPECT_EQ(bad.outcome, store::CandidateOutcome::kIncorrect);
  EXPECT_NE(bad.view.value("feedback", "").find("First mismatch"), std::string::npos) << bad.view.dump();
  EXPECT_NE(broken.view.value("feedback", "").find("The compiler said"), std::string::npos) << broken.view.dump();
  auto rows = *db->candidates(s->run_id());
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].seq, static_cast<int>(i) + 1);
    EXPECT_EQ(rows[i].op, "agent");
    EXPECT_EQ(rows[i].model, "claude-code 2.1");
    if (i > 0) {
      EXPECT_EQ(rows[i].parents, std::vector<int64_t>{rows[i - 1].id});
    }
  }
  EXPECT_EQ(rows[0].name, "fast");
  EXPECT_EQ(rows[0].rationale, "one pass");
  auto run = *db->get_run(s->run_id());
  EXPECT_EQ(run.strategy, "mcp");
  EXPECT_EQ(run.best_candidate, good.candidate);
}

TEST_F(SessionFixture, WhatTheAgentReadsNeverNamesTheHeldOutShapes) {
  auto s = start();
  std::string seen = s->task_view().dump();
  // A message naming a held-out config (a visible evaluation never runs one; the words are scrubbed
  // whatever their source).
  seen += ok(s->evaluate(kernel_source("incorrect mismatch on secret_holdout"), "", "")).view.dump();
  Attempt a = ok(s->evaluate(kernel_source("pass time_ms=1.0 held_out_fail"), "", ""));
  auto sub = s->submit("", a.candidate);
  ASSERT_TRUE(std::holds_alternative<json>(sub));
  seen += std::get<json>(sub).dump() + s->history().dump();
  const json history = s->history();
  for (const auto& h : history["attempts"]) seen += h.dump();
  EXPECT_EQ(seen.find(kHeldName), std::string::npos) << seen;
  EXPECT_EQ(seen.find(kHeldValue), std::string::npos) << seen;
  EXPECT_NE(seen.find("ragged"), std::string::npos) << "visible shapes are shown";
  EXPECT_FALSE(std::get<json>(sub)["verified"].get<bool>());
}

TEST_F(SessionFixture, ASubmissionIsVerifiedOnHeldOutShapesAndBecomesTheRunsResult) {
  auto s = start();
  Attempt a = ok(s->evaluate(kernel_source("pass time_ms=0.5"), "quick", ""));
  auto sub = s->submit("", a.candidate);
  ASSERT_TRUE(std::holds_alternative<json>(sub));
  const json& v = std::get<json>(sub);
  EXPECT_TRUE(v["verified"].get<bool>()) << v.dump();
  EXPECT_TRUE(v["winner"].get<bool>()) << v.dump();
  EXPECT_NEAR(v["speedup"].get<double>(), 4.0, 1e-6);
  bool held_out_call = false;
  for (const auto& c : ev.calls()) held_out_call |= c.held_out_only && !c.seed;
  EXPECT_TRUE(held_out_call) << "held-out configs, fresh inputs";
  auto run = *db->get_run(s->run_id());
  json fin = json::parse(run.final_json);
  EXPECT_EQ(fin["winner"], a.candidate);
  EXPECT_EQ(run.best_candidate, a.candidate);
  // A candidate id that is not a passing attempt of this session is refused.
  EXPECT_TRUE(std::holds_alternative<ToolError>(s->submit("", 999999)));
  Attempt bad = ok(s->evaluate(kernel_source("incorrect nope"), "", ""));
  EXPECT_TRUE(std::holds_alternative<ToolError>(s->submit("", bad.candidate)));
  // A new source is evaluated first, then verified.
  auto direct = s->submit(kernel_source("pass time_ms=0.4"), 0);
  ASSERT_TRUE(std::holds_alternative<json>(direct));
  EXPECT_TRUE(std::get<json>(direct)["winner"].get<bool>());
  EXPECT_EQ(db->candidates(s->run_id())->size(), 3u);
}

TEST_F(SessionFixture, EachBudgetRefusesTheCallThatWouldExceedIt) {
  SessionBudgets b;
  b.evaluations = 2;
  b.submissions = 1;
  b.compiles = 1;
  b.source_bytes = 4096;
  auto s = start(b);
  Attempt a = ok(s->evaluate(kernel_source("pass time_ms=1.0"), "", ""));
  (void)ok(s->evaluate(kernel_source("pass time_ms=1.0"), "", ""));
  ToolError e = err(s->evaluate(kernel_source("pass time_ms=1.0"), "", ""));
  EXPECT_EQ(e.budget, Budget::kEvaluations);
  EXPECT_NE(e.message.find("budget: evaluations spent (2 of 2)"), std::string::npos) << e.message;
  EXPECT_TRUE(std::holds_alternative<json>(s->submit("", a.candidate)));
  auto second = s->submit("", a.candidate);
  ASSERT_TRUE(std::holds_alternative<ToolError>(second));
  EXPECT_EQ(std::get<ToolError>(second).budget, Budget::kSubmissions);
  EXPECT_TRUE(std::holds_alternative<json>(s->compile(kernel_source("pass"))));
  auto c2 = s->compile(kernel_source("pass"));
  ASSERT_TRUE(std::holds_alternative<ToolError>(c2));
  EXPECT_EQ(std::get<ToolError>(c2).budget, Budget::kCompiles);
  ToolError big = err(s->evaluate(std::string(5000, 'x'), "", ""));
  EXPECT_NE(big.message.find("5000 bytes; the limit is 4096"), std::string::npos) << big.message;
  EXPECT_NE(err(s->evaluate("  \n", "", "")).message.find("empty"), std::string::npos);
  EXPECT_EQ(db->candidates(s->run_id())->size(), 2u) << "a refused call records nothing";
}

TEST_F(SessionFixture, EvaluationsBeyondTheParallelBudgetAreRefusedWhileOneRuns) {
  auto s = start();
  std::thread slow([&] { (void)s->evaluate(kernel_source("pass time_ms=1.0 sleep_ms=600"), "", ""); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ToolError e = err(s->evaluate(kernel_source("pass time_ms=1.0"), "", ""));
  EXPECT_EQ(e.budget, Budget::kParallel);
  slow.join();
  EXPECT_EQ(db->candidates(s->run_id())->size(), 1u);
  EXPECT_GT(s->spent().gpu_seconds, 0.5);
}

TEST_F(SessionFixture, ASessionEndedWithoutASubmissionRecordsItsBestButNoWinner) {
  auto s = start();
  Attempt a = ok(s->evaluate(kernel_source("pass time_ms=1.0"), "", ""));
  s->finish(SessionEnd::kClientGone, 2);
  auto run = *db->get_run(s->run_id());
  EXPECT_EQ(run.status, store::RunStatus::kFinished);
  EXPECT_EQ(run.stop_reason, "agent_client_gone");
  EXPECT_EQ(run.best_candidate, a.candidate);
  EXPECT_TRUE(run.final_json.empty()) << "no winner without a verified submission";
  EXPECT_NE(run.note.find("not verified"), std::string::npos) << run.note;
  auto events = *db->events(s->run_id());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(json::parse(events.back().data_json)["protocol_errors"], 2);
  EXPECT_TRUE(std::holds_alternative<ToolError>(s->evaluate(kernel_source("pass"), "", ""))) << "ended";
}

TEST_F(SessionFixture, FinishingWaitsForTheEvaluationInFlightAndRecordsIt) {
  auto s = start();
  std::thread slow([&] { (void)s->evaluate(kernel_source("pass time_ms=1.0 sleep_ms=500"), "", ""); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  s->finish(SessionEnd::kClientGone, 0);
  slow.join();
  EXPECT_EQ(db->candidates(s->run_id())->size(), 1u);
  EXPECT_EQ(db->get_run(s->run_id())->best_speedup, 2.0);
}

TEST_F(SessionFixture, TheWallTimeBudgetEndsTheSession) {
  SessionBudgets b;
  b.wall_seconds = 0.2;
  auto s = start(b);
  EXPECT_FALSE(s->expired());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(s->expired());
  EXPECT_EQ(err(s->evaluate(kernel_source("pass"), "", "")).budget, Budget::kWallTime);
  KernelTools tools(std::move(s));
  const int64_t run = tools.session().run_id();
  tools.close(mcp::CloseReason::kShutdown, 0);
  EXPECT_EQ(db->get_run(run)->stop_reason, "agent_wall_time");
}

// The marker evaluator's baseline always passes; this one's never does.
class FailingBaseline final : public evolve::CandidateEvaluator {
 public:
  Verdict evaluate(const Task&, const std::filesystem::path&, const EvalOptions&) override { return {}; }
  Verdict evaluate_baseline(const Task&, const EvalOptions&) override {
    Verdict v;
    v.set(Outcome::Incorrect, Reason::kMismatch, "out[3] = 1 (expected 2)");
    return v;
  }
  bool is_fake() const override { return true; }
};

TEST_F(SessionFixture, ABaselineThatFailsItsCheckStartsNoSession) {
  FailingBaseline failing;
  SessionOptions o;
  o.work_dir = dir / "work";
  auto s = KernelSession::start(task, failing, *db, o);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("baseline failed its own check"), std::string::npos) << s.error().message;
  auto runs = *db->list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, store::RunStatus::kFailed);
  EXPECT_EQ(runs[0].stop_reason, "baseline_failed");
}

// The same session in a PostgreSQL run database (what workers on other hosts share).
TEST_F(SessionFixture, ASessionRecordsTheSameInPostgresql) {
  auto url = kevo::test::fresh_pg_database();
  if (!url) GTEST_SKIP() << url.error().message;
  auto pg = store::RunDb::open(*url).value();
  SessionOptions o;
  o.work_dir = dir / "work-pg";
  auto s = KernelSession::start(task, ev, *pg, o).value();
  Attempt a = ok(s->evaluate(kernel_source("pass time_ms=0.5"), "pg", ""));
  (void)ok(s->evaluate(kernel_source("incorrect no"), "", ""));
  ASSERT_TRUE(std::holds_alternative<json>(s->submit("", a.candidate)));
  s->finish(SessionEnd::kClientGone, 0);
  auto run = *pg->get_run(s->run_id());
  EXPECT_EQ(pg->candidates(run.id)->size(), 2u);
  EXPECT_EQ(json::parse(run.final_json)["winner"], a.candidate);
  EXPECT_EQ(run.stop_reason, "agent_client_gone");
}

// The same tools through the MCP session: the JSON-RPC a client sends, the answers it reads.
TEST_F(SessionFixture, TheToolsOverJsonRpc) {
  mcp::Session rpc({"kevo", "t", server_instructions()}, std::make_unique<KernelTools>(start()));
  auto ask = [&](json m) { return rpc.handle(m).value_or(json()); };
  ask({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
       {"params", {{"protocolVersion", "2025-11-25"}, {"clientInfo", {{"name", "sdk"}, {"version", "1"}}}}}});
  json list = ask({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
  std::vector<std::string> names;
  for (const auto& t : list["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"task", "compile", "evaluate", "profile", "history", "submit"}));
  auto call = [&](const std::string& tool, json args) {
    return ask({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}})["result"];
  };
  EXPECT_NE(call("task", json::object())["content"][0]["text"].get<std::string>().find("Candidate ABI"), std::string::npos);
  json ev1 = call("evaluate", {{"source", kernel_source("pass time_ms=1.0")}});
  EXPECT_FALSE(ev1["isError"].get<bool>());
  EXPECT_EQ(ev1["structuredContent"]["outcome"], "pass");
  EXPECT_NE(ev1["content"][0]["text"].get<std::string>().find("speedup 2.000x"), std::string::npos) << ev1.dump();
  EXPECT_TRUE(call("evaluate", {{"source", 5}})["isError"].get<bool>());
  EXPECT_TRUE(call("submit", json::object())["isError"].get<bool>()) << "one of candidate and source";
  json prof = call("profile", {{"candidate", ev1["structuredContent"]["candidate"]}});
  EXPECT_TRUE(prof["structuredContent"].contains("profile")) << prof.dump();
  json sub = call("submit", {{"candidate", ev1["structuredContent"]["candidate"]}});
  EXPECT_TRUE(sub["structuredContent"]["winner"].get<bool>()) << sub.dump();
  EXPECT_EQ(call("history", json::object())["structuredContent"]["attempts"].size(), 2u);
  json res = ask({{"jsonrpc", "2.0"}, {"id", 4}, {"method", "resources/read"}, {"params", {{"uri", "kevo://baseline.cu"}}}});
  EXPECT_NE(res["result"]["contents"][0]["text"].get<std::string>().find("kevo_forward"), std::string::npos);
}

}  // namespace
}  // namespace kevo::agent
