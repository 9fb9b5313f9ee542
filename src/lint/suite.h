// Benchmark suites: suites/NAME.txt in the kevo tree, one bundled task name per line ('#' starts a
// comment). docs/SUITE.md describes the bundled suites.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/result.h"

namespace kevo {

// Task names of suite `name_or_path`: a path to a suite file, or the name of a bundled suite
// (kevo_home()/suites/<name>.txt). Errors on a missing file (ErrorCode::kNotFound), a malformed
// or duplicate name, or an empty suite (kParse); task directories are not checked here.
Result<std::vector<std::string>> load_suite(const std::string& name_or_path);
// Parses suite text (for tests); `file` is used in messages only.
Result<std::vector<std::string>> parse_suite(std::string_view text, const std::string& file);
// Names of the bundled suites (suites/*.txt), sorted.
std::vector<std::string> bundled_suites();
// Names of the bundled tasks (tasks/*/task.toml), sorted.
std::vector<std::string> bundled_tasks();

}  // namespace kevo
