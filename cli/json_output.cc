#include "cli/json_output.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace gpusched::cli {

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("cannot print ", message.GetTypeName(), " as JSON: ", status.ToString()));
  }
  return json;
}

absl::Status PrintJsonLine(std::ostream& out, const google::protobuf::Message& message) {
  auto json = ToJson(message);
  if (!json.ok()) return json.status();
  out << *json << '\n';
  return absl::OkStatus();
}

}  // namespace gpusched::cli
