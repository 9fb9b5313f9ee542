// `kevo export-torch TASK KERNEL.cu DIR`: a kernel in the kevo ABI as a PyTorch extension, or a
// forward and a backward kernel as one autograd function (docs/INTEROP.md).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/dir_arg.h"
#include "interop/export.h"
#include "interop/export_pair.h"
#include "interop/task_compat.h"
#include "util/fs.h"

namespace kevo::cli {
namespace fs = std::filesystem;

namespace {

fs::path task_dir(const std::string& t) {
  std::error_code ec;
  return fs::exists(t, ec) ? fs::path(t) : kevo_home() / "tasks" / t;
}

// `kevo export-torch TASK KERNEL|- DIR --backward TASK [--backward-kernel FILE]`: the exit code.
int export_pair(const std::string& fwd, const std::string& kernel, const std::string& bwd,
                const std::string& bwd_kernel, const std::string& dir) {
  if (bwd.empty()) {
    std::fprintf(stderr, "kevo export-torch: KERNEL '-' (PyTorch's forward) needs --backward TASK\n");
    return 21;
  }
  auto f = interop::load_task_with_torch(task_dir(fwd));
  auto b = f ? interop::load_task_with_torch(task_dir(bwd)) : f;
  if (!f || !b) {
    std::fprintf(stderr, "kevo export-torch: %s\n", (!f ? f : b).error().message.c_str());
    return 21;
  }
  std::optional<fs::path> fk, bk;
  if (kernel != "-") fk = kernel;
  if (!bwd_kernel.empty() && bwd_kernel != "-") bk = bwd_kernel;
  std::error_code ec;
  for (const auto& k : {fk, bk})
    if (k && !fs::is_regular_file(*k, ec)) {
      std::fprintf(stderr, "kevo export-torch: %s: no such kernel file\n", k->c_str());
      return 21;
    }
  if (auto bad = interop::check_torch_pair(*f, *b, !fk || !bk); !bad) {  // bad arguments, not a write
    std::fprintf(stderr, "kevo export-torch: %s\n", bad.error().message.c_str());
    return 21;
  }
  auto s = interop::export_torch_pair(*f, fk, *b, bk, dir);
  if (!s) {
    std::fprintf(stderr, "kevo export-torch: %s\n", s.error().message.c_str());
    return 20;
  }
  std::printf("wrote %s/autograd.py (forward: %s, backward: %s)\ncheck it with torch: python3 %s/test_autograd.py\n",
              dir.c_str(), fk ? "kevo kernel" : "PyTorch", bk ? "kevo kernel" : "PyTorch", dir.c_str());
  return 0;
}

// Like import, export replaces nothing unless asked: the first of `files` already in `dir`, named.
Status refuse_overwrite(const std::string& dir, std::initializer_list<const char*> files, bool force) {
  std::error_code ec;
  if (force) return {};
  for (const char* f : files)
    if (fs::exists(fs::path(dir) / f, ec))
      return fail("{}/{} exists: --force replaces what an earlier export wrote there", dir, f);
  return {};
}

}  // namespace

// `kevo export-torch`: a kernel in the kevo ABI as a PyTorch extension.
void register_export_torch(CLI::App& app, int& exit_code) {
  struct ExportArgs {
    std::string task, kernel, dir, module, backward, backward_kernel;
    bool force = false;
  };
  auto ex = std::make_shared<ExportArgs>();
  auto* exc = app.add_subcommand(
      "export-torch",
      "Write a kernel in the kevo ABI as a PyTorch extension: DIR/{kernel.cu, ext.cpp, loader.py, test_ext.py}.\n"
      "With --backward: a forward and a backward kernel as one torch.autograd.Function (DIR/autograd.py);\n"
      "KERNEL '-' or no --backward-kernel: that side falls back to PyTorch.\n"
      "Exit codes: 0 written, 21 bad task or arguments, 20 cannot write.");
  exc->add_option("task", ex->task, "Task directory or bundled task name")->required();
  exc->add_option("kernel", ex->kernel, "The kernel (.cu, kevo candidate ABI)")->required();
  exc->add_option("dir", ex->dir, "Output directory")->required();
  exc->add_option("--module", ex->module, "Extension module name (default kevo_<task>)");
  exc->add_option("--backward", ex->backward, "The backward task of TASK (directory or bundled name): export the pair");
  exc->add_option("--backward-kernel", ex->backward_kernel, "The backward task's kernel (default: PyTorch's backward)");
  exc->add_flag("--force", ex->force, "Replace the files of an earlier export in DIR");
  exc->callback([ex, &exit_code] {
    ex->dir = clean_dir(ex->dir);
    const bool pair = !ex->backward.empty() || ex->kernel == "-";
    auto free = pair ? refuse_overwrite(ex->dir, {"autograd.py", "test_autograd.py"}, ex->force)
                     : refuse_overwrite(ex->dir, {"kernel.cu", "ext.cpp", "loader.py", "test_ext.py"}, ex->force);
    if (!free) {
      std::fprintf(stderr, "kevo export-torch: %s\n", free.error().message.c_str());
      exit_code = 21;
      return;
    }
    if (pair) {
      exit_code = export_pair(ex->task, ex->kernel, ex->backward, ex->backward_kernel, ex->dir);
      return;
    }
    // The name is pasted into loader.py and becomes a file name under torch's build cache.
    if (!ex->module.empty() && !is_identifier(ex->module)) {
      std::fprintf(stderr, "kevo export-torch: --module '%s' must be a Python identifier (letters, digits, _; "
                           "at most %zu characters)\n",
                   interop::cpp_escape(ex->module).c_str(), kMaxNameLength);
      exit_code = 21;
      return;
    }
    std::error_code ec;
    fs::path tdir = ex->task;
    if (!fs::exists(tdir, ec)) tdir = kevo_home() / "tasks" / ex->task;
    auto task = interop::load_task_with_torch(tdir);
    if (!task) {
      std::fprintf(stderr, "kevo export-torch: %s\n", task.error().message.c_str());
      exit_code = 21;
      return;
    }
    interop::ExportOptions o;
    o.module_name = ex->module;
    auto s = interop::export_torch(*task, ex->kernel, ex->dir, o);
    if (!s) {
      std::fprintf(stderr, "kevo export-torch: %s\n", s.error().message.c_str());
      exit_code = fs::exists(ex->kernel, ec) ? 20 : 21;
      return;
    }
    std::printf("wrote %s/{kernel.cu, kevo/kernel.h, ext.cpp, loader.py, test_ext.py}\n"
                "check it on a GPU machine with torch: python3 %s/test_ext.py\n",
                ex->dir.c_str(), ex->dir.c_str());
    exit_code = 0;
  });
}

}  // namespace kevo::cli
