#include "cli/job_id.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/errors.h"
#include "common/digits.h"

namespace gpusched::cli {
namespace {

absl::Status NoSuchTask(uint64_t array_id, int32_t index) {
  return absl::NotFoundError(absl::StrCat("job array ", array_id, " has no task with index ", index));
}

}  // namespace

absl::StatusOr<uint64_t> ParseJobId(absl::string_view text) {
  uint64_t id = 0;
  if (!ParseDigits(text, &id) || id == 0) {
    return UsageError(absl::StrCat("invalid job id \"", text, "\": expected a positive number"));
  }
  return id;
}

absl::StatusOr<JobRef> ParseJobRef(absl::string_view text) {
  const size_t underscore = text.find('_');
  if (underscore == absl::string_view::npos) {
    auto id = ParseJobId(text);
    if (!id.ok()) return id.status();
    return JobRef{*id, std::nullopt};
  }
  uint64_t array = 0;
  int32_t index = 0;
  absl::string_view array_text = text.substr(0, underscore);
  absl::string_view index_text = text.substr(underscore + 1);
  if (!ParseDigits(array_text, &array) || array == 0 || !ParseDigits(index_text, &index)) {
    return UsageError(absl::StrCat("invalid job id \"", text,
                                   "\": expected a positive number, or ARRAY_INDEX for a task of a job array"));
  }
  return JobRef{array, index};
}

absl::StatusOr<uint64_t> ResolveJobRef(SchedulerClient& client, const JobRef& ref) {
  if (!ref.array_index.has_value()) return ref.id;
  const int32_t wanted = *ref.array_index;
  auto head = client.GetJob(ref.id);
  if (!head.ok()) return head.status();
  if (!head->has_array() || head->array().array_id() != ref.id) {
    return absl::NotFoundError(absl::StrCat("job ", ref.id, " is not a job array"));
  }
  // Tasks have consecutive ids in ascending index order: a search over ids
  // by index, whose first guess is exact for a plain range like 0-99.
  uint64_t low = ref.id;
  uint64_t high = ref.id + head->array().count() - 1;
  const int64_t offset = int64_t{wanted} - head->array().index();
  if (offset < 0) return NoSuchTask(ref.id, wanted);
  uint64_t probe = std::min(high, ref.id + static_cast<uint64_t>(offset));
  while (low <= high) {
    auto task = client.GetJob(probe);
    if (!task.ok()) return task.status();
    if (task->array().index() == wanted) return probe;
    if (task->array().index() < wanted) {
      low = probe + 1;
    } else {
      high = probe - 1;
    }
    probe = low + (high - low) / 2;
  }
  return NoSuchTask(ref.id, wanted);
}

absl::StatusOr<uint64_t> FindJobId(SchedulerClient& client, absl::string_view text) {
  auto ref = ParseJobRef(text);
  if (!ref.ok()) return ref.status();
  return ResolveJobRef(client, *ref);
}

}  // namespace gpusched::cli
