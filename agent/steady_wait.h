#pragma once

#include <chrono>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace gpusched::agent {

// Waits on `cv` for a signal or until `deadline` on the monotonic clock (a
// wall-clock step must not stretch or cut a timeout); false once the
// deadline has passed. Callers loop on their condition:
//   while (!done_ && WaitUntil(cv_, mu_, deadline)) {}
inline bool WaitUntil(absl::CondVar& cv, absl::Mutex& mu, std::chrono::steady_clock::time_point deadline)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  const auto now = std::chrono::steady_clock::now();
  if (now >= deadline) return false;
  cv.WaitWithTimeout(&mu, absl::FromChrono(deadline - now));
  return true;
}

}  // namespace gpusched::agent
