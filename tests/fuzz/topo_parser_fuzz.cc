// `nvidia-smi topo -m` text comes from agents' --topology-file and from the
// fixtures users save: any bytes must parse or fail cleanly, and what parses
// must survive our own printer.
#include <string>

#include "common/topology/nvidia_smi_topo.h"
#include "common/topology/nvidia_smi_topo_format.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto topo = gpusched::topology::ParseNvidiaSmiTopo(text);
  if (!topo.ok()) return 0;
  const std::string printed = gpusched::topology::FormatNvidiaSmiTopo(*topo);
  auto again = gpusched::topology::ParseNvidiaSmiTopo(printed);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->num_gpus() == topo->num_gpus());
  FUZZ_CHECK(again->nics().size() == topo->nics().size());
  return 0;
}
