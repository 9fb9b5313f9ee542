#include "cli/db_arg.h"

#include <cstdlib>

namespace kevo::cli {

std::string default_db() {
  if (const char* p = std::getenv("KEVO_DB"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return std::string(x) + "/kevo/runs.db";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.local/share/kevo/runs.db";
  return "kevo-runs.db";
}

}  // namespace kevo::cli
