// Scale-out benchmark (issue 18): candidates per minute against the number of workers, through the
// whole system (the engine as coordinator, its queue in the run database, N worker loops each with
// its own connection), with the fake evaluator taking a fixed wall time per evaluation; and the
// queue's cost per job in that run (the workers' time in the claim that returned the job, its
// heartbeats and its result write).
//
//   kevo-bench-queue --db postgresql:///kevo?host=/tmp/pg [--workers 1,2,4,8,16,32] [--eval-s 0.2]
//                    [--per-worker 8]
//
// Prints a Markdown table. The model is a scripted client answering at once with distinct kernels,
// so the figures are the engine's and the queue's, not a model's latency.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "evolve/engine.h"
#include "evolve/eval_pool.h"
#include "evolve/marker_evaluator.h"
#include "evolve/worker.h"
#include "llm/client.h"
#include "store/run_db.h"

using namespace kevo;
using namespace kevo::evolve;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kTaskToml = R"(name = "vec_scale"
category = "elementwise"
description = "y[i] = 2 * x[i]."
dims = ["N"]
flops = "N"
bytes = "8*N"
[[inputs]]
name = "x"
dtype = "f32"
shape = ["N"]
[[outputs]]
name = "y"
dtype = "f32"
shape = ["N"]
[[configs]]
name = "main"
dims = { N = 1048576 }
main = true
[[configs]]
name = "tiny"
dims = { N = 33 }
[[configs]]
name = "ragged"
dims = { N = 1001 }
[[configs]]
name = "held"
dims = { N = 4097 }
held_out = true
)";

std::string kernel(const std::string& marker) {
  return "#include <kevo/kernel.h>\n// fake: " + marker +
         "\n__global__ void scale(const float* x, float* y, int64_t n) {\n"
         "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2.f * x[i];\n}\n"
         "KEVO_EXPORT int kevo_forward(const kevo_args* a) {\n  int64_t n = kevo_numel(&a->inputs[0]);\n"
         "  scale<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>((const float*)a->inputs[0].data,\n"
         "      (float*)a->outputs[0].data, n);\n  return cudaGetLastError() == cudaSuccess ? 0 : 1;\n}\n";
}

// Answers at once, each answer a distinct kernel (no duplicates), each a little faster.
class ScriptedModel final : public llm::LlmClient {
 public:
  explicit ScriptedModel(double eval_s) : eval_s_(eval_s) {}
  Result<llm::ChatResponse> chat(const llm::ChatRequest&, const llm::CancelToken&) override {
    const int n = n_++;
    llm::ChatResponse r;
    r.model = name_;
    r.text = fmt::format("NAME: k{}\nTHOUGHT: idea {}\n\n```cuda\n{}```\n", n, n,
                         kernel(fmt::format("pass time_ms={:.5f} noise=0.01 wall_s={}", 1.8 * std::pow(0.999, n), eval_s_)));
    r.usage.input_tokens = 100;
    r.usage.output_tokens = 100;
    return r;
  }
  const std::string& name() const override { return name_; }

 private:
  double eval_s_;
  std::atomic<int> n_{0};
  std::string name_ = "scripted:bench";
};

struct Row {
  int workers = 0, candidates = 0;
  double search_s = 0, per_min = 0, ideal = 0;
  double claim_ms = 0, beat_ms = 0, complete_ms = 0;
};

// The whole system at `w` workers.
Result<Row> engine_row(const std::string& db_url, const Task& task, int w, double eval_s, int per_worker) {
  auto db = store::RunDb::open(db_url);
  if (!db) return db.unexpected();
  QueuePoolOptions qo;
  qo.slots = w;
  qo.fake = true;
  qo.poll = std::chrono::milliseconds(10);
  auto pool = make_queue_pool(**db, task, qo);
  if (!pool) return pool.unexpected();
  llm::CancelToken stop, cancel;
  std::vector<std::thread> threads;
  std::vector<WorkerStats> stats(static_cast<size_t>(w));
  for (int i = 0; i < w; ++i)
    threads.emplace_back([&, i] {
      auto wdb = store::RunDb::open(db_url);
      if (!wdb) return;
      MarkerEvaluator ev;
      WorkerOptions o;
      o.name = fmt::format("bench-w{}", i);
      o.poll = std::chrono::milliseconds(10);
      o.lease_s = 0.6;  // a heartbeat every 0.2 s: one or two per evaluation, as with real leases
      if (auto r = run_worker(**wdb, ev, o, stop)) stats[static_cast<size_t>(i)] = *r;
    });
  ScriptedModel model(eval_s);
  MarkerEvaluator ev;
  Engine e(task, ev, **db, &model, nullptr, cancel);
  e.set_pool(pool->get());
  EngineOptions o;
  o.strategy = *preset("evoengineer-free");
  o.strategy.parallel = w + 2;
  o.strategy.repair_rounds = 0;
  o.strategy.stagnation = 0;
  o.budgets.max_candidates = std::max(16, per_worker * w);
  o.seed = 7;
  auto out = e.start(o);
  stop.cancel();
  for (auto& t : threads) t.join();
  if (!out) return out.unexpected();
  Row r;
  int jobs = 0;
  for (const auto& st : stats) {
    jobs += st.done + st.superseded;
    r.claim_ms += st.claim_s * 1e3, r.beat_ms += st.heartbeat_s * 1e3, r.complete_ms += st.complete_s * 1e3;
  }
  if (jobs > 0) r.claim_ms /= jobs, r.beat_ms /= jobs, r.complete_ms /= jobs;
  r.workers = w;
  r.candidates = out->candidates;
  r.search_s = out->search_s;
  r.per_min = out->candidates * 60.0 / out->search_s;
  r.ideal = w * 60.0 / eval_s;
  return r;
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) out.push_back(std::stoi(x));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string db, workers = "1,2,4,8,16,32";
  double eval_s = 0.2;
  int per_worker = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--db") db = v;
    else if (k == "--workers") workers = v;
    else if (k == "--eval-s") eval_s = std::stod(v);
    else if (k == "--per-worker") per_worker = std::stoi(v);
    else return std::fprintf(stderr, "unknown option %s\n", k.c_str()), 2;
  }
  if (db.empty()) return std::fprintf(stderr, "usage: kevo-bench-queue --db URL|PATH [--workers LIST]\n"), 2;
  auto dir = std::filesystem::temp_directory_path() / fmt::format("kevo-bench-queue-{}", ::getpid());
  std::filesystem::create_directories(dir / "task");
  std::ofstream(dir / "task" / "task.toml") << kTaskToml;
  std::ofstream(dir / "task" / "baseline.cu") << kernel("pass time_ms=2.0");
  std::ofstream(dir / "task" / "reference.cpp") << "#include <kevo/reference.h>\n";
  auto task = load_task(dir / "task");
  if (!task) return std::fprintf(stderr, "%s\n", task.error().message.c_str()), 1;
  setenv("KEVO_CACHE_DIR", (dir / "cache").c_str(), 1);
  std::printf("| workers | candidates | search s | candidates/min | ideal (N x 60 / %.2f s) | efficiency | claim ms | heartbeat ms | result ms | queue ms/job |\n",
              eval_s);
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  int rc = 0;
  for (int w : parse_list(workers)) {
    auto r = engine_row(db, *task, w, eval_s, per_worker);
    if (!r) {
      std::fprintf(stderr, "%d workers: %s\n", w, r.error().message.c_str());
      rc = 1;
      continue;
    }
    std::printf("| %d | %d | %.2f | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r->workers, r->candidates,
                r->search_s, r->per_min, r->ideal, r->per_min / r->ideal, r->claim_ms, r->beat_ms, r->complete_ms,
                r->claim_ms + r->beat_ms + r->complete_ms);
    std::fflush(stdout);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
