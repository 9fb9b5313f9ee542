#include "store/sqlite_util.h"

#include <cerrno>

namespace kevo::store::detail {

bool out_of_space(sqlite3* db) {
  if (!db) return false;
  int code = sqlite3_extended_errcode(db);
  if ((code & 0xff) == SQLITE_FULL) return true;
  // A write cut short by a file-size limit (RLIMIT_FSIZE, EFBIG) is reported as an I/O error.
  int sys = sqlite3_system_errno(db);
  return (code & 0xff) == SQLITE_IOERR && (sys == ENOSPC || sys == EFBIG || sys == EDQUOT);
}

Error db_error(sqlite3* db, std::string_view path, std::string_view what) {
  std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
  if (out_of_space(db))
    return Error{fmt::format(
        "run database {}: {}: no space left to write it ({}). Everything committed before is kept and "
        "the file still opens: free space (or raise the file size limit), then continue the run with "
        "`kevo evolve --resume RUN` (kevo runs lists it)",
        path, what, msg)};
  return Error{fmt::format("run database {}: {}: {}", path, what, msg)};
}

}  // namespace kevo::store::detail
