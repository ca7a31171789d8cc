#pragma once

#include <string>

#include "absl/time/time.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::cli {

// The `gpusched status` list: ID NAME USER QUEUE STATE PRIORITY GPUS NODES TIME REASON,
// one row per job in the order given, except that consecutive pending tasks
// of a job array waiting for the same reason share one ("17_[4-99%8]").
std::string RenderJobTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, absl::Time now);

}  // namespace gpusched::cli
