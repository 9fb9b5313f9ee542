// The correctness phase: every config (smallest first) x seeds plus one wide draw, the first draw
// of each config run twice (other poison, moved buffers). Device data: both runners draw the
// inputs on the GPU and the trusted runner compares the candidate's buffers where they lie (CUDA
// IPC). Host data: the checker draws, the arena carries the bytes, the checker compares.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>

#include "check/host_data.h"
#include "check/runner_replies.h"
#include "check/session.h"
#include "check/tolerance_check.h"
#include "util/gpu_lock.h"

namespace kevo {
namespace {
using namespace std::chrono_literals;

struct DevCompare {
  std::vector<Comparison> outs, runs;
  std::vector<uint64_t> input_diffs;
  std::string out_of_bounds;  // the candidate's runner named a buffer outside its allocation
};

// The candidate's outputs (IPC handles) against the trusted runner's base/out/<name>; with
// `snapshot` a copy is kept there (snap/<name>), with `vs_snapshot` also compared with that copy
// (two runs of the same inputs must agree); inputs byte for byte against base/in/<name>.
Result<DevCompare> compare_dev(EvalSession& s, const Tolerance& tol, const std::vector<proto::TensorDesc>& outs,
                               const std::vector<proto::IpcBuffer>& out_ipc, const std::vector<proto::TensorDesc>* ins,
                               const std::vector<proto::IpcBuffer>* in_ipc, bool check_poison, bool snapshot,
                               bool vs_snapshot) {
  // The handles come from the candidate's runner: as many as asked for, or nothing is compared.
  if (out_ipc.size() != outs.size() || (ins && in_ipc->size() != ins->size()))
    return fail("the candidate's runner exported {} output and {} input buffers for {} and {}", out_ipc.size(),
                in_ipc ? in_ipc->size() : 0, outs.size(), ins ? ins->size() : 0);
  proto::CompareRequest q{tol.atol, tol.rtol};
  for (size_t i = 0; i < outs.size(); ++i) {
    proto::CompareOutput d{out_ipc[i], outs[i].dtype, std::nullopt, outs[i].numel, outs[i].nbytes,
                           "base/out/" + outs[i].name, outs[i].nbytes, check_poison};
    if (snapshot) d.snapshot = "snap/" + outs[i].name;
    if (vs_snapshot) d.runs_ref = "snap/" + outs[i].name;
    q.outputs.push_back(d);
  }
  if (ins)
    for (size_t i = 0; i < ins->size(); ++i) q.inputs.push_back({(*in_ipc)[i], (*ins)[i].nbytes, "base/in/" + (*ins)[i].name});
  auto r = s.trusted->call(q, s.opts.call_timeout * 3);
  if (!r) return fail("the oracle's comparison failed: {}", r.error().message);
  if (!r->out_of_bounds.empty()) return DevCompare{{}, {}, {}, r->out_of_bounds};
  if (r->outputs.size() != outs.size() || r->inputs.size() != q.inputs.size())
    return fail("the oracle's comparison answered for {} outputs and {} inputs of {} and {}", r->outputs.size(),
                r->inputs.size(), outs.size(), q.inputs.size());
  DevCompare dc;
  for (const auto& o : r->outputs) {
    dc.outs.push_back(comparison_of(o.cmp));
    if (o.runs) dc.runs.push_back(comparison_of(*o.runs, Reason::kNondeterministic));
  }
  for (const auto& i : r->inputs) dc.input_diffs.push_back(i.differing_bytes);
  return dc;
}

// One correctness call of the candidate: its reply, or nullopt once the verdict is decided (the
// process died, or its guards reported a violation), with the config marked failed.
std::optional<proto::RunReply> run_candidate(EvalSession& s, const proto::RunRequest& req, const std::string& where,
                                             ConfigCheck& cc) {
  auto r = s.timed("candidate", [&] { return s.cand->call(req, s.opts.call_timeout); });
  if (!r && r.failure().malformed) {
    // Its process loaded the candidate: a reply that is not the protocol's is the candidate's doing,
    // and must not pass for the checker's failure (three infra errors in a row stop a run).
    s.v.set(Outcome::Unsafe, Reason::kGuard, fmt::format("{}: the candidate's runner sent a malformed reply: {}", where,
                                                         r.error().message));
  } else if (!r) {
    classify_death(s.v, *s.cand, r.refusal(), where);
    if (s.v.outcome == Outcome::Pass) s.v.set(Outcome::InfraError, Reason::kRunner, r.error().message);
  }
  if (!r || !check_guards(s.v, GuardReport::of(*r), where)) {
    cc.ok = false;
    cc.detail = s.v.message;
    return std::nullopt;
  }
  return std::move(*r);
}

void fail_config(EvalSession& s, ConfigCheck& cc, Outcome o, Reason reason, std::string detail) {
  cc.ok = false;
  cc.detail = std::move(detail);
  s.v.set(o, reason, cc.detail);
}

// What the trusted runner's comparison says about one call.
void judge_dev(EvalSession& s, ConfigCheck& cc, const DevCompare& dc, const std::vector<proto::TensorDesc>& gins,
               const std::vector<proto::TensorDesc>& odescs, const std::string& where, const std::string& runs_where) {
  for (size_t i = 0; i < dc.input_diffs.size() && cc.ok; ++i)
    if (dc.input_diffs[i])
      fail_config(s, cc, Outcome::Incorrect, Reason::kInputModified,
                  fmt::format("{}: input '{}' was modified by the candidate ({} bytes differ)", where,
                              gins[i].name, dc.input_diffs[i]));
  for (size_t o = 0; o < dc.outs.size() && cc.ok; ++o) {
    const Comparison& cmp = dc.outs[o];
    cc.max_abs_err = std::max(cc.max_abs_err, cmp.max_abs_err);
    cc.max_rel_err = std::max(cc.max_rel_err, cmp.max_rel_err);
    if (!cmp.ok)
      fail_config(s, cc, Outcome::Incorrect, cmp.reason,
                  fmt::format("{}: output '{}': {}", where, odescs[o].name, cmp.describe(odescs[o].shape)));
  }
  for (size_t o = 0; o < dc.runs.size() && cc.ok; ++o)
    if (!dc.runs[o].ok)
      fail_config(s, cc, Outcome::Incorrect, Reason::kNondeterministic,
                  fmt::format("{}: two runs on the same inputs disagree (different poison and buffer placement): {}",
                              runs_where, dc.runs[o].describe(odescs[o].shape)));
}

// One draw of one config on the device data plane, its reference outputs from `oracle`; false when
// the checker itself failed.
bool draw_on_device(EvalSession& s, Oracle& oracle, const ResolvedConfig& rc, int seed_index, uint64_t seed,
                    bool wide, ConfigCheck& cc) {
  const Config& c = *rc.config;
  auto gins = drawn_inputs(rc, seed, wide);
  if (!gins) return s.v.set(Outcome::InfraError, Reason::kTask, gins.error().message), false;
  const std::vector<proto::TensorDesc> odescs = output_descs(rc);
  // The oracle's outputs and the candidate's run do not depend on each other (each process draws
  // the same inputs into its own buffers): the trusted runner works while the candidate's does.
  // Only the comparison needs both.
  double oracle_s = 0;
  std::future<Status> want = std::async(std::launch::async, [&] {
    auto t0 = EvalSession::Clock::now();
    Status st = oracle.device_outputs(c, *gins, odescs);
    oracle_s = std::chrono::duration<double>(EvalSession::Clock::now() - t0).count();
    return st;
  });
  std::optional<Status> oracle_st;
  auto oracle_ready = [&] {
    if (!oracle_st) {
      oracle_st = want.get();
      s.v.work["oracle"] += oracle_s;
    }
    if (!*oracle_st && s.v.outcome == Outcome::Pass) s.v.set(Outcome::InfraError, Reason::kOracle, oracle_st->error().message);
    return bool(*oracle_st);
  };
  for (int placement = 0; placement < (seed_index == 0 ? 2 : 1) && cc.ok; ++placement) {
    std::string where = fmt::format("config '{}' seed {}{}{}", c.name, seed_index, wide ? " (wide)" : "",
                                    placement ? " (moved buffers)" : "");
    proto::RunRequest req{call_args(s.task, rc)};
    req.slot = "cand";
    req.inputs = *gins;
    req.outputs = odescs;
    req.poison = req.placement = placement;
    req.keep = req.export_ipc = true;
    req.flush_bytes = 2 * s.hello.l2_bytes + (8 << 20);
    auto r = run_candidate(s, req, where, cc);
    if (!r) break;
    if (!oracle_ready()) return false;
    auto dc = s.timed("compare", [&] {
      return compare_dev(s, rc.tolerance, odescs, r->outputs_ipc, s.task.inplace ? nullptr : &*gins, &r->inputs_ipc,
                         placement == 0, seed_index == 0 && placement == 0, placement == 1);
    });
    if (!dc) {
      // A candidate process that ended itself after replying takes its buffers with it: that is
      // the candidate's failure, not the checker's.
      if (auto ping = s.cand->call(proto::HelloRequest{}, 10s); !ping.answered()) {
        classify_death(s.v, *s.cand, nullptr, where + " (after the call)");
        cc.ok = false;
        cc.detail = s.v.message;
        break;
      }
      s.v.set(Outcome::InfraError, Reason::kCompare, dc.error().message);
      return false;
    }
    if (!dc->out_of_bounds.empty()) {
      fail_config(s, cc, Outcome::Unsafe, Reason::kGuard,
                  fmt::format("{}: the candidate's runner exported a buffer outside its own allocation ({})", where,
                              dc->out_of_bounds));
      break;
    }
    judge_dev(s, cc, *dc, *gins, odescs, where, fmt::format("config '{}' seed {}", c.name, seed_index));
    if (cc.ok) ++cc.draws;
  }
  // The candidate failed first: its verdict stands, and the oracle's call ends before the next draw.
  if (!oracle_st) oracle_ready();
  return cc.ok || s.v.outcome != Outcome::InfraError || s.v.reason != Reason::kOracle;
}

// Correctness checks share the GPU with each other, never with a timing (util/gpu_lock.h).
std::optional<GpuLock> share_gpu(EvalSession& s) {
  auto lock = lock_gpu(s, GpuLock::Mode::Shared);
  if (!lock) {
    s.v.set(Outcome::InfraError, Reason::kGpuBusy, lock.error().message);
    return std::nullopt;
  }
  return std::move(*lock);
}

// One draw of one config on the host data plane; false when the checker itself failed.
bool draw_on_host(EvalSession& s, const ResolvedConfig& rc, int seed_index, uint64_t seed, bool wide,
                  ConfigCheck& cc) {
  const Config& c = *rc.config;
  const Tolerance& tol = rc.tolerance;
  const bool inplace = s.task.inplace;
  auto ins = s.timed("inputs", [&] { return generate_inputs(rc, seed, wide); });
  if (!ins) return s.v.set(Outcome::InfraError, Reason::kTask, ins.error().message), false;
  // The host path holds the GPU only while a runner uses it: a CPU reference can take minutes on a
  // large config, and a timing elsewhere on this GPU would wait for all of it.
  auto want = s.timed("oracle", [&]() -> Result<std::vector<Expected>> {
    if (!s.oracle->on_device()) return s.oracle->host_outputs(c, *ins);
    auto lock = share_gpu(s);
    if (!lock) return fail("the GPU is busy");
    return s.oracle->host_outputs(c, *ins);
  });
  if (!want && s.v.outcome != Outcome::Pass) return false;
  if (!want) return s.v.set(Outcome::InfraError, Reason::kOracle, want.error().message), false;
  const Prepared p = prepare(rc, *ins, !inplace);
  if (auto st = s.cand->arena().resize(p.layout.size); !st)
    return s.v.set(Outcome::InfraError, Reason::kMemory, st.error().message), false;
  std::vector<std::vector<HostTensor>> runs;
  for (int placement = 0; placement < (seed_index == 0 ? 2 : 1) && cc.ok; ++placement) {
    std::string where = fmt::format("config '{}' seed {}{}{}", c.name, seed_index, wide ? " (wide)" : "",
                                    placement ? " (moved buffers)" : "");
    s.timed("arena", [&] { return put_inputs(s.cand->arena(), p.inputs, *ins), 0; });
    proto::RunRequest req{call_args(s.task, rc)};
    req.slot = "cand";
    req.arena_size = p.layout.size;
    req.inputs = p.inputs;
    req.outputs = p.outputs;
    req.poison = req.placement = placement;
    if (!inplace) req.inputs_after = p.inputs_after;
    std::optional<GpuLock> lock = share_gpu(s);
    if (!lock) return false;
    auto r = run_candidate(s, req, where, cc);
    lock.reset();
    if (!r) break;
    auto outs = s.timed("arena", [&] { return get_outputs(s.cand->arena(), p.outputs); });
    for (size_t i = 0; i < ins->size() && !inplace && cc.ok; ++i)
      if (!arena_holds(s.cand->arena(), p.inputs_after[i], (*ins)[i]))
        fail_config(s, cc, Outcome::Incorrect, Reason::kInputModified,
                    fmt::format("{}: input '{}' was modified by the candidate", where, (*ins)[i].name));
    for (size_t o = 0; o < outs.size() && cc.ok; ++o) {
      Comparison cmp = s.timed("compare", [&] { return compare_output(outs[o], (*want)[o], tol, placement == 0); });
      cc.max_abs_err = std::max(cc.max_abs_err, cmp.max_abs_err);
      cc.max_rel_err = std::max(cc.max_rel_err, cmp.max_rel_err);
      if (!cmp.ok)
        fail_config(s, cc, Outcome::Incorrect, cmp.reason,
                    fmt::format("{}: output '{}': {}", where, outs[o].name, cmp.describe(outs[o].shape)));
    }
    if (!cc.ok) break;
    ++cc.draws;
    runs.push_back(std::move(outs));
  }
  for (size_t o = 0; cc.ok && runs.size() == 2 && o < runs[0].size(); ++o) {
    Comparison cmp = s.timed("compare", [&] { return compare_runs(runs[0][o], runs[1][o], tol); });
    if (!cmp.ok)
      fail_config(s, cc, Outcome::Incorrect, Reason::kNondeterministic,
                  fmt::format("config '{}' seed {}: two runs on the same inputs disagree (different poison and "
                              "buffer placement): {}",
                              c.name, seed_index, cmp.describe(runs[0][o].shape)));
  }
  return true;
}

bool checked_here(const EvalSession& s, const Config& c) {
  return !((s.opts.visible_only && c.held_out) || (s.opts.held_out_only && !c.held_out));
}

// What the host path holds for a config at once: each input and output in its own type three times
// (the draw, the arena, the copy back) and once in doubles (the CPU reference's).
double host_bytes(const ResolvedConfig& r) {
  double b = 0;
  for (const auto* list : {&r.inputs, &r.outputs})
    for (const auto& t : *list)
      b += static_cast<double>(t.numel) * (3.0 * static_cast<double>(dtype_size(t.dtype())) + 8.0);
  return b;
}

}  // namespace

bool over_host_budget(const EvalSession& s, const ResolvedConfig& r) {
  return s.opts.baseline_mode && s.opts.device_data && !s.opts.compile_only && s.opts.host_budget_mib > 0 &&
         !s.task.oracle_is_torch && host_bytes(r) > s.opts.host_budget_mib * 1024 * 1024;
}

bool any_over_host_budget(const EvalSession& s) {
  for (const Config& c : s.task.configs) {
    if (!checked_here(s, c)) continue;
    auto r = s.task.resolve(c);
    if (r && over_host_budget(s, *r)) return true;
  }
  return false;
}

Status compare_on_device(EvalSession& s, const ResolvedConfig& r, const std::vector<proto::TensorDesc>& outs,
                         const std::vector<proto::IpcBuffer>& outputs_ipc) {
  auto dc = compare_dev(s, r.tolerance, outs, outputs_ipc, nullptr, nullptr, true, false, false);
  if (!dc) return dc.unexpected();
  if (!dc->out_of_bounds.empty())
    return fail("the candidate's runner exported a buffer outside its own allocation ({})", dc->out_of_bounds);
  for (size_t o = 0; o < dc->outs.size(); ++o)
    if (!dc->outs[o].ok)
      return fail("output '{}': {}", outs[o].name, dc->outs[o].describe(outs[o].shape));
  return {};
}

bool tolerance_phase(EvalSession& s) {
  std::optional<GpuLock> lock;
  if (s.oracle->on_device()) {
    auto l = share_gpu(s);
    if (!l) return false;
    lock.emplace(std::move(*l));
  }
  // A fixed draw: whether a constant passes is the task's property, the same in every evaluation.
  constexpr uint64_t kSeed = 1;
  Status st = s.timed("tolerance", [&] { return check_tolerance_at_load(s.task, *s.oracle, kSeed); });
  // An oracle that fails here fails again in the correctness phase, which says so on the data plane
  // the evaluation uses (and takes back what it lent): the verdict is decided there.
  if (st || st.error().code != ErrorCode::kParse) return true;
  s.v.set(Outcome::InfraError, Reason::kTask,
          fmt::format("{}: the task's tolerance cannot tell a constant from its reference, so no speedup over it "
                      "would mean anything: {}",
                      s.task.dir.string(), st.error().message));
  return false;
}

bool correctness_phase(EvalSession& s) {
  s.next_phase(EvalPhase::kCorrectness);
  // On the device data plane the GPU does all the work: held for the phase (draw_on_host takes it
  // around each runner call instead).
  std::optional<GpuLock> lock;
  if (s.dev_data) {
    auto l = share_gpu(s);
    if (!l) return false;
    lock.emplace(std::move(*l));
  }
  // Each checked config resolved once, smallest first: most wrong kernels fail there in milliseconds.
  struct Planned {
    const Config* config;
    Result<ResolvedConfig> resolved;
  };
  std::vector<Planned> order;
  for (const Config& c : s.task.configs)
    if (checked_here(s, c)) order.push_back({&c, s.task.resolve(c)});
  auto elements = [](const Planned& p) { return p.resolved ? p.resolved->input_numel() : 0; };
  std::stable_sort(order.begin(), order.end(),
                   [&](const Planned& a, const Planned& b) { return elements(a) < elements(b); });
  for (const Planned& planned : order) {
    const Config& c = *planned.config;
    if (!planned.resolved)
      return s.v.set(Outcome::InfraError, Reason::kTask, planned.resolved.error().message), false;
    const ResolvedConfig& rc = *planned.resolved;
    ConfigCheck cc;
    cc.config = c.name;
    cc.held_out = c.held_out;
    // Over the host budget, the baseline's own check runs on the device, against itself.
    Oracle* on_device = s.dev_data ? s.oracle.get() : s.consistency && over_host_budget(s, rc) ? s.consistency.get() : nullptr;
    if (on_device == s.consistency.get() && on_device) cc.against = CheckedAgainst::kConsistency;
    std::optional<GpuLock> config_lock;
    if (on_device && !lock) {
      auto l = share_gpu(s);
      if (!l) return false;
      config_lock.emplace(std::move(*l));
    }
    auto t_config = EvalSession::Clock::now();
    for (int k = 0; k <= s.opts.seeds && cc.ok; ++k) {
      bool wide = k == s.opts.seeds;  // the last draw comes from the wider distribution
      uint64_t seed = s.v.seed + 1000003ull * static_cast<uint64_t>(&c - s.task.configs.data()) + static_cast<uint64_t>(k);
      bool ok = on_device ? draw_on_device(s, *on_device, rc, k, seed, wide, cc) : draw_on_host(s, rc, k, seed, wide, cc);
      if (!ok) return false;
    }
    config_lock.reset();
    cc.seconds = std::chrono::duration<double>(EvalSession::Clock::now() - t_config).count();
    s.v.configs.push_back(cc);
    if (!cc.ok) return false;
  }
  return true;
}

}  // namespace kevo
