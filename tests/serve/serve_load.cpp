// Page load times of kevo serve for a run with many candidates (docs/SERVE.md, "Page load").
//   serve_load [--candidates N] [--db PATH] [--requests K]
// Writes a run of N candidates with sizes like real ones (source ~3 KB, prompt ~8 KB, answer
// ~4 KB, verdict ~1.5 KB, one LLM call and one event each) into PATH (default: a scratch SQLite
// file, removed after; an existing PATH is reused as it is), starts the server on a free loopback
// port and times GET requests from a client on the same host: the first load of the run page (which
// reads every candidate once), then K more of each page and endpoint (median and max).
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/server.h"
#include "store/run_db.h"
#include "support/temp_dir.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string filler(const std::string& line, size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += line;
  return s;
}

int fill(const std::string& where, int n) {
  auto db = kevo::store::RunDb::open(where);
  if (!db) return std::fprintf(stderr, "%s\n", db.error().message.c_str()), 1;
  kevo::store::RunRow run;
  run.task = "softmax";
  run.strategy = "kevo-default";
  run.config_json = R"({"budgets":{"max_candidates":10000},"llm":"fake:m1","fake_evaluator":true})";
  run.baseline_json = R"({"outcome":"pass","time_ms":2.0})";
  auto id = (*db)->create_run(run);
  if (!id) return 1;
  const std::string src = filler("  float v = x[i] * 2.0f + y[i]; // an unrolled body line of the kernel\n", 3000);
  const std::string prompt = filler("The task: a row-wise softmax; the current best kernel is below. ", 8000);
  const std::string answer = filler("NAME: v\nTHOUGHT: use warp shuffles and vector loads.\n", 4000);
  int64_t prev = 0;
  for (int i = 1; i <= n; ++i) {
    kevo::store::CandidateRow c;
    c.run_id = *id, c.seq = i, c.op = prev ? "mutate" : "init", c.model = "fake:m1";
    if (prev) c.parents = {prev};
    c.name = "v" + std::to_string(i), c.prompt = prompt, c.answer = answer, c.source = src + std::to_string(i);
    const bool pass = i % 3 != 0;
    c.outcome = pass ? kevo::store::CandidateOutcome::kPass : kevo::store::CandidateOutcome::kIncorrect;
    c.reason = pass ? "" : "mismatch";
    c.compile_json = R"({"ok":true,"diagnostics":""})";
    nlohmann::json v = {{"outcome", to_string(c.outcome)}, {"seconds", 1.2},
                        {"device", {{"name", "Fake H100"}, {"uuid", "fake"}}},
                        {"configs", nlohmann::json::array()}, {"pad", filler("x", 1200)}};
    if (pass) v["timing"] = {{"sol_fraction", 0.3}, {"candidate", {{"median_ms", 1.0}}}};
    c.verdict_json = v.dump();
    c.speedup = pass ? 1.0 + 1e-4 * i : 0, c.time_ms = pass ? 2.0 / c.speedup : 0, c.accepted = pass && i % 50 == 1;
    kevo::store::LlmCallRow call;
    call.run_id = *id, call.model = "fake:m1", call.input_tokens = 2000, call.output_tokens = 900, call.cost_usd = 0.004;
    if (!(*db)->add_candidate(c, {call})) return 1;
    if (pass) prev = c.id;
    (void)(*db)->add_event(*id, "candidate", nlohmann::json{{"candidate", c.id}, {"seq", i}}.dump());
  }
  return 0;
}

struct Timed {
  double ms = 0;
  size_t bytes = 0;
  int status = 0;
};

Timed timed_get(httplib::Client& cli, const std::string& path) {
  auto t0 = Clock::now();
  auto r = cli.Get(path.c_str());
  Timed t;
  t.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (r) t.bytes = r->body.size(), t.status = r->status;
  if (r && r->status != 200) std::fprintf(stderr, "%s: %d %s\n", path.c_str(), r->status, r->body.substr(0, 400).c_str());
  return t;
}

void report(httplib::Client& cli, const std::string& path, int k) {
  std::vector<double> ms;
  Timed last;
  for (int i = 0; i < k; ++i) ms.push_back((last = timed_get(cli, path)).ms);
  std::sort(ms.begin(), ms.end());
  std::printf("%-34s %4d %9zu B  median %7.1f ms  max %7.1f ms\n", path.c_str(), last.status, last.bytes,
              ms[ms.size() / 2], ms.back());
}

}  // namespace

int main(int argc, char** argv) {
  int n = 10000, k = 15;
  std::string where;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--candidates")) n = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--db")) where = argv[i + 1];
    else if (!std::strcmp(argv[i], "--requests")) k = std::atoi(argv[i + 1]);
  }
  kevo::test::TempDir scratch("kevo-serve-load");
  if (where.empty()) where = (scratch.path / "runs.db").string();
  if (!std::filesystem::exists(where)) {
    auto t0 = Clock::now();
    if (fill(where, n)) return 1;
    std::printf("wrote %d candidates in %.1f s\n", n, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  auto server = kevo::serve::Server::open({where, {"127.0.0.1", 0}, "", false});
  if (!server) return std::fprintf(stderr, "%s\n", server.error().message.c_str()), 1;
  auto port = (*server)->bind();
  if (!port) return 1;
  std::thread t([&] { (*server)->run(); });
  httplib::Client cli("127.0.0.1", *port);
  cli.set_read_timeout(120, 0);
  Timed cold = timed_get(cli, "/runs/1");
  std::printf("first load of /runs/1 (reads every candidate once): %.1f ms, %zu B\n", cold.ms, cold.bytes);
  for (const char* p : {"/runs/1", "/api/runs/1", "/api/runs/1/candidates?limit=50", "/runs/1/candidates",
                        "/runs/1/charts/best.svg", "/runs/1/charts/rates.svg", "/runs/1/charts/activity.svg",
                        "/runs/1/candidates/5000", "/", "/app.js", "/app.css"})
    report(cli, p, k);
  std::vector<double> whole;
  for (int i = 0; i < k; ++i) {
    double sum = 0;
    for (const char* p : {"/runs/1", "/app.css", "/app.js", "/runs/1/charts/best.svg", "/runs/1/charts/rates.svg",
                          "/runs/1/charts/activity.svg"})
      sum += timed_get(cli, p).ms;
    whole.push_back(sum);
  }
  std::sort(whole.begin(), whole.end());
  std::printf("run page with its css, script and 3 charts, one after another: median %.1f ms, max %.1f ms\n",
              whole[whole.size() / 2], whole.back());
  (*server)->stop();
  t.join();
  return 0;
}
