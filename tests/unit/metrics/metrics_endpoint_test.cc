#include "common/io/metrics/metrics_endpoint.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "tests/support/http_client.h"
#include "tests/support/metrics_text.h"

namespace gpusched::metrics {
namespace {

using gpusched::testing::FindMetric;
using gpusched::testing::HttpGet;

TEST_CASE("the endpoint serves the registry over real HTTP, as it is at each scrape") {
  auto registry = std::make_shared<prometheus::Registry>();
  auto& counter = prometheus::BuildCounter()
                      .Name("gpusched_test_things_total")
                      .Help("things")
                      .Register(*registry)
                      .Add({{"kind", "a"}});
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

TEST_CASE("an address that is taken or malformed fails start-up with a message naming it") {
  auto registry = std::make_shared<prometheus::Registry>();
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
