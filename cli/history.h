#pragma once

#include <string>

#include "absl/time/time.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::cli {

// What a finished job cost, from the times and resources on its record.
// Only its last attempt: a requeued job's earlier runs are not on it.
struct JobAccounting {
  absl::Duration waited;  // submit to start (submit to end if it never started)
  absl::Duration ran;     // start to end
  double gpu_hours = 0;   // its GPUs for `ran`
};
JobAccounting AccountFor(const v1::Job& job);

// `gpusched history`: one row per job (ID, NAME, USER, QUEUE, STATE, GPUS,
// WAITED, RAN, GPU-H, ENDED, NODES), then a total line.
std::string RenderHistoryTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, absl::TimeZone zone);

// The same as JSON: {"jobs":[{id, name, user, account, queue, state, gpus,
// submit_time, start_time, end_time, wait_s, run_s, gpu_hours, attempts,
// exit_code, reason, placement}], "gpu_hours": total}.
std::string RenderHistoryJson(const google::protobuf::RepeatedPtrField<v1::Job>& jobs);

}  // namespace gpusched::cli
