#include "common/proto_time.h"

namespace gpusched {

google::protobuf::Timestamp ToProtoTime(absl::Time t) {
  google::protobuf::Timestamp ts;
  const int64_t ns = absl::ToUnixNanos(t);
  ts.set_seconds(ns / 1000000000);
  ts.set_nanos(static_cast<int32_t>(ns % 1000000000));
  return ts;
}

absl::Time FromProtoTime(const google::protobuf::Timestamp& ts) {
  if (!IsSet(ts)) return absl::InfinitePast();
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

bool IsSet(const google::protobuf::Timestamp& ts) { return ts.seconds() != 0 || ts.nanos() != 0; }

}  // namespace gpusched
