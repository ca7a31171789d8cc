#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace prometheus {
class Collectable;
class Exposer;
}  // namespace prometheus

namespace gpusched::metrics {

// The HTTP side of metrics for both binaries: answers GET /metrics in
// Prometheus' text format with what the collectables hold at that moment
// (prometheus-cpp's Exposer, on civetweb threads of its own). It lives in
// common/ although it owns a socket because gpuschedd and gpusched-agent
// serve it alike; only they link it, the pure libraries do not.
class MetricsEndpoint {
 public:
  // `listen` is HOST:PORT, e.g. "0.0.0.0:6871", "[::1]:6871", or port 0 for
  // a free one (tests). InvalidArgument for a malformed address, Unavailable,
  // naming the address, when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> collectables);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  int port() const { return port_; }
  // http://HOST:PORT/metrics with the port actually bound.
  std::string url() const;

 private:
  MetricsEndpoint() = default;

  std::string host_;
  int port_ = 0;
  // The exposer holds weak pointers only; these keep the collectables alive
  // for as long as it may scrape them.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace gpusched::metrics
