#pragma once

#include <deque>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/client.h"
#include "common/job_array.h"

namespace gpusched::cli::testing {

// A daemon in memory: records every request and answers from what the test
// put in. GetJob answers follow `job_script` (one Job per call, the last one
// repeating) when it is set, so that a test can play a job's life.
class FakeSchedulerClient final : public SchedulerClient {
 public:
  // Requests seen.
  std::vector<v1::SubmitJobRequest> submits;
  std::vector<uint64_t> gets;
  std::vector<v1::ListJobsRequest> lists;
  std::vector<v1::CancelJobRequest> cancels;
  std::vector<v1::HoldJobRequest> holds;
  std::vector<v1::ReleaseJobRequest> releases;
  int watches = 0;

  // Answers.
  uint64_t next_job_id = 42;
  std::map<uint64_t, v1::Job> jobs;
  std::deque<v1::Job> job_script;
  std::vector<v1::ListJobsResponse> list_pages;  // page i answers token "" for i = 0, else "p<i>"
  std::map<uint64_t, absl::Status> cancel_errors;
  v1::ListNodesResponse nodes;
  int node_page_size = 1000;
  std::vector<v1::ListNodesRequest> node_lists;
  std::vector<v1::DrainNodeRequest> drains;
  std::vector<v1::InterruptNodeRequest> interrupts;
  v1::ListPoolsResponse pools;
  absl::Status fail_all;  // when set, every call fails with it
  absl::Status watch_status = absl::UnimplementedError("no watch here");
  std::vector<v1::JobEvent> watch_events;

  absl::StatusOr<v1::SubmitJobResponse> SubmitJob(const v1::SubmitJobRequest& request) override {
    submits.push_back(request);
    if (!fail_all.ok()) return fail_all;
    v1::SubmitJobResponse response;
    response.mutable_job()->set_id(next_job_id);
    *response.mutable_job()->mutable_spec() = request.spec();
    response.mutable_job()->set_state(v1::JOB_STATE_PENDING);
    if (!request.array().empty()) {
      // As the daemon answers an array: its first task.
      auto array = ParseJobArraySpec(request.array(), 10'000);
      if (!array.ok()) return array.status();
      v1::ArrayTask* task = response.mutable_job()->mutable_array();
      task->set_array_id(next_job_id);
      task->set_index(array->indices.front());
      task->set_count(static_cast<int32_t>(array->indices.size()));
      task->set_max_running(array->max_running);
    }
    return response;
  }

  absl::StatusOr<v1::Job> GetJob(uint64_t job_id) override {
    gets.push_back(job_id);
    if (!fail_all.ok()) return fail_all;
    if (!job_script.empty()) {
      v1::Job job = job_script.front();
      if (job_script.size() > 1) job_script.pop_front();
      return job;
    }
    auto it = jobs.find(job_id);
    if (it == jobs.end()) return absl::NotFoundError(absl::StrCat("job ", job_id, " not found"));
    return it->second;
  }

  absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& request) override {
    lists.push_back(request);
    if (!fail_all.ok()) return fail_all;
    if (list_pages.empty()) return v1::ListJobsResponse();
    size_t page = 0;
    if (!request.page_token().empty()) page = std::stoul(request.page_token().substr(1));
    return list_pages.at(page);
  }

  absl::StatusOr<v1::CancelJobResponse> CancelJob(const v1::CancelJobRequest& request) override {
    cancels.push_back(request);
    if (!fail_all.ok()) return fail_all;
    if (auto it = cancel_errors.find(request.job_id()); it != cancel_errors.end()) return it->second;
    v1::CancelJobResponse response;
    response.mutable_job()->set_id(request.job_id());
    return response;
  }

  // Pages of node_page_size, in the order of `nodes`, as the daemon gives
  // them (the token: the page's last name); `node` picks one.
  absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request) override {
    node_lists.push_back(request);
    if (!fail_all.ok()) return fail_all;
    v1::ListNodesResponse page;
    bool after_token = request.page_token().empty();
    for (const v1::Node& node : nodes.nodes()) {
      if (!request.node().empty()) {
        if (node.info().name() == request.node()) *page.add_nodes() = node;
        continue;
      }
      if (!after_token) {
        after_token = node.info().name() == request.page_token();
        continue;
      }
      if (page.nodes_size() == node_page_size) {
        page.set_next_page_token(page.nodes(page.nodes_size() - 1).info().name());
        break;
      }
      *page.add_nodes() = node;
    }
    return page;
  }

  // Drain and resume change the node in `nodes`, as the daemon would.
  absl::StatusOr<v1::Node> DrainNode(const v1::DrainNodeRequest& request) override {
    drains.push_back(request);
    return SetDrain(request.node(), request.reason(), v1::DRAIN_KIND_OPERATOR);
  }

  absl::StatusOr<v1::Node> ResumeNode(const v1::ResumeNodeRequest& request) override {
    return SetDrain(request.node(), "", v1::DRAIN_KIND_NONE);
  }

  // A probe is driven end to end by the integration tests; here it drains as the daemon does.
  absl::StatusOr<v1::Node> ProbeNode(const v1::ProbeNodeRequest& request) override {
    return SetDrain(request.node(), "NCCL probe: measuring links (gpusched nodes probe)", v1::DRAIN_KIND_LINK_PROBE);
  }

  // An interruption drains the node as the daemon does; its jobs' part is
  // driven end to end by the integration tests.
  absl::StatusOr<v1::Node> InterruptNode(const v1::InterruptNodeRequest& request) override {
    interrupts.push_back(request);
    return SetDrain(request.node(), absl::StrCat("spot interruption: taken back in ", request.notice_s(), " s"),
                    v1::DRAIN_KIND_SPOT_INTERRUPTION);
  }

  absl::StatusOr<v1::ListPoolsResponse> ListPools() override {
    if (!fail_all.ok()) return fail_all;
    return pools;
  }

  // Hold and release are driven end to end by the integration tests.
  absl::StatusOr<v1::Job> HoldJob(const v1::HoldJobRequest& request) override {
    holds.push_back(request);
    if (!fail_all.ok()) return fail_all;
    v1::Job job;
    job.set_id(request.job_id());
    job.set_held(true);
    return job;
  }
  absl::StatusOr<v1::Job> ReleaseJob(const v1::ReleaseJobRequest& request) override {
    releases.push_back(request);
    if (!fail_all.ok()) return fail_all;
    v1::Job job;
    job.set_id(request.job_id());
    return job;
  }

  absl::StatusOr<v1::Node> SetDrain(const std::string& name, const std::string& reason, v1::DrainKind kind) {
    if (!fail_all.ok()) return fail_all;
    for (v1::Node& node : *nodes.mutable_nodes()) {
      if (node.info().name() != name) continue;
      node.set_drain_reason(reason);
      node.set_drain_kind(kind);
      return node;
    }
    return absl::NotFoundError("no node " + name);
  }

  absl::Status WatchJobs(const v1::WatchJobsRequest& request, absl::Duration timeout,
                         const std::function<bool(const v1::JobEvent&)>& on_event) override {
    ++watches;
    if (!fail_all.ok()) return fail_all;
    for (const v1::JobEvent& event : watch_events) {
      if (!on_event(event)) break;
    }
    return watch_status;
  }

  // Sessions are tested against the real daemon (tests/integration/session_test.cc).
  absl::StatusOr<std::unique_ptr<AttachStream>> Attach() override {
    return absl::UnimplementedError("the fake client has no sessions");
  }
};

}  // namespace gpusched::cli::testing
