// The command line's usage contract, kept apart from what each command does: the exit code of an
// argument error (each command's documented "bad arguments" code, never CLI11's own 100-series),
// the closest command named for an unknown one, and the examples that end each --help.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "util/edit_distance.h"

namespace kevo::cli {

// Exit code for an argument error of the command being parsed when it happened: 21 for the
// checker's family (eval, task, import, export-torch: "bad task or arguments"), 2 for the rest
// (evolve, bench, llm, ...: "bad arguments"), as each command's --help and docs say.
int usage_error_code(const CLI::App& app);

// When argv names a command that does not exist (e.g. `kevo frobnicate`, `kevo task lnit`), the
// message naming the closest existing one; nullopt when the commands are fine.
std::optional<std::string> unknown_command_message(const CLI::App& app,
                                                   const std::vector<std::string>& args);

// When argv holds an option the command it follows does not have (e.g. `kevo eval --bogus`), the
// message naming it and the closest existing option; nullopt when every option is known.
std::optional<std::string> unknown_option_message(const CLI::App& app, const std::vector<std::string>& args);

// Sets each subcommand's --help footer to its examples (help_examples.cpp).
void add_help_examples(CLI::App& app);

}  // namespace kevo::cli
