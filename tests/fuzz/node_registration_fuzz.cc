// An agent's registration as it arrives on the wire (the bytes are a
// serialized NodeInfo): the daemon validates it, and what passes must be
// safe for the core to place jobs on.
#include "common/clock.h"
#include "daemon/core/node_validator.h"
#include "daemon/core/scheduler_core.h"
#include "tests/fuzz/core_fuzz_cluster.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpusched;
  fuzz::QuietProtobufLogs();
  v1::NodeInfo node;
  if (!node.ParseFromArray(data, static_cast<int>(size))) return 0;
  if (!core::ValidateNodeInfo(node).ok()) return 0;
  ManualClock clock;
  clock.Set(absl::FromUnixSeconds(1'700'000'000));
  core::SchedulerCore core(clock, core::CoreOptions{});
  core::Effects fx;
  fuzz::RegisterSmallCluster(core, fx);
  fuzz::Register(core, node, fx);  // may also re-register one of the three
  for (int gpus : {1, 2, 4, 8, 16}) {
    v1::JobSpec spec;
    spec.add_argv("/bin/true");
    spec.mutable_resources()->set_gpus(gpus);
    (void)core.Submit(spec, "", fx);
  }
  core.Tick(fx);
  core.Schedule(fx);
  for (const auto& [name, slot] : core.cluster().nodes()) {
    FUZZ_CHECK(slot.FreeGpus() >= 0 && slot.FreeGpus() <= slot.gpu_count);
  }
  return 0;
}
