// Placeholder until its module lands.
#include "cli/commands.h"

namespace kevo::cli {
void register_task(CLI::App&, int&) {}
}  // namespace kevo::cli
