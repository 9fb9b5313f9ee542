#include "check/tool_run.h"

#include "check/evaluator.h"
#include "check/host_data.h"
#include "check/runner_replies.h"
#include "util/fs.h"

namespace kevo {
namespace fs = std::filesystem;

Result<ToolRun> run_under_tool(EvalSession& s, const Config& config, uint64_t seed,
                               std::vector<std::string> launcher, const fs::path& log,
                               const ToolTimeouts& timeouts) {
  auto runner = find_runner();
  if (!runner) return fail("no kevo-runner");
  auto resolved = s.task.resolve(config);
  if (!resolved) return resolved.unexpected();
  auto ins = generate_inputs(*resolved, seed, false);
  if (!ins) return ins.unexpected();
  const Prepared p = prepare(*resolved, *ins, false);
  fs::remove(log);
  RunnerOptions ro = runner_options(s.opts);
  ro.runner = *runner;
  ro.launcher = std::move(launcher);
  auto r = RunnerClient::start(ro);
  if (!r) return fail("could not start {}: {}", ro.launcher.empty() ? "the runner" : ro.launcher.front(),
                      r.error().message);
  auto& rc = *r;
  ToolRun out;
  // Confined before the candidate's code runs, as far as the tool lets it be (proto::ConfineRequest):
  // never as root, where it could reach every other process (a root runner that cannot give it up
  // refuses, runner/confine.h).
  auto c = rc->call(proto::ConfineRequest{s.cand_so->so_path.string(), 0, true}, timeouts.load);
  if (!c) {
    out.ran = fail("cannot confine the runner under the tool: {}", c.error().message);
    out.tail = rc->finish(timeouts.finish);
    return out;
  }
  auto loaded = rc->call(proto::LoadRequest{"cand", s.cand_so->so_path.string(), true}, timeouts.load);
  // The tool's report is read whenever the runner answered, whatever it answered (a refusal too).
  out.ran = loaded.answered() ? Status{} : loaded.unexpected();
  if (loaded.answered()) {
    (void)rc->arena().resize(p.layout.size);
    put_inputs(rc->arena(), p.inputs, *ins);
    proto::RunRequest req{call_args(s.task, *resolved)};
    req.slot = "cand";
    req.arena_size = p.layout.size;
    req.inputs = p.inputs;
    req.outputs = p.outputs;
    auto ran = rc->call(req, timeouts.run);
    out.ran = ran.answered() ? Status{} : ran.unexpected();
  }
  out.tail = rc->finish(timeouts.finish);  // the tool writes its report as the runner exits
  rc.reset();
  if (auto text = read_file(log)) out.report = std::move(*text);
  fs::remove(log);
  return out;
}

}  // namespace kevo
