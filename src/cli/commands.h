// Each command lives in a file of its own, with its subcommands (`task lint`, `task list`), and
// registers itself on the root app. The callback it installs returns the process exit code through
// `exit_code`. What several commands parse alike has a header named for it (db_arg.h, llm_args.h,
// pool_args.h, task_arg.h).
#pragma once
#include <CLI/CLI.hpp>

namespace kevo::cli {

void register_eval(CLI::App& app, int& exit_code);
void register_doctor(CLI::App& app, int& exit_code);
void register_llm(CLI::App& app, int& exit_code);
void register_evolve(CLI::App& app, int& exit_code);   // evolve (src/cli/evolve_cmd.cpp)
void register_runs(CLI::App& app, int& exit_code);     // runs (src/cli/runs_cmd.cpp)
void register_show(CLI::App& app, int& exit_code);     // show (src/cli/show_cmd.cpp)
void register_export(CLI::App& app, int& exit_code);   // export (src/cli/export_cmd.cpp)
void register_translate(CLI::App& app, int& exit_code);  // translate (src/cli/translate_cmd.cpp)
void register_interop(CLI::App& app, int& exit_code);  // import (src/cli/interop_cmd.cpp)
void register_export_torch(CLI::App& app, int& exit_code);  // export-torch (src/cli/export_torch_cmd.cpp)
void register_task(CLI::App& app, int& exit_code);     // task lint, task list (src/cli/task_cmd.cpp)
void register_bench(CLI::App& app, int& exit_code);    // bench, bench table (src/cli/bench_cmd.cpp)
void register_report(CLI::App& app, int& exit_code);   // report (src/cli/report_cmd.cpp)
void register_worker(CLI::App& app, int& exit_code);   // worker (src/cli/worker_cmd.cpp)
void register_serve(CLI::App& app, int& exit_code);    // serve (src/cli/serve_cmd.cpp)
void register_runners(CLI::App& app, int& exit_code);  // runners start|status|stop|serve (src/cli/runners_cmd.cpp)
void register_mcp(CLI::App& app, int& exit_code);
void register_recheck(CLI::App& app, int& exit_code);  // recheck (src/cli/recheck_cmd.cpp)
void register_archive(CLI::App& app, int& exit_code);  // archive list|show|export|import (src/cli/archive_cmd.cpp)      // mcp (src/cli/mcp_cmd.cpp)

}  // namespace kevo::cli
