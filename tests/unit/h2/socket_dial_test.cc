#include "common/io/h2/socket_dial.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "absl/time/clock.h"

using namespace gpusched::h2;

TEST_CASE("socket targets: HOST:PORT, [IPv6]:PORT and unix:PATH, and what is neither") {
  auto tcp = ParseSocketTarget("sched1.example:6870");
  REQUIRE(tcp.ok());
  CHECK_FALSE(tcp->unix_socket);
  CHECK(tcp->host == "sched1.example");
  CHECK(tcp->port == "6870");
  CHECK(tcp->authority == "sched1.example:6870");

  auto v6 = ParseSocketTarget("[::1]:6870");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");

  for (const char* grpc_name : {"dns:///sched1.example:6870", "ipv4:sched1.example:6870"}) {
    auto named = ParseSocketTarget(grpc_name);
    REQUIRE(named.ok());
    CHECK(named->host == "sched1.example");
    CHECK(named->authority == "sched1.example:6870");
  }
  CHECK(ParseSocketTarget("ipv6:[::1]:6870")->host == "::1");

  for (const char* unix_target : {"unix:/run/gpusched.sock", "unix:///run/gpusched.sock"}) {
    auto local = ParseSocketTarget(unix_target);
    REQUIRE(local.ok());
    CHECK(local->unix_socket);
    CHECK(local->path == "/run/gpusched.sock");
    CHECK(local->authority == "localhost");
  }

  for (const char* bad : {"sched1", ":6870", "sched1:", "dns://8.8.8.8/sched1:6870", "xds:///sched1:6870", "unix:"}) {
    INFO(bad);
    auto parsed = ParseSocketTarget(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(std::string(parsed.status().message()), Catch::Contains(bad));
  }
}

namespace {

// A port that nothing listens on: bound, never listening.
int UnusedPort(int* holder) {
  *holder = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(*holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  socklen_t size = sizeof(address);
  getsockname(*holder, reinterpret_cast<sockaddr*>(&address), &size);
  return ntohs(address.sin_port);
}

}  // namespace

TEST_CASE("a dial that nothing answers says where and why") {
  int holder = -1;
  const int port = UnusedPort(&holder);
  auto refused = DialSocket(*ParseSocketTarget("127.0.0.1:" + std::to_string(port)), absl::Now() + absl::Seconds(5));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("127.0.0.1:" + std::to_string(port)) && Catch::Contains("refused"));
  close(holder);

  auto no_file = DialSocket(*ParseSocketTarget("unix:/nonexistent/gpusched.sock"), absl::Now() + absl::Seconds(5));
  REQUIRE_FALSE(no_file.ok());
  CHECK_THAT(std::string(no_file.status().message()), Catch::Contains("/nonexistent/gpusched.sock"));
}
