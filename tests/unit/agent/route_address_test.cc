#include "agent/route_address.h"

#include <catch2/catch.hpp>

using gpusched::agent::LocalAddressToward;

TEST_CASE("the advertised address is this host's on the route to the daemon") {
  CHECK(LocalAddressToward("127.0.0.1:6870").value_or("") == "127.0.0.1");
  CHECK(LocalAddressToward("unix:/run/gpusched/gpuschedd.sock").value_or("") == "127.0.0.1");
  CHECK(LocalAddressToward("[::1]:6870").value_or("") == "::1");

  auto bad = LocalAddressToward("no-port");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "daemon address \"no-port\" is not HOST:PORT");
  auto unknown = LocalAddressToward("no-such-host.invalid:6870");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("cannot resolve daemon host \"no-such-host.invalid\"") == 0);
}
