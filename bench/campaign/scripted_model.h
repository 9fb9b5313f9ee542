// A model for campaign benchmarks and tests without a network: each task's answers are drawn, in
// order, from a fixed recorded distribution of outcomes (outcomes.json), as kernels whose
// `// fake:` markers the marker evaluator turns into that outcome. The n-th answer for a task is
// the same whatever the other tasks were asked, so a flat and a guided campaign see the same
// draws for the candidates they both spend. Every answer reports the same token usage.
#pragma once

#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "llm/client.h"
#include "util/hash.h"

namespace kevo::campaign {

struct Outcome {
  double p = 0, time_ms = 0;
  std::string fail;  // compile_error, incorrect, ...; empty: pass at time_ms
};

struct TaskScript {
  std::string category;
  std::vector<Outcome> outcomes;
};

struct Script {
  std::map<std::string, TaskScript> tasks;
  int64_t input_tokens = 0, output_tokens = 0;
  double usd_in = 0, usd_out = 0;  // per million tokens
};

// Reads outcomes.json; a malformed file is a runtime_error (benchmarks and tests: process edges).
inline Script load_script(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  nlohmann::json j = nlohmann::json::parse(in);
  Script s;
  s.input_tokens = j.at("tokens").at("input").get<int64_t>();
  s.output_tokens = j.at("tokens").at("output").get<int64_t>();
  s.usd_in = j.at("tokens").at("usd_per_input_mtok").get<double>();
  s.usd_out = j.at("tokens").at("usd_per_output_mtok").get<double>();
  for (const auto& [name, t] : j.at("tasks").items()) {
    TaskScript ts;
    ts.category = t.at("category").get<std::string>();
    for (const auto& o : t.at("outcomes"))
      ts.outcomes.push_back({o.at("p").get<double>(), o.value("time_ms", 0.0), o.value("fail", std::string())});
    s.tasks[name] = ts;
  }
  return s;
}

inline std::string kernel(const std::string& task, int n, const Outcome& o) {
  const std::string marker = o.fail.empty() ? fmt::format("pass time_ms={} noise=0.02", o.time_ms) : o.fail + " scripted";
  return fmt::format(
      "#include <kevo/kernel.h>\n// fake: {}\nconstexpr int kAnswer = {};  // {}\n"
      "KEVO_EXPORT int kevo_forward(const kevo_args* a) {{ (void)a; return 0; }}\n",
      marker, n, task);
}

class ScriptedModel final : public llm::LlmClient {
 public:
  ScriptedModel(Script s, uint64_t seed) : script_(std::move(s)), seed_(seed) {}
  const std::string& name() const override { return name_; }

  Result<llm::ChatResponse> chat(const llm::ChatRequest& req, const llm::CancelToken&) override {
    std::string prompt;
    for (const auto& m : req.messages) prompt += m.content;
    const size_t at = prompt.find("## Task: ");
    const std::string task = at == std::string::npos ? "" : prompt.substr(at + 9, prompt.find('\n', at) - at - 9);
    auto it = script_.tasks.find(task);
    if (it == script_.tasks.end()) return fail("scripted model: no outcomes recorded for task '{}'", task);
    int n;
    double u;
    {
      std::lock_guard lock(mu_);
      n = count_[task]++;
      auto& rng = rngs_.try_emplace(task, seed_ ^ std::hash<std::string>{}(task)).first->second;
      u = std::uniform_real_distribution<double>(0, 1)(rng);
    }
    const Outcome* o = &it->second.outcomes.back();
    for (const auto& x : it->second.outcomes) {
      if (u < x.p) {
        o = &x;
        break;
      }
      u -= x.p;
    }
    llm::ChatResponse r;
    r.model = name_;
    r.text = fmt::format("NAME: {}-{}\nTHOUGHT: scripted outcome {}\n\n```cuda\n{}```\n", task, n,
                         o->fail.empty() ? fmt::format("{} ms", o->time_ms) : o->fail, kernel(task, n, *o));
    r.usage.input_tokens = script_.input_tokens;
    r.usage.output_tokens = script_.output_tokens;
    r.cost_usd = (script_.input_tokens * script_.usd_in + script_.output_tokens * script_.usd_out) / 1e6;
    return r;
  }

 private:
  Script script_;
  uint64_t seed_;
  std::string name_ = "scripted:campaign";
  std::mutex mu_;
  std::map<std::string, int> count_;
  std::map<std::string, std::mt19937_64> rngs_;
};

// A task folder the marker evaluator can run: one input, one output, three visible configs and a
// held-out one (its name must never reach a prompt).
inline std::string task_toml(const std::string& name, const std::string& category) {
  return fmt::format(R"(name = "{}"
category = "{}"
description = "y[i] = 2 * x[i] for a vector x of N floats (scripted campaign task)."
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
dims = {{ N = 1048576 }}
main = true

[[configs]]
name = "ragged"
dims = {{ N = 1001 }}

[[configs]]
name = "tiny"
dims = {{ N = 33 }}

[[configs]]
name = "held"
dims = {{ N = 777777 }}
held_out = true
)", name, category);
}

}  // namespace kevo::campaign
