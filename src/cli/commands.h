// Each subcommand lives in its own file and registers itself on the root app. The callback
// it installs returns the process exit code through `exit_code`.
#pragma once
#include <CLI/CLI.hpp>

namespace kevo::cli {

void register_eval(CLI::App& app, int& exit_code);
void register_doctor(CLI::App& app, int& exit_code);
void register_llm(CLI::App& app, int& exit_code);

}  // namespace kevo::cli
