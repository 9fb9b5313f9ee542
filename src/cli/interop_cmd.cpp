// `kevo import kernelbench FILE|DIR... --out DIR`, `kevo import evoengineer FILE.json --out DIR` and
// `kevo import robust-kbench DIR... --out DIR` (docs/INTEROP.md).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include "cli/commands.h"
#include "cli/dir_arg.h"
#include "cli/signal_guard.h"
#include "interop/export.h"
#include "interop/export_pair.h"
#include "interop/import.h"
#include "interop/import_backward.h"
#include "interop/import_robust_kbench.h"
#include "interop/import_tolerance.h"
#include "interop/robust_kbench.h"
#include "interop/task_compat.h"
#include "lint/torch_lint.h"
#include "task/resolved.h"
#include "torch/bridge.h"
#include "util/fs.h"

namespace kevo::cli {
namespace fs = std::filesystem;

namespace {

struct ImportArgs {
  std::vector<std::string> files;
  std::string out = ".", category, flops, name;
  bool force = false, backward = false, no_lint = false;
  double timeout = 600;
};

// The import's vet (interop/import.h): each config the import can afford to run on the CPU and
// within the lint's own size limit (it runs the reference once per input and draw), linted on its
// own (lint/torch_lint.h vet_configs). A FLOPs figure that is only a lower bound does not say
// what a config costs (a transposed 3-D convolution), its elements do.
Result<interop::VetResult> vet_with_lint(torch::TorchBridge& b, const Task& t) {
  const LintOptions opts;
  std::vector<std::string> names;
  for (const auto& c : t.configs) {
    auto r = t.resolve(c);
    int64_t elements = r ? static_cast<int64_t>(r->input_numel()) : INT64_MAX;
    for (const auto& o : r ? r->outputs : std::vector<ResolvedTensor>{}) elements += o.numel;
    if (interop::cpu_affordable(t, c) && elements <= opts.max_elements) names.push_back(c.name);
  }
  auto v = vet_configs(b, t, names, opts);
  if (!v) return fail("lint: {}", v.error().message);
  interop::VetResult out;
  for (auto& d : v->drop) out.dropped.push_back({std::move(d.config), std::move(d.why)});
  out.notes = std::move(v->notes);
  return out;
}

void add_import_options(CLI::App* c, const std::shared_ptr<ImportArgs>& a) {
  c->add_option("--out,-o", a->out, "Directory the task directories are written to")->capture_default_str();
  c->add_option("--category", a->category, "Task category (default: guessed from the name)");
  c->add_option("--flops", a->flops, "flops expression of the dims (default: derived from the module's ops)");
  c->add_option("--name", a->name, "Task name (one input only; default: from the file or record)");
  c->add_flag("--force", a->force, "Replace existing task directories");
  c->add_flag("--no-lint", a->no_lint,
              "Do not lint the task before writing it (configs a constant, an ignored input or another draw's "
              "outputs would pass are dropped by default)");
  c->add_option("--timeout", a->timeout, "Seconds one bridge request may take before the bridge is killed")
      ->check(CLI::Range(1.0, 86400.0));
}

void print_imported(const interop::ImportedTask& t) {
  std::printf("imported %s -> %s\n", t.name.c_str(), t.dir.string().c_str());
  for (const auto& n : t.notes) std::printf("  note: %s\n", n.c_str());
  if (t.backward_skipped)
    std::printf("  backward skipped (%s): %s\n", interop::to_string(t.backward_skipped->reason).c_str(),
                t.backward_skipped->detail.c_str());
}

Result<torch::TorchBridge> start_bridge(double timeout_s) {
  torch::BridgeOptions bo;
  bo.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  return torch::TorchBridge::start(bo);
}

// One bridge serves every input; a bridge a previous input hung or killed is restarted. `one(b, i)`
// imports input i (one task, or a forward and a backward); progress is a line per task, the reason of
// a failure on it, and a summary. The exit code: 0 all imported, 1 some failed, 20 no bridge.
volatile std::sig_atomic_t g_import_interrupted = 0;
extern "C" void on_import_sigint(int) { g_import_interrupted = 1; }

// Ctrl-C during an import: the file in hand fails (the bridge got the signal too), the loop stops,
// the tasks already written stay, and the count says how far it got.
bool import_interrupted() { return g_import_interrupted != 0; }

int run_imports(const char* cmd, size_t n, double timeout,
                const std::function<std::vector<Result<interop::ImportedTask>>(torch::TorchBridge&, size_t)>& one) {
  g_import_interrupted = 0;
  SignalGuard on_sigint(SIGINT, on_import_sigint);
  auto bridge = start_bridge(timeout);
  if (!bridge) {
    std::fprintf(stderr, "kevo import %s: %s\n", cmd, bridge.error().message.c_str());
    return 20;
  }
  int failed = 0, done = 0, skipped = 0;
  size_t i = 0;
  for (; i < n && !import_interrupted(); ++i) {
    if (!bridge->alive()) {
      auto again = start_bridge(timeout);
      if (!again) {
        std::fprintf(stderr, "kevo import %s: %s\n", cmd, again.error().message.c_str());
        return 20;
      }
      *bridge = std::move(*again);
    }
    auto t0 = std::chrono::steady_clock::now();
    auto tasks = one(*bridge, i);
    if (import_interrupted()) break;  // its failure is the signal's, not the file's
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& t : tasks) {
      if (!t) {  // the first line is the reason; the rest (notes, a traceback) follows
        std::fprintf(stderr, "[%zu/%zu] FAILED (%.1f s) %s\n", i + 1, n, sec, t.error().message.c_str());
        ++failed;
        continue;
      }
      ++done;
      skipped += t->backward_skipped ? 1 : 0;
      std::printf("[%zu/%zu] (%.1f s) ", i + 1, n, sec);
      print_imported(*t);
    }
    std::fflush(stdout);
  }
  if (import_interrupted()) {
    std::printf("interrupted: %d of %zu imported (%d failed) before file %zu; the tasks written are kept\n", done, n,
                failed, i + 1);
    return 130;
  }
  if (done + failed > 1) std::printf("%d imported, %d failed\n", done, failed);
  if (skipped) std::printf("%d backward tasks skipped\n", skipped);
  return failed ? 1 : 0;
}

// `kevo import robust-kbench`: each task folder gives a forward task and maybe a backward task.
void register_robust_kbench(CLI::App* imp, int& exit_code) {
  auto rk = std::make_shared<ImportArgs>();
  auto* rkc = imp->add_subcommand(
      "robust-kbench",
      "Import robust-kbench task folders (func_forward.py, func_backward.py, config_*.json): a forward task\n"
      "and, where there is func_backward.py, a backward task <name>_backward. Exit codes: 0 all imported,\n"
      "1 some failed, 20 no usable Python/torch, 21 no task folder, 130 interrupted.");
  rkc->add_option("folders", rk->files, "Task folders, or folders of them (a robust-kbench checkout's tasks)")
      ->required();
  add_import_options(rkc, rk);
  rkc->callback([rk, &exit_code] {
    auto dirs = interop::robust_kbench_folders(rk->files);
    if (!dirs) {
      std::fprintf(stderr, "kevo import robust-kbench: %s\n", dirs.error().message.c_str());
      exit_code = 21;
      return;
    }
    if (!rk->name.empty() && dirs->size() > 1) {
      std::fprintf(stderr, "kevo import robust-kbench: --name needs exactly one task folder\n");
      exit_code = 21;
      return;
    }
    exit_code = run_imports("robust-kbench", dirs->size(), rk->timeout, [&](torch::TorchBridge& b, size_t i) {
      interop::ImportOptions o{rk->out, rk->name, rk->category, rk->flops, rk->force, 0};
      return interop::import_robust_kbench(b, (*dirs)[i], o);
    });
  });
}

}  // namespace

void register_interop(CLI::App& app, int& exit_code) {
  auto* imp = app.add_subcommand("import", "Turn PyTorch problem files into kevo tasks (needs python3 with torch)");
  imp->require_subcommand(1);

  auto kb = std::make_shared<ImportArgs>();
  auto* kbc = imp->add_subcommand(
      "kernelbench",
      "Import KernelBench problem files (Model, get_inputs, get_init_inputs). Each task's tolerance is scaled to\n"
      "its outputs, and a config a constant, an ignored input or another draw's outputs would pass is dropped\n"
      "(the main config: the file fails). Exit codes: 0 all imported, 1 some failed, 20 no usable Python/torch,\n"
      "21 bad arguments, 130 interrupted (the tasks written are kept).");
  kbc->add_option("files", kb->files, "KernelBench .py files or folders (a level: every .py in it)")->required();
  add_import_options(kbc, kb);
  kbc->add_flag("--backward", kb->backward,
                "Also write NAME_backward: the gradients by torch.autograd (a skipped one says why)");
  kbc->callback([kb, &exit_code] {
    auto files = interop::kernelbench_files(kb->files);
    if (!files) {
      std::fprintf(stderr, "kevo import kernelbench: %s\n", files.error().message.c_str());
      exit_code = 21;
      return;
    }
    if (!kb->name.empty() && files->size() > 1) {
      std::fprintf(stderr, "kevo import kernelbench: --name needs exactly one file\n");
      exit_code = 21;
      return;
    }
    exit_code = run_imports("kernelbench", files->size(), kb->timeout, [&](torch::TorchBridge& b, size_t i) {
      interop::ImportOptions o{kb->out, kb->name, kb->category, kb->flops, kb->force, 0,
                               kb->no_lint ? interop::VetTask() : vet_with_lint};
      std::vector<Result<interop::ImportedTask>> r;
      interop::ProblemShape shape;
      r.push_back(interop::import_kernelbench(b, (*files)[i], o, kb->backward ? &shape : nullptr));
      if (!kb->backward || !r.front()) return r;
      auto bw = interop::import_kernelbench_backward(b, (*files)[i], r.front()->name, shape, o);
      if (bw.skipped) r.front()->backward_skipped = bw.skipped;
      if (bw.task) r.push_back(std::move(*bw.task));
      return r;
    });
  });

  auto ee = std::make_shared<ImportArgs>();
  auto* eec = imp->add_subcommand(
      "evoengineer",
      "Import EvoEngineer / AI CUDA Engineer records (original module, functional module, CUDA extension).\n"
      "Exit codes: 0 all imported, 1 some failed, 20 no usable Python/torch, 21 unreadable file, 130 interrupted.");
  eec->add_option("files", ee->files, "JSON dataset files")->required();
  add_import_options(eec, ee);
  eec->callback([ee, &exit_code] {
    std::vector<std::pair<std::string, interop::EvoRecord>> records;
    for (const auto& f : ee->files) {
      auto recs = interop::parse_evoengineer(f);
      if (!recs) {
        std::fprintf(stderr, "kevo import evoengineer: %s\n", recs.error().message.c_str());
        exit_code = 21;
        return;
      }
      for (auto& r : *recs) records.emplace_back(f, std::move(r));
    }
    if (!ee->name.empty() && records.size() > 1) {
      std::fprintf(stderr, "kevo import evoengineer: --name needs exactly one record (found %zu)\n", records.size());
      exit_code = 21;
      return;
    }
    auto bridge = start_bridge(ee->timeout);
    if (!bridge) {
      std::fprintf(stderr, "kevo import evoengineer: %s\n", bridge.error().message.c_str());
      exit_code = 20;
      return;
    }
    int failed = 0;
    for (const auto& [file, rec] : records) {
      if (!bridge->alive()) {
        auto again = start_bridge(ee->timeout);
        if (!again) {
          std::fprintf(stderr, "kevo import evoengineer: %s\n", again.error().message.c_str());
          exit_code = 20;
          return;
        }
        *bridge = std::move(*again);
      }
      interop::ImportOptions o{ee->out, ee->name, ee->category, ee->flops, ee->force, 0,
                               ee->no_lint ? interop::VetTask() : vet_with_lint};
      auto t = interop::import_evoengineer_record(*bridge, rec, file, o);
      if (!t) {
        std::fprintf(stderr, "kevo import evoengineer: %s\n", t.error().message.c_str());
        ++failed;
        continue;
      }
      print_imported(*t);
    }
    exit_code = failed ? 1 : 0;
  });

  register_robust_kbench(imp, exit_code);
}

}  // namespace kevo::cli
