// `kevo serve`: a read-only web view of a run database (src/serve/, docs/SERVE.md). Binds to
// loopback unless told otherwise; another address needs --token. Ctrl-C or SIGTERM stops it.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli/commands.h"
#include "cli/db_arg.h"
#include "serve/server.h"

namespace kevo::cli {

namespace {

struct ServeArgs {
  std::string db, listen = "127.0.0.1:8080", token;
  bool no_warm = false;
};

int serve_fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "kevo serve: %s\n", msg.c_str());
  return code;
}

int run_serve_cmd(const ServeArgs& a) {
  auto listen = serve::parse_listen(a.listen);
  if (!listen) return serve_fail(listen.error().message);
  serve::ServeOptions o{db_or_default(a.db), *listen, a.token, !a.no_warm};
  auto server = serve::Server::open(o);
  if (!server) return serve_fail(server.error().message);
  // Signals are taken by this thread alone (sigwait): the server's threads never see them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto port = (*server)->bind();
  if (!port) return serve_fail(port.error().message, 3);
  std::printf("kevo serve: %s (read-only view of %s)%s; Ctrl-C stops\n", (*server)->url().c_str(),
              (*server)->where().c_str(), a.token.empty() ? "" : "; open it once with ?token=TOKEN");
  std::fflush(stdout);
  std::thread http([&] { (*server)->run(); });
  int sig = 0;
  sigwait(&stop_signals, &sig);
  (*server)->stop();
  http.join();
  std::printf("kevo serve: stopped\n");
  return 0;
}

}  // namespace

void register_serve(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("serve", "A read-only web view of a run database: runs, candidates, live progress");
  auto a = std::make_shared<ServeArgs>();
  cmd->add_option("--db", a->db, "Run database: a SQLite file or a postgresql:// URL (default $KEVO_DB or "
                                 "~/.local/share/kevo/runs.db)")
      ->envname("KEVO_DB");
  cmd->add_option("--listen", a->listen, "HOST:PORT to listen on (default 127.0.0.1:8080; port 0: any free port)");
  cmd->add_option("--token", a->token, "Require this token on every request (needed for a non-loopback address)")
      ->envname("KEVO_SERVE_TOKEN");
  cmd->add_flag("--no-warm", a->no_warm, "Do not read every run in the background at start");
  cmd->callback([a, &exit_code] { exit_code = run_serve_cmd(*a); });
}

}  // namespace kevo::cli
