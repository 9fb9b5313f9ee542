// Logging goes to stderr through spdlog; verbosity is set once by the CLI.
#pragma once
#include <spdlog/spdlog.h>

namespace kevo {
void init_logging(int verbosity);  // 0 = warnings, 1 = info, 2+ = debug
}
