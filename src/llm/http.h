// A minimal blocking HTTP POST over libcurl that can be cancelled mid-transfer.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "llm/cancel.h"

namespace kevo::llm {

struct HttpPost {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; may carry secrets, so never logged
  std::string body;
  double connect_timeout_s = 10;
  double timeout_s = 600;  // the whole exchange: a non-streaming answer arrives all at once
  size_t max_body_bytes = 0;  // a longer answer body is cut off (Kind::kTooLarge); 0: no limit
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;
  std::string header(const std::string& lower_name) const;
};

struct HttpOutcome {
  enum class Kind { kOk, kNetwork, kTimeout, kCancelled, kTooLarge };
  Kind kind = Kind::kOk;
  std::string error;  // curl's description for the failures; never contains headers
  HttpResponse response;
};

HttpOutcome http_post(const HttpPost& req, const CancelToken& cancel);

}  // namespace kevo::llm
