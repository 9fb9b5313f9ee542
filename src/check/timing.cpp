#include "check/timing.h"

#include <sys/random.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <map>
#include <optional>
#include <random>

#include "check/isolation.h"
#include "check/output_sums.h"
#include "check/outside_clock.h"
#include "check/runner_replies.h"
#include "run/protocol.h"
#include "task/draw.h"
#include "time/stats.h"

namespace kevo {
namespace {

using Clock = std::chrono::steady_clock;

// 64 bits from the kernel's random source (never a seed a candidate could know).
uint64_t random_key() {
  uint64_t k = 0;
  if (getrandom(&k, sizeof k, 0) != static_cast<ssize_t>(sizeof k)) {
    std::random_device rd;  // getrandom missing or interrupted: the same source, another way
    k = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  return k;
}

// A batch lasts long enough that the pipe's and the synchronize's jitter (~0.1 ms) stays under 1% of
// it, and short enough that the three series alternate often (drift cancels). On gelu (2^29
// elements: ~1.9 ms a call plus ~2.8 ms of draws, poison, flush and sums) k is 4.
constexpr double kBatchMs = 20.0;
// What the outside interval needs is kernel time between the batch sizes, not batch time: a
// batch's wall is off its size's line by ~0.05 ms (sd, H100, docs/measurements c5782ec), so
// over three pairs of batches the interval of (cand - around) is ~4 x 0.05 / sqrt(3) / spread,
// within the stopping rule's 1.5% when the sizes differ by ~8 ms of kernel time; kSpreadMs leaves
// margin. Where the kernel is a small part of a call (softmax: 1.0 ms of 2.7), k is smaller than
// kBatchMs asks for, and the session shorter; the stopping rule decides either way.
constexpr double kSpreadMs = 11.0;
// At least 4 calls in a large batch: the slope divides the wall clock's jitter by the sizes'
// spread, and with less a slow call (tens of ms) leaves an interval too wide to accuse a forger.
constexpr int kMinBatchCalls = 4, kMaxBatchCalls = 512;
// Rounds before the stopping rule may end timing: 3 batches of each size per series at least, so
// each median has an interval; and a ceiling for very fast kernels.
constexpr int kMinRounds = 6, kMaxRounds = 400;
// Racing (TimingSetup::stop_below): the least rounds before a clearly slower candidate's session may
// end, two batches of each size per series, the fewest the outside clock's fit takes. Stopping
// early only ever follows a figure below the line: a candidate that slows itself to stop early
// gains nothing, and one that reports itself faster is timed to the full precision.
constexpr int kMinRaceRounds = 4;
// A batch this far over the median of its series' earlier batches of the same size stalled (GPU-wide
// stalls of 0.5-3 ms hit ~1 batch in 8 on some H100 hosts, docs/measurements 0e2110e): its round
// is timed again, up to kMaxRetriedRounds times a session. Only slow batches are dropped, so what
// stays is never below a series' true cost: a candidate that stalls its own batches on purpose only
// lengthens its session. Without the retry one stall kept a session going for 6-10 more rounds
// until the fit could drop it.
constexpr double kStallMs = 0.3, kStallShare = 0.01;
constexpr int kMaxRetriedRounds = 4;
// The baseline's runner finding its first L2 flush of a batch this much slower than its other
// flushes means the GPU was still busy with work the candidate's runner left behind when it replied.
constexpr double kBusyFlushMs = 0.5;

enum class SeriesKind { Candidate, Baseline, Around };

struct Series {
  SeriesKind kind;
  RunnerClient* runner = nullptr;
  std::string slot;
  std::vector<BatchWall> walls;
  std::vector<double> call_ms;
  // First flush of each batch that directly followed a candidate batch, and every other flush.
  std::vector<double> flush_after_cand_ms, other_flush_ms;
  std::vector<proto::IpcBuffer> outputs_ipc;
  const char* name() const {
    return kind == SeriesKind::Candidate ? "the candidate" : kind == SeriesKind::Baseline ? "the baseline" : "the work around calls";
  }
};

double mean(const std::vector<double>& x) {
  return x.empty() ? 0 : std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

class TimingRun {
 public:
  TimingRun(const TimingSetup& s, Verdict& v, Batching b, uint64_t first_call)
      : s_(s), v_(v), batching_(b), next_call_(first_call) {}
  void run();
  uint64_t next_call() const { return next_call_; }

 private:
  bool prepare();
  std::optional<proto::TimeBatchReply> batch(Series& s, int n, uint64_t first_call, bool record,
                                             bool after_cand = false);
  uint64_t batch_key(uint64_t first_call);
  bool check_candidate(const proto::TimeBatchReply& r, const std::string& where);
  bool check_threads_outside(const Series& after);
  bool check_sums(const proto::TimeBatchReply& cand, const proto::TimeBatchReply& base, uint64_t first_call);
  bool calibrate();
  bool round(int index, bool& prev_was_cand);
  bool last_round_stalled() const;
  void drop_last_round();
  int small_calls() const { return batching_ == Batching::OneCall ? 1 : k_; }
  bool stable() const;
  bool clearly_slower() const;
  OutsideCheck outside_now() const;
  bool check_last_output(uint64_t last_call);
  void check_trusted_starts();
  void finish();
  void credit_against_expected(Timing& t);
  std::vector<double> floored_to_outside(std::vector<double> call_ms, const OutsideCheck& oc);

  const TimingSetup& s_;
  Verdict& v_;
  const Batching batching_;
  std::vector<proto::TensorDesc> inputs_, outputs_;
  proto::CallArgs call_args_;
  uint64_t next_call_ = 0, sums_key_ = 0, last_first_call_ = 0;
  std::map<uint64_t, uint64_t> batch_keys_;  // first call number -> its batch's draw key
  int k_ = kMinBatchCalls;
  int retried_ = 0;
  bool raced_ = false;
  std::optional<proto::DeviceState> state0_;
  std::vector<Series> series_;
  std::string where_;
};

bool TimingRun::prepare() {
  const ResolvedConfig& rc = *s_.config;
  auto ins = drawn_inputs(rc, s_.seed + kTimingSeedOffset, false);
  if (!ins) {
    v_.set(Outcome::InfraError, Reason::kTask, ins.error().message);
    return false;
  }
  inputs_ = std::move(*ins);
  outputs_ = output_descs(rc);
  call_args_ = call_args(*s_.task, rc);
  sums_key_ = random_key();
  where_ = fmt::format("timing on config '{}'", rc.config->name);
  state0_ = s_.state_at_load;
  series_.push_back({SeriesKind::Candidate, s_.cand, "cand"});
  if (s_.has_baseline) series_.push_back({SeriesKind::Baseline, s_.trusted, "base"});
  series_.push_back({SeriesKind::Around, s_.trusted, ""});
  return true;
}

std::optional<proto::TimeBatchReply> TimingRun::batch(Series& s, int n, uint64_t first_call, bool record,
                                                      bool after_cand) {
  proto::TimeBatchRequest q{call_args_};
  q.slot = s.slot;
  q.inputs = inputs_;
  for (auto& d : q.inputs)
    if (d.gen) d.gen->base = draw_mix(d.gen->base ^ batch_key(first_call));
  q.outputs = outputs_;
  q.first_call = first_call;
  q.calls = n;
  q.flush_bytes = 2 * s_.l2_bytes + (8 << 20);
  q.sums_key = sums_key_;
  q.export_outputs = s.kind == SeriesKind::Candidate && s.outputs_ipc.empty();
  q.state = true;  // every series pays for the state queries: their fixed costs must match
  auto timeout = s_.call_timeout + std::chrono::milliseconds(static_cast<int64_t>(n * 2000));
  auto t0 = Clock::now();
  auto r = s.runner->call(q, timeout);
  const double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!r && r.failure().malformed) {
    v_.set(s.kind == SeriesKind::Candidate ? Outcome::Unsafe : Outcome::InfraError, Reason::kTimingForged,
           fmt::format("{}: {}'s runner: {}", where_, s.name(), r.error().message));
    return std::nullopt;
  }
  if (!r) {
    if (s.kind == SeriesKind::Candidate) {
      classify_death(v_, *s.runner, r.refusal(), where_);
      if (v_.outcome == Outcome::Pass) v_.set(Outcome::InfraError, Reason::kRunner, r.error().message);
    } else {
      v_.set(Outcome::InfraError, Reason::kBaseline,
             fmt::format("{}: {}'s runner failed: {}", where_, s.name(), r.error().message));
    }
    return std::nullopt;
  }
  auto rep = std::move(*r);
  if (rep.call_ms.size() != static_cast<size_t>(n) || rep.sums.size() != static_cast<size_t>(n)) {
    v_.set(s.kind == SeriesKind::Candidate ? Outcome::Unsafe : Outcome::InfraError, Reason::kTimingForged,
           fmt::format("{}: {}'s runner answered for {} calls of {}", where_, s.name(), rep.call_ms.size(), n));
    return std::nullopt;
  }
  if (!check_threads_outside(s)) return std::nullopt;
  if (!rep.outputs_ipc.empty()) s.outputs_ipc = rep.outputs_ipc;
  // An unrecorded batch that follows the candidate's still shows whether its work had ended.
  if (!rep.flush_ms.empty() && (record || after_cand)) {
    (after_cand ? s.flush_after_cand_ms : s.other_flush_ms).push_back(rep.flush_ms.front());
    s.other_flush_ms.insert(s.other_flush_ms.end(), rep.flush_ms.begin() + 1, rep.flush_ms.end());
  }
  if (record) {
    s.walls.push_back({n, wall, std::accumulate(rep.call_ms.begin(), rep.call_ms.end(), 0.0)});
    s.call_ms.insert(s.call_ms.end(), rep.call_ms.begin(), rep.call_ms.end());
  }
  return rep;
}

// A fresh key for each batch's inputs, from the system's random source, sent with that batch and
// never before: nothing a candidate's process sees (its requests, the draw functions the runner
// exports) tells it the inputs of any later batch, so work done in an untimed batch (calibration,
// a dropped round) cannot be banked for a timed one. The baseline's batch on the same call
// numbers gets the same key, hence the same inputs.
uint64_t TimingRun::batch_key(uint64_t first_call) {
  auto [it, fresh] = batch_keys_.try_emplace(first_call, 0);
  if (fresh) it->second = random_key();
  return it->second;
}

// After every batch of every series: a thread in the candidate's process beyond those it had before
// its library was loaded could work while another series is timed (the count the runner reports
// is the candidate's to forge; the kernel's is not).
bool TimingRun::check_threads_outside(const Series& after) {
  if (s_.cand_threads <= 0 || !s_.cand) return true;
  const int now = proc_threads(s_.cand->pid());
  if (now <= s_.cand_threads) return true;
  std::string d = fmt::format("{}: after a batch of {}, the candidate's process had {} threads as the kernel counts "
                              "them, {} before its library was loaded: it left a host thread running",
                              where_, after.name(), now, s_.cand_threads);
  v_.flags.push_back({Reason::kHostThread, d});
  v_.set(Outcome::Unsafe, Reason::kHostThread, d);
  return false;
}

// The candidate's runner's guards, and the state it leaves behind.
bool TimingRun::check_candidate(const proto::TimeBatchReply& r, const std::string& where) {
  check_guards(v_, GuardReport::of(r), where);
  if (r.state_before && !state0_) state0_ = r.state_before;
  for (const auto* st : {&r.state_before, &r.state_after})
    if (*st && state0_ && !(**st == *state0_)) {
      std::string d = fmt::format("{}: the candidate changed device or stream state that persists after its "
                                  "call: {}",
                                  where, state0_->diff(**st));
      v_.flags.push_back({Reason::kDeviceState, d});
      v_.set(Outcome::Unsafe, Reason::kDeviceState, d);
      break;
    }
  return v_.outcome == Outcome::Pass;
}

// Every timed call's outputs against the baseline's for the same call numbers (the same inputs).
bool TimingRun::check_sums(const proto::TimeBatchReply& cand, const proto::TimeBatchReply& base, uint64_t first_call) {
  const Tolerance tol = s_.config->tolerance;
  for (size_t i = 0; i < cand.sums.size() && i < base.sums.size(); ++i)
    for (size_t o = 0; o < outputs_.size() && o < cand.sums[i].size() && o < base.sums[i].size(); ++o) {
      SumsCheck c = compare_sums(cand.sums[i][o], base.sums[i][o], tol);
      if (c.ok) continue;
      v_.set(Outcome::Incorrect, Reason::kTimedOutput,
             fmt::format("{}: the output '{}' of timed call {} (fresh inputs) is wrong: {}", where_,
                         outputs_[o].name, first_call + i, c.why));
      return false;
    }
  return true;
}

// Untimed batches per series that allocate its buffers and set k (k calls take ~kBatchMs, from the
// batch's GPU span: everything a call costs there, draws, flush, sums and kernel). OneCall: one
// call each. Doubling: 4 calls each, then k calls each (warm-up at the size it will time).
bool TimingRun::calibrate() {
  const int first = batching_ == Batching::OneCall ? 1 : kMinBatchCalls;
  double per_call = 0, kernel = 0;
  for (auto& s : series_) {
    auto r = batch(s, first, next_call_, false);
    if (!r || (s.kind == SeriesKind::Candidate && !check_candidate(*r, where_))) return false;
    per_call = std::max(per_call, r->span_ms / first);
    // The kernel's time, from the candidate's events and the baseline's: the least of the two, so a
    // candidate that reports slow calls cannot shrink the spread (it can only widen it).
    const double k_ms = std::accumulate(r->call_ms.begin(), r->call_ms.end(), 0.0) / first;
    if (s.kind != SeriesKind::Around) kernel = kernel == 0 ? k_ms : std::min(kernel, k_ms);
  }
  next_call_ += static_cast<uint64_t>(first);
  k_ = std::clamp(static_cast<int>(std::ceil(kBatchMs / std::max(per_call, 1e-3))), kMinBatchCalls, kMaxBatchCalls);
  // With a baseline (a trusted figure) and one-call small batches: k from the spread the interval
  // needs, 2k - 1 calls of kernel time, where that asks for fewer calls.
  if (s_.has_baseline && batching_ == Batching::OneCall && kernel > 0)
    k_ = std::clamp(static_cast<int>(std::ceil((kSpreadMs / kernel + 1) / 2)), kMinBatchCalls, k_);
  if (batching_ == Batching::OneCall) return true;
  for (auto& s : series_) {
    auto r = batch(s, k_, next_call_, false);
    if (!r || (s.kind == SeriesKind::Candidate && !check_candidate(*r, where_))) return false;
  }
  next_call_ += static_cast<uint64_t>(k_);
  return true;
}

bool TimingRun::stable() const {
  auto rel = [](const std::vector<double>& x) {
    Summary m = summarize(x);
    return m.median > 0 ? (m.median_hi - m.median_lo) / 2 / m.median : 1.0;
  };
  for (const auto& s : series_)
    if (s.kind != SeriesKind::Around && rel(s.call_ms) > s_.target_rel_ci) return false;
  return outside_precise(outside_now());
}

// Racing: the speedup's interval wholly below the line, and the checker's clock agreeing with the
// candidate's events (a forged or undecided figure is timed on to the stopping rule).
bool TimingRun::clearly_slower() const {
  if (s_.stop_below <= 0 || !s_.has_baseline || series_.size() < 3) return false;
  const Ratio r = median_ratio(series_[1].call_ms, series_.front().call_ms);
  return r.hi > 0 && r.hi < s_.stop_below && outside_now().verdict == OutsideVerdict::Agree;
}

// One batch of every series on the same call numbers (the same inputs). OneCall: always in the
// same order, candidate, baseline, work around calls: what a batch costs outside its events depends
// on the batch before it (on an H100 the first batch a process runs after another process's costs up
// to 0.3 ms more), so each series always follows the same one. Doubling: the series take turns to go
// first, so each follows each of the others as often. Drift cancels either way: the series alternate.
bool TimingRun::round(int index, bool& prev_was_cand) {
  const int n = index % 2 == 0 ? small_calls() : 2 * k_;
  const uint64_t first = next_call_;
  next_call_ += static_cast<uint64_t>(n);
  last_first_call_ = first;
  std::optional<proto::TimeBatchReply> cand, base;
  for (size_t j = 0; j < series_.size(); ++j) {
    const size_t at = batching_ == Batching::OneCall ? j : (j + static_cast<size_t>(index)) % series_.size();
    Series& s = series_[at];
    // OneCall without a baseline: the work-around series would follow the candidate's, so an
    // unrecorded one-call batch takes the switch (and the check that the candidate's work ended).
    if (batching_ == Batching::OneCall && s.kind == SeriesKind::Around && prev_was_cand) {
      if (!batch(s, 1, first, false, true)) return false;
      prev_was_cand = false;
    }
    auto r = batch(s, n, first, true, prev_was_cand);
    prev_was_cand = s.kind == SeriesKind::Candidate;
    if (!r) return false;
    if (s.kind == SeriesKind::Candidate) {
      if (!check_candidate(*r, where_)) return false;
      cand = std::move(r);
    } else if (s.kind == SeriesKind::Baseline) {
      base = std::move(r);
    }
  }
  return !cand || !base || check_sums(*cand, *base, first);
}

// Any series' last batch over the median of its earlier batches of that size by the stall margin.
bool TimingRun::last_round_stalled() const {
  for (const auto& s : series_) {
    if (s.walls.size() < 2) continue;
    const BatchWall& last = s.walls.back();
    std::vector<double> earlier;
    for (size_t i = 0; i + 1 < s.walls.size(); ++i)
      if (s.walls[i].calls == last.calls) earlier.push_back(s.walls[i].wall_ms);
    if (earlier.empty()) continue;
    const double med = median(earlier);
    if (last.wall_ms - med > std::max(kStallMs, kStallShare * med)) return true;
  }
  return false;
}

// The last round's batches leave every series' figures; the flushes stay (evidence of work a
// candidate left running, check_trusted_starts), and so do the checks its outputs passed.
void TimingRun::drop_last_round() {
  for (auto& s : series_) {
    if (s.walls.empty()) continue;
    const size_t n = static_cast<size_t>(s.walls.back().calls);
    s.walls.pop_back();
    s.call_ms.resize(s.call_ms.size() >= n ? s.call_ms.size() - n : 0);
  }
  ++retried_;
}

void TimingRun::run() {
  auto t0 = Clock::now();
  if (!prepare() || !calibrate()) return;
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  bool prev_was_cand = false;
  int kept = 0;
  for (int attempt = 0; attempt < kMaxRounds; ++attempt) {
    if (!round(kept, prev_was_cand)) return;
    if (retried_ < kMaxRetriedRounds && last_round_stalled())
      drop_last_round();
    else
      ++kept;
    if (kept < kMinRaceRounds) continue;  // bounded: at most kMaxRetriedRounds more
    if (kept >= kMinRounds) {
      if (elapsed() >= kNoisyBudgets * s_.budget_s) break;
      if ((elapsed() >= s_.budget_s || stable()) && outside_now().verdict != OutsideVerdict::Inconclusive) break;
    }
    // Below the line no more precision is needed, from the fit's first figure on.
    if (clearly_slower()) {
      raced_ = true;
      break;
    }
  }
  if (!check_last_output(next_call_ - 1)) return;
  check_trusted_starts();
  finish();
}

// The last timed call's outputs, element by element: against the baseline's last call (the same
// inputs) where it lies, or against the oracle when there is no baseline.
bool TimingRun::check_last_output(uint64_t last_call) {
  const Series& cand = series_.front();
  if (cand.outputs_ipc.size() != outputs_.size()) return true;
  if (!s_.has_baseline) {
    if (!s_.validate_last) {
      v_.flags.push_back({Reason::kTimedOutputUnchecked, "no baseline and no oracle on the GPU: timed outputs not validated"});
      return true;
    }
    std::vector<proto::TensorDesc> ins = inputs_;
    for (auto& d : ins) {
      d.gen->base = draw_call_base(draw_mix(d.gen->base ^ batch_key(last_first_call_)), last_call);
      d.gen->timed = true;  // as the runner drew it in time_batch
    }
    if (auto st = s_.validate_last(ins, outputs_, cand.outputs_ipc); !st)
      v_.set(Outcome::Incorrect, Reason::kTimedOutput,
             fmt::format("{}: the output of the last timed call is wrong: {}", where_, st.error().message));
    return v_.outcome == Outcome::Pass;
  }
  if (!s_.compare_ipc) return true;  // every call's sums were compared already
  const Tolerance tol = s_.config->tolerance;
  proto::CompareRequest q{tol.atol, tol.rtol};
  for (size_t o = 0; o < outputs_.size(); ++o)
    q.outputs.push_back({cand.outputs_ipc[o], outputs_[o].dtype, std::nullopt, outputs_[o].numel, outputs_[o].nbytes,
                         "tb/base/out/" + outputs_[o].name, outputs_[o].nbytes, true});
  auto r = s_.trusted->call(q, s_.call_timeout * 3);
  if (r && r->out_of_bounds.empty() && r->outputs.size() != outputs_.size())
    r = CallError{Error{fmt::format("the comparison answered for {} of {} outputs", r->outputs.size(), outputs_.size())},
                  std::nullopt, true};
  if (!r) {
    if (auto ping = s_.cand->call(proto::HelloRequest{}, std::chrono::seconds(10)); !ping.answered()) {
      classify_death(v_, *s_.cand, nullptr, where_ + " (after the last batch)");
      return false;
    }
    v_.set(Outcome::InfraError, Reason::kCompare, fmt::format("{}: {}", where_, r.error().message));
    return false;
  }
  if (!r->out_of_bounds.empty()) {
    v_.set(Outcome::Unsafe, Reason::kGuard,
           fmt::format("{}: the candidate's runner exported a timed output outside its own allocation ({})", where_,
                       r->out_of_bounds));
    return false;
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    Comparison c = comparison_of(r->outputs[o].cmp);
    if (!c.ok) {
      v_.set(Outcome::Incorrect, Reason::kTimedOutput,
             fmt::format("{}: the output '{}' of the last timed call is wrong: {}", where_, outputs_[o].name,
                         c.describe(outputs_[o].shape)));
      return false;
    }
  }
  return true;
}

// A candidate's runner that answers before its GPU work is done leaves that work to slow down
// whatever runs next: the trusted runner sees its first flush of a batch delayed.
void TimingRun::check_trusted_starts() {
  for (const auto& s : series_) {
    if (s.kind == SeriesKind::Candidate || s.runner == s_.cand || s.other_flush_ms.empty()) continue;
    const double usual = median(s.other_flush_ms);
    int slow = 0;
    double worst = 0;
    for (double f : s.flush_after_cand_ms) {
      slow += f > usual + kBusyFlushMs;
      worst = std::max(worst, f);
    }
    // Systematic delays only: a context switch now and then is not leftover work.
    if (slow * 2 > static_cast<int>(s.flush_after_cand_ms.size())) {
      std::string d = fmt::format("{}: {} found the GPU busy at the start of {} of the {} batches that followed the "
                                  "candidate's (first flush up to {:.3f} ms, usually {:.3f} ms): the candidate's "
                                  "runner replied before its work had finished",
                                  where_, s.name(), slow, s.flush_after_cand_ms.size(), worst, usual);
      v_.flags.push_back({Reason::kHiddenWork, d});
      v_.set(Outcome::Unsafe, Reason::kHiddenWork, d);
      return;
    }
  }
}

OutsideCheck TimingRun::outside_now() const {
  const Series& cand = series_.front();
  OutsideCheck c = check_outside(mean(cand.call_ms), fit_slope(cand.walls), fit_slope(series_.back().walls));
  if (c.verdict != OutsideVerdict::Unmeasured) add_median_check(c, cand.walls, series_.back().walls);
  return c;
}

// The candidate's per-call figures, raised (all by one factor) to the least the outside clock allows
// where their median sits below it: see outside_floor_factor.
std::vector<double> TimingRun::floored_to_outside(std::vector<double> call_ms, const OutsideCheck& oc) {
  const double figure = median(call_ms);
  const double f = outside_floor_factor(figure, oc);
  if (f <= 1) return call_ms;
  for (double& x : call_ms) x *= f;
  v_.flags.push_back({Reason::kTimingFloored,
                      fmt::format("{}: the candidate's median call ({:.4f} ms) is below the least the checker's "
                                  "clock allows ({:.4f} ms; {}); its figures are raised by {:.2f}% to that",
                                  where_, figure, figure * f, oc.detail, 100 * (f - 1))});
  return call_ms;
}

// A baseline slower than the run measured it at its start is not the candidate's gain: whatever
// held its batches back (a candidate's leftover work, a throttled clock), the speedup is credited
// against the run's figure, never above what this session measured.
void TimingRun::credit_against_expected(Timing& t) {
  constexpr double kBaselineSlowedMargin = 0.15;
  const double expected = s_.baseline_expected_ms, measured = t.baseline.median;
  if (!(expected > 0) || !(measured > expected * (1 + kBaselineSlowedMargin)) || !(t.speedup.value > 1.0)) return;
  const double f = expected / measured;
  v_.flags.push_back({Reason::kBaselineSlowed,
                      fmt::format("{}: the baseline ran {:.4f} ms per call in this session, {:.4f} ms when the run "
                                  "measured it (+{:.0f}%); the speedup is credited against the run's figure: "
                                  "{:.3f}x, not {:.3f}x",
                                  where_, measured, expected, 100 * (measured / expected - 1), t.speedup.value * f,
                                  t.speedup.value)});
  t.speedup.value *= f;
  t.speedup.lo *= f;
  t.speedup.hi *= f;
}

void TimingRun::finish() {
  const Series& cand = series_.front();
  const Series& around = series_.back();
  Timing t;
  t.config = s_.config->config->name;
  OutsideCheck oc = outside_now();
  const std::vector<double> cand_ms = floored_to_outside(cand.call_ms, oc);
  t.candidate = summarize(cand_ms);
  t.events_median = median(cand.call_ms);
  t.outside = oc;
  t.batch_calls = k_;
  t.small_calls = small_calls();
  t.rounds = static_cast<int>(cand.walls.size());
  t.retried_rounds = retried_;
  if (raced_) {
    t.stopped_below = s_.stop_below;
    v_.flags.push_back({Reason::kTimingRaced,
                        fmt::format("{}: timed for {} rounds, not to the stopping rule's precision: the speedup is "
                                    "clearly below {:.3f}x (the line this evaluation was raced against)",
                                    where_, t.rounds, s_.stop_below)});
  }
  t.around_ms = fit_slope(around.walls).per_call_ms;
  t.walls_candidate = cand.walls;
  t.walls_around = around.walls;
  if (s_.has_baseline) {
    const Series& base = series_[1];
    t.has_baseline = true;
    t.baseline = summarize(base.call_ms);
    t.walls_baseline = base.walls;
    t.speedup = median_ratio(base.call_ms, cand_ms);
    t.outside_baseline = check_outside(mean(base.call_ms), fit_slope(base.walls), fit_slope(around.walls));
  }
  if (t.has_baseline) credit_against_expected(t);
  if (oc.verdict == OutsideVerdict::Forged)
    v_.set(Outcome::Unsafe, Reason::kTimingForged,
           fmt::format("{}: the candidate's process reports faster calls than the checker's clock measured: {}",
                       where_, oc.detail));
  else if (oc.verdict == OutsideVerdict::Unmeasured)
    v_.flags.push_back({Reason::kTimingUnconfirmed, oc.detail});
  // The baseline's figure is checked as the candidate's is: where the checker's clock says its
  // batches held more than its events explain, something outside its process worked during them,
  // and a speedup over that figure is not the candidate's to claim.
  if (t.has_baseline && t.outside_baseline.verdict == OutsideVerdict::Forged && t.speedup.value > 1.0)
    v_.set(Outcome::InfraError, Reason::kTimingNoisy,
           fmt::format("{}: the baseline's own figure disagrees with the checker's clock ({}): its batches held "
                       "work from outside its process, and the {:.3f}x is not credited",
                       where_, t.outside_baseline.detail, t.speedup.value));
  v_.timing = t;
}

}  // namespace

uint64_t run_timing_session(const TimingSetup& s, Verdict& v, Batching b, uint64_t first_call) {
  TimingRun run(s, v, b, first_call);
  run.run();
  return run.next_call();
}

namespace {

// A OneCall session whose outside check did not agree with the candidate's events: forged (decided
// in finish()) or inconclusive (left to the evaluator).
bool needs_retiming(const Verdict& v) {
  if (!v.timing) return false;
  const OutsideVerdict o = v.timing->outside.verdict;
  if (v.outcome == Outcome::Unsafe && v.reason == Reason::kTimingForged) return o == OutsideVerdict::Forged;
  // The baseline's figure misread the same way (one-call batches misread some honest kernels).
  if (v.outcome == Outcome::InfraError && v.reason == Reason::kTimingNoisy)
    return v.timing->outside_baseline.verdict == OutsideVerdict::Forged;
  return v.outcome == Outcome::Pass && o == OutsideVerdict::Inconclusive;
}

}  // namespace

void run_timing(const TimingSetup& s, Verdict& v) {
  auto t0 = Clock::now();
  // Call numbers a candidate cannot guess from earlier evaluations; the second session goes on
  // from where the first ended, so no inputs repeat (a cache keyed on values finds nothing).
  const uint64_t first_call = draw_mix(s.seed) >> 16;
  Verdict one = v;
  const uint64_t next = run_timing_session(s, one, Batching::OneCall, first_call);
  if (!needs_retiming(one)) {
    v = std::move(one);
  } else {
    // Whose events the first session's clock disagreed with: the candidate's, or the baseline's.
    const bool base_misread = one.reason == Reason::kTimingNoisy;
    const OutsideCheck& oc = base_misread ? one.timing->outside_baseline : one.timing->outside;
    run_timing_session(s, v, Batching::Doubling, next);
    // A stall dropped in the first session is still the run's: the report counts every retry.
    if (v.timing) v.timing->retried_rounds += one.timing->retried_rounds;
    v.flags.push_back({Reason::kTimingRetimed,
                       fmt::format("batches of one call and {} calls read the checker's clock {} with the "
                                   "{}'s events ({}); timed again with batches of k and 2k calls, "
                                   "whose figures these are",
                                   2 * one.timing->batch_calls, to_string(oc.verdict),
                                   base_misread ? "baseline" : "candidate", oc.detail)});
  }
  // An Inconclusive outside check is decided by evaluator.cpp, after the SOL check.
  v.work["timing_session"] += std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace kevo
