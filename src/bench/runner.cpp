#include "bench/runner.h"

#include <map>

#include <fmt/format.h>

namespace kevo::bench {

const char* to_string(Action a) {
  switch (a) {
    case Action::kStart: return "start";
    case Action::kResume: return "resume";
    case Action::kSkip: return "skip";
  }
  return "?";
}

std::vector<PlanItem> plan(const std::vector<store::RunRow>& runs, const std::vector<std::string>& tasks,
                           const RunKey& key) {
  std::map<std::string, const store::RunRow*> latest;
  for (const auto& r : runs) {
    if (!(key_of(r) == key)) continue;
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
    }
    out.push_back(p);
  }
  return out;
}

RunKey key_for(const evolve::EngineOptions& opts, const llm::LlmClient* llm, bool fake_evaluator) {
  // Mirrors Engine::start: the strategy is recorded as offline-tuning when no model is configured.
  return RunKey{llm ? opts.strategy.name : "offline-tuning", llm ? llm->name() : "", fake_evaluator};
}

Result<BenchOutcome> run_bench(store::RunDb& db, const BenchSetup& s) {
  if (!s.evaluator || !s.cancel || !s.load_task) return fail("run_bench: evaluator, cancel and load_task are required");
  auto runs = db.list_runs();
  if (!runs) return runs.unexpected();
  RunKey key = key_for(s.options, s.llm, s.evaluator->is_fake());
  auto items = plan(*runs, s.tasks, key);
  BenchOutcome out;
  auto log = [&](const std::string& line) {
    if (s.log) s.log(line);
  };
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
      continue;
    }
    auto task = s.load_task(it.task);
    if (!task) {
      out.errors.push_back(it.task + ": " + task.error().message);
      log(fmt::format("{}: cannot load: {}", head, task.error().message));
      continue;
    }
    evolve::Engine engine(*task, *s.evaluator, db, s.llm, s.ensemble, *s.cancel);
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
    log(fmt::format("{}: run {} {} ({}), {} candidates, {} valid, best {:.3f}x{}", head, r->run_id,
                    store::to_string(r->status), r->stop_reason, r->candidates, r->valid, r->best_speedup,
                    r->winner ? fmt::format(", verified winner {:.3f}x", r->winner_speedup) : ", no verified winner"));
    if (r->status == store::RunStatus::kInterrupted) {
      out.interrupted = true;
      break;
    }
  }
  return out;
}

}  // namespace kevo::bench
