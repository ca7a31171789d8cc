#include "common/replica_addresses.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using gpusched::ReplicaAddresses;

TEST_CASE("replica addresses: a standby's pointer is followed, else the next in the list, round and round") {
  ReplicaAddresses replicas(" sched1:6870, sched2:6870 ,sched3:6870");
  REQUIRE(replicas.size() == 3);
  CHECK(replicas.current() == "sched1:6870");
  replicas.Failed("");  // down: the next
  CHECK(replicas.current() == "sched2:6870");
  replicas.Failed("sched1:6870");  // a standby says sched1 is active
  CHECK(replicas.current() == "sched1:6870");
  replicas.Failed("sched1:6870");  // sched1 itself failing while named: on to the next, not stuck on it
  CHECK(replicas.current() == "sched2:6870");
  replicas.Failed("elsewhere:6870");  // not one of ours: the next
  CHECK(replicas.current() == "sched3:6870");
  replicas.Failed("");
  CHECK(replicas.current() == "sched1:6870");

  ReplicaAddresses one("127.0.0.1:6870");
  CHECK(one.size() == 1);
  one.Failed("other:1");
  CHECK(one.current() == "127.0.0.1:6870");
}

TEST_CASE("replica addresses: a failed call's trailers are followed when a standby named the active replica") {
  ReplicaAddresses replicas("sched1:6870,sched2:6870,sched3:6870");
  const std::multimap<std::string, std::string> named = {{gpusched::kLeaderMetadata, "sched3:6870"}};
  CHECK(replicas.FailedWith(named));
  CHECK(replicas.current() == "sched3:6870");
  const std::multimap<std::string, std::string> silent = {{"other", "x"}};
  CHECK_FALSE(replicas.FailedWith(silent));  // no pointer: the next in the list
  CHECK(replicas.current() == "sched1:6870");
}
