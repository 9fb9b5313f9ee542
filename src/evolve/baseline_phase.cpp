// The run's first phase: the baseline checked and timed, or its record from an earlier run with
// the same task, GPUs, toolkit and kevo (baseline_record.h), which is said and stored as such.
// Its time and the device go into every prompt.
#include <condition_variable>
#include <ctime>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "evolve/baseline_record.h"
#include "evolve/run_state.h"
#include "evolve/stored_verdict.h"
#include "results/run_baseline.h"

namespace kevo::evolve {
namespace {

using nlohmann::json;

// Calls `tick` at once and then every second on a thread of its own until destroyed (a status
// line for a step that blocks, such as the baseline's check).
class Ticker {
 public:
  explicit Ticker(std::function<void()> tick)
      : thread_([this, tick = std::move(tick)] {
          std::unique_lock lock(mu_);
          do tick();
          while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; }));
        }) {}
  ~Ticker() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

struct BaselineStep {
  json summary;
  bool passed = false;
  std::string message;
  Reason reason = Reason::kNone;
};

// An earlier run's record of this baseline under `key`, said and marked as reused; nullopt when
// there is none to use.
std::optional<BaselineStep> reused_baseline(RunState& s, const BaselineKey& key) {
  auto rec = load_baseline_record(key, baseline_record_dir());
  // Profiles asked for and none recorded: the baseline is checked again, and profiled.
  if (!rec) return std::nullopt;
  results::RunBaseline base = results::baseline_from_json(rec->summary);
  if (s.opts.eval.profile && base.profile.is_null()) return std::nullopt;
  base.reused = results::RunBaseline::Reuse{rec->verified_at, key.to_json()};
  if (!base.arch.empty()) s.ev.remember_arch(base.arch);
  s.emit("baseline_reused", {{"verified_at", rec->verified_at}, {"key", key.to_json()}});
  spdlog::info("the baseline of {} was verified on {} with this GPU, toolkit and kevo: reused (--reverify-baseline "
               "checks it again)",
               s.task.name, fmt::format("{:%Y-%m-%d %H:%M}", fmt::localtime(static_cast<std::time_t>(rec->verified_at))));
  return BaselineStep{base.to_json(), true, ""};
}

Result<BaselineStep> baseline_of(RunState& s) {
  std::optional<BaselineKey> key;
  if (s.opts.reuse_baseline && !s.ev.is_fake()) {
    if (auto k = baseline_key(s.task, s.ev.cuda_version())) key = *k;
    if (key)
      if (auto reused = reused_baseline(s, *key)) return std::move(*reused);
  }
  EvalOptions o = s.opts.eval;
  o.visible_only = true;
  o.time = true;
  EvalRequest req;
  req.ticket = s.next_ticket++;
  req.kind = EvalKind::kBaseline;
  req.opts = o;
  auto done = s.pool.run_one(std::move(req), &s.user_cancel);
  if (!done) return done.unexpected();
  s.gpu_s += done->busy_s;
  const Verdict& bv = done->verdict;
  // The pool's evaluators (other GPUs, other hosts) learned the architecture, not this one, which
  // compiles proposals ahead (warm): tell it.
  if (bv.compile) s.ev.remember_arch(bv.compile->arch_used);
  json summary = stored_baseline(bv, s.ev.is_fake()).to_json();
  if (key && bv.outcome == Outcome::Pass)
    if (auto st = save_baseline_record(*key, summary, baseline_record_dir()); !st)
      spdlog::warn("the baseline's record was not kept (the next run checks it again): {}", st.error().message);
  return BaselineStep{summary, bv.outcome == Outcome::Pass, bv.message, bv.reason};
}

}  // namespace

Result<std::optional<json>> baseline_phase(RunState& s, bool resumed, RunOutcome& out) {
  if (resumed && !s.row.baseline_json.empty()) return std::optional<json>(json::parse(s.row.baseline_json, nullptr, false));
  auto t = SteadyClock::now();
  s.phase = Progress::Phase::kBaseline;
  s.phase_detail = "checking it against its reference and timing it";
  Result<BaselineStep> b = fail("not run");
  {
    // The check takes seconds to a minute: show it going. The ticker shows a copy of the
    // figures, advancing only its clock, so it reads nothing the check writes.
    Ticker ticker([&s, snap = s.progress(0), t0 = s.t0]() mutable {
      snap.elapsed_s = since(t0);
      s.show(snap);
    });
    b = baseline_of(s);
  }
  if (!b) return b.unexpected();
  out.baseline_s = since(t);
  json base = std::move(b->summary);
  out.baseline_reused = base.contains("reused");
  s.row.baseline_json = base.dump();
  if (!b->passed) {
    s.row.note = "the task's baseline fails: " + b->message;
    out.baseline_reason = b->reason;
    return std::optional<json>();
  }
  return std::optional<json>(std::move(base));
}

}  // namespace kevo::evolve
