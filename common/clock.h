#pragma once

#include <atomic>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace gpusched {

// Time comes in through this interface so that the scheduling core can run on
// a virtual clock (simulator, tests) exactly as it runs on the wall clock.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

// The wall clock, for options that take a Clock and default to the real one.
inline const Clock& WallClock() {
  static const SystemClock clock;
  return clock;
}

// A clock that moves only when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(absl::Time start = absl::UnixEpoch()) : now_ns_(absl::ToUnixNanos(start)) {}
  absl::Time Now() const override { return absl::FromUnixNanos(now_ns_.load()); }
  void Advance(absl::Duration d) { now_ns_ += absl::ToInt64Nanoseconds(d); }
  void Set(absl::Time t) { now_ns_ = absl::ToUnixNanos(t); }

 private:
  std::atomic<int64_t> now_ns_;
};

}  // namespace gpusched
