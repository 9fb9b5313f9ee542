// Placeholder until its module lands.
#include "cli/commands.h"

namespace kevo::cli {
void register_interop(CLI::App&, int&) {}
}  // namespace kevo::cli
