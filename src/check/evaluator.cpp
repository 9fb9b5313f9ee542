#include "check/evaluator.h"

#include <csignal>
#include <cstring>
#include <future>
#include <random>
#include <set>

#include <spdlog/spdlog.h>

#include "check/compare.h"
#include "check/cpu_reference.h"
#include "check/sanitizer_report.h"
#include "interop/oracle.h"
#include "interop/torch_timing.h"
#include "run/runner_client.h"
#include "task/tensor.h"
#include "util/fs.h"
#include "util/log.h"

namespace kevo {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Lays tensors out in the runner's shared arena and describes them in a request.
struct Layout {
  size_t size = 0;
  json add(const std::string& name, DType dt, const std::vector<int64_t>& shape, size_t nbytes) {
    size_t off = (size + 255) & ~size_t(255);
    size = off + nbytes;
    return {{"name", name}, {"dtype", static_cast<int>(dt)}, {"shape", shape},
            {"offset", off}, {"nbytes", nbytes}};
  }
};

struct Prepared {
  Layout layout;
  json inputs = json::array(), outputs = json::array(), inputs_after = json::array();
};

Result<Prepared> prepare(const Task& task, const Config& c, const std::vector<HostTensor>& ins,
                         bool want_inputs_after) {
  Prepared p;
  for (const auto& t : ins) p.inputs.push_back(p.layout.add(t.name, t.dtype, t.shape, t.bytes.size()));
  for (const auto& o : task.outputs) {
    auto shape = task.shape_of(o, c);
    if (!shape) return shape.unexpected();
    int64_t n = 1;
    for (auto s : *shape) n *= s;
    p.outputs.push_back(p.layout.add(o.name, o.dtype, *shape, static_cast<size_t>(n) * dtype_size(o.dtype)));
  }
  if (want_inputs_after)
    for (const auto& t : ins)
      p.inputs_after.push_back(p.layout.add(t.name, t.dtype, t.shape, t.bytes.size()));
  return p;
}

void put_inputs(Arena& a, const json& descs, const std::vector<HostTensor>& ins) {
  for (size_t i = 0; i < ins.size(); ++i)
    std::memcpy(a.data() + descs[i]["offset"].get<size_t>(), ins[i].bytes.data(), ins[i].bytes.size());
}

// Whether the arena region `d` still holds exactly `t`'s bytes (read in place: no copy).
bool arena_holds(Arena& a, const json& d, const HostTensor& t) {
  return std::memcmp(a.data() + d["offset"].get<size_t>(), t.bytes.data(), t.bytes.size()) == 0;
}

std::vector<HostTensor> get_outputs(Arena& a, const json& descs) {
  std::vector<HostTensor> out;
  for (const auto& d : descs) {
    HostTensor t = make_tensor(d["name"], static_cast<DType>(d["dtype"].get<int>()),
                               d["shape"].get<std::vector<int64_t>>());
    std::memcpy(t.bytes.data(), a.data() + d["offset"].get<size_t>(), t.bytes.size());
    out.push_back(std::move(t));
  }
  return out;
}

json base_request(const Task& task, const Config& c) {
  std::vector<double> scalars;
  for (const auto& s : task.scalars) scalars.push_back(s.value);
  auto ws = task.workspace_bytes(c);
  return {{"dims", task.dim_values(c)}, {"scalars", scalars},
          {"workspace_bytes", ws ? *ws : 0}};
}

// Classifies a runner that died or reported a fatal CUDA error.
void classify_death(Verdict& v, RunnerClient& r, const json* reply, const std::string& what) {
  if (reply && reply->value("fatal", false)) {
    std::string err = reply->value("error", "");
    bool illegal = err.find("IllegalAddress") != std::string::npos ||
                   err.find("illegal") != std::string::npos ||
                   err.find("MisalignedAddress") != std::string::npos;
    v.set(Outcome::Crash, illegal ? "illegal_address" : "cuda_error",
          fmt::format("{}: {}", what, err));
    return;
  }
  if (!r.death()) {
    v.set(Outcome::InfraError, "runner", fmt::format("{}: the runner failed without dying", what));
    return;
  }
  const RunnerDeath& d = *r.death();
  std::string tail = d.stderr_tail.size() > 600 ? d.stderr_tail.substr(d.stderr_tail.size() - 600) : d.stderr_tail;
  std::string msg = fmt::format("{}: the candidate process {}{}", what, d.description,
                                tail.empty() ? "" : "; its last output: " + tail);
  switch (d.kind) {
    case RunnerDeath::Kind::Timeout:
      v.set(Outcome::Timeout, "timeout", msg);
      break;
    case RunnerDeath::Kind::Signal:
      v.set(Outcome::Crash, d.signal == SIGABRT ? "abort" : "signal", msg);
      break;
    case RunnerDeath::Kind::Exited:
      v.set(Outcome::Crash, "exit", msg + " (the candidate ended the process)");
      break;
  }
}

// Runners are reaped in the background (run/runner_client.h); before anything is timed, those of
// earlier evaluations (or this one's candidate, before PyTorch's timing) must have left the GPU.
void quiet_gpu() {
  if (!RunnerClient::wait_reaped(std::chrono::seconds(5)))
    spdlog::warn("runner processes of an earlier evaluation are still exiting; timing anyway");
}

// Device time after the given stream went idle. The runner spins while it waits, so its thread's CPU
// time over the wait bounds it from above when the host was descheduled (a loaded machine).
double hidden_ms(const json& r) {
  double wall = r.value("after_stream_ms", 0.0);
  return r.contains("after_stream_cpu_ms") ? std::min(wall, r.value("after_stream_cpu_ms", 0.0)) : wall;
}

// Checks a run reply's guard results; returns false when the verdict is decided.
bool check_run_reply(Verdict& v, const json& r, const std::string& where, bool check_hidden) {
  for (const auto& x : r.value("violations", json::array())) {
    std::string kind = x.value("kind", "guard");
    v.flags.push_back({kind, where + ": " + x.value("detail", "")});
    v.set(Outcome::Unsafe, kind, where + ": " + x.value("detail", ""));
  }
  if (r.value("threads_after", 0) > r.value("threads_before", 0)) {
    std::string d = fmt::format("{}: the process had {} threads before the call and {} after: the "
                                "candidate left a host thread running",
                                where, r.value("threads_before", 0), r.value("threads_after", 0));
    v.flags.push_back({"host_thread", d});
    v.set(Outcome::Unsafe, "host_thread", d);
  }
  std::string le = r.value("launch_error", "");
  if (!le.empty()) v.set(Outcome::Crash, "launch_error", where + ": " + le);
  if (r.value("rc", 0) != 0)
    v.set(Outcome::Crash, "returned_error",
          fmt::format("{}: kevo_forward returned {}", where, r.value("rc", 0)));
  if (check_hidden) {
    double span = r.value("span_ms", 0.0), after = hidden_ms(r);
    // Work the device-wide sync still waited for once the given stream was idle ran elsewhere.
    if (after > 1.0) {
      std::string d = fmt::format("{}: the device stayed busy {:.2f} ms after the given stream "
                                  "finished its {:.2f} ms of work",
                                  where, after, span);
      v.flags.push_back({"hidden_work", d});
      v.set(Outcome::Unsafe, "hidden_work", d);
    }
  }
  return v.outcome == Outcome::Pass;
}

// Input descriptors the runners fill on the GPU themselves (task/draw.h): no bytes cross the
// checker's memory, the arena or the PCIe bus.
Result<json> drawn_inputs(const Task& task, const Config& c, uint64_t seed, bool wide) {
  json arr = json::array();
  for (const auto& spec : task.inputs) {
    auto shape = task.shape_of(spec, c);
    if (!shape) return shape.unexpected();
    auto d = draw_spec(spec, c.dims, seed, wide);
    if (!d) return d.unexpected();
    int64_t n = 1;
    for (auto x : *shape) n *= x;
    arr.push_back({{"name", spec.name},
                   {"dtype", static_cast<int>(spec.dtype)},
                   {"shape", *shape},
                   {"nbytes", static_cast<size_t>(n) * dtype_size(spec.dtype)},
                   {"gen", {{"kind", d->kind}, {"a", d->a}, {"b", d->b}, {"lo", d->lo}, {"hi", d->hi}, {"base", d->base}}}});
  }
  return arr;
}

Result<json> output_descs(const Task& task, const Config& c) {
  json arr = json::array();
  for (const auto& o : task.outputs) {
    auto shape = task.shape_of(o, c);
    if (!shape) return shape.unexpected();
    int64_t n = 1;
    for (auto x : *shape) n *= x;
    arr.push_back({{"name", o.name}, {"dtype", static_cast<int>(o.dtype)}, {"shape", *shape},
                   {"numel", n}, {"nbytes", static_cast<size_t>(n) * dtype_size(o.dtype)}});
  }
  return arr;
}

// Tensors a runner exported (descriptors and their IPC handles, in order), as the bridge takes them.
std::vector<interop::DeviceTensor> device_tensors(const json& descs, const json& ipc) {
  std::vector<interop::DeviceTensor> out;
  for (size_t i = 0; i < descs.size(); ++i)
    out.push_back({descs[i].at("name").get<std::string>(), static_cast<DType>(descs[i].at("dtype").get<int>()),
                   descs[i].at("shape").get<std::vector<int64_t>>(), ipc.at(i).get<std::string>()});
  return out;
}

// A comparison made on the GPU by the oracle's runner (run/device_data.h), in compare.h's terms.
Comparison comparison_of(const json& j, const char* fail_reason = nullptr) {
  // Non-finite values travel as "nan", "inf", "-inf" (JSON has no such numbers).
  auto num = [&](const char* k) {
    if (!j.contains(k)) return 0.0;
    const json& x = j[k];
    if (x.is_number()) return x.get<double>();
    std::string t = x.is_string() ? x.get<std::string>() : "nan";
    return t == "inf" ? HUGE_VAL : t == "-inf" ? -HUGE_VAL : std::nan("");
  };
  Comparison c;
  c.count = j.value("count", int64_t(0));
  c.mismatches = j.value("mismatches", int64_t(0));
  c.unwritten = j.value("unwritten", int64_t(0));
  c.nonfinite = j.value("nonfinite", int64_t(0));
  c.first_bad = j.value("first_bad", int64_t(-1));
  c.first_got = num("first_got");
  c.first_want = num("first_want");
  c.max_abs_err = num("max_abs_err");
  c.max_rel_err = num("max_rel_err");
  c.ok = c.mismatches == 0;
  if (!c.ok) c.reason = fail_reason ? fail_reason : c.unwritten ? "unwritten" : c.nonfinite ? "nan" : "mismatch";
  return c;
}

std::string arch_from_hello(const json& h) {
  return fmt::format("sm_{}{}", h.value("cc_major", 9), h.value("cc_minor", 0));
}

}  // namespace

Result<DeviceCeilings> device_ceilings(bool remeasure, const std::string& known_uuid) {
  // Measured once per device: with the device's uuid already known (a runner said hello), the
  // cached figures are read without starting another runner (a CUDA context costs ~0.2 s).
  if (!remeasure && !known_uuid.empty())
    if (auto text = read_file(cache_dir() / "devices" / (known_uuid + ".json"))) {
      json j = json::parse(*text, nullptr, false);
      if (!j.is_discarded()) return DeviceCeilings::from_json(j);
    }
  auto runner = RunnerClient::start({});
  if (!runner) return runner.unexpected();
  auto hello = (*runner)->call({{"cmd", "hello"}}, 60s);
  if (!hello || !hello->value("ok", false))
    return fail("no usable GPU: {}", hello ? hello->value("error", "") : hello.error().message);
  fs::path file = cache_dir() / "devices" / (hello->value("uuid", "unknown") + ".json");
  if (!remeasure)
    if (auto text = read_file(file)) {
      json j = json::parse(*text, nullptr, false);
      if (!j.is_discarded()) return DeviceCeilings::from_json(j);
    }
  DeviceCeilings d;
  d.name = hello->value("name", "");
  d.uuid = hello->value("uuid", "");
  auto bw = (*runner)->call({{"cmd", "bandwidth"}, {"bytes", size_t(1) << 30}}, 120s);
  if (!bw || !bw->value("ok", false)) return fail("bandwidth probe failed");
  d.copy_gbps = (*bw)["copy_gbps"];
  auto probe_src = read_file(kevo_home() / "src" / "time" / "sol_probe.cu");
  if (!probe_src) return probe_src.unexpected();
  CompileOptions co;
  co.arch = arch_from_hello(*hello);
  co.allow_sm90a_auto = false;
  auto so = compile_cuda_shared(*probe_src, "sol_probe.cu", co);
  if (!so) return so.unexpected();
  if (!so->ok) return fail("cannot compile the SOL probe: {}", so->diagnostics);
  auto pr = (*runner)->call({{"cmd", "probe"}, {"path", so->so_path.string()}}, 120s);
  if (!pr || !pr->value("ok", false)) return fail("arithmetic probe failed");
  d.fp32_tflops = (*pr)["tflops"].value("0", 0.0);
  d.tensor_tflops = (*pr)["tflops"].value("1", 0.0);
  KEVO_TRY(write_file_atomic(file, d.to_json().dump(2)));
  return d;
}

namespace {
// PyTorch timed on inputs that `runner` draws on the GPU and lends to the bridge (device data): no
// tensor crosses the host. The lent buffers are freed again afterwards.
Result<interop::TimeResult> time_torch_on_lent(RunnerClient& runner, const Task& task, const json& set,
                                               const interop::TorchTimingOptions& o, interop::TorchBridge* bridge,
                                               std::chrono::milliseconds draw_timeout) {
  auto m = runner.call({{"cmd", "materialize"}, {"inputs", set}, {"outputs", json::array()}}, draw_timeout);
  if (!m || !m->value("ok", false))
    return fail("kevo-runner could not draw the inputs for PyTorch: {}",
                m ? m->value("error", m->dump()) : m.error().message);
  auto r = interop::time_torch_on_device(task, device_tensors(set, (*m)["inputs_ipc"]), o, bridge);
  (void)runner.call({{"cmd", "collect"}}, 60s);
  return r;
}
}  // namespace

Result<interop::TimeResult> time_torch_lent(const Task& task, uint64_t seed, const interop::TorchTimingOptions& o) {
  if (task.torch_reference.empty())
    return fail("task '{}' has no torch_reference: it has no PyTorch side to time", task.name);
  if (task.configs.empty()) return fail("task '{}' has no configs", task.name);
  auto py = interop::find_torch_python();  // before a runner and a draw are paid for
  if (!py) return py.unexpected();
  auto set = drawn_inputs(task, task.main(), seed, false);
  if (!set) return set.unexpected();
  auto runner = RunnerClient::start({});
  if (!runner) return runner.unexpected();
  return time_torch_on_lent(**runner, task, *set, o, nullptr, 300s);
}

Verdict evaluate(const Task& task, const EvalOptions& opts) {
  auto t_start = Clock::now();
  Verdict v;
  v.task = task.name;
  v.candidate = opts.baseline_mode ? task.baseline_path().string() : opts.candidate.string();
  v.seed = opts.seed ? *opts.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  // Phase clock: the current phase's time is recorded when the next starts or the verdict ends.
  std::string phase = "setup";
  auto t_phase = t_start;
  auto next_phase = [&](const char* name) {
    auto now = Clock::now();
    if (!phase.empty()) v.phases.emplace_back(phase, std::chrono::duration<double>(now - t_phase).count());
    phase = name;
    t_phase = now;
  };
  // Seconds by kind of work, summed over the whole verdict (where the phases' time goes).
  auto timed = [&](const char* what, auto&& f) {
    auto t0 = Clock::now();
    auto r = f();
    v.work[what] += std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
  };
  auto finish = [&]() -> Verdict {
    next_phase("");
    v.seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
    return v;
  };

  if (opts.baseline_mode && !task.has_baseline()) {
    v.set(Outcome::InfraError, "task",
          fmt::format("{} has no baseline.cu yet (tasks imported from PyTorch get one from a "
                      "translation step; write one in the candidate ABI meanwhile)",
                      task.dir.string()));
    return finish();
  }
  auto src = read_file(opts.baseline_mode ? task.baseline_path() : opts.candidate);
  if (!src) {
    v.set(Outcome::InfraError, "input", src.error().message);
    return finish();
  }
  // Static checks first: a second line of defence that names the line.
  StaticCheckOptions sco;
  sco.allow_cublas = task.allow_cublas;
  sco.allow_cudnn = task.allow_cudnn;
  sco.precision = dtype_name(task.precision());
  v.findings = static_check(*src, sco);
  if (opts.static_gate)
    for (const auto& f : v.findings)
      if (f.severity == Finding::Severity::Unsafe) {
        v.set(Outcome::Unsafe, "static:" + f.rule, fmt::format("line {}: {}", f.line, f.message));
        return finish();
      }

  // The device decides the architecture; without a GPU only --compile-only makes sense.
  std::unique_ptr<RunnerClient> cand_runner, oracle_runner;
  std::string arch = opts.arch;
  json hello;
  // The runners start (process + CUDA context, ~0.2-0.3 s each) while nvcc compiles: a cold
  // candidate's latency is the compile, not the compile plus the setup. The architecture comes from
  // the last device seen here; if the runner reports another, the candidate is compiled again.
  using Started = Result<std::pair<std::unique_ptr<RunnerClient>, json>>;
  // The process is spawned on this thread (the runner dies with the thread that forked it:
  // PR_SET_PDEATHSIG); only the wait for its CUDA context runs beside the compile.
  auto start_runner = []() -> std::future<Started> {
    auto r = RunnerClient::start({});
    if (!r) {
      std::promise<Started> p;
      p.set_value(r.unexpected());
      return p.get_future();
    }
    return std::async(std::launch::async, [c = std::move(*r)]() mutable -> Started {
      auto h = c->call({{"cmd", "hello"}}, 60s);
      if (!h) return h.unexpected();
      return std::make_pair(std::move(c), *h);
    });
  };
  // The oracle's own runner: the baseline's (the usual case), or, for the PyTorch oracle with
  // device data, one that loads no code and only draws inputs and lends them to the bridge.
  const bool torch_dev = task.oracle_is_torch && opts.device_data;
  const bool oracle_process =
      torch_dev || (!task.oracle_is_torch && !opts.baseline_mode && !task.oracle_is_reference);
  std::future<Started> cand_start, oracle_start;
  fs::path last_arch = cache_dir() / "devices" / "last_arch";
  if (!opts.compile_only) {
    cand_start = start_runner();
    if (oracle_process && (torch_dev || task.has_baseline())) oracle_start = start_runner();
    if (arch.empty())
      if (auto a = read_file(last_arch); a && a->rfind("sm_", 0) == 0) arch = a->substr(0, a->find('\n'));
  }
  // Waits for the candidate's runner; false when the verdict is decided (no GPU).
  auto await_cand = [&]() -> bool {
    if (cand_runner || !cand_start.valid()) return true;
    auto r = cand_start.get();
    if (!r) {
      v.set(Outcome::InfraError, "runner", r.error().message);
      return false;
    }
    cand_runner = std::move(r->first);
    const json& h = r->second;
    if (!h.value("ok", false)) {
      v.set(Outcome::InfraError, "no_gpu",
            fmt::format("no usable GPU ({}); use --compile-only on a machine without one", h.value("error", "")));
      return false;
    }
    hello = h;
    std::string seen = arch_from_hello(hello);
    (void)write_file_atomic(last_arch, seen + "\n");
    if (opts.arch.empty()) arch = seen;
    return true;
  };
  if (!opts.compile_only && arch.empty() && !await_cand()) return finish();
  if (arch.empty()) arch = "sm_90";

  CompileOptions co;
  co.arch = arch;
  if (!opts.cache_dir.empty()) co.cache_dir = opts.cache_dir;
  if (task.allow_cublas) co.link_libs.push_back("cublas");
  if (task.allow_cudnn) co.link_libs.push_back("cudnn");
  auto cres = compile_cuda_shared(*src, opts.baseline_mode ? "baseline.cu" : "candidate.cu", co);
  if (!cres) {
    v.set(Outcome::InfraError, "compiler", cres.error().message);
    return finish();
  }
  if (!opts.compile_only) {
    if (!await_cand()) return finish();
    if (co.arch != arch) {  // the device is not the one remembered: compile for this one
      co.arch = arch;
      cres = compile_cuda_shared(*src, opts.baseline_mode ? "baseline.cu" : "candidate.cu", co);
      if (!cres) {
        v.set(Outcome::InfraError, "compiler", cres.error().message);
        return finish();
      }
    }
  }
  v.compile = *cres;
  if (!cres->ok) {
    v.set(cres->timed_out ? Outcome::Timeout : Outcome::CompileError,
          cres->timed_out ? "compile_timeout" : "compile", "the candidate does not compile");
    return finish();
  }
  if (opts.compile_only) return finish();

  // Baseline (for timing, and as the oracle unless the task or mode says otherwise). Tasks
  // imported from PyTorch may have none yet: then the candidate is timed alone.
  std::optional<CompileResult> base_so;
  if (!opts.baseline_mode && task.has_baseline()) {
    auto bsrc = read_file(task.baseline_path());
    if (!bsrc) {
      v.set(Outcome::InfraError, "task", bsrc.error().message);
      return finish();
    }
    CompileOptions bo = co;
    bo.link_libs.clear();
    auto b = compile_cuda_shared(*bsrc, "baseline.cu", bo);
    if (!b || !b->ok) {
      v.set(Outcome::InfraError, "baseline",
            fmt::format("the task's baseline does not compile: {}", b ? b->diagnostics : b.error().message));
      return finish();
    }
    base_so = *b;
  }
  bool torch_oracle = task.oracle_is_torch;
  bool cpu_oracle = !torch_oracle && (opts.baseline_mode || task.oracle_is_reference);
  if (!torch_oracle && !cpu_oracle && !base_so) {
    v.set(Outcome::InfraError, "task",
          fmt::format("{} has no baseline.cu to serve as the oracle", task.dir.string()));
    return finish();
  }
  std::optional<CpuReference> cpu_ref;
  std::optional<interop::TorchBridge> bridge;
  std::optional<interop::TorchOracle> torch_ref;
  if (torch_oracle) {
    // The PyTorch reference runs in its own Python process, started from the checker: never in the
    // candidate's process.
    auto b = interop::TorchBridge::start();
    if (!b) {
      v.set(Outcome::InfraError, "torch", fmt::format("cannot start the PyTorch bridge: {}", b.error().message));
      return finish();
    }
    bridge.emplace(std::move(*b));
    auto o = interop::TorchOracle::create(*bridge, task, task.torch_reference_path());
    if (!o) {
      v.set(Outcome::InfraError, "torch", o.error().message);
      return finish();
    }
    torch_ref.emplace(std::move(*o));
    if (torch_dev) {
      auto r = (oracle_start.valid() ? std::move(oracle_start) : start_runner()).get();
      if (!r) {
        v.set(Outcome::InfraError, "runner", r.error().message);
        return finish();
      }
      oracle_runner = std::move(r->first);
    }
  } else if (cpu_oracle) {
    auto rsrc = read_file(task.reference_path());
    if (!rsrc) {
      v.set(Outcome::InfraError, "task", rsrc.error().message);
      return finish();
    }
    auto rso = compile_host_shared(*rsrc, "reference.cpp", co);
    if (!rso || !rso->ok) {
      v.set(Outcome::InfraError, "reference",
            fmt::format("the task's reference does not compile: {}", rso ? rso->diagnostics : rso.error().message));
      return finish();
    }
    auto ref = CpuReference::load(rso->so_path);
    if (!ref) {
      v.set(Outcome::InfraError, "reference", ref.error().message);
      return finish();
    }
    cpu_ref.emplace(std::move(*ref));
  } else {
    // The oracle runs the trusted baseline in its own process: reference outputs never exist in
    // the candidate's process.
    auto r = (oracle_start.valid() ? std::move(oracle_start) : start_runner()).get();
    if (!r) {
      v.set(Outcome::InfraError, "runner", r.error().message);
      return finish();
    }
    oracle_runner = std::move(r->first);
    auto l = oracle_runner->call({{"cmd", "load"}, {"slot", "base"}, {"path", base_so->so_path.string()}}, 60s);
    if (!l || !l->value("ok", false)) {
      v.set(Outcome::InfraError, "baseline", "cannot load the baseline in the oracle process");
      return finish();
    }
  }
  {
    auto l = cand_runner->call({{"cmd", "load"}, {"slot", "cand"}, {"path", cres->so_path.string()}}, 60s);
    if (!l) {
      classify_death(v, *cand_runner, nullptr, "loading the candidate");
      return finish();
    }
    if (!l->value("ok", false)) {
      v.set(Outcome::CompileError, "load", l->value("error", "cannot load the candidate"));
      return finish();
    }
    if (int b = l->value("threads_before", 0), a = l->value("threads_after", 0); a > b) {
      std::string d = fmt::format("loading the candidate: the process had {} threads before and {} after: a "
                                  "static constructor started a host thread",
                                  b, a);
      v.flags.push_back({"host_thread", d});
      v.set(Outcome::Unsafe, "host_thread", d);
      return finish();
    }
    if (base_so) {
      auto lb = cand_runner->call({{"cmd", "load"}, {"slot", "base"}, {"path", base_so->so_path.string()}}, 60s);
      if (!lb || !lb->value("ok", false)) {
        if (!lb) classify_death(v, *cand_runner, nullptr, "loading the baseline next to the candidate");
        else v.set(Outcome::InfraError, "baseline", lb->value("error", ""));
        return finish();
      }
    }
  }

  // Reference outputs for a set of inputs, from the CPU reference or the oracle process.
  auto oracle = [&](const Config& c, const std::vector<HostTensor>& ins) -> Result<std::vector<Expected>> {
    std::vector<Expected> outs;
    if (cpu_ref) {
      auto d = cpu_ref->run(task, c, ins);
      if (!d) return d.unexpected();
      for (auto& v : *d) outs.push_back(Expected::of(std::move(v)));
      return outs;
    }
    if (torch_ref) {
      auto outs = torch_ref->outputs(c, ins, opts.torch_device);
      if (!outs) return fail("the PyTorch reference failed on config '{}': {}", c.name, outs.error().message);
      std::vector<Expected> e;
      for (auto& t : *outs) e.push_back(Expected::of(std::move(t)));
      return e;
    }
    auto p = prepare(task, c, ins, false);
    if (!p) return p.unexpected();
    KEVO_TRY(oracle_runner->arena().resize(p->layout.size));
    put_inputs(oracle_runner->arena(), p->inputs, ins);
    json req = base_request(task, c);
    req.update({{"cmd", "run"}, {"slot", "base"}, {"arena_size", p->layout.size},
                {"inputs", p->inputs}, {"outputs", p->outputs}, {"poison", 0}, {"placement", 0}});
    auto r = oracle_runner->call(req, opts.call_timeout * 3);
    if (!r || !r->value("ok", false) || r->value("rc", 0) != 0 || !r->value("launch_error", "").empty())
      return fail("the baseline (oracle) failed on config '{}': {}", c.name,
                  r ? r->dump() : r.error().message);
    for (auto& t : get_outputs(oracle_runner->arena(), p->outputs)) {
      if (count_unwritten(t)) return fail("the baseline (oracle) left outputs unwritten on '{}'", c.name);
      outs.push_back(Expected::of(std::move(t)));
    }
    return outs;
  };

  // Device data, the default when the oracle is the baseline's process or PyTorch: both runners
  // draw the inputs on the GPU, and the oracle's runner compares the candidate's outputs (and
  // inputs) with its own where they lie, through CUDA IPC. The checker moves only descriptors.
  const bool dev_data = oracle_runner && opts.device_data;
  // PyTorch's outputs where the baseline's would be: the oracle's runner draws the inputs and
  // lends copies (and output buffers) to the bridge, which runs the module on them in place;
  // `collect` makes its outputs the runner's base/out/<name> and frees what was lent.
  auto torch_dev_outputs = [&](const Config& c, const json& gins, const json& outs) -> Status {
    auto m = oracle_runner->call({{"cmd", "materialize"}, {"inputs", gins}, {"outputs", outs}}, opts.call_timeout * 3);
    if (!m || !m->value("ok", false))
      return fail("the oracle's runner could not draw the inputs of config '{}': {}", c.name,
                  m ? m->value("error", m->dump()) : m.error().message);
    auto st = torch_ref->outputs_into(c, device_tensors(gins, (*m)["inputs_ipc"]),
                                      device_tensors(outs, (*m)["outputs_ipc"]), opts.torch_device);
    auto col = oracle_runner->call({{"cmd", "collect"}, {"outputs", st ? outs : json::array()}}, opts.call_timeout * 3);
    if (!st) return fail("the PyTorch reference failed on config '{}': {}", c.name, st.error().message);
    if (!col || !col->value("ok", false))
      return fail("the oracle's runner could not take PyTorch's outputs of config '{}': {}", c.name,
                  col ? col->value("error", col->dump()) : col.error().message);
    return {};
  };
  auto oracle_dev = [&](const Config& c, const json& gins, const json& outs) -> Status {
    if (torch_ref) return torch_dev_outputs(c, gins, outs);
    json req = base_request(task, c);
    req.update({{"cmd", "run"}, {"slot", "base"}, {"arena_size", 0}, {"inputs", gins}, {"outputs", outs},
                {"poison", 0}, {"placement", 0}, {"keep", true}});
    auto r = oracle_runner->call(req, opts.call_timeout * 3);
    if (!r || !r->value("ok", false) || r->value("rc", 0) != 0 || !r->value("launch_error", "").empty())
      return fail("the baseline (oracle) failed on config '{}': {}", c.name, r ? r->dump() : r.error().message);
    return {};
  };
  struct DevCompare {
    std::vector<Comparison> outs, runs;
    std::vector<uint64_t> input_diffs;
  };
  // snapshot: keep a copy of these outputs in the oracle's process ("snap/<name>"); vs_snapshot:
  // also compare with that copy (two runs of the same inputs must agree).
  auto compare_dev = [&](const json& outs, const json& out_ipc, const json* ins, const json* in_ipc,
                         bool check_poison, bool snapshot, bool vs_snapshot) -> Result<DevCompare> {
    json req = {{"cmd", "compare"}, {"atol", task.tolerance_for(task.precision()).atol},
                {"rtol", task.tolerance_for(task.precision()).rtol}};
    json jo = json::array(), ji = json::array();
    for (size_t i = 0; i < outs.size(); ++i) {
      std::string name = outs[i]["name"];
      json d = {{"ipc", out_ipc.at(i)}, {"dtype", outs[i]["dtype"]}, {"numel", outs[i]["numel"]},
                {"nbytes", outs[i]["nbytes"]}, {"ref", "base/out/" + name}, {"ref_nbytes", outs[i]["nbytes"]},
                {"check_poison", check_poison}};
      if (snapshot) d["snapshot"] = "snap/" + name;
      if (vs_snapshot) d["runs_ref"] = "snap/" + name;
      jo.push_back(d);
    }
    if (ins)
      for (size_t i = 0; i < ins->size(); ++i)
        ji.push_back({{"ipc", in_ipc->at(i)}, {"nbytes", (*ins)[i]["nbytes"]},
                      {"ref", "base/in/" + (*ins)[i]["name"].get<std::string>()}});
    req["outputs"] = jo;
    req["inputs"] = ji;
    auto r = oracle_runner->call(req, opts.call_timeout * 3);
    if (!r || !r->value("ok", false))
      return fail("the oracle's comparison failed: {}", r ? r->value("error", r->dump()) : r.error().message);
    DevCompare dc;
    for (const auto& o : (*r)["outputs"]) {
      dc.outs.push_back(comparison_of(o["cmp"]));
      if (o.contains("runs")) dc.runs.push_back(comparison_of(o["runs"], "nondeterministic"));
    }
    for (const auto& i : (*r)["inputs"]) dc.input_diffs.push_back(i.value("differing_bytes", uint64_t(0)));
    return dc;
  };

  // --- Correctness: every config x seeds (+ one wide draw), each run twice ---
  next_phase("correctness");
  Tolerance tol = task.tolerance_for(task.precision());
  bool inplace = task.inplace;
  // Smallest configs first: most wrong kernels fail there in milliseconds.
  std::vector<const Config*> order;
  for (const Config& c : task.configs) order.push_back(&c);
  auto numel = [&](const Config& c) {
    double n = 0;
    for (const auto& t : task.inputs) {
      auto sh = task.shape_of(t, c);
      double k = 1;
      for (auto x : *sh) k *= static_cast<double>(x);
      n += k;
    }
    return n;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const Config* a, const Config* b) { return numel(*a) < numel(*b); });
  // One correctness call of the candidate: its reply, or nullopt once the verdict is decided (the
  // process died, or its guards reported a violation), with the config marked failed.
  auto run_candidate = [&](const json& req, const std::string& where, ConfigCheck& cc) -> std::optional<json> {
    auto r = timed("candidate", [&] { return cand_runner->call(req, opts.call_timeout); });
    bool ok = r && r->value("ok", false);
    if (!ok) {
      classify_death(v, *cand_runner, r ? &*r : nullptr, where);
      if (v.outcome == Outcome::Pass)
        v.set(Outcome::InfraError, "runner", r ? r->value("error", "") : r.error().message);
    }
    if (!ok || !check_run_reply(v, *r, where, true)) {
      cc.ok = false;
      cc.detail = v.message;
      return std::nullopt;
    }
    return *r;
  };
  for (const Config* cp : order) {
    const Config& c = *cp;
    if (opts.visible_only && c.held_out) continue;
    if (opts.held_out_only && !c.held_out) continue;
    ConfigCheck cc;
    cc.config = c.name;
    cc.held_out = c.held_out;
    auto t_config = Clock::now();
    for (int s = 0; s <= opts.seeds && cc.ok; ++s) {
      bool wide = s == opts.seeds;  // the last draw comes from the wider distribution
      uint64_t seed = v.seed + 1000003ull * (&c - task.configs.data()) + static_cast<uint64_t>(s);
      if (dev_data) {
        auto gins = drawn_inputs(task, c, seed, wide);
        auto odescs = output_descs(task, c);
        if (!gins || !odescs) {
          v.set(Outcome::InfraError, "task", (!gins ? gins.error() : odescs.error()).message);
          return finish();
        }
        if (auto st = timed("oracle", [&] { return oracle_dev(c, *gins, *odescs); }); !st) {
          v.set(Outcome::InfraError, "oracle", st.error().message);
          return finish();
        }
        for (int placement = 0; placement < (s == 0 ? 2 : 1) && cc.ok; ++placement) {
          std::string where = fmt::format("config '{}' seed {}{}{}", c.name, s, wide ? " (wide)" : "",
                                          placement ? " (moved buffers)" : "");
          json req = base_request(task, c);
          req.update({{"cmd", "run"}, {"slot", "cand"}, {"arena_size", 0}, {"inputs", *gins},
                      {"outputs", *odescs}, {"poison", placement}, {"placement", placement},
                      {"keep", true}, {"export", true}});
          auto r = run_candidate(req, where, cc);
          if (!r) break;
          auto dc = timed("compare", [&] {
            return compare_dev(*odescs, (*r)["outputs_ipc"], inplace ? nullptr : &*gins, &(*r)["inputs_ipc"],
                               placement == 0, s == 0 && placement == 0, placement == 1);
          });
          if (!dc) {
            // A candidate process that ended itself after replying takes its buffers with it:
            // that is the candidate's failure, not the checker's.
            if (auto ping = cand_runner->call({{"cmd", "hello"}}, 10s); !ping) {
              classify_death(v, *cand_runner, nullptr, where + " (after the call)");
              cc.ok = false;
              cc.detail = v.message;
              break;
            }
            v.set(Outcome::InfraError, "compare", dc.error().message);
            return finish();
          }
          for (size_t i = 0; i < dc->input_diffs.size(); ++i)
            if (dc->input_diffs[i]) {
              cc.ok = false;
              cc.detail = fmt::format("{}: input '{}' was modified by the candidate ({} bytes differ)", where,
                                      (*gins)[i]["name"].get<std::string>(), dc->input_diffs[i]);
              v.set(Outcome::Incorrect, "input_modified", cc.detail);
              break;
            }
          for (size_t o = 0; o < dc->outs.size() && cc.ok; ++o) {
            const Comparison& cmp = dc->outs[o];
            auto shape = (*odescs)[o]["shape"].get<std::vector<int64_t>>();
            cc.max_abs_err = std::max(cc.max_abs_err, cmp.max_abs_err);
            cc.max_rel_err = std::max(cc.max_rel_err, cmp.max_rel_err);
            if (!cmp.ok) {
              cc.ok = false;
              cc.detail = fmt::format("{}: output '{}': {}", where, (*odescs)[o]["name"].get<std::string>(),
                                      cmp.describe(shape));
              v.set(Outcome::Incorrect, cmp.reason, cc.detail);
            }
          }
          for (size_t o = 0; o < dc->runs.size() && cc.ok; ++o)
            if (!dc->runs[o].ok) {
              cc.ok = false;
              cc.detail = fmt::format("config '{}' seed {}: two runs on the same inputs disagree (different "
                                      "poison and buffer placement): {}",
                                      c.name, s, dc->runs[o].describe((*odescs)[o]["shape"].get<std::vector<int64_t>>()));
              v.set(Outcome::Incorrect, "nondeterministic", cc.detail);
            }
          if (cc.ok) ++cc.draws;
        }
        continue;
      }
      auto ins = timed("inputs", [&] { return generate_inputs(task, c, seed, wide); });
      if (!ins) {
        v.set(Outcome::InfraError, "task", ins.error().message);
        return finish();
      }
      auto want = timed("oracle", [&] { return oracle(c, *ins); });
      if (!want) {
        v.set(Outcome::InfraError, "oracle", want.error().message);
        return finish();
      }
      auto p = prepare(task, c, *ins, !inplace);
      if (!p) {
        v.set(Outcome::InfraError, "task", p.error().message);
        return finish();
      }
      if (auto st = cand_runner->arena().resize(p->layout.size); !st) {
        v.set(Outcome::InfraError, "memory", st.error().message);
        return finish();
      }
      std::vector<std::vector<HostTensor>> runs;
      // The second run (other poison, moved buffers) is made on the first draw of each config.
      for (int placement = 0; placement < (s == 0 ? 2 : 1); ++placement) {
        std::string where = fmt::format("config '{}' seed {}{}{}", c.name, s, wide ? " (wide)" : "",
                                        placement ? " (moved buffers)" : "");
        timed("arena", [&] { return put_inputs(cand_runner->arena(), p->inputs, *ins), 0; });
        json req = base_request(task, c);
        req.update({{"cmd", "run"}, {"slot", "cand"}, {"arena_size", p->layout.size},
                    {"inputs", p->inputs}, {"outputs", p->outputs}, {"poison", placement},
                    {"placement", placement}});
        if (!inplace) req["inputs_after"] = p->inputs_after;
        auto r = run_candidate(req, where, cc);
        if (!r) break;
        auto outs = timed("arena", [&] { return get_outputs(cand_runner->arena(), p->outputs); });
        if (!inplace) {
          for (size_t i = 0; i < ins->size(); ++i)
            if (!arena_holds(cand_runner->arena(), p->inputs_after[i], (*ins)[i])) {
              cc.ok = false;
              cc.detail = fmt::format("{}: input '{}' was modified by the candidate", where, (*ins)[i].name);
              v.set(Outcome::Incorrect, "input_modified", cc.detail);
              break;
            }
          if (!cc.ok) break;
        }
        for (size_t o = 0; o < outs.size(); ++o) {
          Comparison cmp = timed("compare", [&] { return compare_output(outs[o], (*want)[o], tol, placement == 0); });
          cc.max_abs_err = std::max(cc.max_abs_err, cmp.max_abs_err);
          cc.max_rel_err = std::max(cc.max_rel_err, cmp.max_rel_err);
          if (!cmp.ok) {
            cc.ok = false;
            cc.detail = fmt::format("{}: output '{}': {}", where, outs[o].name, cmp.describe(outs[o].shape));
            v.set(Outcome::Incorrect, cmp.reason, cc.detail);
            break;
          }
        }
        if (!cc.ok) break;
        ++cc.draws;
        runs.push_back(std::move(outs));
      }
      if (cc.ok && runs.size() == 2)
        for (size_t o = 0; o < runs[0].size(); ++o) {
          Comparison cmp = timed("compare", [&] { return compare_runs(runs[0][o], runs[1][o], tol); });
          if (!cmp.ok) {
            cc.ok = false;
            cc.detail = fmt::format("config '{}' seed {}: two runs on the same inputs disagree "
                                    "(different poison and buffer placement): {}",
                                    c.name, s, cmp.describe(runs[0][o].shape));
            v.set(Outcome::Incorrect, "nondeterministic", cc.detail);
          }
        }
    }
    cc.seconds = std::chrono::duration<double>(Clock::now() - t_config).count();
    v.configs.push_back(cc);
    if (!cc.ok) return finish();
  }

  // --- Timing on the main config: interleaved with the baseline, L2 flushed, inputs rotated ---
  // The first timing set, for PyTorch's timing at the end: its values (host data) or its draw
  // descriptors (device data: the oracle's runner draws it again and lends it to the bridge).
  std::vector<HostTensor> torch_inputs;
  json torch_set;
  if (opts.time) {
    next_phase("timing");
    quiet_gpu();
    const Config& c = task.main();
    std::vector<std::vector<HostTensor>> sets;
    size_t in_bytes = 0;
    for (const auto& spec : task.inputs) {
      auto sh = task.shape_of(spec, c);
      int64_t n = 1;
      for (auto x : *sh) n *= x;
      in_bytes += static_cast<size_t>(n) * dtype_size(spec.dtype);
    }
    int nsets = in_bytes > (size_t(768) << 20) ? 2 : 3;
    json jsets = json::array(), jfinal = json::array(), jouts = json::object();
    std::vector<std::string> slots = {"cand"};
    if (base_so) slots.push_back("base");
    Result<std::vector<Expected>> want = std::vector<Expected>{};
    if (dev_data) {
      for (int k = 0; k < nsets + 1; ++k) {
        auto g = drawn_inputs(task, c, v.seed + 7777 + static_cast<uint64_t>(k), false);
        if (!g) {
          v.set(Outcome::InfraError, "task", g.error().message);
          return finish();
        }
        (k < nsets ? jsets.push_back(*g) : void(jfinal = *g));
      }
      for (auto& sl : slots) jouts[sl] = *output_descs(task, c);
      if (opts.torch_time && !task.torch_reference.empty()) torch_set = jsets[0];
    }
    for (int k = 0; k < (dev_data ? 0 : nsets + 1); ++k) {
      auto ins = timed("inputs", [&] { return generate_inputs(task, c, v.seed + 7777 + static_cast<uint64_t>(k), false); });
      if (!ins) {
        v.set(Outcome::InfraError, "task", ins.error().message);
        return finish();
      }
      sets.push_back(std::move(*ins));
    }
    Layout lay;
    if (!dev_data) {
      std::vector<HostTensor> final_in = std::move(sets.back());
      sets.pop_back();
      if (opts.torch_time) torch_inputs = sets.front();
      want = timed("oracle", [&] { return oracle(c, final_in); });
      if (!want) {
        v.set(Outcome::InfraError, "oracle", want.error().message);
        return finish();
      }
      for (auto& set : sets) {
        json d = json::array();
        for (auto& t : set) d.push_back(lay.add(t.name, t.dtype, t.shape, t.bytes.size()));
        jsets.push_back(d);
      }
      for (auto& t : final_in) jfinal.push_back(lay.add(t.name, t.dtype, t.shape, t.bytes.size()));
      for (auto& s : slots) {
        json d = json::array();
        for (const auto& o : task.outputs) {
          auto sh = *task.shape_of(o, c);
          int64_t n = 1;
          for (auto x : sh) n *= x;
          d.push_back(lay.add(o.name, o.dtype, sh, static_cast<size_t>(n) * dtype_size(o.dtype)));
        }
        jouts[s] = d;
      }
      if (auto st = cand_runner->arena().resize(lay.size); !st) {
        v.set(Outcome::InfraError, "memory", st.error().message);
        return finish();
      }
      for (size_t k = 0; k < sets.size(); ++k) put_inputs(cand_runner->arena(), jsets[k], sets[k]);
      put_inputs(cand_runner->arena(), jfinal, final_in);
    }
    size_t l2 = hello.value("l2_bytes", size_t(50) << 20);
    json req = base_request(task, c);
    req.update({{"cmd", "time"}, {"slots", slots}, {"arena_size", lay.size}, {"sets", jsets}, {"keep", dev_data},
                {"final", jfinal}, {"outputs", jouts}, {"flush_bytes", 2 * l2 + (8 << 20)},
                {"warmup", 3}, {"min_samples", 20}, {"max_samples", 2000},
                {"max_seconds", opts.time_budget_s}, {"target_rel_ci", opts.target_rel_ci}});
    auto r = timed("timing_session", [&] {
      return cand_runner->call(req, std::chrono::milliseconds(static_cast<int64_t>(opts.time_budget_s * 1000)) +
                                        opts.call_timeout * 4);
    });
    std::string where = fmt::format("timing on config '{}'", c.name);
    if (!r || !r->value("ok", false)) {
      classify_death(v, *cand_runner, r ? &*r : nullptr, where);
      if (v.outcome == Outcome::Pass)
        v.set(Outcome::InfraError, "runner", r ? r->value("error", "") : r.error().message);
      return finish();
    }
    json rc = r->value("rc", json::object());
    if (rc.contains("cand"))
      v.set(Outcome::Crash, "returned_error", fmt::format("{}: kevo_forward returned {}", where, rc["cand"].dump()));
    json guard = {{"violations", (*r)["violations"]},
                  {"threads_before", (*r)["threads_before"]},
                  {"threads_after", (*r)["threads_max"]}};
    check_run_reply(v, guard, where, false);
    Timing t;
    t.config = c.name;
    t.candidate = summarize((*r)["samples"]["cand"].get<std::vector<double>>());
    if (base_so) {
      t.has_baseline = true;
      auto bs = (*r)["samples"]["base"].get<std::vector<double>>();
      t.baseline = summarize(bs);
      t.speedup = median_ratio(bs, (*r)["samples"]["cand"].get<std::vector<double>>());
    }
    for (const auto& b : (*r)["batches"]) {
      double span = b.value("span_ms", 0.0), wall = b.value("wall_ms", 0.0);
      double after = hidden_ms(b);
      if (span > 0) t.max_wall_over_span = std::max(t.max_wall_over_span, wall / span);
      if (after > 1.0) {
        std::string d = fmt::format("{}: the device stayed busy {:.2f} ms after a timed batch on "
                                    "the given stream finished ({:.2f} ms of work)",
                                    where, after, span);
        v.flags.push_back({"hidden_work", d});
        v.set(Outcome::Unsafe, "hidden_work", d);
        break;
      }
    }
    // The output of the last timed iteration (fresh values in reused buffers) must be right too.
    if (dev_data && v.outcome == Outcome::Pass) {
      const json& jo = jouts["cand"];
      auto st = timed("oracle", [&] { return oracle_dev(c, jfinal, jo); });
      auto dc = st ? timed("compare", [&] {
        return compare_dev(jo, (*r)["final_ipc"]["cand"], nullptr, nullptr, true, false, false);
      }) : Result<DevCompare>(st.unexpected());
      if (!dc) {
        v.set(Outcome::InfraError, "oracle", dc.error().message);
        return finish();
      }
      for (size_t o = 0; o < dc->outs.size(); ++o)
        if (!dc->outs[o].ok) {
          std::string d = fmt::format("{}: the output of the last timed iteration is wrong: {}", where,
                                      dc->outs[o].describe(jo[o]["shape"].get<std::vector<int64_t>>()));
          v.set(Outcome::Incorrect, "timed_output", d);
          break;
        }
    }
    auto jo = jouts["cand"];
    auto outs = dev_data ? std::vector<HostTensor>{} : get_outputs(cand_runner->arena(), jo);
    for (size_t o = 0; o < outs.size(); ++o) {
      Comparison cmp = timed("compare", [&] { return compare_output(outs[o], (*want)[o], tol, true); });
      if (!cmp.ok) {
        std::string d = fmt::format("{}: the output of the last timed iteration is wrong: {}",
                                    where, cmp.describe(outs[o].shape));
        v.set(Outcome::Incorrect, "timed_output", d);
        break;
      }
    }
    auto dev = device_ceilings(false, hello.value("uuid", ""));
    if (dev) {
      v.device = *dev;
      auto fl = task.flops(c), by = task.bytes(c);
      t.floor = sol_floor(*dev, fl ? *fl : 0, by ? *by : 0, task.precision());
      if (t.candidate.median > 0) t.sol_fraction = t.floor.floor_ms / t.candidate.median;
      if (t.candidate.median > 0 && t.candidate.median < t.floor.impossible_ms)
        v.set(Outcome::Unsafe, "below_sol",
              fmt::format("{}: {:.4f} ms is below what this device can do for {} ({:.4f} ms): "
                          "suspected skipped work",
                          where, t.candidate.median, task.name, t.floor.impossible_ms));
    } else {
      v.flags.push_back({"sol_unavailable", dev.error().message});
    }
    v.timing = t;
  }

  // --- compute-sanitizer on the smallest visible config ---
  if (opts.sanitize && v.outcome == Outcome::Pass) {
    next_phase("sanitize");
    const Config* small = nullptr;
    int64_t best = INT64_MAX;
    for (const auto& c : task.configs) {
      if (c.held_out) continue;
      int64_t prod = 1;
      for (auto& [k, x] : c.dims) prod *= x;
      if (prod < best) best = prod, small = &c;
    }
    auto cs = find_program("compute-sanitizer");
    if (!cs) {
      v.sanitizer = "compute-sanitizer not found: skipped";
    } else {
      std::vector<std::string> parts;
      for (const char* tool : {"memcheck", "racecheck", "initcheck"}) {
        RunnerOptions ro;
        auto runner = find_runner();
        auto ins = generate_inputs(task, *small, v.seed + 99, false);
        if (!runner || !ins) {
          parts.push_back(fmt::format("{}: skipped ({})", tool, !runner ? "no kevo-runner" : ins.error().message));
          continue;
        }
        auto p = prepare(task, *small, *ins, false);
        if (!p) continue;
        // The sanitizer wraps the runner process; its verdict is its exit code and summary.
        fs::path wrapper = fs::temp_directory_path() / fmt::format("kevo-sanitize-{}-{}.sh", getpid(), tool);
        // compute-sanitizer reports on stdout, which the runner's session discards: its report
        // goes to a log file instead, read once it has exited.
        fs::path log = fs::temp_directory_path() / fmt::format("kevo-sanitize-{}-{}.log", getpid(), tool);
        fs::remove(log);
        (void)write_file_atomic(wrapper, fmt::format("#!/bin/sh\nexec {} --tool {} --error-exitcode 99 "
                                                     "--print-limit 10 --log-file {} {} \"$@\"\n",
                                                     *cs, tool, log.string(), runner->string()));
        fs::permissions(wrapper, fs::perms::owner_all);
        ro.runner = wrapper;
        auto r = RunnerClient::start(ro);
        if (!r) {
          parts.push_back(fmt::format("{}: could not start ({})", tool, r.error().message));
          continue;
        }
        auto& rc2 = *r;
        auto loaded = rc2->call({{"cmd", "load"}, {"slot", "cand"}, {"path", cres->so_path.string()}}, 120s);
        (void)rc2->arena().resize(p->layout.size);
        put_inputs(rc2->arena(), p->inputs, *ins);
        json req = base_request(task, *small);
        req.update({{"cmd", "run"}, {"slot", "cand"}, {"arena_size", p->layout.size},
                    {"inputs", p->inputs}, {"outputs", p->outputs}, {"poison", 0}, {"placement", 0}});
        auto ran = loaded ? rc2->call(req, 300s) : Result<json>(loaded.unexpected());
        // The summary comes as the sanitizer exits, after the runner: wait for it.
        std::string tail = rc2->finish(120s);
        rc2.reset();
        fs::remove(wrapper);
        auto report = read_file(log);
        fs::remove(log);
        std::string text = (report ? *report : std::string()) + tail;
        if (!ran) {  // a summary of a run that never happened would prove nothing
          parts.push_back(fmt::format("{}: the candidate did not run under the sanitizer ({})", tool,
                                      ran.error().message));
          v.flags.push_back({"sanitizer:" + std::string(tool), text.substr(0, 1500)});
          continue;
        }
        SanitizerSummary sum = read_sanitizer_summary(tool, text);
        parts.push_back(fmt::format("{}: {}", tool, sum.found ? sum.line : "no summary"));
        if (!sum.found) {
          v.flags.push_back({"sanitizer:" + std::string(tool), "no summary in its report: " + text.substr(0, 1500)});
        } else if (!sum.clean) {
          v.flags.push_back({"sanitizer:" + std::string(tool), text.substr(0, 1500)});
          v.set(Outcome::Incorrect, std::string("sanitizer:") + tool,
                fmt::format("compute-sanitizer {} on config '{}': {}", tool, small->name, sum.line));
        }
      }
      v.sanitizer = fmt::format("{}", fmt::join(parts, "; "));
    }
  }

  // --- The task's PyTorch side on the same inputs, once kevo's own processes are gone ---
  if (opts.torch_time && v.timing && v.outcome == Outcome::Pass && !task.torch_reference.empty() &&
      (!torch_inputs.empty() || !torch_set.is_null())) {
    next_phase("pytorch");
    cand_runner.reset();
    interop::TorchTimingOptions to;
    to.device = opts.torch_device;
    to.budget_s = opts.time_budget_s;
    Result<interop::TimeResult> r = fail("not timed");
    if (!torch_set.is_null()) {
      // Device data: the oracle's runner, idle, keeps only the lent inputs while PyTorch runs.
      auto rel = oracle_runner->call({{"cmd", "release"}, {"prefixes", json::array({""})}}, 60s);
      quiet_gpu();
      if (!rel) r = fail("the oracle's runner could not free its buffers for PyTorch: {}", rel.error().message);
      else r = time_torch_on_lent(*oracle_runner, task, torch_set, to, bridge ? &*bridge : nullptr,
                                  opts.call_timeout * 3);
    } else {
      oracle_runner.reset();
      quiet_gpu();
      r = interop::time_torch(task, torch_inputs, to, bridge ? &*bridge : nullptr);
    }
    oracle_runner.reset();
    if (r) {
      v.timing->pytorch = std::move(*r);
    } else {
      const std::string& m = r.error().message;
      v.timing->pytorch_note = m.substr(0, m.find('\n'));
    }
  }
  return finish();
}

}  // namespace kevo
