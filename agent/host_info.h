#pragma once

#include <cstdint>
#include <string>

namespace gpusched::agent {

// What the machine itself says, used when the options leave a value at 0/empty.
std::string HostName();
// CPUs this process may run on (its affinity mask), which is what a container sees.
int64_t DetectCpus();
int64_t DetectMemoryMb();

}  // namespace gpusched::agent
