// The kevo command line. Exceptions stop here: everything below returns errors as values.
#include <sys/prctl.h>

#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/usage.h"
#include "util/log.h"

#ifndef KEVO_VERSION
#define KEVO_VERSION "unknown"
#endif
#ifndef KEVO_GIT_COMMIT
#define KEVO_GIT_COMMIT "unknown"
#endif

int main(int argc, char** argv) {
  // The checker, the runner pool and the workers hold credentials and the clock: no other process
  // of the user's (a candidate's runner above all) may open their /proc fd, mem or environ.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  CLI::App app{"kevo: evolve faster CUDA kernels under checks a model cannot fool"};
  app.require_subcommand(1);
  // Baked in when cmake configured the build (src/cli/CMakeLists.txt).
  app.set_version_flag("--version", "kevo " KEVO_VERSION " (git " KEVO_GIT_COMMIT ")");
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "More log output (repeat for debug)");
  int exit_code = 0;
  kevo::cli::register_eval(app, exit_code);
  kevo::cli::register_doctor(app, exit_code);
  kevo::cli::register_llm(app, exit_code);
  kevo::cli::register_evolve(app, exit_code);
  kevo::cli::register_runs(app, exit_code);
  kevo::cli::register_show(app, exit_code);
  kevo::cli::register_export(app, exit_code);
  kevo::cli::register_translate(app, exit_code);
  kevo::cli::register_interop(app, exit_code);
  kevo::cli::register_export_torch(app, exit_code);
  kevo::cli::register_task(app, exit_code);
  kevo::cli::register_bench(app, exit_code);
  kevo::cli::register_report(app, exit_code);
  kevo::cli::register_worker(app, exit_code);
  kevo::cli::register_serve(app, exit_code);
  kevo::cli::register_runners(app, exit_code);
  kevo::cli::register_mcp(app, exit_code);
  kevo::cli::register_archive(app, exit_code);
  kevo::cli::register_recheck(app, exit_code);
  kevo::cli::add_help_examples(app);
  app.parse_complete_callback([&] { kevo::init_logging(verbosity); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    // `kevo frobnicate --help` names no command: the root's help with rc 0 would say it does.
    if (auto msg = kevo::cli::unknown_command_message(app, std::vector<std::string>(argv + 1, argv + argc))) {
      std::fprintf(stderr, "%s\n", msg->c_str());
      return kevo::cli::usage_error_code(app);
    }
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    auto msg = kevo::cli::unknown_command_message(app, args);
    if (!msg) msg = kevo::cli::unknown_option_message(app, args);
    if (msg) {
      std::fprintf(stderr, "%s\n", msg->c_str());
      return kevo::cli::usage_error_code(app);
    }
    app.exit(e);  // CLI11's message; its own exit codes (100+) are not kevo's
    return kevo::cli::usage_error_code(app);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kevo: internal error: %s\n", e.what());
    return 70;
  }
  return exit_code;
}
