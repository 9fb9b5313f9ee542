// The checker's top level: evaluate() runs the phases of check/session.h in order. Each phase
// reads and extends the session; the first failure decides the verdict.
#include "check/evaluator.h"
#include "check/python_candidate.h"

#include <algorithm>
#include <random>
#include <utility>

#include <spdlog/spdlog.h>

#include "check/compile_recipe.h"
#include "check/intake.h"
#include "check/isolation.h"
#include "check/runner_replies.h"
#include "check/session.h"
#include "check/timing.h"
#include "torch/torch_timing.h"
#include "run/runner_pool.h"
#include "run/warm_runners.h"
#include "util/gpu_lock.h"
#include "util/fs.h"
#include "util/log.h"

namespace kevo {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

Result<proto::HelloReply> probe_gpu(const std::string& gpu) {
  RunnerOptions ro;
  if (!gpu.empty()) ro.env["CUDA_VISIBLE_DEVICES"] = gpu;
  auto runner = RunnerClient::start(ro);
  if (!runner) return runner.unexpected();
  auto h = (*runner)->call(proto::HelloRequest{}, 60s);
  if (h.refusal()) return fail(ErrorCode::kNoCuda, "{}", h.error().message);
  if (!h) return h.unexpected();
  return std::move(*h);
}

Result<DeviceCeilings> device_ceilings(bool remeasure, const std::string& known_uuid, const std::string& gpu) {
  // Measured once per device: with the device's uuid already known (a runner said hello), the
  // cached figures are read without starting another runner (a CUDA context costs ~0.2 s).
  if (!remeasure && !known_uuid.empty())
    if (auto text = read_file(cache_dir() / "devices" / (known_uuid + ".json"))) {
      json j = json::parse(*text, nullptr, false);
      if (!j.is_discarded()) return DeviceCeilings::from_json(j);
    }
  RunnerOptions ro;
  if (!gpu.empty()) ro.env["CUDA_VISIBLE_DEVICES"] = gpu;  // the GPU evaluated on, not the host's first
  auto runner = RunnerClient::start(ro);
  if (!runner) return runner.unexpected();
  auto hello = (*runner)->call(proto::HelloRequest{}, 60s);
  if (!hello) return fail("no usable GPU: {}", hello.error().message);
  if (!known_uuid.empty() && hello->uuid != known_uuid)
    return fail("measuring the ceilings of GPU {}: the runner started for it reports GPU {}", known_uuid, hello->uuid);
  fs::path file = cache_dir() / "devices" / ((hello->uuid.empty() ? "unknown" : hello->uuid) + ".json");
  if (!remeasure)
    if (auto text = read_file(file)) {
      json j = json::parse(*text, nullptr, false);
      if (!j.is_discarded()) return DeviceCeilings::from_json(j);
    }
  DeviceCeilings d;
  d.name = hello->name;
  d.uuid = hello->uuid;
  auto bw = (*runner)->call(proto::BandwidthRequest{size_t(1) << 30}, 120s);
  if (!bw) return fail("bandwidth probe failed");
  d.copy_gbps = bw->copy_gbps;
  auto probe_src = read_file(kevo_home() / "src" / "time" / "sol_probe.cu");
  if (!probe_src) return probe_src.unexpected();
  CompileOptions co;
  co.arch = arch_from_hello(*hello);
  co.allow_sm90a_auto = false;
  auto so = compile_cuda_shared(*probe_src, "sol_probe.cu", co);
  if (!so) return so.unexpected();
  if (!so->ok) return fail("cannot compile the SOL probe: {}", so->diagnostics);
  auto pr = (*runner)->call(proto::ProbeRequest{so->so_path.string()}, 120s);
  if (!pr) return fail("arithmetic probe failed");
  auto peak = [&](const char* kind) { return pr->tflops.count(kind) ? pr->tflops.at(kind) : 0.0; };
  d.fp32_tflops = peak("0");
  d.tensor_tflops = peak("1");
  KEVO_TRY(write_file_atomic(file, d.to_json().dump(2)));
  return d;
}

namespace {
// PyTorch timed on inputs that `runner` draws on the GPU and lends to the bridge (device data): no
// tensor crosses the host. The lent buffers are freed again afterwards.
Result<torch::TimeResult> time_torch_on_lent(RunnerClient& runner, const Task& task,
                                               const std::vector<proto::TensorDesc>& set,
                                               const torch::TorchTimingOptions& o, torch::TorchBridge* bridge,
                                               std::chrono::milliseconds draw_timeout) {
  auto m = runner.call(proto::MaterializeRequest{set, {}}, draw_timeout);
  if (!m) return fail("kevo-runner could not draw the inputs for PyTorch: {}", m.error().message);
  auto lent = device_tensors(set, m->inputs_ipc);
  Result<torch::TimeResult> r = lent ? torch::time_torch_on_device(task, *lent, o, bridge)
                                       : Result<torch::TimeResult>(lent.unexpected());
  (void)runner.call(proto::CollectRequest{}, 60s);
  return r;
}
}  // namespace

Result<torch::TimeResult> time_torch_lent(const Task& task, uint64_t seed, const torch::TorchTimingOptions& o) {
  if (task.torch_reference.empty())
    return fail("task '{}' has no torch_reference: it has no PyTorch side to time", task.name);
  if (task.configs.empty()) return fail("task '{}' has no configs", task.name);
  auto py = torch::find_torch_python();  // before a runner and a draw are paid for
  if (!py) return py.unexpected();
  auto main = task.resolve(task.main());
  if (!main) return main.unexpected();
  auto set = drawn_inputs(*main, seed, false);
  if (!set) return set.unexpected();
  auto runner = RunnerClient::start({});
  if (!runner) return runner.unexpected();
  return time_torch_on_lent(**runner, task, *set, o, nullptr, 300s);
}

Verdict evaluate(const Task& task, const EvalOptions& opts) {
  Verdict v;
  EvalSession s(task, opts, v);
  if (!intake_phase(s) || !compile_phase(s) || opts.compile_only) return s.finish();
  if (oracle_phase(s) && tolerance_phase(s) && load_phase(s) && correctness_phase(s)) {
    if (opts.time) timing_phase(s);
    if (opts.sanitize && v.outcome == Outcome::Pass) sanitize_phase(s);
    if (opts.profile && v.outcome == Outcome::Pass) profile_phase(s);
    if (opts.torch_time && v.timing && v.outcome == Outcome::Pass) pytorch_phase(s);
  }
  s.keep_trusted();
  return s.finish();
}

EvalSession::EvalSession(const Task& t, const EvalOptions& o, Verdict& verdict)
    : task(t), opts(o), v(verdict), t_start_(Clock::now()), t_phase_(t_start_) {
  v.task = task.name;
  v.candidate = opts.baseline_mode ? task.baseline_path().string() : opts.candidate.string();
  python = !opts.baseline_mode && is_python_candidate(opts.candidate);
  v.seed = opts.seed ? *opts.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
}

void EvalSession::next_phase(EvalPhase p) {
  end_phase();
  phase_ = p;
}

void EvalSession::end_phase() {
  auto now = Clock::now();
  if (phase_) v.phases.emplace_back(*phase_, std::chrono::duration<double>(now - t_phase_).count());
  phase_.reset();
  t_phase_ = now;
}

Verdict EvalSession::finish() {
  end_phase();
  v.seconds = std::chrono::duration<double>(Clock::now() - t_start_).count();
  return v;
}

RunnerOptions runner_options(const EvalOptions& o) {
  RunnerOptions r;
  if (!o.gpu.empty()) r.env["CUDA_VISIBLE_DEVICES"] = o.gpu;
  return r;
}

std::future<EvalSession::Started> EvalSession::start_runner(const EvalOptions& o) {
  // Started ahead: by this process (kevo evolve, worker, bench), else by the user's runner pool
  // (run/runner_pool.h; a kevo eval). Either way fresh, and used by this evaluation alone.
  auto ready = o.warm_runners ? WarmRunners::take(runner_options(o)) : take_pooled(runner_options(o));
  if (ready) {
    std::promise<Started> p;
    p.set_value(std::move(*ready));
    return p.get_future();
  }
  auto r = RunnerClient::start(runner_options(o));
  if (!r) {
    std::promise<Started> p;
    p.set_value(r.unexpected());
    return p.get_future();
  }
  return std::async(std::launch::async, [c = std::move(*r)]() mutable -> Started {
    auto h = c->call(proto::HelloRequest{}, 60s);
    // A runner that answers it has no GPU is the machine's state, not a failure of the runner.
    if (h.refusal()) return Error{h.error().message, ErrorCode::kNoCuda};
    if (!h) return h.unexpected();
    return std::make_pair(std::move(c), std::move(*h));
  });
}

bool EvalSession::await_cand() {
  if (cand || !cand_start.valid()) return true;
  auto r = timed("runner_wait", [&] { return cand_start.get(); });
  if (!r && r.error().code == ErrorCode::kNoCuda) {
    v.set(Outcome::InfraError, Reason::kNoGpu,
          fmt::format("no usable GPU ({}); use --compile-only on a machine without one", r.error().message));
    return false;
  }
  if (!r) {
    v.set(Outcome::InfraError, Reason::kRunner, r.error().message);
    return false;
  }
  cand = std::move(r->first);
  hello = r->second;
  std::string seen = arch_from_hello(hello);
  (void)write_file_atomic(cache_dir() / "devices" / "last_arch", seen + "\n");
  if (opts.arch.empty()) arch = seen;
  return true;
}

bool EvalSession::await_trusted() {
  if (trusted) return true;
  if (!trusted_start.valid()) trusted_start = start_trusted_runner();
  auto r = timed("runner_wait", [&] { return trusted_start.get(); });
  if (!r) {
    v.set(Outcome::InfraError, Reason::kRunner, r.error().message);
    return false;
  }
  trusted = std::move(r->first);
  trusted_hello = std::move(r->second);
  return true;
}

std::future<EvalSession::Started> EvalSession::start_trusted_runner() {
  if (reuses_trusted())
    if (auto k = WarmRunners::take_kept(runner_options(opts), task.dir.string())) {
      std::promise<Started> p;
      p.set_value(std::move(*k));
      return p.get_future();
    }
  return start_runner(opts);
}

bool EvalSession::reuses_trusted() const {
  return opts.warm_runners && !opts.baseline_mode && task.has_baseline() && !task.oracle_is_torch &&
         !task.oracle_is_reference;
}

void EvalSession::keep_trusted() {
  if (!trusted || !reuses_trusted() || v.outcome == Outcome::InfraError) return;
  // Its buffers, and its mappings of the candidate's, go; the baseline's library stays loaded.
  if (!trusted->call(proto::ReleaseRequest{{""}}, 10s)) return;
  WarmRunners::keep(runner_options(opts), task.dir.string(), {std::move(trusted), trusted_hello});
}

// A Python candidate: its runtime found (the bridge's interpreter, embedded by both runners) and
// its text screened; no static check of CUDA C++ applies to it.
bool python_intake_phase(EvalSession& s, std::string src) {
  if (std::string why = python_intake(src); !why.empty()) {
    s.v.set(Outcome::CompileError, Reason::kCompile, fmt::format("{}: {}", s.opts.candidate.string(), why));
    return false;
  }
  auto rt = torch::python_runtime();
  if (!rt) {
    s.v.set(Outcome::InfraError, Reason::kTorch, "the Python candidate runtime: " + rt.error().message);
    return false;
  }
  s.python_rt = *rt;
  s.compile_options.arch = s.opts.arch;
  s.source = std::move(src);
  return true;
}

// The source, read and checked before anything compiles: static checks are a second line of
// defence that names the line.
bool intake_phase(EvalSession& s) {
  const Task& task = s.task;
  if (s.opts.baseline_mode && !task.has_baseline()) {
    s.v.set(Outcome::InfraError, Reason::kTask,
            fmt::format("{} has no baseline.cu yet (tasks imported from PyTorch get one from a translation step; "
                        "write one in the candidate ABI meanwhile)",
                        task.dir.string()));
    return false;
  }
  // A candidate's text is untrusted: size first (before reading it), then UTF-8 and exactly one
  // kevo_forward (check/intake.h); each a compile_error with its own reason, never an internal error.
  IntakeOptions io;
  auto refuse = [&](const IntakeFinding& f) {
    s.v.set(Outcome::CompileError, intake_reason(f.code), f.message);
    return false;
  };
  if (!s.opts.baseline_mode) {
    std::error_code ec;
    auto n = fs::file_size(s.opts.candidate, ec);
    if (!ec)
      if (auto f = check_size(n, io)) return refuse(*f);
  }
  auto src = read_file(s.opts.baseline_mode ? task.baseline_path() : s.opts.candidate);
  if (!src) {
    s.v.set(Outcome::InfraError, Reason::kInput, src.error().message);
    return false;
  }
  if (s.python) return python_intake_phase(s, std::move(*src));
  if (!s.opts.baseline_mode)
    if (auto f = check_intake(*src, io)) return refuse(*f);
  StaticCheckOptions sco;
  sco.allow_cublas = task.allow_cublas;
  sco.allow_cudnn = task.allow_cudnn;
  sco.precision = dtype_name(task.precision());
  s.v.findings = static_check(*src, sco);
  if (s.opts.static_gate)
    for (const auto& f : s.v.findings)
      if (f.severity == Finding::Severity::Unsafe) {
        s.v.set(Outcome::Unsafe, Reason::kStatic, fmt::format("line {}: {}", f.line, f.message), f.rule);
        return false;
      }
  s.compile_options.arch = s.opts.arch;
  s.source = std::move(*src);
  return true;
}

namespace {

// A Python module is not compiled: the runtime runs the file the runner seals at confine.
CompileResult python_module(const std::filesystem::path& p) {
  CompileResult r;
  r.ok = true;
  r.so_path = p;
  r.driver = "python";
  r.arch_used = "python";
  return r;
}

Result<CompileResult> compile_source(EvalSession& s, bool baseline) {
  if (!baseline && s.python) return python_module(s.opts.candidate);
  if (baseline && s.task.baseline_is_torch_model) return python_module(s.task.torch_reference_path());
  CompileOptions co = s.compile_options;
  if (baseline) co.link_libs.clear();
  const std::string name = baseline || s.opts.baseline_mode ? "baseline.cu"
                           : s.opts.shown_name.empty()        ? "candidate.cu"
                                                              : s.opts.shown_name;
  if (!baseline) return compile_cuda_shared(s.source, name, co);  // the bytes intake checked
  auto src = read_file(s.task.baseline_path());
  if (!src) return src.unexpected();
  return compile_cuda_shared(*src, name, co);
}

// The oracle's own runner is needed when the oracle is the baseline's process or PyTorch on the
// device; the timing of a baseline needs one too.
// So does the baseline's own check of configs over the host budget (the baseline against itself).
bool wants_trusted_runner(const EvalSession& s) {
  const bool torch_on_device = s.task.oracle_is_torch && s.opts.device_data;
  if (s.opts.baseline_mode) return torch_on_device || any_over_host_budget(s);
  return s.task.has_baseline() || torch_on_device;
}

}  // namespace

// The runners start (process + CUDA context, ~0.2-0.3 s each) while nvcc compiles: a cold
// candidate's latency is the compile, not the compile plus the setup. The architecture comes from
// the last device seen here; if the runner reports another, the candidate is compiled again.
bool compile_phase(EvalSession& s) {
  const EvalOptions& opts = s.opts;
  s.arch = opts.arch;
  if (!opts.compile_only) {
    s.cand_start = EvalSession::start_runner(opts);
    if (wants_trusted_runner(s)) s.trusted_start = s.start_trusted_runner();
    if (s.arch.empty())
      if (auto a = read_file(cache_dir() / "devices" / "last_arch"); a && a->rfind("sm_", 0) == 0)
        s.arch = a->substr(0, a->find('\n'));
    if (s.arch.empty() && !s.await_cand()) return false;
  }
  if (s.arch.empty()) s.arch = "sm_90";
  s.compile_options = candidate_compile_options(s.task, s.arch, opts.cache_dir);
  CompileOptions& co = s.compile_options;
  auto cres = compile_source(s, false);
  if (cres && !opts.compile_only) {
    if (!s.await_cand()) return false;
    if (co.arch != s.arch) {  // the device is not the one remembered: compile for this one
      co.arch = s.arch;
      cres = compile_source(s, false);
    }
  }
  if (!cres) {
    s.v.set(Outcome::InfraError, Reason::kCompiler, cres.error().message);
    return false;
  }
  s.v.compile = *cres;
  if (!cres->ok) {
    s.v.set(cres->timed_out ? Outcome::Timeout : Outcome::CompileError,
            cres->timed_out ? Reason::kCompileTimeout : Reason::kCompile,
            "the candidate does not compile");
    return false;
  }
  s.cand_so = *cres;
  // The compiled library must export kevo_forward itself (not only a C++-mangled one).
  if (s.python) {
  } else if (auto ex = confirm_exports(cres->so_path); !ex) {
    s.v.set(Outcome::InfraError, Reason::kCompiler, ex.error().message);
    return false;
  } else if (*ex) {
    s.v.set(Outcome::CompileError, intake_reason((*ex)->code), (*ex)->message);
    return false;
  }
  if (opts.compile_only || opts.baseline_mode || !s.task.has_baseline()) return true;
  // The baseline, for timing and as the oracle unless the task or mode says otherwise. Tasks
  // imported from PyTorch may have none yet: then the candidate is timed alone.
  auto b = compile_source(s, true);
  if (!b || !b->ok) {
    s.v.set(Outcome::InfraError, Reason::kBaseline,
            fmt::format("the task's baseline does not compile: {}", b ? b->diagnostics : b.error().message));
    return false;
  }
  s.base_so = *b;
  return true;
}

// The Python runtime started in a runner (before its confinement): torch imported, the task read.
bool start_python(EvalSession& s, RunnerClient& r) {
  if (!s.python_rt) {
    auto rt = torch::python_runtime();
    if (!rt) {
      s.v.set(Outcome::InfraError, Reason::kTorch, "the Python candidate runtime: " + rt.error().message);
      return false;
    }
    s.python_rt = *rt;
  }
  auto meta = python_meta(s.task);
  if (!meta) {
    s.v.set(Outcome::InfraError, Reason::kTask, meta.error().message);
    return false;
  }
  auto p = s.timed("python", [&] {
    return r.call(proto::PythonRequest{s.python_rt->libpython, s.python_rt->sys_path, *meta}, 120s);
  });
  if (!p) {
    s.v.set(Outcome::InfraError, Reason::kRunner, "cannot start the Python runtime in a runner: " + p.error().message);
    return false;
  }
  return true;
}

// Where reference outputs come from: PyTorch, the CPU reference (the baseline's own check, or a
// task that says so), or the baseline in the trusted runner (the usual case).
bool oracle_phase(EvalSession& s) {
  const Task& task = s.task;
  const auto timeout = s.opts.call_timeout * 3;
  if (wants_trusted_runner(s) && !s.await_trusted()) return false;
  if (s.trusted && s.base_so) {
    if (task.baseline_is_torch_model && !start_python(s, *s.trusted)) return false;
    proto::LoadRequest lr{"base", s.base_so->so_path.string()};
    if (task.baseline_is_torch_model) lr.python_entry = "Model";
    auto l = s.trusted->call(lr, 120s);
    if (!l) {
      s.v.set(Outcome::InfraError, Reason::kBaseline, "cannot load the baseline in its own process");
      return false;
    }
  }
  if (task.oracle_is_torch) {
    auto b = torch::TorchBridge::start();
    if (!b) {
      s.v.set(Outcome::InfraError, Reason::kTorch, fmt::format("cannot start the PyTorch bridge: {}", b.error().message));
      return false;
    }
    Status err;
    s.oracle = make_torch_oracle(std::move(*b), task, s.opts.device_data ? s.trusted.get() : nullptr,
                                 s.opts.torch_device, timeout, &err);
    if (!s.oracle) s.v.set(Outcome::InfraError, Reason::kTorch, err.error().message);
  } else if (s.opts.baseline_mode || task.oracle_is_reference) {
    auto ref = CpuReference::compile(task, s.compile_options);
    if (!ref) {
      s.v.set(Outcome::InfraError, Reason::kReference, ref.error().message);
      return false;
    }
    s.oracle = make_cpu_oracle(task, std::move(*ref));
    if (s.opts.baseline_mode && s.trusted) {  // configs over the host budget: the baseline against itself
      auto l = s.trusted->call(proto::LoadRequest{"base", s.cand_so->so_path.string()}, 60s);
      if (!l) {
        s.v.set(Outcome::InfraError, Reason::kBaseline, "cannot load the baseline in a second process");
        return false;
      }
      s.consistency = make_baseline_oracle(task, *s.trusted, timeout);
    }
  } else if (!s.base_so) {
    s.v.set(Outcome::InfraError, Reason::kTask, fmt::format("{} has no baseline.cu to serve as the oracle", task.dir.string()));
  } else {
    // The oracle runs the trusted baseline in its own process: reference outputs never exist in
    // the candidate's process.
    s.oracle = make_baseline_oracle(task, *s.trusted, timeout);
  }
  s.dev_data = s.oracle && s.oracle->on_device() && s.opts.device_data;
  return s.oracle != nullptr;
}

// The slab the candidate's runner reserves before loading it (proto::ConfineRequest): the L2 flush,
// the timed batches' sums, and two sets of buffers (a draw's and the moved draw's) of the largest
// config and of the next largest (configs run smallest first, so the largest's replace the next's
// one buffer at a time), each buffer rounded to a page, plus slack for what the next-fit placement
// leaves between them. The timed batches' buffers come after the correctness ones are released.
// What does not fit is allocated as before; the runner takes no slab the device cannot spare.
uint64_t slab_bytes(const EvalSession& s) {
  constexpr uint64_t kAlign = 4096, kMaxSlab = uint64_t(16) << 30;
  uint64_t first = 0, second = 0;
  for (const Config& c : s.task.configs) {
    auto r = s.task.resolve(c);
    if (!r) continue;
    uint64_t set = r->workspace_bytes + kAlign;
    for (const auto* list : {&r->inputs, &r->outputs})
      for (const auto& t : *list) set += t.nbytes + kAlign;
    if (set > first) second = std::exchange(first, set);
    else second = std::max(second, set);
  }
  const uint64_t fixed = 2 * s.hello.l2_bytes + (uint64_t(8) << 20) + (uint64_t(4) << 20) + (uint64_t(64) << 20);
  const uint64_t bytes = fixed + 2 * first + 2 * second + (2 * first + 2 * second) / 16;
  return bytes > kMaxSlab ? 0 : bytes;
}

// The candidate's runner confined (runner/confine.h; what it reports there it reports before any
// candidate code ran, and the checker confirms its ids and filter from outside), then the
// candidate's library loaded into it; nothing else is ever loaded there.
bool confine_phase(EvalSession& s) {
  proto::ConfineRequest q{s.cand_so->so_path.string(), s.opts.device_data ? slab_bytes(s) : 0};
  if (s.python) {
    if (!start_python(s, *s.cand)) return false;
    q.read_dirs = s.python_rt->read_dirs;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto c = s.cand->call(q, 60s);
  s.v.work["confine"] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!c && !c.answered()) {
    classify_death(s.v, *s.cand, nullptr, "confining the candidate's runner");
    return false;
  }
  if (!c) {
    s.v.set(Outcome::InfraError, Reason::kRunner, "cannot confine the candidate's runner: " + c.error().message);
    return false;
  }
  auto iso = confirm_isolation(c->isolation, s.cand->pid());
  if (!iso) {
    s.v.set(Outcome::InfraError, Reason::kRunner, iso.error().message);
    return false;
  }
  s.v.isolation = *iso;
  if (iso->weak())
    s.v.flags.push_back({Reason::kSandboxUnavailable, "the candidate's runner is not isolated: " + iso->describe()});
  s.state_at_load = c->state;
  s.cand_threads = proc_threads(s.cand->pid());
  return true;
}

bool load_phase(EvalSession& s) {
  if (!confine_phase(s)) return false;
  proto::LoadRequest lr{"cand", s.cand_so->so_path.string(), true};
  if (s.python) lr.python_entry = "ModelNew";
  auto l = s.cand->call(lr, 120s);
  if (!l && !l.answered()) {
    classify_death(s.v, *s.cand, nullptr, "loading the candidate");
    return false;
  }
  if (!l) {  // refused (or answered with nonsense, from a static constructor's write to the channel)
    s.v.set(Outcome::CompileError, Reason::kLoad, l.error().message);
    return false;
  }
  if (const int now = proc_threads(s.cand->pid()); s.cand_threads > 0 && now > s.cand_threads) {
    std::string d = fmt::format("loading the candidate: its process had {} threads before and {} after, as the "
                                "kernel counts them: a static constructor started a host thread",
                                s.cand_threads, now);
    s.v.flags.push_back({Reason::kHostThread, d});
    s.v.set(Outcome::Unsafe, Reason::kHostThread, d);
    return false;
  }
  if (int b = l->threads_before, a = l->threads_after; a > b) {
    std::string d = fmt::format("loading the candidate: the process had {} threads before and {} after: a "
                                "static constructor started a host thread",
                                b, a);
    s.v.flags.push_back({Reason::kHostThread, d});
    s.v.set(Outcome::Unsafe, Reason::kHostThread, d);
    return false;
  }
  return true;
}

Result<GpuLock> lock_gpu(EvalSession& s, GpuLock::Mode mode) {
  const std::string uuid = s.hello.uuid.empty() ? "unknown" : s.hello.uuid;
  auto l = GpuLock::acquire(
      uuid, std::chrono::minutes(30),
      [&](const std::string& holder) { spdlog::info("GPU {} is held by {}: waiting for it", uuid, holder); }, mode);
  if (l && l->waited_seconds() > 0.05) s.v.work["gpu_lock_wait"] += l->waited_seconds();
  return l;
}

// The speed-of-light floor of the timed config: a median below what the device can do is skipped
// work, whatever the clocks said.
static void sol_check(EvalSession& s, const ResolvedConfig& r) {
  Timing& t = *s.v.timing;
  auto dev = device_ceilings(false, s.hello.uuid, s.opts.gpu);
  if (!dev) {
    s.v.flags.push_back({Reason::kSolUnavailable, dev.error().message});
    return;
  }
  s.v.device = *dev;
  t.floor = sol_floor(*dev, r.flops.value_or(0), r.bytes.value_or(0), s.task.precision());
  if (t.candidate.median > 0) t.sol_fraction = t.floor.floor_ms / t.candidate.median;
  // The events' own median too: a figure raised to the checker's clock (a loaded host's allowance)
  // may clear the floor that the runner's claim fell below.
  const bool own = t.events_median > 0 && t.events_median < t.candidate.median;
  const double claimed = own ? t.events_median : t.candidate.median;
  if (claimed > 0 && claimed < t.floor.impossible_ms)
    s.v.set(Outcome::Unsafe, Reason::kBelowSol,
            fmt::format("timing on config '{}': {:.4f} ms{} is below what this device can do for {} ({:.4f} ms): "
                        "suspected skipped work",
                        r.config->name, claimed, own ? " (the candidate's own events)" : "", s.task.name,
                        t.floor.impossible_ms));
}

// The candidate against the baseline on the main config, each in its own process
// (check/timing.h). Without a baseline the candidate is timed alone and its last timed output
// checked by the oracle.
void timing_phase(EvalSession& s) {
  s.next_phase(EvalPhase::kTiming);
  quiet_gpu();
  const Config& c = s.task.main();
  auto resolved = s.task.resolve(c);
  if (!resolved) return s.v.set(Outcome::InfraError, Reason::kTask, resolved.error().message);
  const ResolvedConfig& rc = *resolved;
  TimingSetup ts;
  ts.task = &s.task;
  ts.config = &rc;
  ts.cand = s.cand.get();
  ts.has_baseline = s.base_so.has_value();
  ts.state_at_load = s.state_at_load;
  ts.cand_threads = s.cand_threads;
  if (!s.opts.baseline_mode && !s.await_trusted()) return;
  // The consistency check's second process: done, its memory freed (a PyTorch oracle on the device
  // keeps its runner: it validates the last timed output).
  if (s.opts.baseline_mode && s.consistency) {
    s.consistency.reset();
    s.trusted.reset();
  }
  ts.trusted = s.opts.baseline_mode ? s.cand.get() : s.trusted.get();
  ts.compare_ipc = s.opts.device_data;
  ts.seed = s.v.seed;
  ts.l2_bytes = s.hello.l2_bytes;
  ts.budget_s = s.opts.time_budget_s;
  ts.target_rel_ci = s.opts.target_rel_ci;
  ts.stop_below = s.opts.timing_stop_below;
  // The run's figure holds for the kind of GPU it was measured on only (a worker's may differ).
  if (s.opts.baseline_gpu.empty() || s.opts.baseline_gpu == s.hello.name) ts.baseline_expected_ms = s.opts.baseline_ms;
  ts.call_timeout = s.opts.call_timeout;
  if (!ts.has_baseline && s.dev_data)
    ts.validate_last = [&s, &rc](const std::vector<proto::TensorDesc>& ins, const std::vector<proto::TensorDesc>& outs,
                                 const std::vector<proto::IpcBuffer>& ipc) -> Status {
      KEVO_TRY(s.oracle->device_outputs(*rc.config, ins, outs));
      return compare_on_device(s, rc, outs, ipc);
    };
  if (s.opts.torch_time && !s.task.torch_reference.empty())
    if (auto g = drawn_inputs(rc, s.v.seed + kTimingSeedOffset, false)) s.torch_set = *g;
  // The correctness buffers are not needed any more: a GB-sized task must fit its timing beside them.
  (void)s.cand->call(proto::ReleaseRequest{{"cand/"}}, 60s);
  if (ts.trusted != ts.cand) (void)ts.trusted->call(proto::ReleaseRequest{{"base/", "snap/"}}, 60s);
  // One timer per GPU: correctness checks may share it, timing may not (util/gpu_lock.h).
  auto lock = lock_gpu(s, GpuLock::Mode::Exclusive);
  if (!lock) return s.v.set(Outcome::InfraError, Reason::kGpuBusy, lock.error().message);
  // Again with the GPU held: another evaluation of this process (--evals-per-gpu) that timed
  // while this one waited drops its candidate's runner after giving the lock back, and a CUDA
  // context freeing GiBs stalls the whole GPU for milliseconds at a time.
  s.timed("reap_wait", [] { return quiet_gpu(), 0; });
  run_timing(ts, s.v);
  if (s.v.outcome != Outcome::Pass || !s.v.timing) return;
  sol_check(s, rc);
  if (s.v.outcome == Outcome::Pass && s.v.timing->outside.verdict == OutsideVerdict::Inconclusive)
    s.v.set(Outcome::InfraError, Reason::kTimingNoisy,
            fmt::format("timing on config '{}': the host was too noisy for the checker's clock to confirm the "
                        "candidate's figure within {:.0f} s: {}",
                        c.name, kNoisyBudgets * s.opts.time_budget_s, s.v.timing->outside.detail));
}

// The task's PyTorch side on the same inputs, once kevo's own processes are gone.
void pytorch_phase(EvalSession& s) {
  if (s.task.torch_reference.empty() || !s.torch_set) return;
  s.next_phase(EvalPhase::kPytorch);
  s.cand.reset();
  torch::TorchTimingOptions to;
  to.device = s.opts.torch_device;
  to.budget_s = s.opts.time_budget_s;
  torch::TorchBridge* bridge = s.oracle ? s.oracle->bridge() : nullptr;
  Result<torch::TimeResult> r = fail("not timed");
  if (!s.trusted && !s.await_trusted()) return;
  // The trusted runner, idle, keeps only the lent inputs while PyTorch runs.
  auto rel = s.trusted->call(proto::ReleaseRequest{{""}}, 60s);
  quiet_gpu();
  auto lock = lock_gpu(s, GpuLock::Mode::Exclusive);
  if (!lock) r = fail("{}", lock.error().message);
  else if (!rel) r = fail("the oracle's runner could not free its buffers for PyTorch: {}", rel.error().message);
  else r = time_torch_on_lent(*s.trusted, s.task, *s.torch_set, to, bridge, s.opts.call_timeout * 3);
  s.trusted.reset();
  if (r) {
    s.v.timing->pytorch = std::move(*r);
  } else {
    const std::string& m = r.error().message;
    s.v.timing->pytorch_note = m.substr(0, m.find('\n'));
  }
}

}  // namespace kevo
