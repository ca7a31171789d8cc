#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/sim/trace.h"

namespace gpusched::sim {

// The Alibaba GPU cluster trace v2023 ("openb") as published, described in
// shared/traces/README.md: a node list and a pod list.
struct OpenbNode {
  int line = 0;
  std::string name;  // sn
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;
  std::string model;
};

struct OpenbPod {
  int line = 0;
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;                  // of each of the num_gpu GPUs; 1000 = whole
  std::vector<std::string> gpu_spec;  // allowed models; empty = any
};

// The node list: columns sn, cpu_milli, memory_mib, gpu, model (others
// ignored). Each row is checked (names unique and non-empty, numbers whole,
// 0 to 64 GPUs, a model when there are GPUs). Errors are InvalidArgument
// "line N: field F: ..." (the Load functions prefix the path).
absl::StatusOr<std::vector<OpenbNode>> ParseOpenbNodes(absl::string_view text);

// The pod list: columns name, cpu_milli, memory_mib, num_gpu, gpu_milli,
// gpu_spec (others, the times and phases, ignored). num_gpu 0 to 64;
// gpu_milli 1 to 1000 with GPUs and 0 without; gpu_spec models joined by '|'.
absl::StatusOr<std::vector<OpenbPod>> ParseOpenbPods(absl::string_view text);

// The pod list as a trace to replay through the core on a clock (`gpuschedd
// simulate`): each pod with GPUs is a job on one node, submitted at its
// creation_time, running deletion_time - scheduled_time, asking gpu_milli of
// each of its num_gpu GPUs, its CPUs (rounded up to whole cores per GPU) and
// memory, and its gpu_spec model. Skipped and counted: CPU-only pods, and
// pods never scheduled (Pending when the trace was taken: no run time). The
// pods have no users; every job is kOpenbUser's. Errors as ParseOpenbPods',
// and a time column out of order names its line.
inline constexpr char kOpenbUser[] = "openb";
absl::StatusOr<Trace> ParseOpenbTrace(absl::string_view text);

absl::StatusOr<std::vector<OpenbNode>> LoadOpenbNodes(const std::string& path);
absl::StatusOr<std::vector<OpenbPod>> LoadOpenbPods(const std::string& path);

}  // namespace gpusched::sim
