// Nsight Compute on a passing candidate, after its verdict: one call on the main config in a
// fresh runner wrapped by ncu (host data, so the runner launches no kernel of its own: its inputs
// are copies and its poison a memset, and ncu sees only the candidate's kernels). The GPU is held
// exclusively meanwhile, since kernel replay would disturb another evaluation's timing. What comes
// back is advice (Verdict::profile), never a figure of the verdict: the process loaded the
// candidate. Without ncu, or without permission to read the counters, the profile says so.
#include <unistd.h>

#include <fmt/format.h>

#include "check/host_data.h"
#include "check/kernel_profile.h"
#include "check/runner_replies.h"
#include "check/session.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace kevo {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// ncu under `sh -c exec`: the runner's arguments follow (RunnerClient passes them).
Result<fs::path> write_wrapper(const std::string& ncu, const fs::path& runner, const fs::path& log) {
  std::string cmd = "#!/bin/sh\nexec '" + ncu + "'";
  for (const auto& a : ncu_arguments(log.string())) cmd += " '" + a + "'";
  cmd += " '" + runner.string() + "' \"$@\"\n";
  fs::path wrapper = fs::temp_directory_path() / fmt::format("kevo-ncu-{}-{}.sh", getpid(), gettid());
  KEVO_TRY(write_file_atomic(wrapper, cmd));
  fs::permissions(wrapper, fs::perms::owner_all);
  return wrapper;
}

// One call of the candidate under ncu; the report's text, or why there is none.
Result<std::string> run_under_ncu(EvalSession& s, const std::string& ncu, const Config& main) {
  auto runner = find_runner();
  if (!runner) return fail("no kevo-runner");
  auto ins_r = generate_inputs(s.task, main, s.v.seed + 7, false);
  if (!ins_r) return ins_r.unexpected();
  const auto& ins = *ins_r;
  auto p_r = prepare(s.task, main, ins, false);
  if (!p_r) return p_r.unexpected();
  const auto& p = *p_r;
  fs::path log = fs::temp_directory_path() / fmt::format("kevo-ncu-{}-{}.csv", getpid(), gettid());
  auto wrapper_r = write_wrapper(ncu, *runner, log);
  if (!wrapper_r) return wrapper_r.unexpected();
  fs::path wrapper = *wrapper_r;
  RunnerOptions ro = runner_options(s.opts);
  ro.runner = wrapper;
  auto r = RunnerClient::start(ro);
  if (!r) {
    fs::remove(wrapper);
    return fail("could not start ncu: {}", r.error().message);
  }
  auto& rc = *r;
  auto deadline = std::chrono::duration_cast<std::chrono::milliseconds>(s.opts.profile_timeout);
  auto loaded = rc->call({{"cmd", "load"}, {"slot", "cand"}, {"path", s.cand_so->so_path.string()}}, deadline);
  Result<json> ran = loaded;
  if (loaded) {
    (void)rc->arena().resize(p.layout.size);
    put_inputs(rc->arena(), p.inputs, ins);
    json req = base_request(s.task, main);
    req.update({{"cmd", "run"}, {"slot", "cand"}, {"arena_size", p.layout.size}, {"inputs", p.inputs},
                {"outputs", p.outputs}, {"poison", 0}, {"placement", 0}});
    ran = rc->call(req, deadline);
  }
  // ncu writes its report as the runner exits.
  std::string tail = rc->finish(std::chrono::duration_cast<std::chrono::milliseconds>(s.opts.profile_timeout));
  rc.reset();
  fs::remove(wrapper);
  auto report = read_file(log);
  // KEVO_NCU_KEEP=DIR keeps ncu's raw report (the GPU check records fixtures from it).
  if (const char* keep = getenv("KEVO_NCU_KEEP"); keep && *keep && report) {
    std::error_code ec;
    fs::create_directories(keep, ec);
    (void)write_file_atomic(fs::path(keep) / fmt::format("{}-{}.csv", s.task.name, getpid()), *report);
  }
  fs::remove(log);
  std::string text = (report ? *report : std::string()) + tail;
  // Without counter permission the call may fail under ncu too: the report says why.
  if (!ran && text.find("ERR_NVGPUCTRPERM") == std::string::npos)
    return fail("the call under ncu failed: {}", ran.error().message);
  return text;
}

}  // namespace

void profile_phase(EvalSession& s) {
  s.next_phase("profile");
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
