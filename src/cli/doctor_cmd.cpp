#include "cli/commands.h"
namespace kevo::cli {
void register_doctor(CLI::App&, int&) {}
}  // namespace kevo::cli
