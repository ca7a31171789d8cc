#pragma once

#include <string>

#include "absl/time/time.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::cli {

// `gpusched status JOB`: spec, state and why, times, exit code, the placement
// per node with its log dir, the rendezvous address, and the event history.
std::string RenderJobDetail(const v1::Job& job, absl::Time now, absl::TimeZone zone);

// "8 GPUs (2 nodes x 4), 8 CPUs/GPU, 64G/GPU"; "4 CPUs, 16G" for a CPU-only job.
std::string DescribeResources(const v1::Resources& resources);

}  // namespace gpusched::cli
