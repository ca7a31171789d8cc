#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace grpc {
class ServerContextBase;
}

namespace gpusched::server {

class LocalCallers;
struct LocalCaller;

// A client certificate whose subject CN is "node:NAME" proves an agent of
// node NAME; any other CN is a user name. A POSIX user name has no colon, so
// the two cannot be confused.
inline constexpr absl::string_view kNodeCertificatePrefix = "node:";

// How a caller proved who it is.
enum class CallerProof {
  kNone,             // plain TCP, or TLS without a client certificate: refused
  kUnixSocket,       // SO_PEERCRED on the Unix socket: the kernel's word
  kUserCertificate,  // a client certificate signed by tls_client_ca, CN = user
  kNodeCertificate,  // the same, CN = node:NAME: an agent, not a user
  kTrustedTcp,       // allow_unauthenticated_tcp: the operator trusts every TCP caller
};

// Who is calling and what they may do. Decided once per call from what the
// transport proved, never from what the request says.
struct Caller {
  CallerProof proof = CallerProof::kNone;
  std::string user;    // a user's name (kUnixSocket, kUserCertificate, kTrustedTcp)
  std::string node;    // kNodeCertificate: the node it proves
  uid_t uid = 0;       // kUnixSocket only
  bool admin = false;  // root, a name in `admins`, or a trusted TCP caller

  bool is_user() const {
    return proof == CallerProof::kUnixSocket || proof == CallerProof::kUserCertificate ||
           proof == CallerProof::kTrustedTcp;
  }
  // Whether this caller may cancel, hold or release a job of `owner`, and
  // see its command, script and environment.
  bool MayActOnJobOf(const std::string& owner) const { return admin || (is_user() && owner == user); }
  // "alice (uid 1000, Unix socket)", "node gpu01 (node certificate)": for messages.
  std::string Describe() const;
};

// What decides who a caller is: the daemon's settings.
struct CallerPolicy {
  const LocalCallers* local = nullptr;  // null without a Unix socket
  std::set<std::string> admins;
  // Every TCP caller without a certificate is this user, an admin: a
  // single-user development setup. Empty: such callers are refused.
  std::string trusted_tcp_user;
};

// A caller on the Unix socket, as the kernel named it when it connected.
Caller LocalUser(const CallerPolicy& policy, const LocalCaller& local);
// `grpc_peer` is the call's peer ("fd:N" for the Unix socket);
// `certificate_cn` the verified client certificate's subject CN, if any.
Caller IdentifyCaller(const CallerPolicy& policy, absl::string_view grpc_peer,
                      const std::optional<std::string>& certificate_cn);
// The same, from a gRPC call's peer and auth context.
Caller IdentifyCaller(const CallerPolicy& policy, const grpc::ServerContextBase& ctx);

// OK for a user; UNAUTHENTICATED saying how to authenticate for a caller
// that proved nothing; PERMISSION_DENIED for an agent's node certificate.
absl::Status RequireUser(const Caller& caller);

}  // namespace gpusched::server
