#include "cli/client.h"

#include <set>

#include "absl/strings/str_cat.h"

namespace gpusched::cli {

absl::StatusOr<v1::ListJobsResponse> ListAllJobs(SchedulerClient& client, v1::ListJobsRequest request) {
  v1::ListJobsResponse all;
  std::set<std::string> seen_tokens;
  while (true) {
    auto page = client.ListJobs(request);
    if (!page.ok()) return page.status();
    for (v1::Job& job : *page->mutable_jobs()) *all.add_jobs() = std::move(job);
    const std::string& next = page->next_page_token();
    if (next.empty()) break;
    // A daemon bug must not turn `status` into an endless loop.
    if (!seen_tokens.insert(next).second) {
      return absl::InternalError(absl::StrCat("gpuschedd repeated page token \"", next, "\""));
    }
    request.set_page_token(next);
  }
  return all;
}

}  // namespace gpusched::cli
