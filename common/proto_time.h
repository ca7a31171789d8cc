#pragma once

#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"

namespace gpusched {

google::protobuf::Timestamp ToProtoTime(absl::Time t);
// An unset Timestamp (all zero) reads as absl::InfinitePast().
absl::Time FromProtoTime(const google::protobuf::Timestamp& ts);
bool IsSet(const google::protobuf::Timestamp& ts);

}  // namespace gpusched
