#include <catch2/catch.hpp>

#include "daemon/server/local_callers.h"

using gpusched::server::Caller;
using gpusched::server::IdentifyCaller;
using gpusched::server::LocalCaller;
using gpusched::server::LocalCallers;

TEST_CASE("callers on the Unix socket are who the kernel said; admins are root and the named users") {
  LocalCallers callers;
  callers.Connected(7, LocalCaller{1000, 1000, 42, "alice"});
  callers.Connected(9, LocalCaller{0, 0, 43, "root"});
  callers.Connected(11, LocalCaller{1001, 1001, 44, "bob"});
  const std::set<std::string> admins = {"bob"};

  Caller alice = IdentifyCaller(&callers, admins, "fd:7");
  CHECK(alice.local);
  CHECK(alice.user == "alice");
  CHECK_FALSE(alice.admin);
  CHECK(alice.MayActOnJobOf("alice"));
  CHECK_FALSE(alice.MayActOnJobOf("carol"));
  CHECK(IdentifyCaller(&callers, admins, "fd:9").admin);   // uid 0
  CHECK(IdentifyCaller(&callers, admins, "fd:11").admin);  // named
  // A connection that is closed and its fd reused names the new caller.
  callers.Connected(7, LocalCaller{1002, 1002, 45, "carol"});
  CHECK(IdentifyCaller(&callers, admins, "fd:7").user == "carol");

  // Anything else came over TCP: trusted, as the port's TLS and network are.
  for (const char* peer : {"ipv4:127.0.0.1:5555", "fd:8", "fd:x", "unix:", ""}) {
    Caller other = IdentifyCaller(&callers, admins, peer);
    CHECK_FALSE(other.local);
    CHECK(other.admin);
  }
  CHECK(IdentifyCaller(nullptr, admins, "fd:7").admin);
}
