// gpusched_gpu_part: each job's share of a GPU, or its MIG instance, as the
// real scheduling core places and frees them.
#include <catch2/catch.hpp>

#include "daemon/metrics/daemon_metrics.h"
#include "tests/unit/core/core_harness.h"
#include "tests/unit/metrics/metrics_test_util.h"

namespace gpusched::metrics {
namespace {

using core::testing::CoreHarness;
using core::testing::GpuJob;
using core::testing::MakeNode;

void Register(CoreHarness& h, v1::NodeInfo node) {
  v1::RegisterNode reg;
  *reg.mutable_node() = std::move(node);
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
}

TEST_CASE("each share and MIG instance a job holds is a gpusched_gpu_part series, gone when the job ends") {
  CoreHarness h;
  DaemonMetrics m;
  v1::NodeInfo shared = MakeNode("s", 1);
  shared.mutable_gpus(0)->set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  Register(h, shared);
  v1::NodeInfo mig = MakeNode("m", 1);
  v1::GpuInfo& gpu = *mig.mutable_gpus(0);
  gpu.set_mig_enabled(true);
  gpu.set_share_mode(v1::GPU_SHARE_MODE_MIG);
  v1::MigInstance& instance = *gpu.add_mig_instances();
  instance.set_uuid("MIG-a");
  instance.set_profile("3g.40gb");
  Register(h, mig);
  auto pass = [&] {
    h.Pass();
    m.Apply(h.fx);
    h.fx = core::Effects();
  };
  pass();

  v1::JobSpec share = GpuJob(1);
  share.mutable_resources()->set_gpu_share_milli(300);
  const uint64_t a = h.Submit(share);
  v1::JobSpec slice = GpuJob(1);
  slice.mutable_resources()->set_mig_profile("3g.40gb");
  const uint64_t b = h.Submit(slice);
  pass();
  auto part = [&](const char* node, uint64_t job, const char* kind) {
    return testing::Value(*m.registry(), "gpusched_gpu_part",
                          {{"node", node}, {"gpu", "0"}, {"job", std::to_string(job)}, {"kind", kind}});
  };
  CHECK(part("s", a, "share") == Approx(0.3));
  CHECK(part("m", b, "mig") == Approx(0.428));

  h.Report("s", a, v1::JobUpdate::KIND_STARTED, 0);
  h.Report("s", a, v1::JobUpdate::KIND_EXITED, 0);
  pass();
  const std::string scrape = testing::Scrape(*m.registry());
  CHECK(scrape.find("job=\"" + std::to_string(a) + "\"") == std::string::npos);
  CHECK(part("m", b, "mig") == Approx(0.428));
}

}  // namespace
}  // namespace gpusched::metrics
