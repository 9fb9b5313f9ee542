#include "bench/suite_runner.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "results/metrics.h"
#include "results/run_baseline.h"
#include "torch/torch_timing.h"
#include "util/enum_text.h"

namespace kevo::bench {

namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Times the task's PyTorch side once and stores it in the run's baseline record (see
// BenchSetup::time_torch). `off` turns timing off for the rest of the bench.
void record_torch(store::RunDb& db, const BenchSetup& s, const Task& task, int64_t run_id, const std::string& head,
                  BenchOutcome& out, bool& off, const std::function<void(const std::string&)>& log) {
  using nlohmann::json;
  if (!s.time_torch || off || task.torch_reference.empty() || s.cancel->cancelled()) return;
  auto run = db.get_run(run_id);
  if (!run) {
    log(fmt::format("{}: PyTorch timing: {}", head, run.error().message));
    return;
  }
  if (run->status != store::RunStatus::kFinished && run->status != store::RunStatus::kFailed) return;
  results::RunBaseline base = results::baseline_from_text(run->baseline_json);
  if (!base.recorded || !base.passed() || !base.pytorch.is_null()) return;
  auto r = s.time_torch(task);
  if (!r && torch::torch_unavailable(r.error())) {
    off = true;
    log(fmt::format("{}: PyTorch not timed in this bench: {}", head, first_line(r.error().message)));
    return;
  }
  if (r) {
    base.pytorch = torch::pytorch_json(*r);
    ++out.torch_timed;
    log(fmt::format("{}: PyTorch timed: {}{}", head, torch::pytorch_times(*r, 0),
                    r->device_name.empty() ? "" : " on " + r->device_name));
  } else {
    base.pytorch = json{{"skipped", first_line(r.error().message)}};
    log(fmt::format("{}: PyTorch timing failed: {}", head, first_line(r.error().message)));
  }
  run->baseline_json = base.to_json().dump();
  if (auto st = db.update_run(*run); !st) log(fmt::format("{}: cannot record the PyTorch times: {}", head, st.error().message));
}

}  // namespace

namespace {

constexpr EnumText<Action> kActionTexts[] = {
    {Action::kStart, "start"},
    {Action::kResume, "resume"},
    {Action::kSkip, "skip"},
};

}  // namespace

const char* to_string(Action a) { return enum_text(kActionTexts, a); }

std::vector<PlanItem> plan(const std::vector<store::RunRow>& runs, const std::vector<std::string>& tasks,
                           const results::RunKey& key) {
  std::map<std::string, const store::RunRow*> latest;
  for (const auto& r : runs) {
    if (!(results::key_of(r) == key)) continue;
    auto& slot = latest[r.task];
    if (!slot || r.id > slot->id) slot = &r;
  }
  std::vector<PlanItem> out;
  for (const auto& t : tasks) {
    PlanItem p{t, Action::kStart, 0};
    if (auto it = latest.find(t); it != latest.end()) {
      const auto& r = *it->second;
      bool done = r.status == store::RunStatus::kFinished || r.status == store::RunStatus::kFailed;
      p.action = done ? Action::kSkip : Action::kResume;
      p.run_id = r.id;
      if (results::infra_failure(r)) p.action = Action::kStart;  // measured nothing: a new run, the old one kept
    }
    out.push_back(p);
  }
  return out;
}

results::RunKey key_for(const evolve::EngineOptions& opts, const llm::LlmClient* llm, bool fake_evaluator) {
  // Mirrors Engine::start: the strategy is recorded as offline-tuning when no model is configured.
  return results::RunKey{llm ? opts.strategy.name : "offline-tuning", llm ? llm->name() : "", fake_evaluator};
}

Result<BenchOutcome> run_bench(store::RunDb& db, const BenchSetup& s) {
  if (!s.evaluator || !s.cancel || !s.load_task) return fail("run_bench: evaluator, cancel and load_task are required");
  auto runs = db.list_runs();
  if (!runs) return runs.unexpected();
  results::RunKey key = key_for(s.options, s.llm, s.evaluator->is_fake());
  auto items = plan(*runs, s.tasks, key);
  BenchOutcome out;
  std::function<void(const std::string&)> log = [&](const std::string& line) {
    if (s.log) s.log(line);
  };
  bool torch_off = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    std::string head = fmt::format("[{}/{}] {}", i + 1, items.size(), it.task);
    if (s.cancel->cancelled()) {
      out.interrupted = true;
      break;
    }
    if (it.action == Action::kSkip) {
      ++out.skipped;
      log(fmt::format("{}: done in run {}, skipped", head, it.run_id));
      if (s.time_torch && !torch_off)
        if (auto task = s.load_task(it.task)) record_torch(db, s, *task, it.run_id, head, out, torch_off, log);
      continue;
    }
    auto task = s.load_task(it.task);
    if (!task) {
      out.errors.push_back(it.task + ": " + task.error().message);
      log(fmt::format("{}: cannot load: {}", head, task.error().message));
      continue;
    }
    std::unique_ptr<evolve::EvalPool> pool;
    if (s.pool_for) {
      auto p = s.pool_for(*task);
      if (!p) {
        out.errors.push_back(it.task + ": " + p.error().message);
        log(fmt::format("{}: cannot set up its evaluations: {}", head, p.error().message));
        continue;
      }
      pool = std::move(*p);
    }
    evolve::Engine engine(*task, *s.evaluator, db, s.llm, s.ensemble, *s.cancel);
    auto episodes = s.episodes_for ? s.episodes_for(*task) : nullptr;
    engine.set_episodes(episodes.get());
    engine.set_pool(pool.get());
    engine.set_gpu_util(s.gpu_util);
    if (s.progress) engine.set_progress([&](const evolve::Progress& p) { s.progress(it.task, p); });
    Result<evolve::RunOutcome> r = fail("not run");
    if (it.action == Action::kResume) {
      ++out.resumed;
      log(fmt::format("{}: resuming run {}", head, it.run_id));
      r = engine.resume(it.run_id, s.options);
    } else {
      ++out.started;
      log(fmt::format("{}: starting", head));
      r = engine.start(s.options);
    }
    if (!r) {
      out.errors.push_back(it.task + ": " + r.error().message);
      log(fmt::format("{}: error: {}", head, r.error().message));
      continue;
    }
    log(fmt::format("{}: run {} {} ({}), {} candidates, {} valid, best {:.3f}x{}, evaluators busy {}, GPU util {}", head,
                    r->run_id, store::to_string(r->status), r->stop_reason, r->candidates, r->valid, r->best_speedup,
                    r->winner ? fmt::format(", verified winner {:.3f}x", r->winner_speedup) : ", no verified winner",
                    percent_or_na(r->gpu_busy), evolve::gpu_util_text(r->gpu_util_nvml)));
    if (r->status == store::RunStatus::kInterrupted) {
      out.interrupted = true;
      break;
    }
    if (auto row = db.get_run(r->run_id); row && results::infra_failure(*row)) {
      out.errors.push_back(fmt::format("{}: not run (run {}: {}{}); the next kevo bench retries it", it.task,
                                       r->run_id, r->stop_reason, row->note.empty() ? "" : ": " + first_line(row->note)));
      continue;
    }
    record_torch(db, s, *task, r->run_id, head, out, torch_off, log);  // the engine is done: the GPU is idle
  }
  return out;
}

}  // namespace kevo::bench
