#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::agent {

struct UserIdentity {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, looked up before fork
  std::string home;
  std::string shell;
};

// Who a job runs as, and whether the child has to switch to that user.
struct JobIdentity {
  UserIdentity user;
  bool switch_user = false;
};

absl::StatusOr<UserIdentity> LookupUser(absl::string_view name);

// spec.user "" or the agent's own user: run as the agent. Another user: only
// possible when the agent runs as root; otherwise an error that says so.
absl::StatusOr<JobIdentity> ResolveJobUser(absl::string_view requested);

}  // namespace gpusched::agent
