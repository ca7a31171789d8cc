#include "common/io/metrics/metrics_endpoint.h"

#include <exception>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "prometheus/exposer.h"

namespace gpusched::metrics {
namespace {

// Civetweb's listening_ports takes HOST:PORT and [V6]:PORT as we do; checked
// here so that a typo gets a message about the flag, not civetweb's "null
// context" exception.
absl::Status CheckListenAddress(const std::string& listen, std::string* host) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address \"", listen, "\": expected HOST:PORT, e.g. 127.0.0.1:6871 or 0.0.0.0:6871"));
  }
  *host = listen.substr(0, colon);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  if (absl::Status s = CheckListenAddress(listen, &endpoint->host_); !s.ok()) return s;
  try {
    // Two threads: Prometheus scrapes one request at a time per server.
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen, " (address in use, or not a local address?): ", e.what()));
  }
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  if (ports.empty()) return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen));
  endpoint->port_ = ports.front();
  endpoint->collectables_ = std::move(collectables);
  for (const auto& collectable : endpoint->collectables_) endpoint->exposer_->RegisterCollectable(collectable);
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() {
  // Stops the HTTP threads before the collectables they read go away.
  exposer_.reset();
}

std::string MetricsEndpoint::url() const { return absl::StrCat("http://", host_, ":", port_, "/metrics"); }

}  // namespace gpusched::metrics
