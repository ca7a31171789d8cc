#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gpusched::agent {

// One GPU's live readings, for the agent's metrics. A reading the GPU or its
// driver does not offer stays unset.
struct GpuSample {
  int index = 0;
  std::string uuid;
  std::string model;
  std::string pci_bus_id;
  std::optional<double> gpu_utilization_percent;
  std::optional<double> memory_utilization_percent;  // time device memory was read or written
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_free_bytes;
  std::optional<double> temperature_celsius;
  std::optional<double> power_watts;
  // OK when every reading the GPU supports came back; otherwise the first
  // failure, naming the call (a GPU that fell off the bus: "GPU is lost").
  absl::Status status;
};

// Where live GPU readings come from: NVML on a real node (NvmlGpuSampler).
// Nodes with fake or file GPUs have none, and export no GPU readings.
class GpuSampler {
 public:
  virtual ~GpuSampler() = default;
  // Reads every GPU now. Thread-safe: scrapes may overlap.
  virtual std::vector<GpuSample> Sample() const = 0;
};

}  // namespace gpusched::agent
