// Each subcommand lives in its own file and registers itself on the root app. The callback
// it installs returns the process exit code through `exit_code`.
#pragma once
#include <CLI/CLI.hpp>

namespace kevo::cli {

void register_eval(CLI::App& app, int& exit_code);
void register_doctor(CLI::App& app, int& exit_code);
void register_llm(CLI::App& app, int& exit_code);
void register_evolve(CLI::App& app, int& exit_code);   // evolve, translate, runs, show, export (src/cli/evolve_cmd.cpp)
void register_interop(CLI::App& app, int& exit_code);  // import, export-torch (src/cli/interop_cmd.cpp)
void register_task(CLI::App& app, int& exit_code);     // task lint, task list (src/cli/task_cmd.cpp)
void register_bench(CLI::App& app, int& exit_code);    // bench, bench table, report (src/cli/bench_cmd.cpp)
void register_worker(CLI::App& app, int& exit_code);   // worker (src/cli/worker_cmd.cpp)
void register_serve(CLI::App& app, int& exit_code);    // serve (src/cli/serve_cmd.cpp)
void register_runners(CLI::App& app, int& exit_code);  // runners start|status|stop|serve (src/cli/runners_cmd.cpp)

}  // namespace kevo::cli
