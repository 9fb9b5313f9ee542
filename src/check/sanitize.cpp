// compute-sanitizer (memcheck, racecheck, initcheck) on the smallest visible config, each tool
// wrapping a fresh runner; the report comes from the tool's --log-file once it has exited, and a
// run that did not happen under the tool is flagged rather than read as clean.
#include <unistd.h>

#include <fmt/format.h>

#include "check/sanitizer_report.h"
#include "check/session.h"
#include "check/tool_run.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace kevo {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

void sanitize_phase(EvalSession& s) {
  {
    s.next_phase(EvalPhase::kSanitize);
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
      for (const auto& [tool, reason] : {std::pair{"memcheck", Reason::kSanitizerMemcheck},
                                         std::pair{"racecheck", Reason::kSanitizerRacecheck},
                                         std::pair{"initcheck", Reason::kSanitizerInitcheck}}) {
        // compute-sanitizer reports on stdout, which the runner's session discards: its report
        // goes to a log file instead, read once it has exited.
        fs::path log = fs::temp_directory_path() / fmt::format("kevo-sanitize-{}-{}.log", getpid(), tool);
        auto run = run_under_tool(s, *small, v.seed + 99,
                                  {*cs, "--tool", tool, "--error-exitcode", "99", "--print-limit", "10",
                                   "--log-file", log.string()},
                                  log, {120s, 300s, 120s});
        if (!run) {
          parts.push_back(fmt::format("{}: skipped ({})", tool, run.error().message));
          continue;
        }
        const Status& ran = run->ran;
        std::string text = run->report.value_or("") + run->tail;
        if (!ran) {  // a summary of a run that never happened would prove nothing
          parts.push_back(fmt::format("{}: the candidate did not run under the sanitizer ({})", tool,
                                      ran.error().message));
          v.flags.push_back({reason, text.substr(0, 1500)});
          continue;
        }
        SanitizerSummary sum = read_sanitizer_summary(tool, text);
        parts.push_back(fmt::format("{}: {}", tool, sum.found ? sum.line : "no summary"));
        if (!sum.found) {
          v.flags.push_back({reason, "no summary in its report: " + text.substr(0, 1500)});
        } else if (!sum.clean) {
          v.flags.push_back({reason, text.substr(0, 1500)});
          v.set(Outcome::Incorrect, reason,
                fmt::format("compute-sanitizer {} on config '{}': {}", tool, small->name, sum.line));
        }
      }
      v.sanitizer = fmt::format("{}", fmt::join(parts, "; "));
    }
  }
}

}  // namespace kevo
