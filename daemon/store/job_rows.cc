#include "daemon/store/job_rows.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpusched::store {

std::string EndedStateList() {
  return absl::StrJoin(kEndedStates, ",", [](std::string* out, v1::JobState s) { absl::StrAppend(out, s); });
}

void SerializeWithoutEvents(const v1::Job& job, std::string* blob) {
  if (job.events_size() == 0) {
    job.SerializeToString(blob);
    return;
  }
  v1::Job stripped = job;
  stripped.clear_events();
  stripped.SerializeToString(blob);
}

absl::Status ParseRow(absl::string_view blob, google::protobuf::Message& message, absl::string_view what,
                      absl::string_view where) {
  if (message.ParseFromArray(blob.data(), static_cast<int>(blob.size()))) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(what, " in ", where, " is corrupt"));
}

}  // namespace gpusched::store
