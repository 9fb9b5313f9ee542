// Agent episodes as the search's proposals (evolve/episode.h) on a CPU: a scripted agent speaks
// JSON-RPC to kevo's tools in episode mode, the marker evaluator stands in for the GPU. Every
// evaluation an episode asks for is a candidate of the search's run (operator agent, its turns in
// lineage), the episode is one call in the accounting, and the run's winner is verified on
// held-out shapes at the end as any run's is.
#include <gtest/gtest.h>

#include <atomic>

#include "../evolve/harness.h"
#include "agent/kernel_tools.h"
#include "evolve/engine.h"
#include "evolve/episode.h"
#include "mcp/session.h"

namespace kevo::agent {
namespace {

using evolve::testing::kernel_source;
using nlohmann::json;

// An agent that evaluates a broken kernel, then a faster one each episode, and submits that.
class ScriptedAgent final : public evolve::EpisodeRunner {
 public:
  ScriptedAgent(const Task& task, evolve::CandidateEvaluator& ev) : task_(task), ev_(ev) {}
  std::string name() const override { return "command:scripted"; }
  evolve::EpisodeOutcome run(const evolve::Job& job, const evolve::TaskContext& ctx, evolve::EpisodeBroker& broker,
                             const llm::CancelToken&) override {
    const int n = ++episodes_;
    SessionOptions o;
    o.broker = &broker;
    o.context = &ctx;
    o.parents = job.parents;
    o.model = name();
    mcp::Session rpc({"kevo", "t", ""}, std::make_unique<KernelTools>(KernelSession::start_episode(task_, ev_, o)));
    auto call = [&](const std::string& tool, json args) {
      json m = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}};
      return rpc.handle(m).value_or(json())["result"];
    };
    (void)rpc.handle(json{{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"}, {"params", {{"protocolVersion", "2025-11-25"}}}});
    task_text = call("task", json::object())["content"][0]["text"];
    last_bad = call("evaluate", {{"source", kernel_source(fmt::format("incorrect episode {} got y[3] wrong", n))}});
    json good = call("evaluate", {{"source", kernel_source(fmt::format("pass time_ms={}", 1.0 / n))}, {"name", "e" + std::to_string(n)}});
    repeat = call("evaluate", {{"source", kernel_source(fmt::format("pass time_ms={}", 1.0 / n))}});
    json sub = call("submit", {{"candidate", good["structuredContent"]["candidate"]}});
    evolve::EpisodeOutcome out;
    out.ok = true;
    out.model = name();
    out.cost_usd = 0.25;
    out.answer = sub["structuredContent"].value("candidate", int64_t{0});
    out.summary = sub["content"][0]["text"];
    return out;
  }
  std::atomic<int> episodes_{0};
  std::string task_text;
  json last_bad, repeat;

 private:
  const Task& task_;
  evolve::CandidateEvaluator& ev_;
};

TEST(AgentEpisodes, EachEvaluationOfAnEpisodeIsACandidateOfTheSearchsRun) {
  evolve::testing::Harness h(evolve::testing::improving_kernels());
  ScriptedAgent agent(h.task, h.evaluator);
  auto o = h.options("kevo-default", 6);
  evolve::Engine e(h.task, h.evaluator, *h.db, nullptr, nullptr, h.cancel);
  e.set_episodes(&agent);
  auto out = e.start(o);
  ASSERT_TRUE(out) << out.error().message;
  auto rows = h.candidates(out->run_id);
  ASSERT_EQ(rows.size(), 6u) << "the candidate budget counts an episode's attempts";
  EXPECT_EQ(agent.episodes_, 3);
  for (const auto& r : rows) {
    EXPECT_EQ(r.op, "agent");
    EXPECT_EQ(r.model, "command:scripted");
  }
  EXPECT_EQ(rows[1].parents, std::vector<int64_t>{rows[0].id}) << "an episode's turns are a lineage";
  EXPECT_EQ(rows[0].outcome, store::CandidateOutcome::kIncorrect);
  EXPECT_EQ(rows[1].outcome, store::CandidateOutcome::kPass);
  EXPECT_NE(agent.repeat["content"][0]["text"].get<std::string>().find("not evaluated again"), std::string::npos)
      << agent.repeat.dump();
  EXPECT_NE(agent.task_text.find("Candidate ABI"), std::string::npos);
  EXPECT_EQ(agent.task_text.find(evolve::testing::kHeldName), std::string::npos);
  // The run's winner: the fastest kernel, verified on held-out shapes at the end.
  EXPECT_EQ(out->winner, rows[5].id);
  auto run = *h.db->get_run(out->run_id);
  EXPECT_EQ(json::parse(run.config_json)["llm"], "command:scripted");
  auto totals = *h.db->totals(out->run_id);
  EXPECT_EQ(totals.llm_calls, 3) << "one call per episode";
  EXPECT_NEAR(totals.cost_usd, 0.75, 1e-9);
}

TEST(AgentEpisodes, AnEpisodeThatCannotStartStopsTheRun) {
  struct Missing final : evolve::EpisodeRunner {
    std::string name() const override { return "claude-code:x"; }
    evolve::EpisodeOutcome run(const evolve::Job&, const evolve::TaskContext&, evolve::EpisodeBroker&,
                               const llm::CancelToken&) override {
      evolve::EpisodeOutcome o;
      o.fatal = true;
      o.error = "claude is not installed: npm install -g @anthropic-ai/claude-code";
      return o;
    }
  } missing;
  evolve::testing::Harness h(evolve::testing::improving_kernels());
  evolve::Engine e(h.task, h.evaluator, *h.db, nullptr, nullptr, h.cancel);
  e.set_episodes(&missing);
  auto out = e.start(h.options("kevo-default", 6));
  ASSERT_TRUE(out) << out.error().message;
  auto run = *h.db->get_run(out->run_id);
  EXPECT_NE(run.stop_reason.find("npm install"), std::string::npos) << run.stop_reason;
  EXPECT_EQ(h.candidates(out->run_id).size(), 0u);
}

}  // namespace
}  // namespace kevo::agent
