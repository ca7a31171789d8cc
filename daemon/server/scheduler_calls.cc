#include "daemon/server/scheduler_calls.h"

#include <chrono>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/job_states.h"
#include "daemon/server/job_privacy.h"

namespace gpusched::server {
namespace {

constexpr int kDefaultPageSize = 1000;
constexpr int kMaxPageSize = 10000;
constexpr size_t kMaxPageBytes = 3 << 20;  // under the 4 MiB gRPC clients receive by default
// Nodes are built on the scheduler thread: pages short enough not to hold a pass up.
constexpr size_t kDefaultNodePageSize = 500;
constexpr size_t kMaxNodePageSize = 5000;

// The committed job, with NotFound for an id that was never acknowledged.
absl::StatusOr<v1::Job> ReadJob(store::JobReader& reader, uint64_t job_id, bool with_events) {
  auto job = reader.GetJob(job_id, with_events);
  if (!job.ok()) return job.status();
  if (!job->has_value()) return absl::NotFoundError(absl::StrCat("job ", job_id, " not found"));
  return std::move(**job);
}

// Runs a change on the scheduler thread and replies with its result once
// the change is durable.
template <typename Reply>
void ChangeInLoop(SchedulerLoop& loop, const StoreHealth& store, const Caller& caller, Reply* response, CallDone done,
                  std::function<absl::StatusOr<Reply>(LoopContext&)> change) {
  if (absl::Status s = RequireUser(caller); !s.ok()) return done(s);
  if (absl::Status s = store.AcceptingChanges(); !s.ok()) return done(s);
  loop.Post([response, done = std::move(done), change = std::move(change)](LoopContext& state) {
    auto result = change(state);
    if (!result.ok()) return done(result.status());
    *response = *std::move(result);
    state.after_commit.push_back([done](const absl::Status& committed, const CommittedBatch&) { done(committed); });
  });
}

// Whether `caller` may `verb` job `job_id` (or the array it names): its
// owner or an admin. A job that is not active is left to the command,
// which says so.
absl::Status CheckOwner(const Caller& caller, const core::SchedulerCore& core, uint64_t job_id, bool whole_array,
                        absl::string_view verb) {
  if (caller.admin) return absl::OkStatus();
  const v1::Job* job = core.FindActive(job_id);
  if (job == nullptr && whole_array) job = core.FindActiveArrayTask(job_id);
  if (job == nullptr || caller.MayActOnJobOf(job->spec().user())) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("job ", job_id, " belongs to ", job->spec().user(), ", not ",
                                                  caller.user, ": only its owner or an admin may ", verb, " it"));
}

// Cancel, Hold or Release by its owner or an admin: on the job, or with
// `whole_array` on every task of the array its id names, as Slurm does even
// once the first task has ended (a plain job's id falls back to the job).
using JobCommand = std::function<absl::StatusOr<v1::Job>(uint64_t)>;
absl::StatusOr<v1::Job> OnJobOrArray(const Caller& caller, const core::SchedulerCore& core, uint64_t job_id,
                                     bool whole_array, absl::string_view verb, const JobCommand& on_job,
                                     const JobCommand& on_array) {
  if (absl::Status s = CheckOwner(caller, core, job_id, whole_array, verb); !s.ok()) return s;
  absl::StatusOr<v1::Job> job = absl::NotFoundError("");
  if (whole_array) job = on_array(job_id);
  return absl::IsNotFound(job.status()) ? on_job(job_id) : job;
}

absl::Status CheckAdmin(const Caller& caller, absl::string_view what) {
  if (caller.admin) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("only an admin may ", what, " (", caller.user, " is not one: root or the daemon's `admins`)"));
}

}  // namespace

absl::Status SchedulerCalls::CheckSubmitter(const Caller& caller, v1::JobSpec& spec) const {
  if (absl::Status s = RequireUser(caller); !s.ok()) return s;
  if (spec.user().empty()) spec.set_user(caller.user);
  if (spec.user() != caller.user && !caller.admin) {
    return absl::PermissionDeniedError(
        absl::StrCat("spec.user: ", caller.user, " may not submit as ", spec.user(), "; only an admin may"));
  }
  if (spec.user() == "root" && !allow_root_jobs_) {
    return absl::PermissionDeniedError(
        "spec.user: jobs do not run as root on this cluster (the daemon's allow_root_jobs is off); submit as an "
        "ordinary user");
  }
  return absl::OkStatus();
}

void SchedulerCalls::ReplyFromStore(const Caller& viewer, uint64_t job_id, v1::Job* out, CallDone done) {
  reads_.Post([viewer, job_id, out, done = std::move(done)](store::JobReader& reader) {
    auto job = ReadJob(reader, job_id, /*with_events=*/false);
    if (job.ok()) {
      *out = std::move(*job);
      HideDetailsUnlessOwner(viewer, *out);
    }
    done(job.status());
  });
}

void SchedulerCalls::SubmitJob(const Caller& caller, const v1::SubmitJobRequest& request,
                               v1::SubmitJobResponse* response, CallDone done) {
  // Latency as the client sees it, rejections included: from arrival until
  // the reply leaves (for an accepted job, once it is durable).
  auto observe = [metrics = metrics_, arrived = std::chrono::steady_clock::now()] {
    if (metrics != nullptr) metrics->ObserveSubmit(absl::FromChrono(std::chrono::steady_clock::now() - arrived));
  };
  // The job runs as the caller the transport proved; only an admin may
  // submit for someone else.
  v1::JobSpec spec = request.spec();
  absl::Status refused = CheckSubmitter(caller, spec);
  if (refused.ok()) refused = store_.AcceptingChanges();
  if (!refused.ok()) {
    observe();
    return done(refused);
  }
  loop_.Post(
      [this, caller, &request, response, done = std::move(done), observe, spec = std::move(spec)](LoopContext& loop) {
        auto outcome = request.array().empty()
                           ? loop.core.Submit(spec, request.client_request_id(), loop.fx)
                           : loop.core.SubmitArray(spec, request.array(), request.client_request_id(), loop.fx);
        if (!outcome.ok()) {
          observe();
          return done(outcome.status());
        }
        response->set_duplicate(outcome->duplicate);
        const uint64_t id = outcome->job_id;
        // Even a duplicate waits for this batch: its first submit may be in it.
        std::optional<v1::Job> earlier;
        if (const v1::Job* active = loop.core.FindActive(id); active != nullptr && outcome->duplicate)
          earlier = *active;
        loop.after_commit.push_back([this, caller, id, response, done, observe, earlier = std::move(earlier)](
                                        const absl::Status& committed, const CommittedBatch& batch) {
          // Durable (or failed) now; a rare duplicate answered from the store
          // below is timed up to here.
          observe();
          if (!committed.ok()) return done(committed);
          if (const v1::Job* job = batch.FindJob(id)) {
            *response->mutable_job() = *job;
          } else if (earlier.has_value()) {
            *response->mutable_job() = *earlier;
          } else {
            return ReplyFromStore(caller, id, response->mutable_job(), done);
          }
          // A retried request id may name someone else's job.
          HideDetailsUnlessOwner(caller, *response->mutable_job());
          done(absl::OkStatus());
        });
      });
}

void SchedulerCalls::GetJob(const Caller& caller, const v1::GetJobRequest& request, v1::Job* response, CallDone done) {
  if (absl::Status s = RequireUser(caller); !s.ok()) return done(s);
  reads_.Post([this, caller, job_id = request.job_id(), response, done = std::move(done)](store::JobReader& reader) {
    auto job = ReadJob(reader, job_id, /*with_events=*/true);
    if (job.ok()) {
      *response = std::move(*job);
      HideDetailsUnlessOwner(caller, *response);
      loop_.priorities().Fill(*response);
    }
    done(job.status());
  });
}

void SchedulerCalls::ListJobs(const Caller& caller, const v1::ListJobsRequest& request, v1::ListJobsResponse* response,
                              CallDone done) {
  if (absl::Status s = RequireUser(caller); !s.ok()) return done(s);
  store::JobFilter filter;
  for (int state : request.states()) {
    if (!v1::JobState_IsValid(state) || state == v1::JOB_STATE_UNSPECIFIED) {
      return done(absl::InvalidArgumentError(absl::StrCat("states: unknown value ", state)));
    }
    filter.states.push_back(static_cast<v1::JobState>(state));
  }
  filter.user = request.user();
  filter.queue = request.queue();
  if (request.page_size() < 0) return done(absl::InvalidArgumentError("page_size: must be >= 0"));
  const int limit = request.page_size() == 0 ? kDefaultPageSize : std::min(request.page_size(), kMaxPageSize);
  uint64_t after_id = 0;
  if (!request.page_token().empty() && !absl::SimpleAtoi(request.page_token(), &after_id)) {
    return done(absl::InvalidArgumentError(
        absl::StrCat("page_token: \"", request.page_token(), "\" is not a token we gave out")));
  }
  reads_.Post([this, caller, filter = std::move(filter), limit, after_id, response,
               done = std::move(done)](store::JobReader& reader) {
    auto page = reader.ListJobs(filter, limit, after_id);
    if (!page.ok()) return done(page.status());
    // A page of jobs with megabyte scripts would pass the 4 MiB a gRPC
    // client takes by default, and `gpusched status` would fail for
    // everyone: the page ends early instead, and the token goes on from there.
    size_t bytes = 0;
    for (v1::Job& job : page->jobs) {
      HideDetailsUnlessOwner(caller, job);
      const size_t size = job.ByteSizeLong();
      if (response->jobs_size() > 0 && bytes + size > kMaxPageBytes) {
        response->set_next_page_token(absl::StrCat(response->jobs(response->jobs_size() - 1).id()));
        return done(absl::OkStatus());
      }
      bytes += size;
      v1::Job* out = response->add_jobs();
      *out = std::move(job);
      loop_.priorities().Fill(*out);
    }
    if (page->last_id != 0) response->set_next_page_token(absl::StrCat(page->last_id));
    done(absl::OkStatus());
  });
}

void SchedulerCalls::CancelJob(const Caller& caller, const v1::CancelJobRequest& request,
                               v1::CancelJobResponse* response, CallDone done) {
  if (absl::Status s = RequireUser(caller); !s.ok()) return done(s);
  if (absl::Status s = store_.AcceptingChanges(); !s.ok()) return done(s);
  loop_.Post([this, &request, response, done = std::move(done), caller](LoopContext& loop) {
    const std::string& reason = request.reason();
    absl::StatusOr<v1::Job> job = OnJobOrArray(
        caller, loop.core, request.job_id(), request.whole_array(), "cancel",
        [&](uint64_t id) { return loop.core.Cancel(id, reason, loop.fx); },
        [&](uint64_t id) { return loop.core.CancelArray(id, reason, loop.fx); });
    if (!job.ok() && !absl::IsNotFound(job.status())) return done(job.status());
    if (job.ok()) {
      *response->mutable_job() = std::move(*job);
      loop.after_commit.push_back([done](const absl::Status& committed, const CommittedBatch&) { done(committed); });
      return;
    }
    // Not active: either it never existed or it has already ended.
    const uint64_t id = request.job_id();
    reads_.Post([caller, id, response, done](store::JobReader& reader) {
      auto stored = ReadJob(reader, id, /*with_events=*/false);
      if (!stored.ok()) return done(stored.status());
      *response->mutable_job() = *stored;
      HideDetailsUnlessOwner(caller, *response->mutable_job());
      done(absl::FailedPreconditionError(
          absl::StrCat("job ", id, " has already ended (", StateName(stored->state()), ")")));
    });
  });
}

void SchedulerCalls::ListNodes(const Caller& caller, const v1::ListNodesRequest& request,
                               v1::ListNodesResponse* response, CallDone done) {
  if (absl::Status s = RequireUser(caller); !s.ok()) return done(s);
  if (request.page_size() < 0) return done(absl::InvalidArgumentError("page_size: must be >= 0"));
  const size_t limit =
      request.page_size() == 0 ? kDefaultNodePageSize : std::min<size_t>(request.page_size(), kMaxNodePageSize);
  loop_.Post([&request, response, done = std::move(done), limit](LoopContext& loop) {
    if (!request.node().empty()) {
      if (std::optional<v1::Node> node = loop.core.FindNode(request.node())) *response->add_nodes() = *std::move(node);
      return done(absl::OkStatus());
    }
    // The token is the last name of the page before. One node more than the
    // page tells whether another page follows.
    std::vector<v1::Node> nodes = loop.core.NodesAfter(request.page_token(), limit + 1);
    size_t bytes = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const size_t size = nodes[i].ByteSizeLong();
      if (i == limit || (i > 0 && bytes + size > kMaxPageBytes)) {
        response->set_next_page_token(response->nodes(response->nodes_size() - 1).info().name());
        break;
      }
      bytes += size;
      *response->add_nodes() = std::move(nodes[i]);
    }
    done(absl::OkStatus());
  });
}

void SchedulerCalls::DrainNode(const Caller& caller, const v1::DrainNodeRequest& request, v1::Node* response,
                               CallDone done) {
  ChangeInLoop<v1::Node>(loop_, store_, caller, response, std::move(done), [&request, caller](LoopContext& loop) {
    if (absl::Status s = CheckAdmin(caller, "drain a node"); !s.ok()) return absl::StatusOr<v1::Node>(s);
    return loop.core.DrainNode(request.node(), request.reason(), loop.fx);
  });
}

void SchedulerCalls::ResumeNode(const Caller& caller, const v1::ResumeNodeRequest& request, v1::Node* response,
                                CallDone done) {
  ChangeInLoop<v1::Node>(loop_, store_, caller, response, std::move(done), [&request, caller](LoopContext& loop) {
    if (absl::Status s = CheckAdmin(caller, "resume a node"); !s.ok()) return absl::StatusOr<v1::Node>(s);
    return loop.core.ResumeNode(request.node(), loop.fx);
  });
}

void SchedulerCalls::ProbeNode(const Caller& caller, const v1::ProbeNodeRequest& request, v1::Node* response,
                               CallDone done) {
  ChangeInLoop<v1::Node>(loop_, store_, caller, response, std::move(done), [&request, caller](LoopContext& loop) {
    if (absl::Status s = CheckAdmin(caller, "probe a node"); !s.ok()) return absl::StatusOr<v1::Node>(s);
    return loop.core.ProbeNode(request.node(), loop.fx);
  });
}

void SchedulerCalls::InterruptNode(const Caller& caller, const v1::InterruptNodeRequest& request, v1::Node* response,
                                   CallDone done) {
  ChangeInLoop<v1::Node>(loop_, store_, caller, response, std::move(done), [&request, caller](LoopContext& loop) {
    if (absl::Status s = CheckAdmin(caller, "interrupt a node"); !s.ok()) return absl::StatusOr<v1::Node>(s);
    return loop.core.InterruptNode(request.node(), absl::Seconds(request.notice_s()), request.reason(), loop.fx);
  });
}

void SchedulerCalls::ListPools(const Caller& caller, const v1::ListPoolsRequest& /*request*/,
                               v1::ListPoolsResponse* response, CallDone done) {
  if (absl::Status s = RequireUser(caller); !s.ok()) return done(s);
  loop_.Post([response, done = std::move(done)](LoopContext& loop) {
    for (v1::PoolStatus& pool : loop.core.Pools()) *response->add_pools() = std::move(pool);
    done(absl::OkStatus());
  });
}

void SchedulerCalls::HoldJob(const Caller& caller, const v1::HoldJobRequest& request, v1::Job* response,
                             CallDone done) {
  ChangeInLoop<v1::Job>(loop_, store_, caller, response, std::move(done), [&request, caller](LoopContext& loop) {
    return OnJobOrArray(
        caller, loop.core, request.job_id(), request.whole_array(), "hold",
        [&](uint64_t id) { return loop.core.Hold(id, loop.fx); },
        [&](uint64_t id) { return loop.core.HoldArray(id, loop.fx); });
  });
}

void SchedulerCalls::ReleaseJob(const Caller& caller, const v1::ReleaseJobRequest& request, v1::Job* response,
                                CallDone done) {
  ChangeInLoop<v1::Job>(loop_, store_, caller, response, std::move(done), [&request, caller](LoopContext& loop) {
    return OnJobOrArray(
        caller, loop.core, request.job_id(), request.whole_array(), "release",
        [&](uint64_t id) { return loop.core.Release(id, loop.fx); },
        [&](uint64_t id) { return loop.core.ReleaseArray(id, loop.fx); });
  });
}

}  // namespace gpusched::server
