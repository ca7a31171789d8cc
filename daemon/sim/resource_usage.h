#pragma once

#include <cstdint>

namespace gpusched::sim {

// Peak resident memory of this process (VmHWM), in KiB; 0 when unknown.
int64_t PeakRssKib();
// Starts a new peak from the current resident size (Linux: "5" into
// /proc/self/clear_refs), so that each policy's replay reports its own
// peak; false when the kernel does not allow it (the peak is then the
// process's so far).
bool ResetPeakRss();
// CPU seconds (user + system) this process has used.
double CpuSeconds();

}  // namespace gpusched::sim
