#include "common/replica_addresses.h"

#include <catch2/catch.hpp>

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
