// `kevo doctor`: what this machine offers kevo, and how to fix what is missing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "check/evaluator.h"
#include "check/isolation.h"
#include "cli/commands.h"
#include "store/run_db.h"
#include "compile/nvcc.h"
#include "torch/bridge.h"
#include "run/runner_client.h"
#include "util/subprocess.h"

namespace kevo::cli {

namespace {
// One row of the table: a multi-line text (a tool's banner, an error with its stderr) is joined
// with "; " so the table stays a table.
void line(const char* what, bool ok, std::string text, const std::string& fix = "") {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (size_t p; (p = text.find('\n')) != std::string::npos;) text.replace(p, 1, "; ");
  std::printf("  %-14s %s %s\n", what, ok ? "ok     " : "MISSING", text.c_str());
  if (!ok && !fix.empty()) std::printf("  %-14s         fix: %s\n", "", fix.c_str());
}

// nvcc's five-line banner as "release 13.0, V13.0.88": its "Cuda compilation tools" line.
std::string nvcc_release(const std::string& banner) {
  size_t at = banner.find("release ");
  if (at == std::string::npos) return banner;
  size_t end = banner.find('\n', at);
  return banner.substr(at, end == std::string::npos ? std::string::npos : end - at);
}
// The run database (--db, else $KEVO_DB): reachable, kevo's, and at a schema this kevo reads.
// Read-only: doctor never creates or upgrades a database. Returns false when it is not usable.
bool store_line(const std::string& db) {
  if (db.empty()) {
    line("run database", true, "not checked (give --db URL|PATH or set KEVO_DB)");
    return true;
  }
  auto d = store::RunDb::open_read_only(db);
  if (!d) {
    line("run database", false, d.error().message,
         store::is_postgres_url(db) ? "check the URL, that the server runs, and the role's rights (docs/CLUSTER.md)"
                                    : "a writer (kevo evolve --db ...) creates it");
    return false;
  }
  auto v = (*d)->schema_version();
  if (!v) {
    line("run database", false, v.error().message);
    return false;
  }
  const bool ok = *v == store::kSchemaVersion;
  line("run database", ok,
       fmt::format("{}: schema version {} (this kevo writes {})", (*d)->where(), *v, store::kSchemaVersion),
       "a writer (kevo evolve or kevo worker) upgrades an older schema");
  return ok;
}

// How long a runner took to start (its process and CUDA context: every evaluation starts one for
// its candidate), and whether the driver keeps the GPU initialized between CUDA processes. With
// persistence mode off, NVIDIA's driver tears the GPU's state down when its last client ends and
// builds it again for the next, which every `kevo eval` would then wait for. Read through
// nvidia-smi.
void gpu_start_line(double start_s) {
  auto q =
      run_process({.argv = {"nvidia-smi", "--query-gpu=persistence_mode", "--format=csv,noheader"},
                   .timeout = std::chrono::seconds(30)});
  std::string modes;  // one per GPU, the distinct ones
  if (q && q->ok())
    for (size_t at = 0; at < q->out.size();) {
      size_t end = std::min(q->out.find('\n', at), q->out.size());
      std::string m = q->out.substr(at, end - at);
      while (!m.empty() && (m.back() == ' ' || m.back() == '\r')) m.pop_back();
      if (!m.empty() && modes.find(m) == std::string::npos) modes += (modes.empty() ? "" : "/") + m;
      at = end + 1;
    }
  const std::string text = fmt::format("{:.2f} s for a runner's process and CUDA context", start_s);
  if (modes.empty()) {
    line("GPU start", true, text + " (persistence mode unknown: nvidia-smi did not say)");
    return;
  }
  line("GPU start", modes == "Enabled", fmt::format("{}; persistence mode {}", text, modes),
       "sudo nvidia-smi -pm 1 (or run nvidia-persistenced): without it every first CUDA process "
       "initializes the GPU again");
}

}  // namespace

// The confinement a candidate's runner gets here: the runner confines itself as it would before
// loading a candidate (no GPU needed) and says what took.
void isolation_line(const std::filesystem::path& runner) {
  auto r = run_process({.argv = {runner.string(), "--isolation"}, .timeout = std::chrono::seconds(20)});
  std::string out = r && r->ok() ? r->out : "";
  auto j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    line("isolation", false, r ? r->describe() + ": " + r->err : r.error().message, "rebuild kevo-runner");
    return;
  }
  auto iso = confirm_isolation(j.get<proto::Isolation>(), 0);
  std::ifstream ver("/proc/sys/kernel/osrelease");
  std::string release;
  std::getline(ver, release);
  const bool gvisor = release.rfind("4.4.0", 0) == 0;  // gVisor reports this kernel
  line("isolation", iso && !iso->weak(),
       (iso ? iso->describe() : iso.error().message) +
           fmt::format("; no PID namespace (CUDA IPC needs a shared one); kernel {}{}", release,
                       gvisor ? " (gVisor)" : ""),
       "run kevo as root (candidates then run as nobody) or on a kernel with Landlock and seccomp");
}

void register_doctor(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("doctor", "Report what this machine offers (GPU, compilers, ceilings, Python, LLM keys).\n"
                                 "Exit codes: 0 a usable GPU (and the --db database, if given, opens), 1 no usable GPU "
                                 "or the database does not open.");
  auto remeasure = std::make_shared<bool>(false);
  cmd->add_flag("--remeasure", *remeasure, "Measure the device ceilings again instead of using the cache");
  auto db = std::make_shared<std::string>();
  cmd->add_option("--db", *db, "Also check this run database (a SQLite path or a postgresql:// URL)")->envname("KEVO_DB");
  cmd->callback([remeasure, db, &exit_code] {
    std::printf("kevo doctor\n");
    bool gpu_ok = false;
    auto nvcc = compiler_version("nvcc");
    auto nvcc_path = find_program("nvcc");
    line("nvcc", bool(nvcc),
         nvcc ? nvcc_release(*nvcc) + (nvcc_path ? " (" + *nvcc_path + ")" : "") : nvcc.error().message,
         "install the CUDA toolkit (12.4+) and put its bin/ on PATH");
    auto runner = find_runner();
    line("kevo-runner", bool(runner), runner ? runner->string() : "not found",
         "build with the CUDA toolkit present (cmake finds CUDAToolkit), or set KEVO_RUNNER");
    if (runner) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = RunnerClient::start({});
      if (r) {
        auto h = (*r)->call(proto::HelloRequest{}, std::chrono::seconds(60));
        const double start_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        gpu_ok = bool(h);
        if (gpu_ok) {
          line("GPU", true,
               fmt::format("{} (sm_{}{}, {} SMs, {:.0f} MiB L2, {:.1f} GiB), driver {}, runtime {}", h->name,
                           h->cc_major, h->cc_minor, h->sm_count, static_cast<double>(h->l2_bytes) / 1048576.0,
                           static_cast<double>(h->total_mem) / 1073741824.0, h->driver_version, h->runtime_version));
          gpu_start_line(start_s);
        } else {
          line("GPU", false, h.error().message,
               "kevo eval --compile-only works without a GPU; timing and correctness need one");
        }
      }
    }
    if (runner) isolation_line(*runner);
    if (gpu_ok) {
      auto d = device_ceilings(*remeasure);
      line("ceilings", bool(d),
           d ? fmt::format("copy {:.0f} GB/s, fp32 {:.1f} TFLOP/s, bf16 tensor (mma.sync) {:.1f} TFLOP/s",
                           d->copy_gbps, d->fp32_tflops, d->tensor_tflops)
             : d.error().message);
    }
    auto cs = find_program("compute-sanitizer");
    line("sanitizer", bool(cs), cs ? *cs : "compute-sanitizer not on PATH",
         "it ships with the CUDA toolkit (bin/compute-sanitizer); needed for --sanitize only");
    // The same interpreter the PyTorch bridge would use (the first python3 that imports torch).
    auto torch_py = torch::find_torch_python();
    std::string python = torch_py ? *torch_py : "python3";
    auto py = run_process({.argv = {python, "-c",
                                    "import torch,sys;print(sys.version.split()[0], 'torch', "
                                    "torch.__version__, 'cuda' if torch.cuda.is_available() else 'cpu')"},
                           .timeout = std::chrono::seconds(60)});
    bool py_ok = py && py->ok();
    std::string pyout = py ? (py->ok() ? py->out : py->err) : py.error().message;
    while (!pyout.empty() && pyout.back() == '\n') pyout.pop_back();
    if (pyout.size() > 200) pyout = pyout.substr(pyout.size() - 200);
    line("python/torch", py_ok, pyout, "apt-get install python3-torch (or pip install torch) for PyTorch interop");
    std::string keys;
    for (const char* k : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY"})
      if (const char* v = getenv(k); v && *v) keys += std::string(keys.empty() ? "" : ", ") + k;
    line("LLM keys", !keys.empty(), keys.empty() ? "none set" : keys + " set",
         "export OPENAI_API_KEY=... or ANTHROPIC_API_KEY=... (or serve a model locally; see docs/LLM.md)");
    const bool store_ok = store_line(*db);
    exit_code = gpu_ok && store_ok ? 0 : 1;
  });
}

}  // namespace kevo::cli
