#include "serve/server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "serve/app.h"
#include "store/run_db.h"

namespace kevo::serve {

namespace {

HttpRequest to_request(const httplib::Request& r) {
  HttpRequest q;
  q.method = r.method;
  q.path = r.path;
  for (const auto& [k, v] : r.params) q.params.emplace(k, v);
  q.host = r.get_header_value("Host");
  q.authorization = r.get_header_value("Authorization");
  q.cookie = r.get_header_value("Cookie");
  return q;
}

void to_response(const Reply& reply, httplib::Response& res) {
  res.status = reply.status;
  for (const auto& [k, v] : reply.headers) res.set_header(k.c_str(), v);
  res.set_content(reply.body, reply.content_type.c_str());
}

// httplib's default sets SO_REUSEPORT, which lets a second server bind a port this one holds and
// take some of its connections (answers from another database). SO_REUSEADDR alone still allows a
// restart while old connections sit in TIME_WAIT, but refuses a port another socket listens on.
void exclusive_socket_options(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

}  // namespace

struct Server::Impl {
  ServeOptions opts;
  std::unique_ptr<store::RunDb> db;
  std::unique_ptr<App> app;
  httplib::Server http;
  int port = 0;
  std::thread warmer;
  std::atomic<bool> in_run{false}, stopping{false};

  // The process edge for requests: whatever escapes the app is a 500, never a dead server.
  void serve(const httplib::Request& req, httplib::Response& res) {
    try {
      to_response(app->handle(to_request(req)), res);
    } catch (const std::exception& e) {
      Reply r = error_reply(to_request(req), 500, fmt::format("internal error: {}", e.what()));
      for (const auto& h : security_headers()) r.headers.push_back(h);
      to_response(r, res);
    }
  }
};

Result<std::unique_ptr<Server>> Server::open(const ServeOptions& o) {
  KEVO_TRY(check_bind(o.listen, o.token));
  auto db = store::RunDb::open_read_only(o.db);
  if (!db) return db.unexpected();
  auto impl = std::make_unique<Impl>();
  impl->opts = o;
  impl->db = std::move(*db);
  impl->app = std::make_unique<App>(*impl->db, AppOptions{o.listen, o.token, o.totals_max_age_s});
  Impl* p = impl.get();
  // Methods with a body are read first, then answered 405 by these; every other request (GET,
  // HEAD, and methods httplib routes nowhere) is answered before routing.
  auto refuse = [p](const httplib::Request& req, httplib::Response& res) { p->serve(req, res); };
  p->http.Post(".*", refuse).Put(".*", refuse).Patch(".*", refuse).Delete(".*", refuse).Options(".*", refuse);
  p->http.set_pre_routing_handler([p](const httplib::Request& req, httplib::Response& res) {
    static const char* kBodies[] = {"POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
    for (const char* m : kBodies)
      if (req.method == m) return httplib::Server::HandlerResponse::Unhandled;
    p->serve(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  p->http.set_keep_alive_timeout(5);
  p->http.set_socket_options(exclusive_socket_options);
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  stop();
  if (impl_->warmer.joinable()) impl_->warmer.join();
}

Result<int> Server::bind() {
  const auto& l = impl_->opts.listen;
  int port = l.port == 0 ? impl_->http.bind_to_any_port(l.host) : (impl_->http.bind_to_port(l.host, l.port) ? l.port : -1);
  if (port < 0) return fail("cannot listen on {}:{} (in use, or not an address of this host)", l.host, l.port);
  impl_->port = port;
  if (impl_->opts.warm) impl_->warmer = std::thread([app = impl_->app.get()] { app->warm(); });
  return port;
}

void Server::run() {
  impl_->in_run = true;
  if (!impl_->stopping) impl_->http.listen_after_bind();
  impl_->in_run = false;
}

void Server::stop() {
  // run() may be about to listen: stop until it has returned (stop() before listening is a no-op).
  impl_->stopping = true;
  while (impl_->in_run) {
    impl_->http.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string Server::url() const {
  const auto& h = impl_->opts.listen.host;
  return fmt::format("http://{}:{}/", h.find(':') != std::string::npos ? "[" + h + "]" : h, impl_->port);
}

std::string Server::where() const { return impl_->db->where(); }

}  // namespace kevo::serve
