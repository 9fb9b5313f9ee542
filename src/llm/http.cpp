#include "llm/http.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

namespace kevo::llm {

std::string HttpResponse::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

namespace {

void global_init() {
  // curl_global_init is not thread-safe; the first call must happen exactly once.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The body, bounded: past `max` bytes the transfer is aborted (returning less than was given
// makes curl stop with CURLE_WRITE_ERROR), so a huge answer never sits in memory.
struct BodySink {
  std::string* body;
  size_t max;
  bool over = false;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  if (sink->max && sink->body->size() + size * n > sink->max) {
    sink->over = true;
    return 0;
  }
  sink->body->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  std::string_view line(data, size * n);
  // A new status line (after a redirect or "100 Continue") starts a fresh header set.
  if (line.starts_with("HTTP/")) headers->clear();
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    auto value = line.substr(colon + 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front())))
      value.remove_prefix(1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
      value.remove_suffix(1);
    (*headers)[name] = std::string(value);
  }
  return size * n;
}

bool is_loopback(const std::string& url) {
  for (const char* p : {"http://127.", "http://localhost", "http://[::1]", "https://127.",
                        "https://localhost"})
    if (url.starts_with(p)) return true;
  return false;
}

struct EasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct MultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct SlistDeleter {
  void operator()(curl_slist* s) const { curl_slist_free_all(s); }
};

}  // namespace

HttpOutcome http_post(const HttpPost& req, const CancelToken& cancel) {
  global_init();
  HttpOutcome out;
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
  if (!easy || !multi) {
    out.kind = HttpOutcome::Kind::kNetwork;
    out.error = "could not initialise libcurl";
    return out;
  }
  curl_slist* raw = nullptr;
  for (const auto& h : req.headers) raw = curl_slist_append(raw, h.c_str());
  // No "Expect: 100-continue" round trip: it only delays large prompts.
  raw = curl_slist_append(raw, "Expect:");
  std::unique_ptr<curl_slist, SlistDeleter> headers(raw);

  CURL* c = easy.get();
  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  BodySink sink{&out.response.body, req.max_body_bytes};
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &out.response.headers);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.connect_timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout_s * 1000));
  char errbuf[CURL_ERROR_SIZE] = {0};  // names host and port; never headers
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM-based DNS timeouts
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  // A proxy from the environment must not intercept a local model server.
  if (is_loopback(req.url)) curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  // Redirects would re-send the key to wherever they point; an API never needs them.
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);

  // The multi interface lets us wake every 50 ms to check the cancel flag, instead of the
  // once-per-second granularity of the progress callback while a server thinks.
  curl_multi_add_handle(multi.get(), c);
  int running = 1;
  CURLMcode mc = CURLM_OK;
  while (running) {
    if (cancel.cancelled()) {
      curl_multi_remove_handle(multi.get(), c);
      out.kind = HttpOutcome::Kind::kCancelled;
      out.error = "cancelled";
      return out;
    }
    mc = curl_multi_perform(multi.get(), &running);
    if (mc != CURLM_OK) break;
    if (running) mc = curl_multi_poll(multi.get(), nullptr, 0, 50, nullptr);
    if (mc != CURLM_OK) break;
  }
  CURLcode rc = CURLE_OK;
  if (mc != CURLM_OK) {
    rc = CURLE_FAILED_INIT;
    out.error = curl_multi_strerror(mc);
  } else {
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi.get(), &left))
      if (m->msg == CURLMSG_DONE) rc = m->data.result;
  }
  curl_multi_remove_handle(multi.get(), c);
  if (sink.over) {
    out.kind = HttpOutcome::Kind::kTooLarge;
    out.error = fmt::format("the answer is larger than {} bytes", req.max_body_bytes);
    out.response.body.clear();
    out.response.body.shrink_to_fit();
    return out;
  }
  if (rc != CURLE_OK) {
    out.kind = rc == CURLE_OPERATION_TIMEDOUT ? HttpOutcome::Kind::kTimeout
                                              : HttpOutcome::Kind::kNetwork;
    if (out.error.empty()) out.error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    return out;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.response.status);
  return out;
}

}  // namespace kevo::llm
