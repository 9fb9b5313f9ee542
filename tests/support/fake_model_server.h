// A loopback model server for tests of real agent CLIs (Claude Code, Codex): it speaks Anthropic
// Messages on POST /v1/messages and OpenAI Responses on POST /v1/responses (the wire formats of
// fake_model_server_wire.h), answers each request with the turn of a script its content calls for
// (fake_model_server_script.h), and logs every request (method, path, headers with secrets
// redacted, body, what it was answered) as one JSON line of a log file.
//
// What a CLI must not do shows in the log as an entry with a "problem": a path or method neither API
// has, a Host header that is not loopback (a request meant for a real provider, e.g. through a
// proxy), a body that is not JSON, a request past the script's end. Such requests get an error.
// A request that offers tools but not the scripted one (a CLI whose MCP server is not connected yet)
// gets a retryable "overloaded" error and a "note", as does anything else worth reading later.
//
// Listens on 127.0.0.1 only. Thread-safe; stops at destruction.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/fake_model_server_script.h"
#include "util/result.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace kevo::test {

class FakeModelServer {
 public:
  // port 0: any free one.
  static Result<std::unique_ptr<FakeModelServer>> start(ModelScript script, std::filesystem::path log_file,
                                                        int port = 0);
  ~FakeModelServer();
  FakeModelServer(const FakeModelServer&) = delete;
  FakeModelServer& operator=(const FakeModelServer&) = delete;

  int port() const { return port_; }
  std::string base_url() const;  // http://127.0.0.1:PORT
  // Every request so far, as logged.
  std::vector<nlohmann::json> requests() const;
  // The logged requests that carry a "problem".
  std::vector<nlohmann::json> problems() const;
  // How many distinct turns of the script have been served (the highest turn + 1).
  size_t turns_reached() const;

 private:
  FakeModelServer(ModelScript script, std::filesystem::path log_file);
  void handle(const httplib::Request& req, httplib::Response& res);
  nlohmann::json answer(const httplib::Request& req, httplib::Response& res);
  void record(nlohmann::json entry);

  ModelScript script_;
  std::filesystem::path log_file_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<nlohmann::json> log_;
  size_t turns_reached_ = 0;
};

}  // namespace kevo::test
