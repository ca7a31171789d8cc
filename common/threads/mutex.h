#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace gpusched {

// A std::mutex that clang's thread-safety analysis understands: members say
// ABSL_GUARDED_BY(mu_), functions ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_), and
// -Wthread-safety checks them (the thread_safety test). Not absl::Mutex:
// Debian's Abseil is not built for ThreadSanitizer, which then cannot see
// its locking and takes every guarded access for a race; std::mutex is
// pthreads, which TSan intercepts.
class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Holds `mu` until Release() or the end of its scope, whichever is first.
class ABSL_SCOPED_LOCKABLE ReleasableMutexLock {
 public:
  explicit ReleasableMutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~ReleasableMutexLock() ABSL_UNLOCK_FUNCTION() {
    if (mu_ != nullptr) mu_->Unlock();
  }
  void Release() ABSL_UNLOCK_FUNCTION() {
    mu_->Unlock();
    mu_ = nullptr;
  }
  ReleasableMutexLock(const ReleasableMutexLock&) = delete;
  ReleasableMutexLock& operator=(const ReleasableMutexLock&) = delete;

 private:
  Mutex* mu_;
};

// A condition variable for Mutex. Each wait may end early (a spurious
// wake-up), so callers loop on their condition. Deadlines are on the
// monotonic clock: a wall-clock step must not stretch or cut a timeout.
class CondVar {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> held(mu->mu_, std::adopt_lock);
    cv_.wait(held);
    held.release();
  }
  // False once `deadline` has passed (then it does not wait):
  //   while (!done_ && cv_.WaitUntil(&mu_, deadline)) {}
  bool WaitUntil(Mutex* mu, Deadline deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::unique_lock<std::mutex> held(mu->mu_, std::adopt_lock);
    cv_.wait_until(held, deadline);
    held.release();
    return true;
  }
  bool WaitFor(Mutex* mu, absl::Duration timeout) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return WaitUntil(mu, DeadlineIn(timeout));
  }
  static Deadline DeadlineIn(absl::Duration timeout) {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(absl::ToChronoNanoseconds(timeout));
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace gpusched
