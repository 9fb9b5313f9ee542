// The kevo command line. Exceptions stop here: everything below returns errors as values.
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "util/log.h"

int main(int argc, char** argv) {
  CLI::App app{"kevo: evolve faster CUDA kernels under checks a model cannot fool"};
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "More log output (repeat for debug)");
  int exit_code = 0;
  kevo::cli::register_eval(app, exit_code);
  kevo::cli::register_doctor(app, exit_code);
  kevo::cli::register_llm(app, exit_code);
  kevo::cli::register_evolve(app, exit_code);
  kevo::cli::register_interop(app, exit_code);
  kevo::cli::register_task(app, exit_code);
  kevo::cli::register_bench(app, exit_code);
  app.parse_complete_callback([&] { kevo::init_logging(verbosity); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kevo: internal error: %s\n", e.what());
    return 70;
  }
  return exit_code;
}
