#include "daemon/server/store_health.h"

#include "absl/strings/str_cat.h"
#include "common/threads/mutex.h"

namespace gpusched::server {

void StoreHealth::CommitFailed(const absl::Status& why) {
  MutexLock lock(&mu_);
  why_ = why;
  failing_.store(true, std::memory_order_release);
}

bool StoreHealth::CommitSucceeded() {
  if (!failing()) return false;
  MutexLock lock(&mu_);
  why_ = absl::OkStatus();
  return failing_.exchange(false, std::memory_order_acq_rel);
}

absl::Status StoreHealth::AcceptingChanges() const {
  if (!failing()) return absl::OkStatus();
  MutexLock lock(&mu_);
  return absl::ResourceExhaustedError(
      absl::StrCat("gpuschedd cannot write its state (", why_.message(),
                   "), so it accepts no change until it can; reads still work, and the changes it had accepted are "
                   "written as soon as the store takes them"));
}

}  // namespace gpusched::server
