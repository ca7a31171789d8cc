#pragma once

#include <array>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::store {

// What both engines write and read the same way: which states are final,
// and a row's blob as a message.

inline constexpr std::array<v1::JobState, 6> kEndedStates = {v1::JOB_STATE_COMPLETED, v1::JOB_STATE_FAILED,
                                                             v1::JOB_STATE_CANCELLED, v1::JOB_STATE_TIMEOUT,
                                                             v1::JOB_STATE_NODE_FAIL, v1::JOB_STATE_PREEMPTED};

// "3,4,5,...": the ended states, for an IN (...) list.
std::string EndedStateList();

// The job as stored: events live in their own table. Jobs from the
// scheduler carry none, so a copy is made only when a caller filled them in.
void SerializeWithoutEvents(const v1::Job& job, std::string* blob);

// DATA_LOSS naming the row when `blob` is not a `message`: "job 12 in WHERE is corrupt".
absl::Status ParseRow(absl::string_view blob, google::protobuf::Message& message, absl::string_view what,
                      absl::string_view where);

}  // namespace gpusched::store
