// `gpuschedd serve --network-topology FILE`: Slurm topology.conf lines.
#include <string>

#include "common/net/network_topology_conf.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto conf = gpusched::ParseNetworkTopologyConf(text);
  if (!conf.ok()) return 0;
  for (const gpusched::NetworkSwitch& sw : conf->switches()) {
    for (const std::string& node : sw.nodes) {
      auto located = conf->Locate(node);
      FUZZ_CHECK(located.has_value());
    }
  }
  (void)conf->Locate("no-such-node");
  return 0;
}
