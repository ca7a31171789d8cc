#include "cli/client.h"

#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpusched::cli {

namespace {

// Pages of `Response` from `list`, followed by token until the last; the
// items of every page go through `append`.
template <typename Request, typename Response, typename List, typename Append>
absl::StatusOr<Response> ListAll(Request request, List list, Append append) {
  Response all;
  std::set<std::string> seen_tokens;
  while (true) {
    absl::StatusOr<Response> page = list(request);
    if (!page.ok()) return page.status();
    append(*page, all);
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

}  // namespace

absl::StatusOr<v1::ListJobsResponse> ListAllJobs(SchedulerClient& client, v1::ListJobsRequest request) {
  return ListAll<v1::ListJobsRequest, v1::ListJobsResponse>(
      std::move(request), [&](const v1::ListJobsRequest& r) { return client.ListJobs(r); },
      [](v1::ListJobsResponse& page, v1::ListJobsResponse& all) {
        for (v1::Job& job : *page.mutable_jobs()) *all.add_jobs() = std::move(job);
      });
}

absl::StatusOr<v1::ListNodesResponse> ListAllNodes(SchedulerClient& client, v1::ListNodesRequest request) {
  return ListAll<v1::ListNodesRequest, v1::ListNodesResponse>(
      std::move(request), [&](const v1::ListNodesRequest& r) { return client.ListNodes(r); },
      [](v1::ListNodesResponse& page, v1::ListNodesResponse& all) {
        for (v1::Node& node : *page.mutable_nodes()) *all.add_nodes() = std::move(node);
      });
}

}  // namespace gpusched::cli
