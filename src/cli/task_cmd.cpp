// `kevo task list [--suite NAME]` and `kevo task lint TASK... | --suite NAME`.
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/task_arg.h"
#include "lint/lint.h"
#include "lint/suite.h"
#include "lint/torch_lint.h"

namespace kevo::cli {

namespace {

// The task names a command works on: its arguments, else the suite's, else every bundled task.
Result<std::vector<std::string>> task_names(const std::vector<std::string>& args,
                                            const std::string& suite) {
  if (!args.empty() && !suite.empty()) return fail("give task names or --suite, not both");
  if (!args.empty()) return args;
  if (!suite.empty()) return load_suite(suite);
  auto all = bundled_tasks();
  if (all.empty()) return fail("no bundled tasks under {}", (kevo_home() / "tasks").string());
  return all;
}

std::string dims_text(const Task& t, const Config& c) {
  std::string s;
  for (const auto& d : t.dims) s += fmt::format("{}{}={}", s.empty() ? "" : " ", d, c.dims.at(d));
  return s;
}

}  // namespace

void register_task(CLI::App& app, int& exit_code) {
  auto* task = app.add_subcommand("task", "Bundled tasks and suites: list them, lint them.");
  task->require_subcommand(1);

  // --- kevo task list ---
  struct ListArgs {
    std::string suite;
    bool json = false;
  };
  auto la = std::make_shared<ListArgs>();
  auto* list = task->add_subcommand("list",
                                    "List the bundled tasks (or a suite's): category, main "
                                    "configuration, its GFLOP and GB.");
  list->add_option("--suite", la->suite, "A bundled suite (quick, full) or a suite file");
  list->add_flag("--json", la->json, "Print JSON");
  list->callback([la, &exit_code] {
    auto names = task_names({}, la->suite);
    if (!names) {
      std::fprintf(stderr, "kevo task list: %s\n", names.error().message.c_str());
      exit_code = 21;
      return;
    }
    nlohmann::json out = nlohmann::json::array();
    int bad = 0;
    if (!la->json)
      std::printf("%-24s %-12s %8s %8s %3s  %s\n", "TASK", "CATEGORY", "GFLOP", "GB", "CFG",
                  "MAIN");
    for (const auto& n : *names) {
      auto t = resolve_task(n);
      if (!t) {
        std::fprintf(stderr, "kevo task list: %s\n", t.error().message.c_str());
        ++bad;
        continue;
      }
      const Config& m = t->main();
      double gflop = t->flops(m) ? *t->flops(m) / 1e9 : 0,
             gb = t->bytes(m) ? *t->bytes(m) / 1e9 : 0;
      if (la->json) {
        out.push_back({{"name", t->name},
                       {"category", t->category},
                       {"main", m.name},
                       {"main_dims", m.dims},
                       {"gflop", gflop},
                       {"gb", gb},
                       {"configs", t->configs.size()}});
      } else {
        std::printf("%-24s %-12s %8.2f %8.2f %3zu  %s\n", t->name.c_str(), t->category.c_str(),
                    gflop, gb, t->configs.size(), dims_text(*t, m).c_str());
      }
    }
    if (la->json)
      std::printf("%s\n", out.dump(2).c_str());
    else
      std::printf("%zu tasks\n", names->size() - bad);
    exit_code = bad ? 21 : 0;
  });

  // --- kevo task lint ---
  struct LintArgs {
    std::vector<std::string> tasks, configs;
    std::string suite;
    bool json = false, quiet = false;
    int seeds = 3, max_configs = 3;
    int64_t max_elements = 1 << 22;
  };
  auto ta = std::make_shared<LintArgs>();
  auto* lint = task->add_subcommand(
      "lint",
      "Run the degenerate-task filters (tiny output band, constant across seeds, uniform along an\n"
      "axis, an input that can be ignored, a NaN reference) over the CPU reference's outputs on\n"
      "small configurations. The baseline-vs-reference check needs a GPU: `kevo eval TASK\n"
      "--baseline` does it. Exit codes: 0 clean (warnings allowed), 1 some task degenerate,\n"
      "21 bad task or arguments.");
  lint->add_option("tasks", ta->tasks, "Task directories or bundled task names (default: all)");
  lint->add_option("--suite", ta->suite, "Lint a suite's tasks (quick, full, or a suite file)");
  lint->add_option("--config", ta->configs, "Check exactly these configs (no size limit)");
  lint->add_option("--seeds", ta->seeds, "Input draws compared for seed_constant")
      ->check(CLI::Range(2, 20));
  lint->add_option("--max-configs", ta->max_configs, "Configs checked per task (smallest first)")
      ->check(CLI::Range(1, 100));
  lint->add_option("--max-elements", ta->max_elements,
                   "Skip configs with more input+output elements (the smallest is always checked)");
  lint->add_flag("--json", ta->json, "Print JSON");
  lint->add_flag("-q,--quiet", ta->quiet, "Print only tasks with warnings or failures");
  lint->callback([ta, &exit_code] {
    auto names = task_names(ta->tasks, ta->suite);
    if (!names) {
      std::fprintf(stderr, "kevo task lint: %s\n", names.error().message.c_str());
      exit_code = 21;
      return;
    }
    LintOptions opts;
    opts.seeds = ta->seeds;
    opts.max_configs = ta->max_configs;
    opts.max_elements = ta->max_elements;
    opts.configs = ta->configs;
    nlohmann::json out = nlohmann::json::array();
    int degenerate = 0, errors = 0;
    std::optional<torch::TorchBridge> bridge;  // started for the first PyTorch-oracle task
    for (const auto& n : *names) {
      auto t = resolve_task(n);
      Result<LintReport> rep = t ? Result<LintReport>(fail("unreachable")) : t.unexpected();
      if (t && t->oracle_is_torch) {
        if (!bridge) {
          auto b = torch::TorchBridge::start();
          if (b) bridge.emplace(std::move(*b));
          else rep = b.unexpected();
        }
        if (bridge) rep = lint_torch_task(*bridge, *t, opts);
      } else if (t) {
        auto ref = cpu_reference_outputs(*t);
        rep = ref ? lint_outputs(*t, *ref, opts) : Result<LintReport>(ref.unexpected());
      }
      if (!rep) {
        // A task that does not resolve names itself in its message already.
        const std::string& m = rep.error().message;
        if (m.rfind(n + ":", 0) == 0) std::fprintf(stderr, "kevo task lint: %s\n", m.c_str());
        else std::fprintf(stderr, "kevo task lint: %s: %s\n", n.c_str(), m.c_str());
        ++errors;
        continue;
      }
      rep->findings.push_back(
          {"baseline", Severity::Skip, "skipped here (needs a GPU): `kevo eval TASK --baseline`"});
      if (!rep->ok()) ++degenerate;
      if (ta->json) {
        nlohmann::json f = nlohmann::json::array();
        for (const auto& x : rep->findings)
          f.push_back({{"check", x.check},
                       {"severity", to_string(x.severity)},
                       {"message", x.message}});
        out.push_back(
            {{"task", rep->task}, {"ok", rep->ok()}, {"configs", rep->configs}, {"findings", f}});
      } else if (!ta->quiet || !rep->ok() || rep->count(Severity::Warn)) {
        std::printf("%s", format_report(*rep).c_str());
      }
    }
    if (ta->json)
      std::printf("%s\n", out.dump(2).c_str());
    else
      std::printf("%zu task(s): %d degenerate, %d could not be linted\n", names->size(), degenerate,
                  errors);
    exit_code = errors ? 21 : degenerate ? 1 : 0;
  });
}

}  // namespace kevo::cli
