#include "common/io/metrics/metrics_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "daemon/metrics/registry.h"
#include "tests/support/http_client.h"
#include "tests/support/metrics_text.h"

namespace gpusched::metrics {
namespace {

using gpusched::testing::FindMetric;
using gpusched::testing::HttpGet;

// Sends `request` as it is to 127.0.0.1:port and returns all the endpoint
// answers until it closes ("" when nothing connects).
std::string Exchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return answer;
}

TEST_CASE("the endpoint serves the registry over real HTTP, as it is at each scrape") {
  auto registry = std::make_shared<Registry>();
  auto& counter =
      BuildCounter().Name("gpusched_test_things_total").Help("things").Register(*registry).Add({{"kind", "a"}});
  auto endpoint = MetricsEndpoint::Start("127.0.0.1:0", {registry});
  INFO(endpoint.status().message());
  REQUIRE(endpoint.ok());
  const int port = (*endpoint)->port();
  REQUIRE(port > 0);
  CHECK((*endpoint)->url() == "http://127.0.0.1:" + std::to_string(port) + "/metrics");

  auto first = HttpGet("127.0.0.1", port, "/metrics");
  REQUIRE(first.ok());
  CHECK(first->status == 200);
  CHECK(absl::StrContains(first->body, "# TYPE gpusched_test_things_total counter"));
  CHECK(FindMetric(first->body, "gpusched_test_things_total", {{"kind", "a"}}) == 0);

  counter.Increment(3);
  auto second = HttpGet("127.0.0.1", port, "/metrics");
  REQUIRE(second.ok());
  CHECK(FindMetric(second->body, "gpusched_test_things_total", {{"kind", "a"}}) == 3);

  (*endpoint).reset();
  CHECK_FALSE(HttpGet("127.0.0.1", port, "/metrics", 500).ok());  // gone with the endpoint
}

TEST_CASE("the endpoint answers only GET and HEAD of /metrics, and a bad request does not stop it") {
  auto registry = std::make_shared<Registry>();
  BuildCounter().Name("gpusched_test_things_total").Help("things").Register(*registry).Add({});
  auto endpoint = MetricsEndpoint::Start("127.0.0.1:0", {registry});
  REQUIRE(endpoint.ok());
  const int port = (*endpoint)->port();

  auto other = HttpGet("127.0.0.1", port, "/other");
  REQUIRE(other.ok());
  CHECK(other->status == 404);

  const std::string head = Exchange(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(absl::StartsWith(head, "HTTP/1.1 200 OK\r\n"));
  CHECK(absl::StrContains(head, "Content-Type: text/plain; version=0.0.4"));
  CHECK(absl::EndsWith(head, "\r\n\r\n"));  // the length of the body, not the body

  CHECK(absl::StartsWith(Exchange(port, "POST /metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 405 "));
  CHECK(absl::StartsWith(Exchange(port, "garbage\r\n\r\n"), "HTTP/1.1 400 "));
  CHECK(Exchange(port, std::string(20000, 'x')).empty());  // a head larger than any scraper's: closed unanswered

  auto metrics = HttpGet("127.0.0.1", port, "/metrics?x=1");
  REQUIRE(metrics.ok());
  CHECK(metrics->status == 200);
  CHECK(FindMetric(metrics->body, "gpusched_test_things_total") == 0);
}

TEST_CASE("an address that is taken or malformed fails start-up with a message naming it") {
  auto registry = std::make_shared<Registry>();
  auto first = MetricsEndpoint::Start("127.0.0.1:0", {registry});
  REQUIRE(first.ok());
  const std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = MetricsEndpoint::Start(taken, {registry});
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == absl::StatusCode::kUnavailable);
  CHECK(absl::StrContains(second.status().message(), "cannot serve metrics on " + taken));

  for (const char* bad : {"6871", "localhost", "127.0.0.1:http", "127.0.0.1:70000", ":6871"}) {
    INFO(bad);
    auto endpoint = MetricsEndpoint::Start(bad, {registry});
    REQUIRE_FALSE(endpoint.ok());
    CHECK(endpoint.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(endpoint.status().message(), "expected HOST:PORT"));
  }
}

}  // namespace
}  // namespace gpusched::metrics
