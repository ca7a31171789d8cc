#pragma once

#include <string>
#include <vector>

#include "agent/gpu/gpu_sampler.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace gpusched::agent {

// Per-GPU readings at /metrics, named and labelled as NVIDIA's DCGM exporter
// names them, so that its dashboards and alerts work on gpusched nodes
// without DCGM:
//
//   DCGM_FI_DEV_GPU_UTIL        GPU utilization (%)
//   DCGM_FI_DEV_MEM_COPY_UTIL   memory utilization (%)
//   DCGM_FI_DEV_FB_USED         framebuffer memory used (MiB)
//   DCGM_FI_DEV_FB_FREE         framebuffer memory free (MiB)
//   DCGM_FI_DEV_GPU_TEMP        GPU temperature (C)
//   DCGM_FI_DEV_POWER_USAGE     power draw (W)
// each with gpu, UUID, pci_bus_id, device, modelName and Hostname labels, and
//   gpusched_agent_gpu_up       1 when NVML answered for the GPU, 0 when it
//                               reported an error (a GPU lost from the bus)
// with the same labels. Read from the sampler at each scrape; a reading the
// GPU lacks is left out for that GPU.
class GpuCollector final : public prometheus::Collectable {
 public:
  // `sampler` must outlive the collector.
  GpuCollector(std::string hostname, const GpuSampler* sampler) : hostname_(std::move(hostname)), sampler_(sampler) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::string hostname_;
  const GpuSampler* sampler_;
};

}  // namespace gpusched::agent
