#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::testing {

struct HttpResponse {
  int status = 0;  // 200, 404, ...
  std::string body;
};

// A blocking HTTP/1.0 GET, enough to scrape a /metrics endpoint and to ask
// Prometheus' HTTP API. Unavailable when nothing answers at host:port within
// the timeout.
absl::StatusOr<HttpResponse> HttpGet(const std::string& host, int port, const std::string& target,
                                     int timeout_ms = 5000);

// Percent-encodes a query parameter value (a PromQL expression).
std::string UrlEncode(absl::string_view text);

}  // namespace gpusched::testing
