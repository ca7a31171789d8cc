// CalibrateLinks and RunPreflight over a fake probe behind BandwidthProbe.
#include "agent/nccl/link_calibration.h"

#include <catch2/catch.hpp>
#include <map>

#include "agent/nccl/preflight_check.h"
#include "common/topology/nvidia_smi_topo.h"
#include "tests/support/subprocess.h"

namespace gpusched::agent {
namespace {

// Every GPU set measures `busbw`, except those listed; an entry below 0 fails.
class TableProbe : public BandwidthProbe {
 public:
  explicit TableProbe(double busbw, std::map<std::vector<int>, double> special = {})
      : busbw_(busbw), special_(std::move(special)) {}
  absl::StatusOr<ProbeReport> Measure(const std::vector<int>& gpus) override {
    asked.push_back(gpus);
    auto it = special_.find(gpus);
    const double busbw = it == special_.end() ? busbw_ : it->second;
    if (busbw < 0) return absl::InternalError("probe exited with status 1: ncclCommInitAll: unhandled cuda error");
    ProbeReport report;
    report.nccl_version = "2.21.5";
    report.gpus = gpus;
    report.peak_busbw_gbps = busbw;
    return report;
  }
  std::vector<std::vector<int>> asked;

 private:
  double busbw_;
  std::map<std::vector<int>, double> special_;
};

topology::NodeTopology Dgx1() {
  auto topo =
      topology::ParseNvidiaSmiTopo(testing::ReadFile(std::string(GPUSCHED_FIXTURES_DIR) + "/topo/dgx1-v100.txt"));
  REQUIRE(topo.ok());
  for (auto& gpu : topo->gpus()) gpu.model = "Tesla V100-SXM2-16GB";
  return *topo;
}

TEST_CASE("CalibrateLinks measures every pair, then all GPUs, beside the topology's estimates") {
  const topology::NodeTopology topo = Dgx1();
  TableProbe probe(40, {{{0, 3}, 9}});
  v1::NodeProbe result = CalibrateLinks(probe, topo);
  CHECK(result.error().empty());
  CHECK(result.nccl_version() == "2.21.5");
  REQUIRE(result.pairs_size() == 28);
  CHECK(probe.asked.size() == 29);
  CHECK(probe.asked.back() == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(result.all_gpus_busbw_gbps() == 40);
  // DGX-1: GPUs 0 and 3 share two NVLinks (NV2), 0 and 5 none (SYS).
  const v1::GpuPairBandwidth& nv2 = result.pairs(2);
  CHECK((nv2.gpu_a() == 0 && nv2.gpu_b() == 3));
  CHECK(nv2.link() == "NV2");
  CHECK(nv2.estimated_gbps() == Approx(50));
  CHECK(nv2.busbw_gbps() == 9);
  const v1::GpuPairBandwidth& sys = result.pairs(4);
  CHECK((sys.gpu_a() == 0 && sys.gpu_b() == 5));
  CHECK(sys.link() == "SYS");
}

TEST_CASE("CalibrateLinks stops at a probe error and names the GPUs; one GPU has nothing to measure") {
  const topology::NodeTopology topo = Dgx1();
  TableProbe probe(40, {{{1, 2}, -1}});
  v1::NodeProbe result = CalibrateLinks(probe, topo);
  CHECK(result.error() == "GPUs 1-2: probe exited with status 1: ncclCommInitAll: unhandled cuda error");
  CHECK(result.pairs_size() == 7);  // 0-1 .. 0-7
  TableProbe unused(40);
  v1::NodeProbe single = CalibrateLinks(unused, topology::NodeTopology(1, 0));
  CHECK(single.unavailable() == "the node has 1 GPU: no link between GPUs");
  CHECK(unused.asked.empty());
}

TEST_CASE("RunPreflight passes at the minimum, fails below it or on a probe error") {
  v1::Preflight preflight;
  preflight.set_min_busbw_gbps(100);
  preflight.set_expected_busbw_gbps(200);
  TableProbe at(100);
  PreflightOutcome pass = RunPreflight(at, {0, 1, 2, 3}, preflight);
  CHECK(pass.passed);
  CHECK(pass.message ==
        "NCCL all-reduce over GPUs 0,1,2,3: 100.0 GB/s bus bandwidth, at least the 100.0 GB/s "
        "needed (estimate 200.0 GB/s)");
  TableProbe below(99.9);
  CHECK_FALSE(RunPreflight(below, {0, 1}, preflight).passed);
  TableProbe broken(-1);
  PreflightOutcome error = RunPreflight(broken, {0, 1}, preflight);
  CHECK_FALSE(error.passed);
  CHECK(error.busbw_gbps == 0);
  CHECK(error.message ==
        "NCCL all-reduce over GPUs 0,1 failed: probe exited with status 1: ncclCommInitAll: unhandled cuda error");
}

}  // namespace
}  // namespace gpusched::agent
