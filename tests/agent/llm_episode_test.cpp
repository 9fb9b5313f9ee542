// Tool-using LLM episodes as the search's proposals (agent/llm_episodes.h), against the loopback
// model server speaking each provider's documented wire format (OpenAI Chat Completions, Anthropic
// Messages) with scripted multi-turn tool use, and the marker evaluator standing in for the GPU.
// Each case asserts on what the run database recorded and on what the server was sent.
#include <gtest/gtest.h>

#include <thread>

#include "../evolve/harness.h"
#include "agent/episode_loop.h"
#include "agent/llm_episodes.h"
#include "evolve/engine.h"
#include "support/fake_model_server.h"
#include "test_util.h"

namespace kevo::agent {
namespace {

using evolve::testing::kernel_source;
using nlohmann::json;

json call(const std::string& tool, json args = json::object()) { return {{"tool", tool}, {"arguments", args}}; }
json turn(json c) { return {{"tool_calls", json::array({std::move(c)})}}; }

// A model that compiles, fixes a compile error, evaluates, reads a mismatch, fixes it, submits.
json good_script() {
  const std::string fixed = kernel_source("pass time_ms=1.0");
  return {{"turns",
           {turn(call("task")), turn(call("compile", {{"source", kernel_source("compile_error kernel.cu(3): error: oops")}})),
            turn(call("evaluate", {{"source", kernel_source("incorrect y[3] = 7 (expected 6)")}, {"name", "first"}})),
            turn(call("evaluate", {{"source", fixed}, {"name", "fixed"}, {"idea", "index the output right"}})),
            turn(call("submit", {{"source", fixed}})), {{"text", "done"}}}}};
}

struct Scene {
  explicit Scene(json script, llm::Protocol p = llm::Protocol::kOpenAI)
      : h(evolve::testing::improving_kernels()) {
    auto s = test::parse_model_script(script);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    auto srv = test::FakeModelServer::start(*s, h.dir / "model.log");
    EXPECT_TRUE(srv) << (srv ? "" : srv.error().message);
    server = std::move(*srv);
    auto cfg = llm::testing::test_config(server->base_url() + "/v1", p);
    ctx = llm::make_context(cfg, {.seed = 5});
    auto c = llm::make_client("fake:m1", ctx);
    EXPECT_TRUE(c) << (c ? "" : c.error().message);
    client = std::move(*c);
  }
  Result<evolve::RunOutcome> run(int candidates, LlmEpisodeOptions o = {}, int parallel = 1,
                                 std::optional<int64_t> max_tokens = {}) {
    runner = std::make_unique<LlmEpisodes>(h.task, h.evaluator, *client, o);
    auto opts = h.options("agent", candidates, parallel);
    opts.budgets.max_tokens = max_tokens;
    opts.strategy.episode.speculate = speculate;
    opts.budgets.max_calls = max_calls;
    evolve::Engine e(h.task, h.evaluator, *h.db, nullptr, nullptr, h.cancel);
    e.set_episodes(runner.get());
    if (pool) e.set_pool(pool.get());
    return e.start(opts);
  }
  std::vector<json> episodes(int64_t run) { return events(run, "episode"); }
  std::vector<json> events(int64_t run, const std::string& kind) {
    std::vector<json> out;
    auto ev = h.db->events(run);
    EXPECT_TRUE(ev);
    for (const auto& e : *ev)
      if (e.kind == kind) out.push_back(json::parse(e.data_json));
    return out;
  }
  // Everything the model was sent, in one text.
  std::string sent() const {
    std::string all;
    for (const auto& r : server->requests()) all += r["body"].dump();
    return all;
  }

  evolve::testing::Harness h;
  std::unique_ptr<test::FakeModelServer> server;
  std::shared_ptr<llm::LlmContext> ctx;
  std::unique_ptr<llm::LlmClient> client;
  std::unique_ptr<LlmEpisodes> runner;
  bool speculate = true;
  std::optional<int64_t> max_calls;  // 1: one episode (a script replays in every episode)
  std::unique_ptr<evolve::EvalPool> pool;  // null: the engine's own, one slot
};

json evaluate_turns(int n) {
  json turns = json::array();
  for (int i = 0; i < n; ++i)
    turns.push_back(turn(call("evaluate", {{"source", kernel_source(fmt::format("pass time_ms={}", 1.9 - i * 0.01))}})));
  return turns;
}

void expect_good_episode(Scene& s, const evolve::RunOutcome& out) {
  auto rows = s.h.candidates(out.run_id);
  ASSERT_EQ(rows.size(), 2u) << "a compile is not a candidate; each evaluate is";
  EXPECT_EQ(rows[0].outcome, store::CandidateOutcome::kIncorrect);
  EXPECT_EQ(rows[1].outcome, store::CandidateOutcome::kPass);
  EXPECT_EQ(rows[0].op, "agent");
  EXPECT_EQ(rows[0].model, "fake:m1");
  EXPECT_EQ(rows[0].prompt, "episode 1, turn 3");
  EXPECT_EQ(rows[1].prompt, "episode 1, turn 4");
  EXPECT_EQ(rows[1].parents, std::vector<int64_t>{rows[0].id}) << "an episode's attempts are a lineage";
  EXPECT_EQ(out.winner, rows[1].id) << "the answer is verified on held-out shapes like any winner";
  auto eps = s.episodes(out.run_id);
  ASSERT_EQ(eps.size(), 1u);
  const json& e = eps[0];
  EXPECT_EQ(e["end"], "submitted") << e.dump();
  EXPECT_EQ(e["turn_count"], 5);
  EXPECT_EQ(e["tool_calls"], 5);
  EXPECT_EQ(e["malformed_calls"], 0);
  EXPECT_EQ(e["answer"], rows[1].id);
  EXPECT_EQ(e["turns"][1]["calls"][0]["result"].get<std::string>().find("did not compile"), 0u) << e["turns"][1].dump();
  EXPECT_NE(e["turns"][2]["calls"][0]["result"].get<std::string>().find("y[3] = 7"), std::string::npos)
      << "the mismatch reaches the model";
  auto totals = *s.h.db->totals(out.run_id);
  EXPECT_EQ(totals.llm_calls, 1) << "one call per episode in the accounting";
  EXPECT_EQ(totals.tokens, e["input_tokens"].get<int64_t>() + e["output_tokens"].get<int64_t>());
  EXPECT_GT(totals.tokens, 0);
  EXPECT_EQ(s.server->problems().size(), 0u) << s.server->problems()[0].dump();
  EXPECT_EQ(s.sent().find(evolve::testing::kHeldName), std::string::npos) << "no held-out config reaches the model";
}

TEST(LlmEpisodes, ChatCompletionsModelCompilesFixesEvaluatesAndSubmits) {
  Scene s(good_script(), llm::Protocol::kOpenAI);
  auto out = s.run(2);
  ASSERT_TRUE(out) << out.error().message;
  expect_good_episode(s, *out);
  // Tool results went back as `tool` messages, the tools as functions with their schemas.
  const json last = s.server->requests().back()["body"];
  EXPECT_EQ(last["tools"][2]["function"]["name"], "evaluate");
  EXPECT_EQ(last["tools"][2]["function"]["parameters"]["required"][0], "source");
  int tool_messages = 0;
  for (const auto& m : last["messages"]) tool_messages += m["role"] == "tool";
  EXPECT_EQ(tool_messages, 4) << "the submission ends the episode: no request follows it";
}

TEST(LlmEpisodes, AnthropicModelCompilesFixesEvaluatesAndSubmits) {
  Scene s(good_script(), llm::Protocol::kAnthropic);
  auto out = s.run(2);
  ASSERT_TRUE(out) << out.error().message;
  expect_good_episode(s, *out);
  const json last = s.server->requests().back()["body"];
  EXPECT_EQ(last["tools"][2]["name"], "evaluate");
  EXPECT_TRUE(last["tools"][2].contains("input_schema"));
}

TEST(LlmEpisodes, AModelThatNeverSubmitsEndsAtItsTurnLimitWithItsBestKernel) {
  json turns = json::array({turn(call("evaluate", {{"source", kernel_source("pass time_ms=1.5")}}))});
  for (int i = 0; i < 40; ++i) turns.push_back(turn(call("history")));
  Scene s(json{{"turns", turns}});
  LlmEpisodeOptions o;
  o.limits.turns = 6;
  auto out = s.run(1, o);
  ASSERT_TRUE(out) << out.error().message;
  auto eps = s.episodes(out->run_id);
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_EQ(eps[0]["end"], "turns");
  EXPECT_EQ(eps[0]["turn_count"], 6);
  EXPECT_EQ(eps[0]["submitted"], false);
  auto rows = s.h.candidates(out->run_id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(eps[0]["answer"], rows[0].id) << "its best passing kernel is its answer";
  EXPECT_EQ(s.server->requests().size(), 6u) << "no request past the limit";
}

TEST(LlmEpisodes, MalformedToolCallsAreAnsweredWithToolErrorsAndCounted) {
  json bad = {{"tool", "evaluate"}, {"raw_arguments", "{\"source\": \"#include"}};
  json wrong_type = call("evaluate", {{"source", 7}});
  json unknown = {{"tool", "reference_outputs"}, {"arguments", {{"config", "main"}}}, {"unoffered", true}};
  json held = call("evaluate", {{"source", kernel_source("pass time_ms=1.0")}, {"config", evolve::testing::kHeldName}});
  json four = {{"tool_calls", json::array({bad, wrong_type, unknown, held})}};
  Scene s(json{{"turns", json::array({four, four, turn(call("history"))})}});
  auto out = s.run(2);  // 8 malformed calls end an episode
  ASSERT_TRUE(out) << out.error().message;
  auto eps = s.episodes(out->run_id);
  ASSERT_EQ(eps.size(), 8u) << "episodes that add no candidate stop the run as failed calls do";
  auto run = *s.h.db->get_run(out->run_id);
  EXPECT_NE(run.stop_reason.find("8 episodes in a row added no candidate"), std::string::npos) << run.stop_reason;
  EXPECT_EQ(eps[0]["end"], "malformed_calls") << eps[0].dump();
  EXPECT_EQ(eps[0]["malformed_calls"], 8);
  EXPECT_EQ(eps[0]["turn_count"], 2);
  const json& calls = eps[0]["turns"][0]["calls"];
  EXPECT_NE(calls[0]["result"].get<std::string>().find("not a JSON object"), std::string::npos) << calls[0].dump();
  EXPECT_NE(calls[1]["result"].get<std::string>().find("'source'"), std::string::npos) << calls[1].dump();
  EXPECT_NE(calls[2]["result"].get<std::string>().find("no tool 'reference_outputs'"), std::string::npos);
  EXPECT_NE(calls[3]["result"].get<std::string>().find("config"), std::string::npos) << calls[3].dump();
  EXPECT_EQ(s.h.candidates(out->run_id).size(), 0u) << "nothing malformed reached the checker";
  // The model saw each refusal as an error result of its call (the episode's second request).
  const json last = s.server->requests().at(1)["body"];
  int errors = 0;
  for (const auto& m : last["messages"])
    if (m["role"] == "tool") errors += m["content"].get<std::string>().rfind("error: ", 0) == 0;
  EXPECT_EQ(errors, 4) << last["messages"].dump();
}

TEST(LlmEpisodes, TheRunsTokenBudgetStopsEpisodesAtTheTurnThatReachesIt) {
  Scene s(json{{"turns", evaluate_turns(30)}});
  const int64_t limit = 12000;
  auto out = s.run(40, {}, 2, limit);
  ASSERT_TRUE(out) << out.error().message;
  auto run = *s.h.db->get_run(out->run_id);
  EXPECT_EQ(run.stop_reason.rfind("budget_tokens", 0), 0u) << run.stop_reason;
  auto eps = s.episodes(out->run_id);
  ASSERT_FALSE(eps.empty());
  int64_t spent = 0, biggest_turn = 0;
  for (const auto& e : eps) {
    EXPECT_EQ(e["end"], "run_budget") << e.dump();
    spent += e["input_tokens"].get<int64_t>() + e["output_tokens"].get<int64_t>();
    for (const auto& t : e["turns"]) biggest_turn = std::max(biggest_turn, t.value("input_tokens", int64_t{0}) + 20);
  }
  EXPECT_GE(spent, limit);
  EXPECT_LE(spent, limit + 2 * biggest_turn) << "at most one turn past the limit per episode in flight";
  EXPECT_EQ((*s.h.db->totals(out->run_id)).tokens, spent);
}

TEST(LlmEpisodes, SeveralCallsOfOneTurnAreAllAnsweredInTheModelsOrder) {
  const std::string a = kernel_source("pass time_ms=1.5"), b = kernel_source("pass time_ms=1.2");
  json three = {{"tool_calls", json::array({call("evaluate", {{"source", a}, {"name", "a"}}),
                                            call("evaluate", {{"source", b}, {"name", "b"}}),
                                            call("submit", {{"source", b}})})}};
  Scene s(json{{"turns", json::array({three, {{"text", "done"}}})}}, llm::Protocol::kAnthropic);
  auto out = s.run(2);
  ASSERT_TRUE(out) << out.error().message;
  auto eps = s.episodes(out->run_id);
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_EQ(eps[0]["end"], "submitted") << "the submit ran after the evaluations it names: " << eps[0].dump();
  const json& calls = eps[0]["turns"][0]["calls"];
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0]["arguments"]["name"], "a");
  EXPECT_EQ(calls[1]["arguments"]["name"], "b");
  EXPECT_EQ(calls[0]["outcome"], "pass");
  EXPECT_EQ(calls[1]["outcome"], "pass");
  EXPECT_EQ(eps[0]["answer"], calls[1]["candidate"]);
  EXPECT_EQ(s.h.candidates(out->run_id).size(), 2u);
}

TEST(LlmEpisodes, CtrlCEndsTheEpisodeAndKeepsWhatItEvaluated) {
  Scene s(json{{"turns", evaluate_turns(30)}});
  std::thread ctrl_c([&] {  // as the SIGINT handler does, once the model has been asked 3 times
    while (s.server->requests().size() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    s.h.cancel.cancel();
  });
  auto out = s.run(40);
  ctrl_c.join();
  ASSERT_TRUE(out) << out.error().message;
  auto run = *s.h.db->get_run(out->run_id);
  EXPECT_EQ(run.status, store::RunStatus::kInterrupted);
  auto eps = s.episodes(out->run_id);
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_EQ(eps[0]["end"], "run_stopping") << eps[0].dump();
  EXPECT_LT(s.server->requests().size(), 30u) << "no more turns are asked once the run stops";
  EXPECT_GE(s.h.candidates(out->run_id).size(), 2u) << "what it evaluated stays recorded";
}

TEST(LlmEpisodes, AModelThatFailsHalfwayKeepsItsCandidatesAndStopsTheRun) {
  // The third request is past the script's end: the server answers 400, which no retry can mend.
  Scene s(json{{"turns", evaluate_turns(2)}});
  auto out = s.run(40);
  ASSERT_TRUE(out) << out.error().message;
  auto run = *s.h.db->get_run(out->run_id);
  EXPECT_EQ(run.stop_reason.rfind("llm_fatal", 0), 0u) << run.stop_reason;
  auto eps = s.episodes(out->run_id);
  ASSERT_FALSE(eps.empty());
  EXPECT_EQ(eps[0]["end"], "model_error") << eps[0].dump();
  EXPECT_NE(eps[0]["end_detail"].get<std::string>().find("400"), std::string::npos) << eps[0].dump();
  EXPECT_EQ(s.h.candidates(out->run_id).size(), 2u) << "the episode's evaluations before the failure are kept";
}

// How often the checker saw `source` on the visible shapes (compiles and evaluations alike).
int checked(const evolve::MarkerEvaluator& ev, const std::string& source) {
  int n = 0;
  for (const auto& c : ev.calls()) n += c.source == source && !c.held_out_only && !c.baseline;
  return n;
}

// A model that compiles X, then a slow Z, then evaluates X and submits it.
json compile_compile_evaluate(const std::string& x, const std::string& z) {
  return {{"turns", {turn(call("compile", {{"source", x}})), turn(call("compile", {{"source", z}})),
                     turn(call("evaluate", {{"source", x}, {"name", "x"}})), turn(call("submit", {{"source", x}})),
                     {{"text", "done"}}}}};
}

TEST(Speculation, AnEvaluateOfACompiledSourceTakesTheVerdictAlreadyThereAndTheUnaskedOneIsWasted) {
  const std::string x = kernel_source("pass time_ms=1.2"), z = kernel_source("pass time_ms=1.3 sleep_ms=300");
  Scene s(compile_compile_evaluate(x, z));
  auto out = s.run(1);
  ASSERT_TRUE(out) << out.error().message;
  auto rows = s.h.candidates(out->run_id);
  ASSERT_EQ(rows.size(), 1u) << "a speculative verdict nobody asked for is no candidate";
  EXPECT_EQ(rows[0].source, x);
  EXPECT_EQ(rows[0].prompt, "episode 1, turn 3") << "recorded as the call that asked for it";
  EXPECT_EQ(rows[0].name, "x");
  EXPECT_EQ(checked(s.h.evaluator, x), 2) << "compiled once, evaluated once: the evaluate took the speculative verdict";
  EXPECT_EQ(checked(s.h.evaluator, z), 2) << "Z was evaluated while the model wrote its next turn";
  auto spec = s.events(out->run_id, "speculation");
  ASSERT_EQ(spec.size(), 1u);
  EXPECT_EQ(spec[0]["started"], 2) << spec[0].dump();
  EXPECT_EQ(spec[0]["used_ready"], 1) << spec[0].dump();
  EXPECT_EQ(spec[0]["used_running"], 0) << spec[0].dump();
  EXPECT_EQ(spec[0]["wasted"], 1) << spec[0].dump();
  EXPECT_GT(spec[0]["wasted_gpu_s"].get<double>(), 0.2) << "the wasted slot time is reported";
  auto eps = s.episodes(out->run_id);
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_EQ(eps[0]["evaluations"], 1) << "the episode's budget counts the evaluate it asked for";
  const json& c = eps[0]["turns"][2]["calls"][0];
  EXPECT_EQ(c["outcome"], "pass") << c.dump();
  EXPECT_EQ(c["candidate"], rows[0].id);
  EXPECT_EQ(out->winner, rows[0].id);
}

TEST(Speculation, AnEvaluateJoinsTheSpeculativeEvaluationStillRunning) {
  const std::string x = kernel_source("pass time_ms=1.2 sleep_ms=500");
  json script = {{"turns", {turn(call("compile", {{"source", x}})), turn(call("evaluate", {{"source", x}})),
                            turn(call("submit", {{"source", x}})), {{"text", "done"}}}}};
  Scene s(script);
  auto out = s.run(1);
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(s.h.candidates(out->run_id).size(), 1u);
  EXPECT_EQ(checked(s.h.evaluator, x), 2) << "the evaluate did not start a second evaluation";
  auto spec = s.events(out->run_id, "speculation");
  ASSERT_EQ(spec.size(), 1u);
  EXPECT_EQ(spec[0]["used_running"], 1) << spec[0].dump();
  EXPECT_EQ(spec[0]["wasted"], 0) << spec[0].dump();
}

TEST(Speculation, OffEvaluatesOnlyWhatTheModelAsksFor) {
  const std::string x = kernel_source("pass time_ms=1.2"), z = kernel_source("pass time_ms=1.3");
  Scene s(compile_compile_evaluate(x, z));
  s.speculate = false;
  auto out = s.run(1);
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(s.h.candidates(out->run_id).size(), 1u);
  EXPECT_EQ(checked(s.h.evaluator, x), 2);
  EXPECT_EQ(checked(s.h.evaluator, z), 1) << "only compiled";
  auto spec = s.events(out->run_id, "speculation");
  ASSERT_EQ(spec.size(), 1u);
  EXPECT_EQ(spec[0]["enabled"], false);
  EXPECT_EQ(spec[0]["started"], 0);
}

TEST(Speculation, ACallAModelWaitsOnNeverQueuesBehindSpeculativeWork) {
  // Two slots: speculation may hold one; the evaluate of Y, asked while two slow compiled sources
  // wait to be evaluated speculatively, takes the other at once.
  const std::string a = kernel_source("pass time_ms=1.5 sleep_ms=800"), b = kernel_source("pass time_ms=1.4 sleep_ms=800");
  const std::string y = kernel_source("pass time_ms=1.2");
  json both = {{"tool_calls", json::array({call("compile", {{"source", a}}), call("compile", {{"source", b}})})}};
  json script = {{"turns", {both, turn(call("evaluate", {{"source", y}})), turn(call("submit", {{"source", y}})),
                            {{"text", "done"}}}}};
  Scene s(script);
  std::vector<std::unique_ptr<evolve::CandidateEvaluator>> evs;
  std::vector<evolve::MarkerEvaluator*> markers;
  for (int i = 0; i < 2; ++i) {
    auto m = std::make_unique<evolve::MarkerEvaluator>();
    markers.push_back(m.get());
    evs.push_back(std::move(m));
  }
  s.pool = evolve::make_local_pool(std::move(evs), {"", ""}, s.h.task);
  s.max_calls = 1;
  auto out = s.run(3);  // room for both speculations in the candidate budget: the slot is what holds one back
  ASSERT_TRUE(out) << out.error().message;
  auto eps = s.episodes(out->run_id);
  ASSERT_EQ(eps.size(), 1u);
  const json& c = eps[0]["turns"][1]["calls"][0];
  EXPECT_EQ(c["outcome"], "pass") << c.dump();
  EXPECT_LT(c["seconds"].get<double>(), 0.5) << "it waited behind speculation: " << c.dump();
  EXPECT_EQ(checked(*markers[0], a) + checked(*markers[1], a) + checked(*markers[0], b) + checked(*markers[1], b), 3)
      << "both compiled, one evaluated speculatively: the other never got the reserved slot";
  auto spec = s.events(out->run_id, "speculation");
  ASSERT_EQ(spec.size(), 1u);
  EXPECT_EQ(spec[0]["started"], 1) << spec[0].dump();
  EXPECT_EQ(spec[0]["wasted"], 1) << spec[0].dump();
  EXPECT_EQ(spec[0]["dropped"], 1) << "never started: its episode ended first: " << spec[0].dump();
}

TEST(Speculation, IsAStrategyKeyAndTakesOnlyABoolean) {
  auto base = evolve::preset("agent");
  ASSERT_TRUE(base);
  EXPECT_TRUE(base->episode.speculate);
  auto off = evolve::parse_strategy_toml("[evolve]\nepisode_speculate = false\n", *base);
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off->episode.speculate);
  EXPECT_EQ(off->to_json()["episode"]["speculate"], false);
  auto back = evolve::StrategyConfig::from_json(off->to_json());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_FALSE(back->episode.speculate) << "a resumed run keeps it";
  auto bad = evolve::parse_strategy_toml("[evolve]\nepisode_speculate = 3\n", *base);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("episode_speculate must be true or false"), std::string::npos) << bad.error().message;
}

TEST(EpisodeLoop, TheFirstMessageIsTheSearchsPromptAndSaysHowToAnswer) {
  evolve::Job j;
  j.no = 7;
  j.prompt.system = "You write CUDA.";
  j.prompt.user = "Improve this kernel.";
  evolve::EpisodeLimits l;
  l.turns = 9;
  l.evaluations = 3;
  auto r = episode_request(j, l);
  EXPECT_EQ(r.system, "You write CUDA.");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].content.rfind("Improve this kernel.", 0), 0u);
  EXPECT_NE(r.messages[0].content.find("9 turns and 3 evaluations"), std::string::npos);
  EXPECT_EQ(r.cache_tag, "job7-episode");
}

}  // namespace
}  // namespace kevo::agent
