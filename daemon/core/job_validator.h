#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// Limits on what one request may carry; beyond them a spec is "absurd".
struct SpecLimits {
  int64_t max_gpus = 1'000'000;
  int64_t max_nodes = 100'000;
  int64_t max_cpus = 1'000'000;
  int64_t max_mem_mb = int64_t{1} << 40;
  int64_t max_priority = 1'000'000;
  int64_t max_time_limit_s = 366LL * 24 * 3600;
  size_t max_command_bytes = 128 * 1024;
  size_t max_script_bytes = 1024 * 1024;
  size_t max_env_entries = 1024;
  size_t max_env_bytes = 256 * 1024;
  size_t max_name_bytes = 256;
  // Tasks of one job array (Slurm's MaxArraySize is 1001 by default; a
  // sweep of thousands is common on GPU clusters, and each task is a row).
  size_t max_array_tasks = 10'000;
  // Every task stores the whole spec: an array of a large script would
  // multiply it into gigabytes of rows in one transaction.
  size_t max_array_bytes = 64 << 20;
};

// What a spec gets for the fields its submitter left unset, where the
// operator may choose.
struct SpecDefaults {
  // PREFER takes the best placement free now, which under sustained load
  // splits gangs across nodes; STRICT waits for the idle cluster's best.
  // `gpuschedd simulate --topology` measures the difference on a trace.
  v1::TopologyMode topology = v1::TOPOLOGY_MODE_PREFER;
};

// Checks a submitted spec on its own (not against the cluster) and fills in
// defaults: launch mode per-GPU, gpus from nodes x
// gpus_per_node, the topology mode from `defaults`. The queue and its limits
// are QueuePolicy::Apply's. Errors are
// InvalidArgument naming the field, e.g. "resources.gpus must be >= 0, got -2".
absl::Status ValidateAndNormalize(v1::JobSpec& spec, const SpecLimits& limits = {}, const SpecDefaults& defaults = {});

// A submit's retry key (SubmitJobRequest.client_request_id) is kept and
// indexed by the store as given: at most this long, printable ASCII without
// spaces (a UUID, a hash, a name and a counter). A key the store refused
// (PostgreSQL indexes at most about 2.7 KB of it, and no NUL or invalid
// UTF-8) would fail every commit after it.
inline constexpr size_t kMaxClientRequestIdBytes = 256;
absl::Status CheckClientRequestId(absl::string_view id);

}  // namespace gpusched::core
