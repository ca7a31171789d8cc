#pragma once

#include <sys/types.h>

#include <cstdint>

namespace gpusched::agent {

// Field 22 of /proc/PID/stat (clock ticks after boot), or 0 when it is gone.
// With the pid it names one process: pids are reused, start times within a
// boot are not.
uint64_t ProcessStartTime(pid_t pid);

}  // namespace gpusched::agent
