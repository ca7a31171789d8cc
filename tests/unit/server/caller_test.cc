#include "daemon/server/caller.h"

#include <catch2/catch.hpp>

#include "daemon/server/local_callers.h"

using gpusched::server::Caller;
using gpusched::server::CallerPolicy;
using gpusched::server::CallerProof;
using gpusched::server::IdentifyCaller;
using gpusched::server::LocalCaller;
using gpusched::server::LocalCallers;
using gpusched::server::RequireUser;

namespace {

CallerPolicy Policy(const LocalCallers* callers, std::string trusted_tcp_user = "") {
  return CallerPolicy{callers, {"bob"}, std::move(trusted_tcp_user)};
}

}  // namespace

TEST_CASE("callers on the Unix socket are who the kernel said; admins are root and the named users") {
  LocalCallers callers;
  callers.Connected(7, LocalCaller{1000, 1000, 42, "alice"});
  callers.Connected(9, LocalCaller{0, 0, 43, "root"});
  callers.Connected(11, LocalCaller{1001, 1001, 44, "bob"});
  const CallerPolicy policy = Policy(&callers);

  Caller alice = IdentifyCaller(policy, "fd:7", std::nullopt);
  CHECK(alice.proof == CallerProof::kUnixSocket);
  CHECK(alice.user == "alice");
  CHECK(alice.uid == 1000);
  CHECK_FALSE(alice.admin);
  CHECK(alice.MayActOnJobOf("alice"));
  CHECK_FALSE(alice.MayActOnJobOf("carol"));
  CHECK(RequireUser(alice).ok());
  CHECK(IdentifyCaller(policy, "fd:9", std::nullopt).admin);   // uid 0
  CHECK(IdentifyCaller(policy, "fd:11", std::nullopt).admin);  // named
  // A connection that is closed and its fd reused names the new caller.
  callers.Connected(7, LocalCaller{1002, 1002, 45, "carol"});
  CHECK(IdentifyCaller(policy, "fd:7", std::nullopt).user == "carol");
}

TEST_CASE("a TCP caller without a certificate is nobody, unless the operator trusts plain TCP") {
  LocalCallers callers;
  callers.Connected(7, LocalCaller{1000, 1000, 42, "alice"});
  for (const char* peer : {"ipv4:127.0.0.1:5555", "fd:8", "fd:x", "unix:", ""}) {
    INFO(peer);
    Caller refused = IdentifyCaller(Policy(&callers), peer, std::nullopt);
    CHECK(refused.proof == CallerProof::kNone);
    CHECK_FALSE(refused.admin);
    CHECK_FALSE(refused.is_user());
    CHECK_FALSE(refused.MayActOnJobOf(""));
    CHECK(absl::IsUnauthenticated(RequireUser(refused)));

    Caller trusted = IdentifyCaller(Policy(&callers, "dev"), peer, std::nullopt);
    CHECK(trusted.proof == CallerProof::kTrustedTcp);
    CHECK(trusted.user == "dev");
    CHECK(trusted.admin);
  }
  CHECK(IdentifyCaller(Policy(nullptr), "fd:7", std::nullopt).proof == CallerProof::kNone);
}

TEST_CASE("a client certificate names a user, or with node: a node that is no user") {
  const CallerPolicy policy = Policy(nullptr, "dev");
  Caller carol = IdentifyCaller(policy, "ipv4:127.0.0.1:5555", std::string("carol"));
  CHECK(carol.proof == CallerProof::kUserCertificate);
  CHECK(carol.user == "carol");
  CHECK_FALSE(carol.admin);
  CHECK(carol.MayActOnJobOf("carol"));
  CHECK(IdentifyCaller(policy, "ipv4:127.0.0.1:5555", std::string("bob")).admin);
  CHECK(IdentifyCaller(policy, "ipv4:127.0.0.1:5555", std::string("root")).admin);

  Caller node = IdentifyCaller(policy, "ipv4:127.0.0.1:5555", std::string("node:gpu01"));
  CHECK(node.proof == CallerProof::kNodeCertificate);
  CHECK(node.node == "gpu01");
  CHECK(node.user.empty());
  CHECK_FALSE(node.admin);
  // Not even a job of "" is a node's to act on.
  CHECK_FALSE(node.MayActOnJobOf(""));
  CHECK(absl::IsPermissionDenied(RequireUser(node)));
}

TEST_CASE("a uid's name is looked up once per minute, and a uid without a name is its digits") {
  gpusched::server::UserNameCache names(absl::Seconds(60));
  const absl::Time t0 = absl::FromUnixSeconds(1'000'000);
  CHECK(names.NameOf(0, t0) == "root");
  CHECK(names.NameOf(0, t0 + absl::Seconds(59)) == "root");
  CHECK(names.NameOf(0, t0 + absl::Seconds(61)) == "root");  // looked up again, same answer
  // No account has this uid on a test machine.
  CHECK(names.NameOf(3'999'999'001u, t0) == "3999999001");
  CHECK(gpusched::server::UserName(3'999'999'001u) == "3999999001");
}
