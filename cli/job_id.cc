#include "cli/job_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "cli/errors.h"

namespace gpusched::cli {

absl::StatusOr<uint64_t> ParseJobId(absl::string_view text) {
  uint64_t id = 0;
  // SimpleAtoi would take "-1" as a huge unsigned or " 7" with spaces; ids are digits only.
  bool digits = !text.empty();
  for (char c : text) digits = digits && absl::ascii_isdigit(static_cast<unsigned char>(c));
  if (!digits || !absl::SimpleAtoi(text, &id) || id == 0) {
    return UsageError(absl::StrCat("invalid job id \"", text, "\": expected a positive number"));
  }
  return id;
}

}  // namespace gpusched::cli
