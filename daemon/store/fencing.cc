#include "daemon/store/fencing.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace gpusched::store {
namespace {
constexpr absl::string_view kFencedPayload = "gpusched.dev/fenced-out";
}  // namespace

absl::Status FencedOutError(absl::string_view message) {
  absl::Status status = absl::FailedPreconditionError(message);
  status.SetPayload(kFencedPayload, absl::Cord("1"));
  return status;
}

bool IsFencedOut(const absl::Status& status) { return status.GetPayload(kFencedPayload).has_value(); }

std::string WriterSessionName(int64_t epoch) { return absl::StrCat("gpuschedd writer of leader epoch ", epoch); }

}  // namespace gpusched::store
