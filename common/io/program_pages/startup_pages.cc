#include "common/io/program_pages/startup_pages.h"

#include "common/io/logging/logging.h"
#include "common/io/program_pages/program_pages.h"

namespace gpusched::io {

void ReleaseStartupPages(const std::string& logger) {
  auto released = ReleaseProgramPages();
  if (!released.ok()) {
    GetLogger(logger)->warn("start-up pages kept resident: {}", std::string(released.status().message()));
    return;
  }
  GetLogger(logger)->debug("unmapped {} KiB of its read-only pages, to map back what it uses ({} patched pages kept)",
                           released->bytes / 1024, released->kept_pages);
}

}  // namespace gpusched::io
