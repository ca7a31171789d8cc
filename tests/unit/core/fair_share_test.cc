// FairShare on its own: the factor it gives, and that it gives it bit for bit
// the same whatever order the usage arrives in.
#include "daemon/core/queue/fair_share.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

using gpusched::core::FairShare;

namespace {

// Usage whose total depends on the order it is added in: 1e16 + 1 rounds
// back to 1e16 in a double, so the two small parties vanish if the large one
// comes first and count (1e16 + 2) if they come first.
gpusched::v1::FairShareUsage Usage(const std::vector<std::string>& order) {
  gpusched::v1::FairShareUsage usage;
  for (const std::string& name : order) (*usage.mutable_users())[name] = name == "big" ? 1e16 : 1.0;
  for (const std::string& name : order) (*usage.mutable_accounts())[name] = name == "big" ? 1e16 : 1.0;
  return usage;
}

}  // namespace

TEST_CASE("fair share: the total is summed in name order, so a restore gives the same factor bit for bit") {
  const std::vector<std::vector<std::string>> orders = {
      {"a", "b", "big"}, {"big", "a", "b"}, {"b", "big", "a"}, {"big", "b", "a"}};
  // Name order: a (1) + b (1) + big (1e16) = 1e16 + 2, exactly representable.
  const double total = 1e16 + 2;
  const double share = 1.0 / 3;  // three parties
  const double want_a = std::exp2(-(1.0 / total) / share);
  const double want_big = std::exp2(-(1e16 / total) / share);
  REQUIRE(want_big != std::exp2(-(1e16 / 1e16) / share));  // the order would show
  for (const auto& order : orders) {
    FairShare fair(absl::Hours(1));
    fair.Restore(Usage(order));
    fair.SetWaiting({}, {});
    INFO(order[0] << "," << order[1] << "," << order[2]);
    CHECK(fair.Factor("a", "") == want_a);
    CHECK(fair.Factor("big", "") == want_big);
  }
}

TEST_CASE("fair share: no usage gives 1, one party's share gives 0.5, twice it 0.25") {
  FairShare fair(absl::Hours(1));
  const std::string alice = "alice", bob = "bob", none;
  fair.Advance(absl::UnixEpoch(), {});
  // Accounts default to the user's name.
  fair.SetWaiting({"alice", "bob"}, {"alice", "bob"});
  CHECK(fair.Factor("alice", "") == 1);
  // alice alone ran: all usage is hers, two parties compete.
  fair.Advance(absl::UnixEpoch() + absl::Seconds(10), {{&alice, &none, 2}});
  CHECK(fair.Factor("alice", "") == Approx(0.25));
  CHECK(fair.Factor("bob", "") == 1);
  // bob catches up: each has half, exactly one's share.
  fair.Advance(absl::UnixEpoch() + absl::Seconds(20), {{&bob, &none, 2}});
  CHECK(fair.Factor("alice", "") == Approx(0.5).epsilon(0.01));
  CHECK(fair.Factor("bob", "") == Approx(0.5).epsilon(0.01));
}
