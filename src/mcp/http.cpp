#include "mcp/http.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "serve/auth.h"

namespace kevo::mcp {

using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

struct OpenSession {
  std::shared_ptr<Session> session;
  Clock::time_point last_used;
};

std::string new_session_id() {
  std::random_device rd;  // the OS's entropy: ids are guessed by no one sharing the machine
  std::string id;
  for (int i = 0; i < 4; ++i) id += fmt::format("{:08x}", rd());
  return id;
}

bool loopback_origin(const std::string& origin) {
  for (const char* p : {"http://127.0.0.1", "http://localhost", "http://[::1]", "https://127.0.0.1", "https://localhost"})
    if (origin.rfind(p, 0) == 0 && (origin.size() == std::strlen(p) || origin[std::strlen(p)] == ':')) return true;
  return false;
}

void reply_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump_message(body), "application/json");
}

void reply_error(httplib::Response& res, int status, RpcError code, const std::string& message) {
  reply_json(res, status, rpc_error(json(), code, message));
}

bool is_initialize(const json& msg) { return msg.is_object() && string_at(msg, "method") == "initialize"; }

}  // namespace

struct HttpServer::Impl {
  HttpOptions opts;
  ServerInfo info;
  ProviderFactory factory;
  serve::TokenGate gate;
  httplib::Server http;
  int port = 0;
  mutable std::mutex mu;
  std::map<std::string, OpenSession> sessions;
  std::atomic<bool> stopping{false}, in_run{false};
  std::thread reaper;

  bool admitted(const httplib::Request& req, httplib::Response& res);
  void post(const httplib::Request& req, httplib::Response& res);
  void start_session(const json& msg, httplib::Response& res);
  std::shared_ptr<Session> find(const std::string& id);
  void remove(const std::string& id, CloseReason why);
  void reap_idle();
  void close_all();
};

bool HttpServer::Impl::admitted(const httplib::Request& req, httplib::Response& res) {
  if (!serve::host_allowed(req.get_header_value("Host"), opts.listen, gate.enabled())) {
    reply_error(res, 403, RpcError::kInvalidRequest, "the Host header does not name this server");
    return false;
  }
  const std::string origin = req.get_header_value("Origin");
  if (!origin.empty() && !gate.enabled() && !loopback_origin(origin)) {
    reply_error(res, 403, RpcError::kInvalidRequest, fmt::format("requests from origin {} are refused", origin));
    return false;
  }
  serve::HttpRequest q;
  q.authorization = req.get_header_value("Authorization");
  if (gate.enabled() && gate.check(q) != serve::Access::kAllowed) {
    res.set_header("WWW-Authenticate", "Bearer");
    reply_error(res, 401, RpcError::kInvalidRequest, "this server needs `Authorization: Bearer TOKEN`");
    return false;
  }
  const std::string version = req.get_header_value("MCP-Protocol-Version");
  if (!version.empty() && !known_protocol(version)) {
    reply_error(res, 400, RpcError::kInvalidRequest, fmt::format("protocol version {} is not served here", version));
    return false;
  }
  return true;
}

void HttpServer::Impl::start_session(const json& msg, httplib::Response& res) {
  {
    std::lock_guard lock(mu);
    if (static_cast<int>(sessions.size()) >= opts.max_sessions)
      return reply_error(res, 503, RpcError::kServerBusy,
                         fmt::format("{} sessions are open; end one (DELETE /mcp) first", opts.max_sessions));
  }
  auto provider = factory();
  if (!provider) return reply_error(res, 503, RpcError::kInternal, provider.error().message);
  auto s = std::make_shared<Session>(info, std::move(*provider));
  auto reply = s->handle(msg);
  const std::string id = new_session_id();
  {
    std::lock_guard lock(mu);
    sessions[id] = {s, Clock::now()};
  }
  res.set_header("Mcp-Session-Id", id);
  reply_json(res, 200, reply ? *reply : json::object());
}

std::shared_ptr<Session> HttpServer::Impl::find(const std::string& id) {
  std::lock_guard lock(mu);
  auto it = sessions.find(id);
  if (it == sessions.end()) return nullptr;
  it->second.last_used = Clock::now();
  return it->second.session;
}

void HttpServer::Impl::post(const httplib::Request& req, httplib::Response& res) {
  if (!admitted(req, res)) return;
  auto msg = parse_json(req.body);
  if (!msg) return reply_error(res, 400, RpcError::kParse, "the body is not JSON");
  if (is_initialize(*msg)) return start_session(*msg, res);
  const std::string id = req.get_header_value("Mcp-Session-Id");
  if (id.empty()) return reply_error(res, 400, RpcError::kInvalidRequest, "no Mcp-Session-Id header: send initialize first");
  auto s = find(id);
  if (!s) return reply_error(res, 404, RpcError::kInvalidRequest, "no such session (ended, or never started)");
  auto reply = s->handle(*msg);
  if (!reply) {
    res.status = 202;
    return;
  }
  reply_json(res, 200, *reply);
}

void HttpServer::Impl::remove(const std::string& id, CloseReason why) {
  std::shared_ptr<Session> s;
  {
    std::lock_guard lock(mu);
    auto it = sessions.find(id);
    if (it == sessions.end()) return;
    s = it->second.session;
    sessions.erase(it);
  }
  s->close(why);  // the provider waits for its calls in flight, then records the end
}

void HttpServer::Impl::reap_idle() {
  while (!stopping) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::vector<std::string> idle;
    {
      std::lock_guard lock(mu);
      for (const auto& [id, o] : sessions)
        if (std::chrono::duration<double>(Clock::now() - o.last_used).count() > opts.idle_s || o.session->expired())
          idle.push_back(id);
    }
    for (const auto& id : idle) remove(id, CloseReason::kClientGone);
  }
}

void HttpServer::Impl::close_all() {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mu);
    for (const auto& [id, _] : sessions) ids.push_back(id);
  }
  for (const auto& id : ids) remove(id, CloseReason::kShutdown);
}

Result<std::unique_ptr<HttpServer>> HttpServer::open(const HttpOptions& o, ServerInfo info, ProviderFactory factory) {
  KEVO_TRY(serve::check_bind(o.listen, o.token));
  auto impl = std::make_unique<Impl>();
  impl->opts = o;
  impl->info = std::move(info);
  impl->factory = std::move(factory);
  impl->gate = serve::TokenGate(o.token);
  Impl* p = impl.get();
  p->http.set_payload_max_length(o.max_body_bytes);
  p->http.Post("/mcp", [p](const httplib::Request& req, httplib::Response& res) {
    try {
      p->post(req, res);
    } catch (const std::exception& e) {  // the process edge for requests: a 500, never a dead server
      reply_error(res, 500, RpcError::kInternal, fmt::format("internal error: {}", e.what()));
    }
  });
  p->http.Delete("/mcp", [p](const httplib::Request& req, httplib::Response& res) {
    if (!p->admitted(req, res)) return;
    const std::string id = req.get_header_value("Mcp-Session-Id");
    if (!p->find(id)) return reply_error(res, 404, RpcError::kInvalidRequest, "no such session");
    p->remove(id, CloseReason::kClientGone);
    res.status = 200;
  });
  p->http.Get("/mcp", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Allow", "POST, DELETE");
    reply_error(res, 405, RpcError::kInvalidRequest, "this server sends no event stream: POST each message");
  });
  p->http.set_socket_options([](socket_t sock) {
    int yes = 1;  // SO_REUSEADDR without SO_REUSEPORT: a second server cannot share the port
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  const auto& l = o.listen;
  int port = l.port == 0 ? p->http.bind_to_any_port(l.host) : (p->http.bind_to_port(l.host, l.port) ? l.port : -1);
  if (port < 0) return fail("cannot listen on {}:{} (in use, or not an address of this host)", l.host, l.port);
  p->port = port;
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  stop();
  impl_->close_all();
}

int HttpServer::port() const { return impl_->port; }

std::string HttpServer::url() const {
  const auto& h = impl_->opts.listen.host;
  return fmt::format("http://{}:{}/mcp", h.find(':') != std::string::npos ? "[" + h + "]" : h, impl_->port);
}

int HttpServer::sessions() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int>(impl_->sessions.size());
}

void HttpServer::run() {
  impl_->in_run = true;
  impl_->reaper = std::thread([p = impl_.get()] { p->reap_idle(); });
  if (!impl_->stopping) impl_->http.listen_after_bind();
  impl_->stopping = true;
  impl_->reaper.join();
  impl_->close_all();
  impl_->in_run = false;
}

void HttpServer::stop() {
  impl_->stopping = true;
  while (impl_->in_run) {  // run() may be about to listen: stop until it has returned
    impl_->http.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace kevo::mcp
