#include "common/topology/link_bandwidth.h"

#include <catch2/catch.hpp>

using namespace gpusched::topology;

TEST_CASE("GPU generation comes from the model string") {
  CHECK(GpuGenerationFromModel("Tesla V100-SXM2-32GB") == GpuGeneration::kVolta);
  CHECK(GpuGenerationFromModel("NVIDIA A100-SXM4-40GB") == GpuGeneration::kAmpere);
  CHECK(GpuGenerationFromModel("NVIDIA A10G") == GpuGeneration::kAmpere);
  CHECK(GpuGenerationFromModel("NVIDIA A30") == GpuGeneration::kAmpere);
  CHECK(GpuGenerationFromModel("NVIDIA H100 80GB HBM3") == GpuGeneration::kHopper);
  CHECK(GpuGenerationFromModel("NVIDIA H200") == GpuGeneration::kHopper);
  CHECK(GpuGenerationFromModel("NVIDIA H20") == GpuGeneration::kHopper);
  CHECK(GpuGenerationFromModel("NVIDIA L40S") == GpuGeneration::kAda);
  CHECK(GpuGenerationFromModel("NVIDIA L4") == GpuGeneration::kAda);
  CHECK(GpuGenerationFromModel("NVIDIA GeForce RTX 4090") == GpuGeneration::kAda);
  CHECK(GpuGenerationFromModel("nvidia a100") == GpuGeneration::kAmpere);
  CHECK(GpuGenerationFromModel("Tesla T4") == GpuGeneration::kUnknown);
  CHECK(GpuGenerationFromModel("") == GpuGeneration::kUnknown);
  CHECK(GpuGenerationName(GpuGeneration::kHopper) == "Hopper");
}

TEST_CASE("NVLink estimates: 25 GB/s per link per direction") {
  CHECK(EstimatedLinkBandwidthGBps({LinkKind::kNvLink, 12}, GpuGeneration::kAmpere) == Approx(300.0));
  CHECK(EstimatedLinkBandwidthGBps({LinkKind::kNvLink, 18}, GpuGeneration::kHopper) == Approx(450.0));
  CHECK(EstimatedLinkBandwidthGBps({LinkKind::kNvLink, 2}, GpuGeneration::kVolta) == Approx(50.0));
  CHECK(EstimatedLinkBandwidthGBps({LinkKind::kNvLink, 1}, GpuGeneration::kVolta) == Approx(25.0));
}

TEST_CASE("PCIe estimates follow the generation and the path") {
  CHECK(PcieX16GBps(GpuGeneration::kVolta) == Approx(12.0));
  CHECK(PcieX16GBps(GpuGeneration::kAmpere) == Approx(25.0));
  CHECK(PcieX16GBps(GpuGeneration::kAda) == Approx(25.0));
  CHECK(PcieX16GBps(GpuGeneration::kHopper) == Approx(50.0));
  CHECK(PcieX16GBps(GpuGeneration::kUnknown) == Approx(25.0));
  CHECK(EstimatedLinkBandwidthGBps({LinkKind::kPix, 0}, GpuGeneration::kHopper) == Approx(50.0));
  CHECK(EstimatedLinkBandwidthGBps({LinkKind::kSys, 0}, GpuGeneration::kAmpere) == Approx(16.25));
  CHECK(EstimatedLinkBandwidthGBps({LinkKind::kSelf, 0}, GpuGeneration::kAmpere) == 0);
}

TEST_CASE("estimates follow the class order within NVLink and within PCIe") {
  const Link pcie[] = {
      {LinkKind::kPix, 0}, {LinkKind::kPxb, 0}, {LinkKind::kPhb, 0}, {LinkKind::kNode, 0}, {LinkKind::kSys, 0}};
  for (GpuGeneration gen : {GpuGeneration::kUnknown, GpuGeneration::kVolta, GpuGeneration::kAmpere, GpuGeneration::kAda,
                            GpuGeneration::kHopper}) {
    INFO(GpuGenerationName(gen));
    for (size_t i = 0; i + 1 < sizeof(pcie) / sizeof(pcie[0]); ++i) {
      CHECK(EstimatedLinkBandwidthGBps(pcie[i], gen) > EstimatedLinkBandwidthGBps(pcie[i + 1], gen));
    }
    for (int n = 1; n < 18; ++n) {
      CHECK(EstimatedLinkBandwidthGBps({LinkKind::kNvLink, n + 1}, gen) >
            EstimatedLinkBandwidthGBps({LinkKind::kNvLink, n}, gen));
    }
    // The NVLink widths real machines have beat every PCIe path.
    CHECK(EstimatedLinkBandwidthGBps({LinkKind::kNvLink, 4}, gen) > EstimatedLinkBandwidthGBps(pcie[0], gen));
  }
  // DGX-1's NV1 beats its Gen3 PCIe, as LinkRank says.
  CHECK(EstimatedLinkBandwidthGBps({LinkKind::kNvLink, 1}, GpuGeneration::kVolta) >
        EstimatedLinkBandwidthGBps(pcie[0], GpuGeneration::kVolta));
  // Documented exception: one Hopper NVLink estimates below Gen5 PIX even
  // though LinkRank puts every NVLink first.
  CHECK(EstimatedLinkBandwidthGBps({LinkKind::kNvLink, 1}, GpuGeneration::kHopper) <
        EstimatedLinkBandwidthGBps(pcie[0], GpuGeneration::kHopper));
  CHECK(BetterThan({LinkKind::kNvLink, 1}, pcie[0]));
}

TEST_CASE("pair estimates use the GPU's model") {
  NodeTopology t(2, 0);
  t.SetGpuLink(0, 1, Link{LinkKind::kNvLink, 12});
  t.gpus()[0].model = "NVIDIA A100-SXM4-40GB";
  CHECK(EstimatedGpuPairBandwidthGBps(t, 0, 1) == Approx(300.0));
  CHECK(EstimatedGpuPairBandwidthGBps(t, 0, 0) == 0);
  CHECK(EstimatedGpuPairBandwidthGBps(t, 0, 5) == 0);
}

TEST_CASE("placement counts a pair measured slower than its link class on the node at its share, in tenths") {
  NodeTopology t(4, 0);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      if (i != j) t.SetGpuLink(i, j, Link{(i < 2) == (j < 2) ? LinkKind::kNvLink : LinkKind::kSys, 12});
    }
  }
  for (auto& gpu : t.gpus()) gpu.model = "NVIDIA A100-SXM4-40GB";
  // Not measured: the estimates as they are.
  std::vector<double> matrix = PlacementGpuPairMatrixGBps(t);
  CHECK(matrix[0 * 4 + 1] == Approx(300));
  CHECK(matrix[0 * 4 + 2] == Approx(25 * 0.65));
  // NVLink pairs 0-1 and 2-3; SYS between the halves.
  t.SetMeasuredGpuPairGBps(0, 1, 150);
  t.SetMeasuredGpuPairGBps(2, 3, 210);
  t.SetMeasuredGpuPairGBps(0, 2, 12);
  t.SetMeasuredGpuPairGBps(0, 3, 13);
  t.SetMeasuredGpuPairGBps(1, 2, 6.4);
  CHECK(t.MeasuredGpuPairGBps(1, 0) == 150);
  const std::vector<double> factor = MeasuredShortfall(t);
  CHECK(factor[0 * 4 + 1] == Approx(0.7));  // 150 of the best NV12's 210: 0.71 -> 0.7
  CHECK(factor[1 * 4 + 0] == Approx(0.7));
  CHECK(factor[2 * 4 + 3] == 1);            // the best of its class
  CHECK(factor[0 * 4 + 2] == 1);            // 12 of 13: within 10%
  CHECK(factor[1 * 4 + 2] == Approx(0.4));  // 6.4 of 13: 0.49 -> 0.4
  CHECK(factor[1 * 4 + 3] == 1);            // not measured
  matrix = PlacementGpuPairMatrixGBps(t);
  CHECK(matrix[0 * 4 + 1] == Approx(210));
  CHECK(matrix[2 * 4 + 3] == Approx(300));  // a healthy calibrated pair keeps its estimate
  CHECK(matrix[1 * 4 + 1] == 0);
}
