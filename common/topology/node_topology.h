#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/topology/link_kind.h"

namespace gpusched::topology {

// One MIG device of a GPU in MIG mode: a GPU instance with a compute
// instance in it, as NVML reports it.
struct MigDevice {
  int index = 0;        // nvmlDeviceGetMigDeviceHandleByIndex's index
  std::string uuid;     // "MIG-…": what CUDA_VISIBLE_DEVICES names
  std::string profile;  // "3g.40gb" ("1c.3g.40gb" for a smaller compute instance)
  int gpu_instance_id = 0;
  int compute_instance_id = 0;
  int64_t memory_mb = 0;
  int slices = 0;  // the GPU instance's multiprocessor slices
  friend bool operator==(const MigDevice&, const MigDevice&) = default;
};

struct GpuInfo {
  int index = 0;                  // CUDA/NVML index, GPU<index> in topo -m
  std::string uuid;               // "GPU-…"; empty when unknown (not in topo -m)
  std::string pci_bus_id;         // "00000000:07:00.0"; empty when unknown
  std::string model;              // "NVIDIA A100-SXM4-40GB"; empty when unknown
  int64_t memory_mb = 0;          // 0 when unknown
  int numa_node = -1;             // -1 when unknown
  std::vector<int> cpu_affinity;  // CPUs near this GPU; empty when unknown
  bool mig_enabled = false;
  std::vector<MigDevice> mig_devices;  // with MIG on, its devices by index
  // CUDA compute capability as major*10+minor (90 for H100); 0 when unknown.
  // NCCL's topology XML calls it "sm".
  int compute_capability = 0;
  // The GPU's PCIe link, as the slot trained it: generation (1..6) and lane
  // count; 0 when unknown.
  int pcie_generation = 0;
  int pcie_width = 0;
  // Multi-node NVLink (GB200 NVL72 and the like): GPUs with the same cluster
  // UUID and clique id share one NVLink fabric across nodes. Empty / -1 when
  // the driver reports no fabric, which is every single-node NVSwitch system.
  std::string fabric_cluster_uuid;
  int fabric_clique_id = -1;
};

struct NicInfo {
  // The column title in topo -m: "mlx5_0" on older drivers, "NIC0" on newer
  // ones, which then map it to a device in the "NIC Legend" block.
  std::string name;
  // The device ("mlx5_0"): from the NIC Legend, or `name` when the header
  // already used device names; empty when the output had no legend.
  std::string device;
  std::string pci_bus_id;   // empty when unknown
  int link_speed_gbps = 0;  // 0 when unknown
  int numa_node = -1;       // -1 when unknown
};

// Whether CUDA peer-to-peer access works between two GPUs (NVML's P2P status
// for reads). topo -m does not show it.
enum class P2pStatus { kUnknown, kOk, kNotSupported };

// Where a node sits in the cluster network, from operator labels or the GPU
// fabric. Empty means unknown; nodes with equal non-empty values share that
// switch or domain.
struct NetworkLocation {
  std::string rack;
  std::string leaf;           // leaf (top-of-rack) switch
  std::string spine;          // spine switch / pod
  std::string nvlink_domain;  // multi-node NVLink clique
  friend bool operator==(const NetworkLocation&, const NetworkLocation&) = default;
};

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
  int64_t memory_mb = 0;  // 0 when unknown (topo -m does not show it)
};

// One node's devices and how each pair of them is connected. Indices into
// gpus() / nics() are positions, which for GPUs equal GpuInfo::index when
// built by the nvidia-smi parser.
class NodeTopology {
 public:
  NodeTopology() = default;
  // Sizes the matrices; every pair starts as SYS, the diagonal as self.
  NodeTopology(int num_gpus, int num_nics);

  int num_gpus() const { return static_cast<int>(gpus_.size()); }
  int num_nics() const { return static_cast<int>(nics_.size()); }

  std::vector<GpuInfo>& gpus() { return gpus_; }
  const std::vector<GpuInfo>& gpus() const { return gpus_; }
  std::vector<NicInfo>& nics() { return nics_; }
  const std::vector<NicInfo>& nics() const { return nics_; }
  std::vector<NumaNode>& numa_nodes() { return numa_nodes_; }
  const std::vector<NumaNode>& numa_nodes() const { return numa_nodes_; }

  // Out-of-range indices read as SYS (the worst class) and writes to them are
  // ignored, so that a stale index never crashes the scheduler.
  Link GpuLink(int i, int j) const;
  Link GpuNicLink(int gpu, int nic) const;
  Link NicLink(int a, int b) const;
  void SetGpuLink(int i, int j, Link link);
  void SetGpuNicLink(int gpu, int nic, Link link);
  void SetNicLink(int a, int b, Link link);

  // kUnknown for out-of-range indices and for i == j.
  P2pStatus GpuP2p(int i, int j) const;
  void SetGpuP2p(int i, int j, P2pStatus status);

  NetworkLocation& network() { return network_; }
  const NetworkLocation& network() const { return network_; }

  // What the NCCL probe measured between GPUs i and j (all-reduce bus
  // bandwidth, GB/s), 0 where nothing was measured. Set both ways at once;
  // out-of-range and i == j are ignored as for links.
  double MeasuredGpuPairGBps(int i, int j) const;
  void SetMeasuredGpuPairGBps(int i, int j, double gbps);

  // The NICs with the best link class to `gpu` (all of them on a tie), in
  // index order; empty when there are no NICs or `gpu` is out of range.
  std::vector<int> NicsClosestTo(int gpu) const;

  // Index of the NIC whose name or device is `name_or_device`.
  std::optional<int> FindNic(absl::string_view name_or_device) const;

  // Whether the NVLinks go through NVSwitch (DGX/HGX A100, H100, H200) rather
  // than point to point (DGX-1, NVLink bridges). `nvidia-smi topo -m` prints
  // NV<n> either way, so the parser cannot see this; it leaves the flag false
  // and the caller sets it from the GPU model, NVML fabric info or a fixture.
  bool nvswitch() const { return nvswitch_; }
  void set_nvswitch(bool v) { nvswitch_ = v; }

  // A hint for callers without better information: true when there are at
  // least 4 GPUs and every GPU pair is NVLink with the same link count, which
  // on current systems only an NVSwitch fabric produces. The parser does not
  // apply it by itself.
  bool LooksLikeNvSwitch() const;

 private:
  std::vector<GpuInfo> gpus_;
  std::vector<NicInfo> nics_;
  std::vector<NumaNode> numa_nodes_;
  std::vector<Link> gpu_gpu_;         // row-major num_gpus x num_gpus
  std::vector<Link> gpu_nic_;         // row-major num_gpus x num_nics
  std::vector<Link> nic_nic_;         // row-major num_nics x num_nics
  std::vector<P2pStatus> gpu_p2p_;    // row-major num_gpus x num_gpus
  std::vector<double> gpu_measured_;  // row-major num_gpus x num_gpus; empty until one is set
  NetworkLocation network_;
  bool nvswitch_ = false;
};

}  // namespace gpusched::topology
