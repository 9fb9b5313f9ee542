// compute-sanitizer (memcheck, racecheck, initcheck) on the smallest visible config, each tool
// wrapping a fresh runner; the report comes from the tool's --log-file once it has exited, and a
// run that did not happen under the tool is flagged rather than read as clean.
#include <unistd.h>

#include <fmt/format.h>

#include "check/host_data.h"
#include "check/runner_replies.h"
#include "check/sanitizer_report.h"
#include "check/session.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace kevo {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

void sanitize_phase(EvalSession& s) {
  {
    s.next_phase("sanitize");
    const Task& task = s.task;
    Verdict& v = s.v;
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
        RunnerOptions ro = runner_options(s.opts);
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
        auto loaded = rc2->call({{"cmd", "load"}, {"slot", "cand"}, {"path", s.cand_so->so_path.string()}}, 120s);
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
}

}  // namespace kevo
