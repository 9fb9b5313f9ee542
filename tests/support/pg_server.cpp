// The throwaway PostgreSQL server of a test binary (pg_server.h).
#include "support/pg_server.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "util/subprocess.h"

namespace kevo::test {

namespace {

namespace fs = std::filesystem;

std::string pg_bin() {
  const char* b = std::getenv("KEVO_PG_BIN");
  return b && *b ? b : "/usr/lib/postgresql/15/bin";
}

// The server's settings: a Unix socket in its own folder and no TCP, room for the tests' many
// connections, and none of the durability a throwaway database does not need.
std::string server_options(const std::string& dir) {
  return "-k " + dir +
         " -c listen_addresses='' -c max_connections=150 -c fsync=off -c synchronous_commit=off"
         " -c full_page_writes=off";
}

std::string tail_of(const fs::path& p, size_t max_chars = 1500) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  std::string t = s.str();
  return t.size() > max_chars ? "..." + t.substr(t.size() - max_chars) : t;
}

class PgServer {
 public:
  Result<std::string> fresh_database() {
    std::lock_guard lock(mu_);
    if (!tried_) {
      tried_ = true;
      Status s = start();
      if (!s) error_ = s.error().message;
    }
    if (!error_.empty()) return fail("PostgreSQL tests skipped: {}", error_);
    std::string name = "kevo_test_" + std::to_string(++databases_);
    Status made = tool({pg_bin() + "/createdb", "-h", dir_, "-U", "postgres", name}, false);
    if (!made) {
      ADD_FAILURE() << "the test PostgreSQL server is up but createdb failed: " << made.error().message;
      return made.unexpected();
    }
    return "postgresql:///" + name + "?host=" + dir_ + "&user=postgres";
  }

  // Stops the server and removes its folder (the watchdog does both when its pipe closes).
  void stop() {
    std::lock_guard lock(mu_);
    if (watchdog_.pid <= 0) return;
    ::close(watchdog_.in_fd);
    watchdog_.in_fd = -1;
    if (wait_for_exit(watchdog_, std::chrono::seconds(60))) watchdog_.pid = -1;  // reaped
    kill_and_reap(watchdog_);
  }

 private:
  Status start() {
    const std::string bin = pg_bin();
    if (::access((bin + "/initdb").c_str(), X_OK) != 0 || ::access((bin + "/pg_ctl").c_str(), X_OK) != 0)
      return fail("PostgreSQL 15 is not installed (no {}/initdb; scripts/test.sh installs postgresql-15)", bin);
    as_root_ = ::geteuid() == 0;
    std::string t = (fs::temp_directory_path() / "kevo-pg-XXXXXX").string();
    if (!::mkdtemp(t.data())) return fail("mkdtemp {}: {}", t, std::strerror(errno));
    dir_ = t;
    KEVO_TRY(start_watchdog(bin));
    if (as_root_) {
      const passwd* pw = ::getpwnam("postgres");
      if (!pw) return fail("running as root, and there is no postgres user to run the server as");
      if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0)
        return fail("chown {} to postgres: {}", dir_, std::strerror(errno));
    }
    KEVO_TRY(tool({bin + "/initdb", "-D", dir_ + "/data", "-U", "postgres", "-A", "trust", "-N", "-E", "UTF8",
                   "--no-locale"},
                  true));
    Status up = tool({bin + "/pg_ctl", "-D", dir_ + "/data", "-l", dir_ + "/log", "-w", "-t", "60", "-o",
                      server_options(dir_), "start"},
                     true);
    if (!up) return fail("{}; its log: {}", up.error().message, tail_of(fs::path(dir_) / "log"));
    return {};
  }

  // A child that waits for this process to close its stdin (or to die), then stops the server and
  // removes the folder.
  Status start_watchdog(const std::string& bin) {
    const std::string as_user = as_root_ ? "runuser -u postgres -- " : "";
    SpawnOptions so;
    so.argv = {"/bin/sh", "-c",
               "exec >/dev/null 2>&1; read line; " + as_user + "'" + bin + "/pg_ctl' -D '" + dir_ +
                   "/data' -m immediate -w stop; rm -rf '" + dir_ + "'"};
    auto c = spawn_process(so);
    if (!c) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
      return c.unexpected();
    }
    watchdog_ = *c;
    ::close(watchdog_.out_fd);
    ::close(watchdog_.err_fd);
    watchdog_.out_fd = watchdog_.err_fd = -1;
    return {};
  }

  // Runs a PostgreSQL program (as the server's user if `as_server`); an error says how it failed.
  Status tool(std::vector<std::string> argv, bool as_server) {
    if (as_server && as_root_) argv.insert(argv.begin(), {"runuser", "-u", "postgres", "--"});
    auto r = run_process({.argv = argv, .timeout = std::chrono::seconds(120)});
    if (!r) return r.unexpected();
    if (!r->ok()) return fail("{} failed ({}): {}", fs::path(argv[as_server && as_root_ ? 4 : 0]).filename().string(),
                              r->describe(), r->err.empty() ? r->out : r->err);
    return {};
  }

  std::mutex mu_;
  bool tried_ = false, as_root_ = false;
  std::string error_, dir_;
  int databases_ = 0;
  Child watchdog_;
};

PgServer& server() {
  static PgServer* s = new PgServer;  // never destroyed: the environment stops it
  return *s;
}

class PgServerEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { server().stop(); }
};

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new PgServerEnvironment);

}  // namespace

Result<std::string> fresh_pg_database() { return server().fresh_database(); }

}  // namespace kevo::test
