#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched {

// The GPUs (or MIG instances) a job asked for: resources.gpus, or nodes x
// gpus_per_node.
int64_t RequestedGpus(const v1::Resources& resources);

// The multiprocessor slices of a MIG profile's GPU instance: "3g.40gb" and
// "1c.3g.40gb" -> 3; 0 when the name does not say.
int MigSlicesOf(absl::string_view profile);

// How much of the GPUs a job holds, in thousandths of a GPU, as fair share,
// queue and user limits and `history` count it: a whole GPU is 1000; a share
// is its part of each GPU; a MIG instance its slices of the seven an A100,
// H100 or H200 has (3g.40gb: 3/7), or a whole GPU when its profile does not
// say.
int64_t HeldGpuMilli(const v1::Resources& resources);
// One MIG instance of `profile`, in thousandths of its GPU.
int64_t MigInstanceMilli(absl::string_view profile);
inline double HeldGpus(const v1::Resources& resources) { return HeldGpuMilli(resources) / 1000.0; }

}  // namespace gpusched
