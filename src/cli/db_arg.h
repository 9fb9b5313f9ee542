// The run database a command names with --db: given, else $KEVO_DB, else runs.db in the user's data
// folder. Every command that reads or writes runs picks it here, so they all find the same file.
#pragma once

#include <string>

namespace kevo::cli {

// $KEVO_DB, else $XDG_DATA_HOME/kevo/runs.db, else ~/.local/share/kevo/runs.db, else ./kevo-runs.db.
std::string default_db();

// The --db value, or default_db() when none was given.
inline std::string db_or_default(const std::string& given) { return given.empty() ? default_db() : given; }

}  // namespace kevo::cli
