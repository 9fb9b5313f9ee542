// Shared pieces of the evolution tests: a small task on disk (with a held-out config whose name
// and size must never reach a prompt), a loopback OpenAI-compatible server whose answers are
// computed from each prompt, and a harness that runs the engine against both with the marker
// evaluator standing in for the GPU.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "evolve/engine.h"
#include "evolve/marker_evaluator.h"
#include "llm/client.h"
#include "store/run_db.h"
#include "support/temp_dir.h"
#include "task/task.h"
#include "test_util.h"  // tests/llm: openai_ok, test_config

namespace kevo::evolve::testing {

inline constexpr const char* kHeldName = "secret_holdout";
inline constexpr const char* kHeldValue = "987653";

inline const char* kTaskToml = R"(name = "vec_scale"
category = "elementwise"
description = "y[i] = 2 * x[i] for a vector x of N floats."
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
name = "ragged"
dims = { N = 1001 }

[[configs]]
name = "tiny"
dims = { N = 33 }

[[configs]]
name = "secret_holdout"
dims = { N = 987653 }
held_out = true
)";

inline std::string kernel_source(const std::string& marker, const std::string& extra = "") {
  return "#include <kevo/kernel.h>\n"
         "// fake: " + marker + "\n" + extra +
         "__global__ void scale(const float* x, float* y, int64_t n) {\n"
         "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = 2.f * x[i];\n"
         "}\n"
         "KEVO_EXPORT int kevo_forward(const kevo_args* a) {\n"
         "  int64_t n = kevo_numel(&a->inputs[0]);\n"
         "  scale<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>((const float*)a->inputs[0].data,\n"
         "                                                           (float*)a->outputs[0].data, n);\n"
         "  return cudaGetLastError() == cudaSuccess ? 0 : 1;\n"
         "}\n";
}

inline std::string answer(const std::string& name, const std::string& thought, const std::string& code) {
  return "NAME: " + name + "\nTHOUGHT: " + thought + "\n\n```cuda\n" + code + "```\n";
}

inline std::filesystem::path temp_dir(const std::string& tag) {
  return kevo::test::temp_dir_until_exit("kevo-evolve-test-" + tag);
}

inline void write(const std::filesystem::path& p, const std::string& s) {
  std::ofstream(p) << s;
}

inline Task make_task(const std::filesystem::path& dir, const std::string& baseline = "") {
  std::filesystem::create_directories(dir);
  write(dir / "task.toml", kTaskToml);
  write(dir / "baseline.cu", baseline.empty() ? kernel_source("pass time_ms=2.0") : baseline);
  write(dir / "reference.cpp", "#include <kevo/reference.h>\n");
  auto t = load_task(dir);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return *t;
}

// An OpenAI-compatible server on 127.0.0.1 that computes each answer from the prompt.
class PromptServer {
 public:
  using Responder = std::function<std::string(const std::string& prompt, int n)>;
  explicit PromptServer(Responder r) : respond_(std::move(r)) {
    srv_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
      auto body = nlohmann::json::parse(req.body, nullptr, false);
      std::string prompt;
      if (body.contains("messages"))
        for (const auto& m : body["messages"]) prompt += m.value("content", "") + "\n";
      int n;
      {
        std::lock_guard lock(mu_);
        prompts_.push_back(prompt);
        n = static_cast<int>(prompts_.size()) - 1;
      }
      if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
      res.set_content(llm::testing::openai_ok(respond_(prompt, n)), "application/json");
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~PromptServer() {
    srv_.stop();
    thread_.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<std::string> prompts() {
    std::lock_guard lock(mu_);
    return prompts_;
  }
  void set_delay_ms(int ms) { delay_ms_ = ms; }

 private:
  Responder respond_;
  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> prompts_;
  std::atomic<int> delay_ms_{0};
};

// Answers every prompt with a valid kernel, each faster than the last by 10%.
inline PromptServer::Responder improving_kernels(double start_ms = 1.8) {
  return [start_ms](const std::string&, int n) {
    double t = start_ms * std::pow(0.9, n);
    return answer("v" + std::to_string(n), "idea number " + std::to_string(n) + ": unroll more",
                  kernel_source("pass time_ms=" + std::to_string(t) + " noise=0.01"));
  };
}

struct Harness {
  explicit Harness(PromptServer::Responder r, const std::string& baseline = "")
      : dir(temp_dir("h")), task(make_task(dir / "task", baseline)), server(std::move(r)) {
    auto d = store::RunDb::open(dir / "runs.db");
    EXPECT_TRUE(d) << (d ? "" : d.error().message);
    db = std::move(*d);
    auto c = llm::ResponseCache::attach(db->handle());
    EXPECT_TRUE(c);
    cache = std::move(*c);
    ctx = llm::make_context(llm::testing::test_config(server.base_url()), {.cache = cache, .seed = 3});
    auto cl = llm::make_client("fake:m1", ctx);
    EXPECT_TRUE(cl) << (cl ? "" : cl.error().message);
    client = std::move(*cl);
  }
  ~Harness() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  EngineOptions options(const std::string& preset_name, int candidates, int parallel = 1) {
    EngineOptions o;
    auto s = preset(preset_name);
    EXPECT_TRUE(s);
    o.strategy = *s;
    o.strategy.parallel = parallel;
    o.budgets.max_candidates = candidates;
    o.seed = 11;
    return o;
  }
  Result<RunOutcome> run(const EngineOptions& o, bool with_llm = true) {
    Engine e(task, *eval, *db, with_llm ? client.get() : nullptr, nullptr, cancel);
    if (progress) e.set_progress(progress);
    e.set_gpu_util(gpu_util);
    return e.start(o);
  }
  std::vector<store::CandidateRow> candidates(int64_t run) {
    auto c = db->candidates(run);
    EXPECT_TRUE(c);
    return c ? *c : std::vector<store::CandidateRow>{};
  }

  std::filesystem::path dir;
  Task task;
  PromptServer server;
  std::unique_ptr<store::RunDb> db;
  std::shared_ptr<llm::ResponseCache> cache;
  std::shared_ptr<llm::LlmContext> ctx;
  std::unique_ptr<llm::LlmClient> client;
  MarkerEvaluator evaluator;
  CandidateEvaluator* eval = &evaluator;  // what run() uses
  llm::CancelToken cancel;
  std::function<void(const Progress&)> progress;
  const GpuUtilSampler* gpu_util = nullptr;  // NVML's figure (a fake source in tests)
};

inline bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace kevo::evolve::testing
