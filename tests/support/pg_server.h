// A throwaway PostgreSQL 15 server for tests of the PostgreSQL run database: one per test binary,
// started on first use in a scratch folder (initdb, then pg_ctl start listening on a Unix socket in
// that folder only, trust authentication, fsync off), stopped and removed when the binary exits
// (a gtest global environment). A watchdog process removes it too if the binary dies first, so a
// crashed or killed test leaves no server or files behind.
//
// As root the server runs as the `postgres` user (runuser; PostgreSQL refuses to run as root); as
// anyone else, as that user. Binaries: $KEVO_PG_BIN, else /usr/lib/postgresql/15/bin.
//
// Tests skip, visibly, where there is none:
//   auto url = kevo::test::fresh_pg_database();
//   if (!url) GTEST_SKIP() << url.error().message;
#pragma once

#include <string>

#include "util/result.h"

namespace kevo::test {

// The URL of a new, empty database on this binary's server, such as
// postgresql:///kevo_test_3?host=/tmp/kevo-pg-AbC123&user=postgres; or why there is none
// ("PostgreSQL tests skipped: ..." naming what is missing or what failed).
Result<std::string> fresh_pg_database();

}  // namespace kevo::test
