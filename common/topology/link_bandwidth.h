#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/topology/link_kind.h"
#include "common/topology/node_topology.h"

namespace gpusched::topology {

enum class GpuGeneration { kUnknown, kVolta, kAmpere, kAda, kHopper };

// From the model string NVML / nvidia-smi reports, case-insensitively:
// "V100" -> Volta; "A100", "A10", "A30" -> Ampere; "H100", "H200", "H20" ->
// Hopper; "L40S", "4090", "L4" -> Ada; anything else (or "") -> kUnknown.
GpuGeneration GpuGenerationFromModel(absl::string_view model);
std::string GpuGenerationName(GpuGeneration gen);  // "Volta", ..., "unknown"

// ESTIMATES, not measurements: the unidirectional bandwidth in GB/s one GPU
// can expect to push to a peer over `link`. Use them to rank placements and
// to size expectations; the NCCL preflight measures the real figure.
//
// NVLink, per link and direction (times n for NV<n>):
//   generation  figure  source
//   Volta       25      V100 datasheet: NVLink2, 6 links, 300 GB/s total
//                       bidirectional -> 25 GB/s per link per direction
//   Ampere      25      A100 datasheet / Ampere whitepaper: NVLink3, 12
//                       links, 600 GB/s bidirectional -> NV12 = 300 GB/s
//   Hopper      25      H100/H200 datasheet / Hopper whitepaper: NVLink4, 18
//                       links, 900 GB/s bidirectional -> NV18 = 450 GB/s
//   Ada/unknown 25      Ada parts have no NVLink; if NV<n> shows up anyway we
//                       assume the NVLink2-4 per-link rate
//   For scale, nccl-tests issue 178 reports ~208 GB/s all-reduce busbw on an
//   NVLinked A100 pair versus ~20 GB/s across PCIe/QPI.
//
// PCIe x16, per direction, achievable (about 80% of the raw rate):
//   Volta   Gen3  12 GB/s (raw 15.75; V100 is a Gen3 part)
//   Ampere  Gen4  25 GB/s (raw 31.5; A100/A10/A30 are Gen4)
//   Ada     Gen4  25 GB/s (L40S, L4, RTX 4090 are Gen4)
//   Hopper  Gen5  50 GB/s (raw 63; H100/H200 are Gen5)
//   unknown Gen4  25 GB/s
// scaled by how far the path travels (our own derating, chosen to keep the
// order PIX > PXB > PHB > NODE > SYS and to land SYS on Gen4 near the ~20
// GB/s of nccl-tests issue 178):
//   PIX 1.00, PXB 0.95, PHB 0.85, NODE 0.80, SYS 0.65
// Self (X) is not a link and returns 0.
//
// These estimates can disagree with LinkRank() for narrow NVLinks: one NVLink
// (25 GB/s) does not beat a full PCIe Gen4 path (25) and loses to Gen5 (50).
// LinkRank keeps the class order (any NVLink above PCIe) because that is the
// order placement asks for; code that weighs bandwidth should use these
// figures instead. Real NV1 (DGX-1 V100) sits next to Gen3 PCIe (12), where
// both orders agree.
double EstimatedLinkBandwidthGBps(const Link& link, GpuGeneration gen);

// The two inputs of the table above.
double NvLinkPerLinkGBps(GpuGeneration gen);
double PcieX16GBps(GpuGeneration gen);

// EstimatedLinkBandwidthGBps for GPUs i and j of `topo`, the generation taken
// from GPU i's model (kUnknown when empty). 0 for i == j or out of range.
double EstimatedGpuPairBandwidthGBps(const NodeTopology& topo, int i, int j);

// How far the NCCL probe measured each GPU pair below the best-measured pair
// of the same link class on the node: a factor in (0, 1], row-major (num_gpus
// squared entries). 1 where nothing was measured or the pair is within 10% of
// the best of its class; else its share of that best, rounded down to a tenth
// (at least 0.1). Relative to its own class on its own node because NCCL
// reaches a different share of each link's rate (70-90% on healthy
// hardware): held against the estimate instead, every calibrated node would
// rank below every uncalibrated one, and alike nodes would split on noise.
// A class slow as a whole is caught by the drain check (probe_verdict.h).
std::vector<double> MeasuredShortfall(const NodeTopology& topo);

// What placement counts for every pair: the estimate times MeasuredShortfall,
// row-major, each GPU's model matched once rather than once per pair.
std::vector<double> PlacementGpuPairMatrixGBps(const NodeTopology& topo);

}  // namespace gpusched::topology
