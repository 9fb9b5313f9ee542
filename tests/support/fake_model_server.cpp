#include "support/fake_model_server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "support/fake_model_server_wire.h"

namespace kevo::test {

using nlohmann::json;

namespace {

// One wire format's side of the server, so that the request flow is written once.
struct Api {
  const char* name;
  const char* id_prefix;
  std::vector<std::string> (*results)(const json&);
  std::optional<OfferedTool> (*find_tool)(const json&, const std::string&, const std::string&);
  bool (*offers_tools)(const json&);
  WireAnswer (*answer)(const ScriptedTurn&, size_t, const std::vector<OfferedTool>&, const json&);
  WireAnswer (*text)(const std::string&, const json&);
  WireAnswer (*error)(int, const std::string&, const std::string&);
  int overloaded_status;  // what each provider answers when busy, which its CLI retries
  const char* overloaded_type;
};

constexpr Api kAnthropic{"anthropic-messages", "toolu_", anthropic_tool_results, anthropic_find_tool,
                         anthropic_offers_tools, anthropic_answer, anthropic_text, anthropic_error,
                         529, "overloaded_error"};
constexpr Api kOpenAi{"openai-responses", "call_", openai_tool_results, openai_find_tool, openai_offers_tools,
                      openai_answer, openai_text, openai_error, 503, "server_error"};
constexpr Api kChat{"openai-chat-completions", "call_", chat_tool_results, chat_find_tool, chat_offers_tools,
                    chat_answer, chat_text, openai_error, 503, "server_error"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Headers that carry credentials keep their name, never their value.
bool secret_header(const std::string& name) {
  const std::string n = lower(name);
  for (const char* s : {"authorization", "api-key", "cookie", "token", "secret", "auth"})
    if (n.find(s) != std::string::npos) return true;
  return false;
}

json logged_headers(const httplib::Request& req) {
  json h = json::object();
  for (const auto& [k, v] : req.headers) h[lower(k)] = secret_header(k) ? "<redacted>" : v;
  return h;
}

bool loopback_host(const std::string& host, int port) {
  for (const std::string h : {"127.0.0.1", "localhost", "[::1]"})
    if (host == h || host == h + ":" + std::to_string(port)) return true;
  return false;
}

void send(httplib::Response& res, const WireAnswer& a) {
  res.status = a.status;
  if (a.content_type != "text/event-stream") {
    res.set_content(a.chunks.empty() ? std::string() : a.chunks[0], a.content_type);
    return;
  }
  auto chunks = std::make_shared<std::vector<std::string>>(a.chunks);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(a.content_type, [chunks](size_t, httplib::DataSink& sink) {
    for (const auto& c : *chunks)
      if (!sink.write(c.data(), c.size())) return false;
    sink.done();
    return true;
  });
}

}  // namespace

FakeModelServer::FakeModelServer(ModelScript script, std::filesystem::path log_file)
    : script_(std::move(script)), log_file_(std::move(log_file)), http_(std::make_unique<httplib::Server>()) {}

Result<std::unique_ptr<FakeModelServer>> FakeModelServer::start(ModelScript script, std::filesystem::path log_file,
                                                                int port) {
  std::unique_ptr<FakeModelServer> s(new FakeModelServer(std::move(script), std::move(log_file)));
  auto h = [p = s.get()](const httplib::Request& req, httplib::Response& res) { p->handle(req, res); };
  // Every method and path reaches handle(), so that what neither API has is logged too.
  s->http_->Get(".*", h).Post(".*", h).Put(".*", h).Patch(".*", h).Delete(".*", h).Options(".*", h);
  if (port == 0) {
    s->port_ = s->http_->bind_to_any_port("127.0.0.1");
  } else {
    s->port_ = s->http_->bind_to_port("127.0.0.1", port) ? port : -1;
  }
  if (s->port_ <= 0) return fail("fake model server: cannot listen on 127.0.0.1:{}", port);
  s->thread_ = std::thread([p = s.get()] { p->http_->listen_after_bind(); });
  for (int ms = 0; !s->http_->is_running(); ++ms) {
    if (ms > 5000) return fail("fake model server: not serving 5 s after binding 127.0.0.1:{}", s->port_);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return s;
}

FakeModelServer::~FakeModelServer() {
  http_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string FakeModelServer::base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::vector<json> FakeModelServer::requests() const {
  std::lock_guard lock(mu_);
  return log_;
}

std::vector<json> FakeModelServer::problems() const {
  std::lock_guard lock(mu_);
  std::vector<json> p;
  for (const auto& e : log_)
    if (e.contains("problem")) p.push_back(e);
  return p;
}

size_t FakeModelServer::turns_reached() const {
  std::lock_guard lock(mu_);
  return turns_reached_;
}

void FakeModelServer::record(json entry) {
  std::lock_guard lock(mu_);
  entry["seq"] = log_.size();
  std::ofstream(log_file_, std::ios::app) << entry.dump() << "\n";
  log_.push_back(std::move(entry));
}

void FakeModelServer::handle(const httplib::Request& req, httplib::Response& res) {
  json entry = answer(req, res);
  entry["method"] = req.method;
  entry["path"] = req.path;
  entry["headers"] = logged_headers(req);
  entry["status"] = res.status;
  auto body = json::parse(req.body, nullptr, false);
  entry["body"] = body.is_discarded() ? json(req.body) : body;
  record(std::move(entry));
}

// The answer written into `res`, and what to log about it.
json FakeModelServer::answer(const httplib::Request& req, httplib::Response& res) {
  const Api* api = req.method != "POST"                     ? nullptr
                   : req.path == "/v1/messages"             ? &kAnthropic
                   : req.path == "/v1/responses"            ? &kOpenAi
                   : req.path == "/v1/chat/completions"     ? &kChat
                                                            : nullptr;
  auto refuse = [&](int status, const std::string& why) {
    send(res, (api ? api : &kAnthropic)->error(status, "invalid_request_error", "kevo fake model server: " + why));
    return json{{"problem", why}};
  };
  if (!loopback_host(req.get_header_value("Host"), port_)) return refuse(421, "request for a host that is not loopback");
  if (!api) return refuse(404, "no such endpoint: " + req.method + " " + req.path);
  auto body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return refuse(400, "the body is not a JSON object");
  json entry = {{"api", api->name}};
  if (!api->offers_tools(body)) {
    send(res, api->text("kevo fake model server: no tools offered, nothing scripted", body));
    entry["note"] = "a request that offers no tools: answered with a text";
    return entry;
  }
  auto k = turn_for(script_, api->id_prefix, api->results(body));
  if (!k) return refuse(400, "a request past the end of the script");
  const ScriptedTurn& turn = script_.turns[*k];
  std::vector<OfferedTool> tools;
  for (const auto& c : turn.tool_calls) {
    auto t = c.unoffered ? std::optional<OfferedTool>(OfferedTool{c.tool, ""}) : api->find_tool(body, script_.server, c.tool);
    if (!t) {
      send(res, api->error(api->overloaded_status, api->overloaded_type, "tool not offered yet: " + c.tool));
      entry["note"] = "the scripted tool " + c.tool + " is not offered: answered overloaded, to be retried";
      return entry;
    }
    tools.push_back(*t);
  }
  send(res, api->answer(turn, *k, tools, body));
  entry["turn"] = *k;
  std::lock_guard lock(mu_);
  if (*k < turns_reached_) entry["note"] = "a turn answered before: the same answer again";
  turns_reached_ = std::max(turns_reached_, *k + 1);
  return entry;
}

}  // namespace kevo::test
