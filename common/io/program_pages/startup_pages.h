#pragma once

#include <string>

namespace gpusched::io {

// ReleaseProgramPages() (program_pages.h) for a daemon that has started and
// now serves, said in the log of `logger`: the amount at debug level, and a
// warning when it cannot, which is no reason to stop.
void ReleaseStartupPages(const std::string& logger);

}  // namespace gpusched::io
