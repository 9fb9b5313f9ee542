// `kevo eval TASK [CANDIDATE.cu]`: the checker on its own.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/evaluator.h"
#include "check/oracle_check.h"
#include "cli/commands.h"
#include "cli/task_arg.h"
#include "run/runner_pool.h"

namespace kevo::cli {

namespace {

struct Args {
  std::string task, candidate;
  bool baseline = false, compile_only = false, json = false, no_time = false, visible_only = false;
  double host_budget_mib = 1024;
  bool sanitize = false, host_data = false, no_static_gate = false, held_out_only = false, no_torch_time = false;
  bool profile = false, oracle_check = false;
  int seeds = 3;
  uint64_t seed = 0;
  std::string arch;
  double time_budget = 4.0, timeout = 20.0, stop_below = 0;
};

// --oracle-check: the task's oracle on its own (check/oracle_check.h); returns the exit code.
int oracle_check(const Task& task, const Args& a, bool seed_given) {
  if (a.baseline || !a.candidate.empty() || a.compile_only) {
    std::fprintf(stderr, "kevo eval: --oracle-check checks the task's oracle alone: give no candidate, --baseline or --compile-only\n");
    return 21;
  }
  OracleCheckOptions o;
  o.device_data = !a.host_data;
  o.torch_time = !a.no_time && !a.no_torch_time;
  o.visible_only = a.visible_only;
  o.held_out_only = a.held_out_only;
  if (seed_given) o.seed = a.seed;
  o.time_budget_s = a.time_budget;
  // An oracle run is given what the evaluator gives it: three candidate calls' time.
  o.call_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout * 3000));
  OracleCheckReport r = check_oracle(task, o);
  if (a.json)
    std::printf("%s\n", r.to_json().dump(2).c_str());
  else
    std::printf("%s", r.to_text().c_str());
  return r.exit_code();
}

// After an evaluation that reached a GPU, the user's runner pool is started (KEVO_RUNNER_POOL=auto,
// the default) so the next kevo eval takes ready runners instead of waiting for two CUDA contexts.
void start_pool_for_next(const Verdict& v) {
  const bool reached_gpu = v.work.count("runner_wait") && v.reason != Reason::kNoGpu && v.reason != Reason::kRunner;
  if (!reached_gpu || pool_mode() != PoolMode::kAuto || pool_status()) return;
  PoolStartOptions po;
  auto pid = start_pool(po);
  if (!pid) {
    std::fprintf(stderr, "kevo: could not start a runner pool for the next evaluations: %s\n", pid.error().message.c_str());
    return;
  }
  std::fprintf(stderr,
               "kevo: started a runner pool (pid %ld) so the next evaluations start at once; it ends after %d min "
               "idle (`kevo runners stop` now; KEVO_RUNNER_POOL=off never starts one)\n",
               *pid, po.idle_exit_s / 60);
}

// A --compile-only verdict that passed compiled and passed the static checks, and nothing more: its
// last line, and the JSON's "checked": false, say so where a plain pass would read as correct.
constexpr const char* kNotChecked =
    "--compile-only: compiled and passed the static checks; nothing was run, so its correctness and speed are not "
    "known";

void print_verdict(const Verdict& v, bool compile_only, bool json) {
  const bool compiled_only = compile_only && v.outcome == Outcome::Pass;
  if (json) {
    nlohmann::json j = v.to_json();
    j["checked"] = !compile_only;  // correctness and speed: never under --compile-only, whatever the outcome
    if (compiled_only) j["note"] = kNotChecked;
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::string text = v.to_text();
  if (compiled_only) {
    const size_t at = text.rfind("VERDICT: PASS");
    if (at != std::string::npos)
      text = text.substr(0, at) + fmt::format("COMPILED, NOT CHECKED ({:.1f} s): {}\n", v.seconds, kNotChecked);
  }
  std::printf("%s", text.c_str());
}

}  // namespace

void register_eval(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "eval",
      "Check a candidate kernel (compile, correctness on unseen inputs, timing vs the baseline and,\n"
      "for tasks with a PyTorch reference, vs PyTorch eager / torch.compile / its extension).\n"
      "With --oracle-check, check the task's oracle itself instead (no candidate).\n"
      "Exit codes: 0 pass, 10 compile error, 11 incorrect (--oracle-check: an oracle output failed a\n"
      "check), 12 unsafe/hack, 13 timeout, 14 crash, 20 infrastructure error, 21 bad task or arguments,\n"
      "130 interrupted (Ctrl-C: the runners end with it).");
  auto a = std::make_shared<Args>();
  cmd->add_option("task", a->task, "Task directory or bundled task name")->required();
  cmd->add_option("candidate", a->candidate, "Candidate .cu file (candidate ABI, docs/ABI.md)");
  cmd->add_flag("--baseline", a->baseline, "Check the task's baseline against its CPU reference");
  cmd->add_flag("--oracle-check", a->oracle_check,
                "Check the task's oracle alone: every config run twice on the same inputs (on the device data plane "
                "when there is a GPU and CUDA torch), outputs checked for the declared sizes and dtypes, NaN/Inf, all "
                "zeros and agreement; then PyTorch eager and torch.compile timed on the main config");
  cmd->add_flag("--compile-only", a->compile_only,
                "Compile and run static checks only (no GPU needed): exit 0 means it compiled, not that it is correct "
                "(prints COMPILED, NOT CHECKED; JSON \"checked\": false)");
  cmd->add_flag("--json", a->json, "Print the verdict as JSON");
  cmd->add_flag("--no-time", a->no_time, "Skip timing");
  cmd->add_flag("--no-torch-time", a->no_torch_time,
                "Do not time the task's PyTorch side (eager, torch.compile, its extension) after kevo's timing");
  cmd->add_flag("--visible-only", a->visible_only, "Skip held-out configurations");
  cmd->add_flag("--held-out-only", a->held_out_only, "Check only the held-out configurations");
  cmd->add_flag("--host-data", a->host_data,
                "Draw inputs and compare outputs on the CPU even when the oracle is the baseline (default: on the GPU)");
  cmd->add_option("--host-budget-mib", a->host_budget_mib,
                  "With --baseline: configs whose host data (inputs and outputs, and the CPU reference's doubles) "
                  "exceed this many MiB are checked on the GPU against the baseline itself in a second process, not "
                  "against the CPU reference (0: every config against the reference)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_flag("--sanitize", a->sanitize, "Also run compute-sanitizer (memcheck, racecheck, initcheck) on the smallest config");
  cmd->add_flag("--profile", a->profile,
                "Also profile a passing candidate with Nsight Compute (ncu) on the main config, after its verdict");
  cmd->add_flag("--no-static-gate", a->no_static_gate,
                "Report unsafe static findings but keep going (to test the runtime defences)");
  cmd->add_option("--seeds", a->seeds, "Seeds per configuration (plus one wide draw)")->check(CLI::Range(1, 100));
  cmd->add_option("--seed", a->seed, "Base seed (default: fresh each run)");
  cmd->add_option("--arch", a->arch, "Target architecture (default: the device's, else sm_90)");
  cmd->add_option("--time-budget", a->time_budget, "Seconds per timing session")->check(CLI::Range(0.1, 600.0));
  cmd->add_option("--stop-below", a->stop_below,
                  "Race: stop timing after 4 rounds once the speedup is clearly below this (its interval wholly "
                  "under it), as kevo evolve does against its best so far")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--timeout", a->timeout, "Seconds a single candidate call may take")->check(CLI::Range(0.5, 3600.0));
  cmd->callback([a, &exit_code, cmd] {
    auto task = resolve_task(a->task);
    if (!task) {
      std::fprintf(stderr, "kevo eval: %s\n", task.error().message.c_str());
      exit_code = 21;
      return;
    }
    if (a->oracle_check) {
      exit_code = oracle_check(*task, *a, cmd->count("--seed") > 0);
      return;
    }
    if (!a->baseline && a->candidate.empty()) {
      std::fprintf(stderr, "kevo eval: give a CANDIDATE.cu, or --baseline to check the task's baseline\n");
      exit_code = 21;
      return;
    }
    // A missing candidate is a bad argument (21), not an infrastructure error a driver would retry.
    if (std::error_code ec; !a->candidate.empty() && !std::filesystem::is_regular_file(a->candidate, ec)) {
      std::fprintf(stderr, "kevo eval: %s: no such file (the candidate must be a readable .cu file)\n",
                   a->candidate.c_str());
      exit_code = 21;
      return;
    }
    EvalOptions o;
    o.candidate = a->candidate;
    o.shown_name = a->candidate;  // diagnostics name the user's file, not the checker's copy
    o.baseline_mode = a->baseline;
    o.compile_only = a->compile_only;
    o.time = !a->no_time;
    o.torch_time = o.time && !a->no_torch_time;  // only tasks with a torch_reference have one
    o.visible_only = a->visible_only;
    o.held_out_only = a->held_out_only;
    o.sanitize = a->sanitize;
    o.profile = a->profile;
    o.device_data = !a->host_data;
    o.host_budget_mib = a->host_budget_mib;
    o.static_gate = !a->no_static_gate;
    o.seeds = a->seeds;
    if (cmd->count("--seed")) o.seed = a->seed;
    o.arch = a->arch;
    o.time_budget_s = a->time_budget;
    o.timing_stop_below = a->stop_below;
    o.call_timeout = std::chrono::milliseconds(static_cast<int64_t>(a->timeout * 1000));
    Verdict v = evaluate(*task, o);
    print_verdict(v, o.compile_only, a->json);
    exit_code = kevo::exit_code(v.outcome);
    std::fflush(stdout);
    if (!o.compile_only) start_pool_for_next(v);
  });
}

}  // namespace kevo::cli
