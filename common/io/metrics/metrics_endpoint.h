#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace prometheus {
class Collectable;
}  // namespace prometheus

namespace gpusched::metrics {

// The HTTP side of metrics for both binaries: answers GET /metrics in
// Prometheus' text format (TextFormatOf) with what the collectables hold at
// that moment; 404 for any other path, 405 for any other method. One thread
// of its own serves one connection at a time, as Prometheus scrapes a target
// (a client that sends its request or takes the answer slower than 5 s is
// dropped). Written on
// sockets rather than with prometheus-cpp's Exposer, whose civetweb and C++
// runtime the agent would otherwise load on every node. It lives in common/
// although it owns a socket because gpuschedd and gpusched-agent serve it
// alike; only they link it, the pure libraries do not.
class MetricsEndpoint {
 public:
  // `listen` is HOST:PORT, e.g. "0.0.0.0:6871", "[::1]:6871", or port 0 for
  // a free one (tests). InvalidArgument for a malformed address, Unavailable,
  // naming the address, when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> collectables);
  ~MetricsEndpoint();  // stops serving before the collectables go
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  int port() const { return port_; }
  // http://HOST:PORT/metrics with the port actually bound.
  std::string url() const;

 private:
  MetricsEndpoint() = default;
  void ServeLoop();
  void Serve(int connection);
  std::string Render() const;

  std::string host_;
  int port_ = 0;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: written once to stop the loop
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  std::thread thread_;
};

}  // namespace gpusched::metrics
