#include "daemon/server/caller.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/server/local_callers.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/server_context.h"

namespace gpusched::server {

std::string Caller::Describe() const {
  switch (proof) {
    case CallerProof::kUnixSocket: return absl::StrCat(user, " (uid ", uid, ", Unix socket)");
    case CallerProof::kUserCertificate: return absl::StrCat(user, " (client certificate)");
    case CallerProof::kNodeCertificate: return absl::StrCat("node ", node, " (node certificate)");
    case CallerProof::kTrustedTcp:
      return absl::StrCat(user, " (unauthenticated TCP, trusted by allow_unauthenticated_tcp)");
    case CallerProof::kNone: break;
  }
  return "an unauthenticated caller";
}

Caller LocalUser(const CallerPolicy& policy, const LocalCaller& local) {
  Caller caller;
  caller.proof = CallerProof::kUnixSocket;
  caller.user = local.user;
  caller.uid = local.uid;
  caller.admin = local.uid == 0 || policy.admins.count(local.user) > 0;
  return caller;
}

Caller IdentifyCaller(const CallerPolicy& policy, absl::string_view grpc_peer,
                      const std::optional<std::string>& certificate_cn) {
  if (std::optional<LocalCaller> local = policy.local == nullptr ? std::nullopt : policy.local->Find(grpc_peer)) {
    return LocalUser(policy, *local);
  }
  Caller caller;
  if (certificate_cn.has_value() && !certificate_cn->empty()) {
    if (absl::StartsWith(*certificate_cn, kNodeCertificatePrefix)) {
      caller.proof = CallerProof::kNodeCertificate;
      caller.node = certificate_cn->substr(kNodeCertificatePrefix.size());
      return caller;
    }
    caller.proof = CallerProof::kUserCertificate;
    caller.user = *certificate_cn;
    caller.admin = caller.user == "root" || policy.admins.count(caller.user) > 0;
    return caller;
  }
  if (!policy.trusted_tcp_user.empty()) {
    caller.proof = CallerProof::kTrustedTcp;
    caller.user = policy.trusted_tcp_user;
    caller.admin = true;
  }
  return caller;
}

Caller IdentifyCaller(const CallerPolicy& policy, const grpc::ServerContextBase& ctx) {
  std::optional<std::string> cn;
  // gRPC sets the property only for a certificate it verified against
  // tls_client_ca in the handshake.
  if (std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context(); auth != nullptr) {
    std::vector<grpc::string_ref> values = auth->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
    if (!values.empty()) cn = std::string(values.front().data(), values.front().size());
  }
  return IdentifyCaller(policy, ctx.peer(), cn);
}

absl::Status RequireUser(const Caller& caller) {
  if (caller.is_user()) return absl::OkStatus();
  if (caller.proof == CallerProof::kNodeCertificate) {
    return absl::PermissionDeniedError(
        absl::StrCat("node ", caller.node, "'s certificate is for its agent, not for users: use a user's certificate"));
  }
  return absl::UnauthenticatedError(
      "this daemon does not take unauthenticated callers: use its Unix socket on this host, or a client "
      "certificate signed by its tls_client_ca (tls_cert and tls_key in cli.toml); an operator may allow plain "
      "TCP for a single-user setup with allow_unauthenticated_tcp");
}

}  // namespace gpusched::server
