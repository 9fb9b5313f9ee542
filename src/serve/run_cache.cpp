#include "serve/run_cache.h"

#include <algorithm>

#include "results/job_result_view.h"

namespace kevo::serve {

namespace {

// More new candidates than this are read with one query for all of them instead of one by one.
constexpr int64_t kMaxProbed = 256;
// Ids tried past the newest known before giving up on reading one by one (ids of other runs'
// candidates, or numbers a PostgreSQL sequence skipped, sit between a run's candidates).
constexpr int64_t kProbeSlack = 64;
// A stored message is one readable line; a longer one is cut for the summaries.
constexpr size_t kMaxMessage = 400;

bool same_run_row(const store::RunRow& a, const store::RunRow& b) {
  return a.updated_at == b.updated_at && a.status == b.status && a.stop_reason == b.stop_reason &&
         a.best_candidate == b.best_candidate && a.best_speedup == b.best_speedup && a.final_json == b.final_json &&
         a.note == b.note && a.config_json == b.config_json && a.baseline_json == b.baseline_json;
}

bool same_totals(const store::RunTotals& a, const store::RunTotals& b) {
  return a.candidates == b.candidates && a.valid == b.valid && a.llm_calls == b.llm_calls && a.tokens == b.tokens &&
         a.cost_usd == b.cost_usd;
}

bool same_job(const JobFacts& a, const JobFacts& b) {
  return a.id == b.id && a.state == b.state && a.attempts == b.attempts && a.worker == b.worker &&
         a.finished_at == b.finished_at;
}

JobFacts job_facts(const store::JobRow& j) {
  JobFacts f{j.id, j.seq, j.state, j.attempts, j.worker, j.created_at, j.finished_at, j.lease_until, 0, ""};
  if (j.state == store::JobState::kDone) {
    const results::JobResultView r = results::job_result_view(j.result_json);
    f.busy_s = r.busy_s;
    if (r.verdict.device) f.device = r.verdict.device->name;
  }
  return f;
}

void add_candidate(RunData& d, const store::CandidateRow& c) {
  d.figures.push_back(results::figures_of(c));
  d.candidates.push_back(slim(c));
  d.max_candidate_id = std::max(d.max_candidate_id, c.id);
}

}  // namespace

store::CandidateRow slim(const store::CandidateRow& c) {
  store::CandidateRow s = c;
  s.prompt.clear(), s.answer.clear(), s.source.clear(), s.rationale.clear();
  s.compile_json.clear(), s.verdict_json.clear(), s.features_json.clear(), s.flags_json.clear();
  if (s.message.size() > kMaxMessage) s.message = s.message.substr(0, kMaxMessage) + "...";
  return s;
}

Status RunCache::with_run(int64_t id, const std::function<void(const RunData&)>& fn) {
  Entry* e;
  {
    std::lock_guard lock(mu_);
    auto& slot = entries_[id];
    if (!slot) slot = std::make_unique<Entry>();
    e = slot.get();
  }
  std::lock_guard lock(e->mu);
  KEVO_TRY(refresh(*e, id));
  fn(e->data);
  return {};
}

Status RunCache::refresh(Entry& e, int64_t id) {
  auto run = db_.get_run(id);
  if (!run) return run.unexpected();
  RunData& d = e.data;
  const uint64_t before = d.version;
  if (!e.loaded || !same_run_row(d.run, *run)) ++d.version;
  d.run = std::move(*run);
  const double now = store::unix_now();
  if (!e.loaded || now - d.totals_at >= totals_max_age_s_ || now < d.totals_at) {
    auto totals = db_.totals(id);
    if (!totals) return totals.unexpected();
    if (!e.loaded || !same_totals(d.totals, *totals)) ++d.version;
    d.totals = *totals;
    d.totals_at = now;
    if (!e.loaded || int64_t(d.candidates.size()) != d.totals.candidates)
      KEVO_TRY(refresh_candidates(d, d.totals.candidates));
  }
  KEVO_TRY(refresh_jobs(d));
  e.loaded = true;
  if (d.version != before) d.memo.clear(), d.result.reset();
  return {};
}

const store::CandidateRow* RunData::find(int64_t id) const {
  if (index_.size() > candidates.size()) index_.clear();  // rows were read again
  for (size_t i = index_.size(); i < candidates.size(); ++i) index_[candidates[i].id] = i;
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &candidates[it->second];
}

Status RunCache::refresh_candidates(RunData& d, int64_t expected) {
  const int64_t have = int64_t(d.candidates.size());
  const int64_t wanted = expected - have;
  if (have > 0 && wanted > 0 && wanted <= kMaxProbed) {
    RunData next_rows;  // only its candidates and figures are used
    int64_t id = d.max_candidate_id, found = 0;
    const int64_t last = d.max_candidate_id + wanted * 4 + kProbeSlack;
    while (found < wanted && ++id <= last) {
      auto c = db_.candidate(id);
      if (c && c->run_id == d.run.id) {
        add_candidate(next_rows, *c);
        ++found;
      }
    }
    const int prev_seq = d.candidates.empty() ? 0 : d.candidates.back().seq;
    const bool in_order = !next_rows.candidates.empty() && next_rows.candidates.front().seq > prev_seq &&
                          std::is_sorted(next_rows.candidates.begin(), next_rows.candidates.end(),
                                         [](const auto& a, const auto& b) { return a.seq < b.seq; });
    if (found == wanted && in_order) {
      for (size_t i = 0; i < next_rows.candidates.size(); ++i) {
        d.candidates.push_back(std::move(next_rows.candidates[i]));
        d.figures.push_back(next_rows.figures[i]);
      }
      d.max_candidate_id = std::max(d.max_candidate_id, next_rows.max_candidate_id);
      ++d.version;
      return {};
    }
  }
  auto all = db_.candidates(d.run.id);  // ordered by seq
  if (!all) return all.unexpected();
  d.candidates.clear(), d.figures.clear(), d.index_.clear();
  d.max_candidate_id = 0;
  d.candidates.reserve(all->size()), d.figures.reserve(all->size());
  for (const auto& c : *all) add_candidate(d, c);
  ++d.full_loads;
  ++d.version;
  return {};
}

Status RunCache::refresh_jobs(RunData& d) {
  // Jobs are final once done or failed: read again from the oldest one that is not.
  int64_t after = d.jobs.empty() ? 0 : d.jobs.back().id;
  for (const auto& j : d.jobs)
    if (j.state == store::JobState::kQueued || j.state == store::JobState::kClaimed) {
      after = j.id - 1;
      break;
    }
  auto rows = db_.jobs(d.run.id, after);
  if (!rows) return rows.unexpected();
  auto keep = std::partition_point(d.jobs.begin(), d.jobs.end(), [&](const JobFacts& j) { return j.id <= after; });
  std::vector<JobFacts> tail;
  tail.reserve(rows->size());
  for (const auto& r : *rows) tail.push_back(job_facts(r));
  bool changed = size_t(d.jobs.end() - keep) != tail.size() ||
                 !std::equal(tail.begin(), tail.end(), keep, same_job);
  if (!changed) return {};
  d.jobs.erase(keep, d.jobs.end());
  d.jobs.insert(d.jobs.end(), tail.begin(), tail.end());
  ++d.version;
  return {};
}

}  // namespace kevo::serve
