// Settings files are written by hand: gpuschedd.toml and the simulator's
// cluster specs. Any bytes must be read or refused with a line, never crash.
#include <string>

#include "daemon/config/daemon_config.h"
#include "daemon/sim/cluster_spec.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto daemon = gpusched::daemon::ParseDaemonConfig(text, "fuzz.toml");
  if (!daemon.ok()) FUZZ_CHECK(!daemon.status().message().empty());
  auto cluster = gpusched::sim::ParseClusterSpec(text);
  if (!cluster.ok()) FUZZ_CHECK(!cluster.status().message().empty());
  return 0;
}
