#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/gpu/gpu_sampler.h"
#include "agent/gpu/nvml_library.h"

namespace gpusched::agent {

// Live readings from NVML: utilization, memory, temperature and power of
// every GPU, read on each Sample() (NVML's calls are thread-safe and cheap:
// microseconds each).
class NvmlGpuSampler final : public GpuSampler {
 public:
  // Loads NVML (a soname or an absolute path, as NvmlLibrary::Open) and
  // learns each GPU's identity once. Unavailable when NVML cannot be used;
  // fails, naming the call and GPU, when a GPU cannot say what it is.
  static absl::StatusOr<std::unique_ptr<NvmlGpuSampler>> Open(const std::string& library);

  std::vector<GpuSample> Sample() const override;

 private:
  struct Gpu {
    nvml::nvmlDevice_t handle = nullptr;
    GpuSample identity;  // index, uuid, model, pci_bus_id
  };
  NvmlGpuSampler(std::unique_ptr<NvmlLibrary> nvml, std::vector<Gpu> gpus)
      : nvml_(std::move(nvml)), gpus_(std::move(gpus)) {}

  GpuSample Read(const Gpu& gpu) const;

  std::unique_ptr<NvmlLibrary> nvml_;
  std::vector<Gpu> gpus_;
};

}  // namespace gpusched::agent
