#pragma once

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace gpusched::cli {

// The proto's canonical JSON mapping with protobuf's default options, on one
// line: what --json prints, so any protobuf library can parse it back.
absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message);

// ToJson and a newline to `out`.
absl::Status PrintJsonLine(std::ostream& out, const google::protobuf::Message& message);

}  // namespace gpusched::cli
