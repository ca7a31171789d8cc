#include "tests/bench/load_check.h"

#include <chrono>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/job_states.h"

namespace gpusched::bench {
namespace {

constexpr size_t kMaxExamples = 20;

std::unique_ptr<grpc::ClientContext> Context() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return ctx;
}

}  // namespace

absl::StatusOr<std::vector<v1::Job>> ListAllJobs(v1::Scheduler::Stub& stub, const std::vector<v1::JobState>& states,
                                                 int page_size) {
  std::vector<v1::Job> jobs;
  v1::ListJobsRequest request;
  for (v1::JobState s : states) request.add_states(s);
  request.set_page_size(page_size);
  while (true) {
    v1::ListJobsResponse page;
    grpc::Status status = stub.ListJobs(Context().get(), request, &page);
    if (!status.ok()) return absl::UnavailableError(absl::StrCat("ListJobs: ", status.error_message()));
    for (v1::Job& job : *page.mutable_jobs()) jobs.push_back(std::move(job));
    if (page.next_page_token().empty() || page.jobs_size() == 0) return jobs;
    request.set_page_token(page.next_page_token());
  }
}

CheckOutcome CheckJobs(v1::Scheduler::Stub& stub, const ClientsResult& clients,
                       const std::set<uint64_t>& bench_cancelled) {
  CheckOutcome out;
  auto problem = [&out](const std::string& check, std::string example) {
    ++out.problems_by_check[check];
    if (out.examples.size() < kMaxExamples) out.examples.push_back(check + ": " + std::move(example));
  };
  if (clients.problem_count > 0) {
    out.problems_by_check["contradictions seen by clients during the run"] = clients.problem_count;
    for (const std::string& p : clients.problems) {
      if (out.examples.size() < kMaxExamples) out.examples.push_back("during the run: " + p);
    }
  }
  if (!clients.unresolved_request_ids.empty()) {
    out.problems_by_check["submits never answered (daemon unresponsive)"] = clients.unresolved_request_ids.size();
  }
  if (clients.unresolved_cancels > 0) {
    out.problems_by_check["cancels never answered (daemon unresponsive)"] = clients.unresolved_cancels;
  }

  auto listed = ListAllJobs(stub, {});
  if (!listed.ok()) {
    problem("store could not be listed", std::string(listed.status().message()));
    return out;
  }
  out.listed = listed->size();
  std::unordered_map<uint64_t, const v1::Job*> by_id;
  std::unordered_map<std::string, uint64_t> id_of_request;
  for (const v1::Job& job : *listed) {
    if (!by_id.emplace(job.id(), &job).second) problem("job listed twice", absl::StrCat("job ", job.id()));
    if (auto [it, fresh] = id_of_request.emplace(job.client_request_id(), job.id()); !fresh) {
      problem("two jobs for one request id",
              absl::StrCat("request id ", job.client_request_id(), ": jobs ", it->second, " and ", job.id()));
    }
  }

  // Acknowledged jobs: there, once, as acknowledged, ended as they should.
  std::unordered_map<uint64_t, const JobRecord*> acknowledged;
  std::unordered_map<std::string, uint64_t> acknowledged_request;
  for (const JobRecord& r : clients.jobs) {
    if (auto [it, fresh] = acknowledged.emplace(r.id, &r); !fresh) {
      problem("one job id acknowledged for two request ids",
              absl::StrCat("job ", r.id, ": ", it->second->request_id, " and ", r.request_id));
      continue;
    }
    if (auto [it, fresh] = acknowledged_request.emplace(r.request_id, r.id); !fresh) {
      problem("one request id acknowledged as two jobs",
              absl::StrCat(r.request_id, ": jobs ", it->second, " and ", r.id));
    }
    auto found = by_id.find(r.id);
    if (found == by_id.end()) {
      v1::GetJobRequest get;
      get.set_job_id(r.id);
      v1::Job job;
      grpc::Status status = stub.GetJob(Context().get(), get, &job);
      problem(
          status.ok() ? "acknowledged job missing from ListJobs (GetJob has it)" : "acknowledged job lost",
          absl::StrCat("job ", r.id, " request id ", r.request_id, status.ok() ? "" : ": " + status.error_message()));
      continue;
    }
    const v1::Job& job = *found->second;
    if (job.client_request_id() != r.request_id || job.spec().resources().gpus() != r.gpus) {
      problem("job differs from its acknowledgement",
              absl::StrCat("job ", r.id, ": request id ", job.client_request_id(), " gpus ",
                           job.spec().resources().gpus(), ", acknowledged for ", r.request_id, " gpus ", r.gpus));
    }
    const std::string state(StateName(job.state()));
    ++out.by_state[state];
    if (!IsTerminal(job.state())) {
      problem("job never ended", absl::StrCat("job ", r.id, " still ", state, ": ", job.reason()));
    } else if (r.cancel_acked && job.state() != v1::JOB_STATE_CANCELLED) {
      problem("cancel acknowledged, job did not end CANCELLED", absl::StrCat("job ", r.id, " ended ", state));
    } else if (job.state() == v1::JOB_STATE_CANCELLED && !r.cancel_sent && bench_cancelled.count(r.id) == 0) {
      problem("CANCELLED though nobody cancelled it", absl::StrCat("job ", r.id, ": ", job.reason()));
    } else if (job.state() != v1::JOB_STATE_COMPLETED && job.state() != v1::JOB_STATE_CANCELLED) {
      // Not a lost or duplicated job, and possibly the machine (a fork that
      // failed, an agent heartbeat late on a loaded host): shown, not judged.
      if (out.unexpected_ends.size() < 5)
        out.unexpected_ends.push_back(absl::StrCat("job ", r.id, " ", state, ": ", job.reason()));
      ++out.unexpected_end_count;
    }
  }
  out.acknowledged = acknowledged.size();

  // Jobs in the store that no client was told about.
  const std::unordered_set<std::string> unresolved(clients.unresolved_request_ids.begin(),
                                                   clients.unresolved_request_ids.end());
  const std::unordered_set<std::string> rejected(clients.rejected_request_ids.begin(),
                                                 clients.rejected_request_ids.end());
  for (const v1::Job& job : *listed) {
    if (acknowledged.count(job.id())) continue;
    if (unresolved.count(job.client_request_id())) {
      ++out.in_doubt;
      continue;
    }
    problem(rejected.count(job.client_request_id()) ? "job exists for a submit that was answered with an error"
                                                    : "job nobody was acknowledged",
            absl::StrCat("job ", job.id(), " request id \"", job.client_request_id(), "\" ", StateName(job.state())));
  }
  return out;
}

}  // namespace gpusched::bench
