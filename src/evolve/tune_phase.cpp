// The search without a model: every combination of the constants the baseline marks
// `// kevo: tune` (tuning.h), evaluated in turn, compiles warmed ahead on other threads.
#include <algorithm>
#include <deque>
#include <future>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "evolve/run_record.h"
#include "evolve/run_schedule.h"
#include "evolve/run_state.h"
#include "evolve/tuning.h"
#include "util/fs.h"

namespace kevo::evolve {
namespace {

// The variants no earlier session of this run evaluated.
std::vector<Variant> not_yet_tuned(const RunState& s, std::vector<Variant> variants) {
  std::map<std::string, bool> done;
  for (const auto& [id, r] : s.rows) done[r.source] = true;
  std::vector<Variant> todo;
  for (auto& v : variants)
    if (!done.count(v.source)) todo.push_back(std::move(v));
  return todo;
}

// One variant evaluated and recorded; false when the run was interrupted meanwhile.
Result<bool> tune_one(RunState& s, const Variant& variant) {
  auto file = s.work_dir / fmt::format("tune{}.cu", s.seq + 1);
  KEVO_TRY(write_file_atomic(file, variant.source));
  auto v = s.evaluate_now(file, variant.source, search_options(s));
  if (!v && s.user_cancel.cancelled()) {
    s.stop_with(store::StopKind::kInterrupted, true);
    return false;
  }
  if (!v) return v.unexpected();
  store::CandidateRow c = row_from_verdict(*v, variant.source);
  c.op = to_string(Op::kTune);
  c.name = variant.label();
  c.rationale = "offline tuning: " + variant.label();
  c.generation = 1;
  auto stored = record(s, std::move(c), {});
  if (!stored) return stored.unexpected();
  s.report(0);
  return true;
}

}  // namespace

Status tune_phase(RunState& s, std::string* note) {
  auto src = read_file(s.task.baseline_path());
  if (!src) return src.unexpected();
  auto variants = enumerate_variants(*src, static_cast<size_t>(std::max(0, s.opts.budgets.max_candidates)));
  if (!variants) return fail("tuning annotations in {}: {}", s.task.baseline_path().string(), variants.error().message);
  bool any = !variants->empty() && !variants->front().assignment.empty();
  *note = offline_note(any);
  if (!any) {
    s.stop_with(store::StopKind::kNothingToTune, false);
    return {};
  }
  std::vector<Variant> todo = not_yet_tuned(s, std::move(*variants));
  std::deque<std::future<void>> warming;
  size_t warmed = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    while (warmed < todo.size() && warmed < i + static_cast<size_t>(std::max(1, s.opts.strategy.parallel))) {
      const std::string& text = todo[warmed].source;
      warming.push_back(std::async(std::launch::async, [&s, &text] { s.ev.warm(s.task, text); }));
      ++warmed;
    }
    const store::StopKind why = blocked(s, 0);
    if (why != store::StopKind::kNone) {
      s.stop_with(why, why == store::StopKind::kInterrupted);
      break;
    }
    auto went = tune_one(s, todo[i]);
    if (!went) return went.unexpected();  // the warming futures wait as they go
    if (!*went) break;
  }
  for (auto& f : warming) f.wait();
  if (s.stop.empty()) s.stop_with(store::StopKind::kTuningDone, false);
  return {};
}

}  // namespace kevo::evolve
