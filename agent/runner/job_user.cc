#include "agent/runner/job_user.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpusched::agent {
namespace {

UserIdentity FromPasswd(const passwd& pw) {
  UserIdentity user;
  user.name = pw.pw_name;
  user.uid = pw.pw_uid;
  user.gid = pw.pw_gid;
  user.home = pw.pw_dir ? pw.pw_dir : "";
  user.shell = pw.pw_shell ? pw.pw_shell : "";
  // initgroups() reads /etc/group and allocates, which a forked child of a
  // threaded process must not do; the group list is fetched here instead.
  int count = 32;
  std::vector<gid_t> groups(count);
  while (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) {
    groups.resize(count > static_cast<int>(groups.size()) ? count : groups.size() * 2);
    count = static_cast<int>(groups.size());
  }
  groups.resize(count);
  user.groups = std::move(groups);
  return user;
}

// getpwnam_r/getpwuid_r with a buffer that grows until it fits.
template <typename Lookup>
absl::StatusOr<UserIdentity> LookupWith(Lookup lookup, const std::string& what) {
  std::vector<char> buf(4096);
  while (true) {
    passwd pw;
    passwd* result = nullptr;
    int rc = lookup(&pw, buf.data(), buf.size(), &result);
    if (rc == ERANGE) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc != 0) return absl::InternalError(absl::StrCat("looking up user ", what, ": ", std::strerror(rc)));
    if (result == nullptr) return absl::NotFoundError(absl::StrCat("no user ", what, " on this node"));
    return FromPasswd(pw);
  }
}

UserIdentity Self() {
  uid_t uid = geteuid();
  auto found =
      LookupWith([uid](passwd* pw, char* buf, size_t len, passwd** out) { return getpwuid_r(uid, pw, buf, len, out); },
                 absl::StrCat("with uid ", uid));
  if (found.ok()) return *std::move(found);
  // Containers often run under a uid that /etc/passwd does not know.
  UserIdentity self;
  self.name = std::to_string(uid);
  self.uid = uid;
  self.gid = getegid();
  const char* home = std::getenv("HOME");
  self.home = home ? home : "";
  return self;
}

}  // namespace

absl::StatusOr<UserIdentity> LookupUser(absl::string_view name) {
  std::string n(name);
  return LookupWith(
      [&n](passwd* pw, char* buf, size_t len, passwd** out) { return getpwnam_r(n.c_str(), pw, buf, len, out); },
      absl::StrCat("\"", name, "\""));
}

absl::StatusOr<JobIdentity> ResolveJobUser(absl::string_view requested) {
  // The agent's own account, looked up once: its uid does not change, and
  // a look-up reads the user database on every launch.
  static const UserIdentity* const kSelf = new UserIdentity(Self());
  UserIdentity self = *kSelf;
  if (requested.empty() || requested == self.name) return JobIdentity{std::move(self), false};
  if (self.uid != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("agent runs as ", self.name, " and cannot start jobs as ", requested));
  }
  auto user = LookupUser(requested);
  if (!user.ok()) return user.status();
  bool other = user->uid != self.uid;
  return JobIdentity{*std::move(user), other};
}

}  // namespace gpusched::agent
