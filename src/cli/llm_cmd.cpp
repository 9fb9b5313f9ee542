// `kevo llm ...` (issue 3). Placeholder until the LLM module lands.
#include "cli/commands.h"

namespace kevo::cli {
void register_llm(CLI::App&, int&) {}
}  // namespace kevo::cli
