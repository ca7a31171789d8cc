#include "cli/json_output.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace gpusched::cli {

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("cannot print ", message.GetTypeName(), " as JSON: ",
                                            status.ToString()));
  }
  return json;
}

}  // namespace gpusched::cli
