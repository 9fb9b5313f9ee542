#include "compile/nvcc.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <regex>

#include "compile/cache.h"
#include "compile/diagnostics.h"
#include "compile/include_rules.h"
#include "compile/nvcc_pipeline.h"
#include "compile/sandbox.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/subprocess.h"

namespace kevo {
namespace fs = std::filesystem;

namespace {

// Bump when the command line or the stored result changes meaning, to invalidate old entries.
constexpr std::string_view kCacheFormat = "kevo-compile-v1";

bool is_header(const fs::path& p) {
  static const char* kExt[] = {".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".ipp"};
  std::string e = p.extension().string();
  return std::any_of(std::begin(kExt), std::end(kExt), [&](const char* x) { return e == x; });
}

// Adds the content of the headers in an include dir to the key. System and toolkit dirs are
// covered by the compiler version (and are too large to hash on every compile), so only their path
// counts.
Status hash_include_dir(Sha256& h, const fs::path& dir) {
  std::error_code ec;
  fs::path canon = fs::weakly_canonical(dir, ec);
  if (ec) canon = dir;
  h.add("include-dir").add(canon.string());
  if (canon.string().rfind("/usr/", 0) == 0 || fs::exists(canon / "cuda_runtime.h", ec)) return {};
  if (!fs::is_directory(canon, ec))
    return {};  // the compiler reports a missing -I dir, if it matters
  constexpr size_t kMaxHeaders = 4096;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(
           canon, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && is_header(it->path())) files.push_back(it->path());
    if (files.size() > kMaxHeaders)
      return fail(
          "include dir {} holds more than {} headers; too many to hash for the compile cache",
          canon.string(), kMaxHeaders);
  }
  if (ec) return fail("include dir {}: cannot list: {}", canon.string(), ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto text = read_file(f);
    if (!text) return text.unexpected();
    h.add(fs::relative(f, canon, ec).string()).add(*text);
  }
  return {};
}

enum class Kind { Cuda, Host };

bool env_says_serial() {
  const char* e = std::getenv("KEVO_NVCC_SERIAL");
  return e && std::string_view(e) == "1";
}

// nvcc's own steps with its host and device front ends in parallel (compile/nvcc_pipeline.h).
// nullopt: run plain nvcc instead (an unfamiliar step list, or a failure nvcc itself would not
// give, such as the shell not finding a step), so this path never decides a verdict on its own.
// `sandbox`: what every step runs under (compile/sandbox.h); `nvcc` is already inside it.
std::optional<RunResult> run_nvcc_steps(const RunOptions& nvcc, const fs::path& dir,
                                        std::string_view src_name, std::string_view shown_name,
                                        const Sandbox& sandbox) {
  const fs::path tmp =
      dir / "nvcc-steps";  // the steps' intermediates; removed before the entry is stored
  std::error_code ec;
  fs::create_directories(tmp, ec);
  if (ec) return std::nullopt;
  // KEVO_KEEP_NVCC_STEPS=1 keeps the script and intermediates in the cache entry, for debugging.
  auto cleanup = [&] {
    if (!std::getenv("KEVO_KEEP_NVCC_STEPS")) fs::remove_all(tmp, ec);
  };
  RunOptions dry = nvcc;
  dry.argv.push_back("--dryrun");
  dry.env_add["TMPDIR"] = tmp.string();
  dry.timeout = std::min(nvcc.timeout, std::chrono::milliseconds(60000));
  auto d = run_process(dry);
  if (d && d->timed_out)
    return cleanup(), std::move(*d);  // the budget is spent: a timeout either way
  if (!d || !d->ok()) return cleanup(), std::nullopt;
  // gold where the machine has it (binutils ships it on Debian 12 and Ubuntu 24.04).
  static const bool gold = find_program("ld.gold").has_value();
  auto script = parallel_nvcc_script(d->err + d->out, {gold ? "gold" : ""});
  if (!script) return cleanup(), std::nullopt;
  // A fresh id per compile, as nvcc's own: two modules of one source in one process stay distinct.
  uint64_t salt = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  if (!write_file_atomic(script->module_id_path, nvcc_module_id(src_name, salt)) ||
      !write_file_atomic(tmp / "steps.sh", script->script))
    return cleanup(), std::nullopt;
  RunOptions ro = nvcc;
  ro.argv = {"/bin/sh", (tmp / "steps.sh").string()};
  sandbox.apply(ro);
  ro.env_add["TMPDIR"] = tmp.string();
  ro.timeout = std::max(
      std::chrono::milliseconds(1),
      nvcc.timeout - std::chrono::milliseconds(static_cast<int64_t>(d->wall_seconds * 1000)));
  auto r = run_process(ro);
  cleanup();
  if (!r) return std::nullopt;
  r->wall_seconds += d->wall_seconds;
  r->err = script->driver_output + r->err;
  // Plain nvcc decides a failure it would not give itself: a signal, one with nothing to show, or
  // the link with gold (compile/nvcc_pipeline.h).
  if (!r->ok() && !r->timed_out &&
      (r->signaled || (gold && r->exit_code == kLinkerFailedExit) ||
       trim_diagnostics(r->out + r->err, shown_name).empty()))
    return std::nullopt;
  return std::move(*r);
}

struct Plan {
  std::string compiler;
  std::string src_name;  // inside the build dir
  std::string arch_used;
  std::vector<std::string> argv;
  std::vector<std::string> include_dirs;  // kevo's first
};

Plan make_plan(Kind kind, std::string_view source, const CompileOptions& o) {
  Plan p;
  p.include_dirs.push_back((kevo_home() / "include").string());
  p.include_dirs.insert(p.include_dirs.end(), o.include_dirs.begin(), o.include_dirs.end());
  std::vector<std::string>& a = p.argv;
  if (kind == Kind::Cuda) {
    p.compiler = o.nvcc;
    p.src_name = std::string(kCompileSourceStem) + ".cu";
    p.arch_used = o.arch;
    if (o.allow_sm90a_auto && o.arch == "sm_90" && needs_sm90a(source)) p.arch_used = "sm_90a";
    a = {o.nvcc,    "-O3",    "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
         "-cudart", "shared", "-lineinfo",  "-Xptxas", "-v", kNoSpecialMathFlag};
    // Arch-specific targets ("sm_90a") have no forward-compatible PTX, so they need -gencode.
    if (!p.arch_used.empty() && p.arch_used.back() == 'a') {
      std::string num = p.arch_used.substr(3);
      a.push_back("-gencode=arch=compute_" + num + ",code=sm_" + num);
    } else {
      a.push_back("-arch=" + p.arch_used);
    }
  } else {
    p.compiler = o.cxx;
    p.src_name = std::string(kCompileSourceStem) + ".cpp";
    p.arch_used = "host";
    a = {o.cxx, "-O2", "-std=c++17", "-shared", "-fPIC"};
  }
  for (const auto& d : p.include_dirs) a.push_back("-I" + d);
  a.insert(a.end(), o.extra_flags.begin(), o.extra_flags.end());
  // Unresolved symbols fail the link instead of the load, so a candidate that calls a library the
  // task does not allow (e.g. cuBLAS, not in link_libs) is a compile error naming the symbol.
  if (kind == Kind::Cuda) {
    a.insert(a.end(), {"-Xlinker", "--no-undefined"});
  } else {
    a.push_back("-Wl,--no-undefined");
  }
  a.insert(a.end(), {"-o", "kernel.so", p.src_name});
  for (const auto& l : o.link_libs) a.push_back("-l" + l);
  return p;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Result<CompileResult> compile_shared(Kind kind, std::string_view source,
                                     std::string_view shown_name, const CompileOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  Plan plan = make_plan(kind, source, opts);
  // A candidate never reaches the compiler with a way to read host files, whatever ran before
  // (evolve warms the cache before the static checks; --no-static-gate skips them).
  if (kind == Kind::Cuda) {
    if (auto hits = find_host_file_access(source); !hits.empty()) {
      CompileResult r;
      r.driver = "refused";
      r.arch_used = plan.arch_used;
      r.diagnostics = describe_first_hit(source, hits);
      r.seconds = since(t0);
      return r;
    }
  }
  auto version = compiler_version(plan.compiler);
  if (!version) return version.unexpected();

  Sha256 h;
  h.add(kCacheFormat)
      .add(kind == Kind::Cuda ? "cuda" : "host")
      .add(source)
      .add(*version)
      .add(plan.arch_used);
  for (size_t i = 1; i < plan.argv.size(); ++i) h.add(plan.argv[i]);  // argv[0] is only the path
  for (const auto& d : plan.include_dirs) KEVO_TRY(hash_include_dir(h, d));
  const std::string key = h.hex();

  CompileCache cache((opts.cache_dir.empty() ? cache_dir() : opts.cache_dir) / "compile");
  if (opts.use_cache) {
    if (auto hit = cache.lookup(key)) {
      hit->diagnostics = trim_diagnostics(hit->log, shown_name);
      hit->seconds = since(t0);
      return *hit;
    }
  }

  auto build = cache.make_build_dir();
  if (!build) return build.unexpected();
  const fs::path dir = *build;
  auto cleanup = [&] {
    std::error_code ec;
    fs::remove_all(dir, ec);
  };
  if (auto w = write_file_atomic(dir / plan.src_name, source); !w) {
    cleanup();
    return w.unexpected();
  }

  // The compiler sees the toolkit, the include dirs and this build dir only (compile/sandbox.h).
  SandboxPaths sp;
  if (fs::path root = toolkit_root(plan.compiler); !root.empty()) sp.read_only.push_back(root);
  sp.read_only.insert(sp.read_only.end(), plan.include_dirs.begin(), plan.include_dirs.end());
  sp.writable = dir;
  const Sandbox sandbox = make_sandbox(sp, opts.sandbox);
  RunOptions ro;
  ro.argv = plan.argv;
  sandbox.apply(ro);
  ro.cwd = dir.string();
  // nvcc's intermediates go to the private dir: removed with it, even after a timeout kill.
  ro.env_add["TMPDIR"] = dir.string();
  ro.timeout = opts.timeout;
  std::string driver = kind == Kind::Cuda ? "nvcc" : "g++";
  std::optional<RunResult> steps;
  if (kind == Kind::Cuda && opts.parallel_front_ends && !env_says_serial())
    steps = run_nvcc_steps(ro, dir, plan.src_name, shown_name, sandbox);
  if (steps) driver = "nvcc-steps";
  auto run = steps ? Result<RunResult>(std::move(*steps)) : run_process(ro);
  if (!run) {
    cleanup();
    return run.unexpected();
  }

  CompileResult r;
  r.driver = driver;
  r.cache_key = key;
  r.arch_used = plan.arch_used;
  r.command = plan.argv;
  r.log = run->out + run->err;
  if (r.log.find("No space left on device") != std::string::npos) {
    cleanup();
    return fail("compiling {}: no space left on device (cache {})", shown_name,
                cache.entry_dir(key).string());
  }
  r.kernels = parse_ptxas(r.log);
  r.diagnostics = trim_diagnostics(r.log, shown_name);
  std::error_code ec;
  r.ok = run->ok() && fs::exists(dir / "kernel.so", ec);
  if (run->timed_out || run->signaled) {
    // Depends on the machine's load, not on the source: report, do not cache.
    r.timed_out = run->timed_out;
    std::string what = run->timed_out ? fmt::format("compilation of {} timed out after {:.0f} s",
                                                    shown_name, opts.timeout.count() / 1000.0)
                                      : fmt::format("the compiler was {}", run->describe());
    r.diagnostics = r.diagnostics.empty() ? what : what + "\n" + r.diagnostics;
    r.ok = false;
    r.seconds = since(t0);
    cleanup();
    return r;
  }
  if (!r.ok && r.diagnostics.empty())
    r.diagnostics = fmt::format("the compiler failed ({})", run->describe());
  r.seconds = run->wall_seconds;  // stored: what a compile of this source costs
  auto entry = cache.commit(dir, key, r, !opts.use_cache);
  if (!entry) return entry.unexpected();
  if (r.ok) r.so_path = *entry / "kernel.so";
  r.seconds = since(t0);
  return r;
}

}  // namespace

bool needs_sm90a(std::string_view source) {
  static const std::regex re(
      R"(\bwgmma\b|\bsetmaxnreg\b|__CUDA_ARCH_FEAT_SM90_ALL|GMMA|//\s*kevo\s*:\s*arch\s*=\s*sm_90a\b)");
  return std::regex_search(source.begin(), source.end(), re);
}

Result<std::string> compiler_version(const std::string& compiler) {
  static std::mutex mu;
  static std::map<std::string, std::string> known;
  {
    std::lock_guard lock(mu);
    if (auto it = known.find(compiler); it != known.end()) return it->second;
  }
  auto r = run_process({.argv = {compiler, "--version"}, .timeout = std::chrono::seconds(60)});
  if (!r)
    return fail("compiler '{}' not found ({}); install the CUDA toolkit or set the path", compiler,
                r.error().message);
  if (!r->ok()) return fail("'{} --version' failed: {}: {}", compiler, r->describe(), r->err);
  std::lock_guard lock(mu);
  known[compiler] = r->out;
  return r->out;
}

Result<CompileResult> compile_cuda_shared(std::string_view source, std::string_view shown_name,
                                          const CompileOptions& opts) {
  return compile_shared(Kind::Cuda, source, shown_name, opts);
}

Result<CompileResult> compile_host_shared(std::string_view source, std::string_view shown_name,
                                          const CompileOptions& opts) {
  return compile_shared(Kind::Host, source, shown_name, opts);
}

}  // namespace kevo
