// Nsight Compute on a passing candidate, after its verdict: one call on the main config in a
// fresh runner wrapped by ncu (host data, so the runner launches no kernel of its own: its inputs
// are copies and its poison a memset, and ncu sees only the candidate's kernels). The GPU is held
// exclusively meanwhile, since kernel replay would disturb another evaluation's timing. What comes
// back is advice (Verdict::profile), never a figure of the verdict: the process loaded the
// candidate. Without ncu, or without permission to read the counters, the profile says so.
#include <unistd.h>

#include <fmt/format.h>

#include "check/kernel_profile.h"
#include "check/session.h"
#include "check/tool_run.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace kevo {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// One call of the candidate under ncu; the report's text, or why there is none.
Result<std::string> run_under_ncu(EvalSession& s, const std::string& ncu, const Config& main) {
  fs::path log = fs::temp_directory_path() / fmt::format("kevo-ncu-{}-{}.csv", getpid(), gettid());
  std::vector<std::string> launcher = ncu_arguments(log.string());
  launcher.insert(launcher.begin(), ncu);
  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(s.opts.profile_timeout);
  auto run = run_under_tool(s, main, s.v.seed + 7, std::move(launcher), log, {limit, limit, limit});
  if (!run) return run.unexpected();
  // KEVO_NCU_KEEP=DIR keeps ncu's raw report (the GPU check records fixtures from it).
  if (const char* keep = getenv("KEVO_NCU_KEEP"); keep && *keep && run->report) {
    std::error_code ec;
    fs::create_directories(keep, ec);
    (void)write_file_atomic(fs::path(keep) / fmt::format("{}-{}.csv", s.task.name, getpid()), *run->report);
  }
  std::string text = run->report.value_or("") + run->tail;
  // Without counter permission the call may fail under ncu too: the report says why.
  if (!run->ran && text.find("ERR_NVGPUCTRPERM") == std::string::npos)
    return fail("the call under ncu failed: {}", run->ran.error().message);
  return text;
}

}  // namespace

void profile_phase(EvalSession& s) {
  s.next_phase(EvalPhase::kProfile);
  Profile prof;
  const Config& main = s.task.main();
  prof.config = main.name;
  auto ncu = find_program("ncu");
  if (!ncu) {
    prof.status = ProfileStatus::kNoNcu;
    prof.note = "ncu (Nsight Compute) not found on PATH";
  } else if (auto lock = lock_gpu(s, GpuLock::Mode::Exclusive); !lock) {
    prof.note = "GPU lock: " + lock.error().message;
  } else if (auto text = run_under_ncu(s, *ncu, main); !text) {
    prof.note = text.error().message;
  } else {
    prof = read_ncu_report(*text);
    prof.config = main.name;
  }
  s.v.profile = std::move(prof);
}

}  // namespace kevo
