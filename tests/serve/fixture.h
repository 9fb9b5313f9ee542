// Shared pieces of the serve tests: run databases filled through the store's own interface (runs,
// candidates with verdicts like the checker's, LLM calls, events, queue jobs completed by named
// workers), and a kevo serve Server on a free loopback port, on a thread of its own.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/server.h"
#include "store/run_db.h"
#include "support/pg_server.h"
#include "support/temp_dir.h"

namespace kevo::serve::testing {

// A candidate source that would run script if it were ever inserted as HTML.
inline const char* kXssSource =
    "// </script><script>document.title='pwned';document.body.setAttribute('data-pwned','1')</script>\n"
    "// <img src=x onerror=\"document.body.setAttribute('data-pwned','2')\">\n"
    "KEVO_EXPORT int kevo_forward(const kevo_args* a) { return 0; }  // xss-marker\n";
inline const char* kXssName = "<img src=x onerror=\"document.body.setAttribute('data-pwned','3')\">";

inline nlohmann::json verdict(bool pass, double ms, const std::string& device, const std::string& detail = "") {
  nlohmann::json v = {{"outcome", pass ? "pass" : "incorrect"}, {"reason", pass ? "" : "mismatch"},
                      {"seconds", 1.5}, {"device", {{"name", device}, {"uuid", device + "-uuid"}}}};
  v["configs"] = {{{"config", "main"}, {"held_out", false}, {"ok", true}, {"draws", 4}, {"max_abs_err", 0.0},
                   {"max_rel_err", 0.0}, {"detail", ""}, {"seconds", 0.2}},
                  {{"config", "ragged"}, {"held_out", false}, {"ok", pass}, {"draws", 4}, {"max_abs_err", pass ? 0.0 : 3.5},
                   {"max_rel_err", pass ? 0.0 : 1.0}, {"detail", detail}, {"seconds", 0.1}}};
  if (pass)
    v["timing"] = {{"config", "main"},
                   {"candidate", {{"n", 30}, {"median_ms", ms}, {"cv", 0.01}, {"median_ci_ms", {ms * 0.99, ms * 1.01}}}},
                   {"baseline", {{"median_ms", 2.0}}},
                   {"speedup", {{"value", 2.0 / ms}, {"ci95", {2.0 / ms * 0.98, 2.0 / ms * 1.02}}}},
                   {"sol_fraction", 0.25 * 2.0 / ms}, {"floor_ms", 0.5}, {"bound", "memory"}};
  return v;
}

// Candidate `seq` of run `run`: passes with a time that improves with seq, or fails on "ragged".
inline store::CandidateRow candidate(int64_t run, int seq, std::vector<int64_t> parents, bool pass,
                                     const std::string& device = "Fake H100") {
  store::CandidateRow c;
  c.run_id = run;
  c.seq = seq;
  c.op = parents.empty() ? "init" : "mutate";
  c.parents = std::move(parents);
  c.model = "fake:m1";
  c.name = "v" + std::to_string(seq);
  c.rationale = "idea " + std::to_string(seq);
  c.prompt = "PROMPT for candidate " + std::to_string(seq) + ": make it faster";
  c.answer = "ANSWER " + std::to_string(seq) + "\n```cuda\n...\n```";
  c.source = "// candidate source " + std::to_string(seq) + " source-marker\nint kevo_forward() { return " +
             std::to_string(seq) + "; }\n";
  const double ms = 2.0 / (1.0 + 0.05 * seq);
  c.outcome = pass ? store::CandidateOutcome::kPass : store::CandidateOutcome::kIncorrect;
  c.reason = pass ? "" : "mismatch";
  c.message = pass ? "" : "config ragged: 3 of 1001 elements differ";
  c.compile_json = R"({"ok":true,"diagnostics":""})";
  c.verdict_json = verdict(pass, ms, device, pass ? "" : "y[17]: got 3.5, want 0 (abs err 3.5)").dump();
  c.speedup = pass ? 2.0 / ms : 0;
  c.speedup_lo = c.speedup * 0.98, c.speedup_hi = c.speedup * 1.02;
  c.time_ms = pass ? ms : 0;
  c.accepted = pass;
  c.created_at = store::unix_now();
  return c;
}

inline store::RunRow run_row(const std::string& task, int budget) {
  store::RunRow r;
  r.task = task;
  r.task_dir = "/nonexistent/" + task;
  r.strategy = "kevo-default";
  r.config_json = nlohmann::json{{"budgets", {{"max_candidates", budget}, {"max_usd", 5.0}}},
                                 {"llm", "fake:m1"}, {"fake_evaluator", true}}.dump();
  r.baseline_json = nlohmann::json{{"outcome", "pass"}, {"time_ms", 2.0}}.dump();
  r.created_at = store::unix_now() - 60;
  return r;
}

// Adds a candidate with its LLM call; returns its id.
inline int64_t add(store::RunDb& db, store::CandidateRow c) {
  store::LlmCallRow call;
  call.run_id = c.run_id;
  call.model = "fake:m1";
  call.purpose = c.op;
  call.input_tokens = 1000, call.output_tokens = 500, call.cost_usd = 0.01;
  auto st = db.add_candidate(c, {call});
  EXPECT_TRUE(st) << (st ? "" : st.error().message);
  return c.id;
}

struct Filled {
  int64_t run1 = 0, run2 = 0;
  std::vector<int64_t> cands;  // run 1's, in seq order
  int64_t xss = 0;             // run 1's candidate with kXssSource
  int64_t other = 0;           // a candidate of run 2
};

// Run 1 (vec_scale, budget 40): `n` candidates, every third failing, a chain of parents, the last
// one kXssSource; events; two queue jobs done by two workers and one in flight. Run 2 (softmax):
// one candidate.
inline Filled fill(store::RunDb& db, int n = 12) {
  Filled f;
  auto r1 = db.create_run(run_row("vec_scale", 40));
  auto r2 = db.create_run(run_row("softmax", 10));
  EXPECT_TRUE(r1 && r2);
  f.run1 = *r1, f.run2 = *r2;
  for (int i = 1; i <= n; ++i) {
    auto c = candidate(f.run1, i, f.cands.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{f.cands.back()},
                       i % 3 != 0, i % 2 ? "Fake H100" : "Fake H200");
    if (i == n) c.source = kXssSource, c.name = kXssName, c.rationale = "<script>alert(1)</script>";
    f.cands.push_back(add(db, c));
    (void)db.add_event(f.run1, "candidate", nlohmann::json{{"candidate", f.cands.back()}, {"seq", i}}.dump());
  }
  f.xss = f.cands.back();
  auto run = db.get_run(f.run1);
  run->best_candidate = f.cands[n % 3 == 0 ? n - 2 : n - 1];
  run->best_speedup = 1.5;
  EXPECT_TRUE(db.update_run(*run));
  f.other = add(db, candidate(f.run2, 1, {}, true));
  for (int j = 1; j <= 3; ++j) EXPECT_TRUE(db.enqueue(f.run1, j, R"({"kind":"candidate"})"));
  for (const char* w : {"hostA/gpu0", "hostB/gpu1"}) {
    auto job = db.claim(w, 30, 3, f.run1);
    EXPECT_TRUE(job && *job);
    nlohmann::json res = {{"verdict", verdict(true, 1.0, w)}, {"busy_s", 2.5}, {"worker", w}};
    EXPECT_TRUE(db.complete((**job).id, w, res.dump()));
  }
  EXPECT_TRUE(db.claim("hostA/gpu0", 30, 3, f.run1));
  return f;
}

// A database location: a SQLite file in a scratch folder, or a fresh PostgreSQL database.
struct Location {
  std::optional<test::TempDir> dir;
  std::string where;
  std::string skip;  // why PostgreSQL is not available ("" when it is, or for SQLite)
  explicit Location(bool postgres) {
    if (postgres) {
      auto url = test::fresh_pg_database();
      if (url) where = *url;
      else skip = url.error().message;
    } else {
      dir.emplace("kevo-serve-test");
      where = (dir->path / "runs.db").string();
    }
  }
};

// kevo serve on 127.0.0.1 and a free port, serving until destroyed.
class LiveServer {
 public:
  explicit LiveServer(const std::string& where, const std::string& token = "") {
    auto s = Server::open({where, {"127.0.0.1", 0}, token, false, 0});
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    if (!s) return;
    server_ = std::move(*s);
    auto p = server_->bind();
    EXPECT_TRUE(p) << (p ? "" : p.error().message);
    port_ = p ? *p : 0;
    thread_ = std::thread([this] { server_->run(); });
  }
  ~LiveServer() {
    if (!server_) return;
    server_->stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::string url(const std::string& path = "/") const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }

 private:
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::thread thread_;
};

inline bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace kevo::serve::testing
