// `kevo export RUN [--candidate ID] [-o DIR] [--torch DIR]`: a run's winning kernel as a standalone
// .cu with a host example, or as a PyTorch extension (docs/EVOLVE.md, docs/INTEROP.md).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/db_arg.h"
#include "cli/dir_arg.h"
#include "evolve/engine.h"
#include "interop/export.h"
#include "interop/standalone_export.h"
#include "results/candidate_ref.h"
#include "results/run_final.h"
#include "store/run_db.h"
#include "util/fs.h"

namespace kevo::cli {

namespace {

struct ExportArgs {
  std::string db, out, config, arch = "sm_90", torch;
  int64_t run = 0, candidate = 0;
  bool force = false;
};

int export_fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "kevo export: %s\n", msg.c_str());
  return code;
}

// `--torch DIR`: the kernel as a PyTorch extension (interop::export_torch, docs/INTEROP.md).
int export_torch_cmd(const Task& task, const std::string& source, const std::string& prov, const std::string& dir) {
  // export_torch copies a kernel file: the candidate goes through a private temporary one.
  std::error_code ec;
  auto tmp = std::filesystem::temp_directory_path(ec) / fmt::format("kevo-export-torch-{}", ::getpid());
  std::filesystem::create_directories(tmp, ec);
  if (ec) return export_fail(fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
  Status s = write_file_atomic(tmp / "kernel.cu", "// " + prov + "\n" + source);
  if (s) s = interop::export_torch(task, tmp / "kernel.cu", dir);
  std::filesystem::remove_all(tmp, ec);
  if (!s) return export_fail("--torch: " + s.error().message);
  std::printf("wrote %s/{kernel.cu, kevo/kernel.h, ext.cpp, loader.py, test_ext.py}\n"
              "check it on a GPU machine with torch: python3 %s/test_ext.py\n",
              dir.c_str(), dir.c_str());
  return 0;
}

// An export writes into a folder of its own: one that holds anything already is replaced only with
// --force (as import asks), so a second export cannot silently overwrite the first.
Status free_for_export(const std::string& dir, bool force) {
  std::error_code ec;
  if (force || dir.empty() || !std::filesystem::exists(dir, ec)) return {};
  if (std::filesystem::is_directory(dir, ec) && std::filesystem::is_empty(dir, ec)) return {};
  return fail("{} exists and is not empty: --force writes the export over what is there", dir);
}

// The candidate exported and how it was chosen; id 0: the run has none to offer.
struct Chosen {
  int64_t id = 0;
  std::string status;
};

Chosen chosen_of(const store::RunRow& r, const results::RunFinal& f, int64_t candidate) {
  if (candidate) return {candidate, "chosen by hand"};
  if (!f.winner && r.strategy == "translate")  // a translation's kernel, checked against its reference
    return {r.best_candidate, "translated from the PyTorch reference"};
  return {f.winner, "verified on held-out shapes"};
}

// The kernel's first comment: where it came from and what its speedup is worth.
std::string provenance(const store::RunRow& r, const store::CandidateRow& c, const std::string& status) {
  // A fake run's figures are a marker's: an exported kernel must not carry them as a measurement.
  if (evolve::run_was_fake(r)) {
    std::fprintf(stderr, "kevo export: run %lld used the fake evaluator (--fake-gpu): the kernel was never checked "
                         "or timed\n", static_cast<long long>(r.id));
    return fmt::format("kevo run {} candidate {} for task '{}': FAKE evaluator (--fake-gpu): never run on a GPU, "
                       "neither checked nor timed; its {:.3f}x is a test marker's, not a measurement",
                       r.id, results::candidate_ref(c), r.task, c.speedup);
  }
  return fmt::format("kevo run {} candidate {} for task '{}': {:.3f}x over the baseline ({})", r.id,
                     results::candidate_ref(c), r.task, c.speedup, status);
}

// The files: --torch's extension, -o's standalone kernel, or both.
int write_export(const ExportArgs& a, const Task& task, const store::CandidateRow& c, const std::string& prov,
                 const std::string& dir) {
  for (const std::string& d : {a.torch, a.torch.empty() || !a.out.empty() ? dir : std::string()})
    if (auto st = free_for_export(d, a.force); !st) return export_fail(st.error().message);
  if (!a.torch.empty()) {
    int rc = export_torch_cmd(task, c.source, prov, a.torch);
    if (rc != 0 || a.out.empty()) return rc;  // -o as well: the standalone files too
  }
  auto files = interop::export_kernel(task, c.source, prov, dir, a.config, a.arch);
  if (!files) return export_fail(files.error().message);
  std::printf("wrote %s, %s, %s\nbuild: cd %s && %s\n", files->kernel.c_str(), files->main.c_str(),
              files->header.c_str(), dir.c_str(), files->build_command.c_str());
  return 0;
}

int export_cmd(const ExportArgs& a) {
  auto db = store::RunDb::open_read_only(db_or_default(a.db));
  if (!db) return export_fail(db.error().message);
  auto r = (*db)->get_run(a.run);
  if (!r) return export_fail(r.error().message);
  const results::RunFinal f = results::final_from_text(r->final_json);
  const Chosen chosen = chosen_of(*r, f, a.candidate);
  if (!chosen.id) {
    // No winner: nothing faster than the baseline was verified. Exporting one anyway is a choice.
    const char* why = f.not_faster              ? "no faster kernel was found; the baseline stands"
                      : f.best_failed_held_out ? "its best FAILED held-out verification"
                                               : "no candidate was verified on held-out shapes";
    return export_fail(fmt::format("run {} has no winner ({}); pass --candidate ID to export one anyway", a.run, why),
                       1);
  }
  auto c = (*db)->candidate(chosen.id);
  if (!c || c->run_id != a.run) return export_fail(fmt::format("run {} has no candidate {}", a.run, chosen.id));
  auto task = load_task(r->task_dir);
  if (!task) return export_fail(task.error().message);
  const std::string prov = provenance(*r, *c, chosen.status);
  const std::string dir = a.out.empty() ? fmt::format("kevo-export-{}-run{}", r->task, a.run) : a.out;
  return write_export(a, *task, *c, prov, dir);
}

}  // namespace

void register_export(CLI::App& app, int& exit_code) {
  auto* ex = app.add_subcommand("export", "Write a run's winning kernel as a standalone .cu with a host example");
  auto ea = std::make_shared<ExportArgs>();
  ex->add_option("run", ea->run, "Run id (kevo runs)")->required();
  ex->add_option("--db", ea->db, "Run database");
  ex->add_option("-o,--out", ea->out, "Output directory (default kevo-export-TASK-runN)");
  ex->add_option("--candidate", ea->candidate, "Export this candidate instead of the winner");
  ex->add_option("--shape", ea->config, "Visible config the host example uses (default: the timed one)");
  ex->add_option("--arch", ea->arch, "Architecture in the build command");
  ex->add_option("--torch", ea->torch,
                 "Write a PyTorch extension to DIR instead (kernel, torch::Tensor wrapper, loader.py, test_ext.py); "
                 "with -o as well, both");
  ex->add_flag("--force", ea->force, "Write into an output directory that is not empty");
  ex->callback([ea, &exit_code] {
    if (!ea->out.empty()) ea->out = clean_dir(ea->out);
    if (!ea->torch.empty()) ea->torch = clean_dir(ea->torch);
    exit_code = export_cmd(*ea);
  });
}

}  // namespace kevo::cli
