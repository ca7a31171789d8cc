// Addresses to listen on or dial, and which of them only this machine reaches.
#include "common/config/host_port.h"

#include <catch2/catch.hpp>

using gpusched::config::IsHostPort;
using gpusched::config::IsLoopbackAddress;

TEST_CASE("host_port: HOST:PORT and unix:PATH forms, port 0 only to listen") {
  CHECK(IsHostPort("127.0.0.1:6870", false));
  CHECK(IsHostPort("[::1]:6870", false));
  CHECK(IsHostPort("head-node:6870", false));
  CHECK(IsHostPort("unix:/run/gpusched.sock", false));
  CHECK(IsHostPort("127.0.0.1:0", true));
  CHECK_FALSE(IsHostPort("127.0.0.1:0", false));
  CHECK_FALSE(IsHostPort("127.0.0.1", false));
  CHECK_FALSE(IsHostPort(":6870", false));
  CHECK_FALSE(IsHostPort("[::1:6870", false));
  CHECK_FALSE(IsHostPort("a b:6870", false));
  CHECK_FALSE(IsHostPort("host:65536", false));
}

TEST_CASE("host_port: loopback addresses are 127/8, localhost, [::1] and unix sockets; nothing else") {
  struct Case {
    const char* address;
    bool loopback;
  };
  const Case cases[] = {
      {"127.0.0.1:6870", true},    {"127.1.2.3:0", true},
      {"localhost:6870", true},    {"[::1]:6870", true},
      {"unix:/tmp/g.sock", true},  {"0.0.0.0:6870", false},
      {"10.0.0.5:6870", false},    {"[::]:6870", false},
      {"head-node:6870", false},   {"128.0.0.1:6870", false},
      {"127.0.0.256:1", false},    {"127.0.0:6870", false},
      {"127.0.0.1.5:6870", false}, {"127.a.0.1:6870", false},
      {"127.0.0.1", false},        {"localhost.evil.example:1", false},
  };
  for (const Case& c : cases) {
    INFO(c.address);
    CHECK(IsLoopbackAddress(c.address) == c.loopback);
  }
}
