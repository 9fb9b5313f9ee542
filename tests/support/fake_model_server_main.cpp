// kevo-fake-model: the loopback model server of fake_model_server.h as a program, for trying an
// agent CLI by hand or from a script:
//   kevo-fake-model --script SCRIPT.json --log REQUESTS.jsonl [--port N] [--port-file FILE]
// Prints its base URL, serves until SIGINT/SIGTERM, then exits 0, or 3 when a request had a problem.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <iostream>

#include "support/fake_model_server.h"

int main(int argc, char** argv) {
  CLI::App app{"A scripted loopback model server (Anthropic Messages, OpenAI Responses and Chat Completions)"};
  std::string script_file, log_file, port_file;
  int port = 0;
  app.add_option("--script", script_file, "the script: {\"server\": ..., \"turns\": [...]}")->required();
  app.add_option("--log", log_file, "every request, one JSON line each")->required();
  app.add_option("--port", port, "the port on 127.0.0.1 (0: any free one)");
  app.add_option("--port-file", port_file, "a file to write the port to once listening");
  CLI11_PARSE(app, argc, argv);

  auto script = kevo::test::load_model_script(script_file);
  if (!script) {
    std::cerr << "kevo-fake-model: " << script.error().message << "\n";
    return 2;
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before the server's threads start: they inherit it
  auto server = kevo::test::FakeModelServer::start(std::move(*script), log_file, port);
  if (!server) {
    std::cerr << "kevo-fake-model: " << server.error().message << "\n";
    return 2;
  }
  if (!port_file.empty()) std::ofstream(port_file) << (*server)->port() << "\n";
  std::cout << (*server)->base_url() << std::endl;
  int sig = 0;
  sigwait(&stop, &sig);
  const bool problems = !(*server)->problems().empty();
  server->reset();
  return problems ? 3 : 0;
}
