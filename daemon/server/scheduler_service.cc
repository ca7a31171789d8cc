#include "daemon/server/scheduler_service.h"

#include <chrono>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/job_states.h"
#include "daemon/server/attach_reactor.h"
#include "daemon/server/grpc_status.h"
#include "daemon/server/job_privacy.h"
#include "daemon/server/watch_jobs_reactor.h"

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

// Finishes `reactor` with the refusal when the caller proved no user.
bool RefusedCaller(const Caller& caller, grpc::ServerUnaryReactor* reactor) {
  absl::Status s = RequireUser(caller);
  if (s.ok()) return false;
  reactor->Finish(ToGrpcStatus(s));
  return true;
}

// Finishes `reactor` with the refusal while the store takes no writes.
bool RefusedChange(const StoreHealth& store, grpc::ServerUnaryReactor* reactor) {
  absl::Status s = store.AcceptingChanges();
  if (s.ok()) return false;
  reactor->Finish(ToGrpcStatus(s));
  return true;
}

// Runs a change on the scheduler thread and replies with its result once
// the change is durable.
template <typename Reply>
grpc::ServerUnaryReactor* ChangeInLoop(SchedulerLoop& loop, const StoreHealth& store, grpc::CallbackServerContext* ctx,
                                       const Caller& caller, Reply* response,
                                       std::function<absl::StatusOr<Reply>(LoopContext&)> change) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (RefusedCaller(caller, reactor) || RefusedChange(store, reactor)) return reactor;
  loop.Post([response, reactor, change = std::move(change)](LoopContext& state) {
    auto result = change(state);
    if (!result.ok()) return reactor->Finish(ToGrpcStatus(result.status()));
    *response = *std::move(result);
    state.after_commit.push_back(
        [reactor](const absl::Status& committed, const CommittedBatch&) { reactor->Finish(ToGrpcStatus(committed)); });
  });
  return reactor;
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

// An Attach call refused before it began.
class RefusedAttach final : public grpc::ServerBidiReactor<v1::AttachRequest, v1::AttachResponse> {
 public:
  explicit RefusedAttach(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

// A WatchJobs call refused before it watched anything.
class RefusedWatch final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  explicit RefusedWatch(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

absl::Status SchedulerService::CheckSubmitter(const Caller& caller, v1::JobSpec& spec) const {
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

void SchedulerService::ReplyFromStore(const Caller& viewer, uint64_t job_id, grpc::ServerUnaryReactor* reactor,
                                      v1::Job* out) {
  reads_.Post([viewer, job_id, reactor, out](store::JobReader& reader) {
    auto job = ReadJob(reader, job_id, /*with_events=*/false);
    if (job.ok()) {
      *out = std::move(*job);
      HideDetailsUnlessOwner(viewer, *out);
    }
    reactor->Finish(ToGrpcStatus(job.status()));
  });
}

grpc::ServerUnaryReactor* SchedulerService::SubmitJob(grpc::CallbackServerContext* ctx,
                                                      const v1::SubmitJobRequest* request,
                                                      v1::SubmitJobResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  // Latency as the client sees it, rejections included: from arrival until
  // the reply leaves (for an accepted job, once it is durable).
  auto observe = [metrics = metrics_, arrived = std::chrono::steady_clock::now()] {
    if (metrics != nullptr) metrics->ObserveSubmit(absl::FromChrono(std::chrono::steady_clock::now() - arrived));
  };
  // The job runs as the caller the transport proved; only an admin may
  // submit for someone else.
  const Caller caller = CallerOf(ctx);
  v1::JobSpec spec = request->spec();
  if (absl::Status s = CheckSubmitter(caller, spec); !s.ok()) {
    observe();
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  if (RefusedChange(store_, reactor)) {
    observe();
    return reactor;
  }
  loop_.Post([this, caller, request, response, reactor, observe, spec = std::move(spec)](LoopContext& loop) {
    auto outcome = request->array().empty()
                       ? loop.core.Submit(spec, request->client_request_id(), loop.fx)
                       : loop.core.SubmitArray(spec, request->array(), request->client_request_id(), loop.fx);
    if (!outcome.ok()) {
      observe();
      reactor->Finish(ToGrpcStatus(outcome.status()));
      return;
    }
    response->set_duplicate(outcome->duplicate);
    const uint64_t id = outcome->job_id;
    // Even a duplicate waits for this batch: its first submit may be in it.
    std::optional<v1::Job> earlier;
    if (const v1::Job* active = loop.core.FindActive(id); active != nullptr && outcome->duplicate) earlier = *active;
    loop.after_commit.push_back([this, caller, id, reactor, response, observe, earlier = std::move(earlier)](
                                    const absl::Status& committed, const CommittedBatch& batch) {
      // Durable (or failed) now; a rare duplicate answered from the store
      // below is timed up to here.
      observe();
      if (!committed.ok()) return reactor->Finish(ToGrpcStatus(committed));
      if (const v1::Job* job = batch.FindJob(id)) {
        *response->mutable_job() = *job;
      } else if (earlier.has_value()) {
        *response->mutable_job() = *earlier;
      } else {
        return ReplyFromStore(caller, id, reactor, response->mutable_job());
      }
      // A retried request id may name someone else's job.
      HideDetailsUnlessOwner(caller, *response->mutable_job());
      reactor->Finish(grpc::Status::OK);
    });
  });
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::GetJob(grpc::CallbackServerContext* ctx, const v1::GetJobRequest* request,
                                                   v1::Job* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  const Caller caller = CallerOf(ctx);
  if (RefusedCaller(caller, reactor)) return reactor;
  reads_.Post([this, caller, request, response, reactor](store::JobReader& reader) {
    auto job = ReadJob(reader, request->job_id(), /*with_events=*/true);
    if (job.ok()) {
      *response = std::move(*job);
      HideDetailsUnlessOwner(caller, *response);
      loop_.priorities().Fill(*response);
    }
    reactor->Finish(ToGrpcStatus(job.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::ListJobs(grpc::CallbackServerContext* ctx,
                                                     const v1::ListJobsRequest* request,
                                                     v1::ListJobsResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  const Caller caller = CallerOf(ctx);
  if (RefusedCaller(caller, reactor)) return reactor;
  store::JobFilter filter;
  for (int state : request->states()) {
    if (!v1::JobState_IsValid(state) || state == v1::JOB_STATE_UNSPECIFIED) {
      reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat("states: unknown value ", state)));
      return reactor;
    }
    filter.states.push_back(static_cast<v1::JobState>(state));
  }
  filter.user = request->user();
  filter.queue = request->queue();
  if (request->page_size() < 0) {
    reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "page_size: must be >= 0"));
    return reactor;
  }
  const int limit = request->page_size() == 0 ? kDefaultPageSize : std::min(request->page_size(), kMaxPageSize);
  uint64_t after_id = 0;
  if (!request->page_token().empty() && !absl::SimpleAtoi(request->page_token(), &after_id)) {
    reactor->Finish(
        grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("page_token: \"", request->page_token(), "\" is not a token we gave out")));
    return reactor;
  }
  reads_.Post([this, caller, filter = std::move(filter), limit, after_id, response, reactor](store::JobReader& reader) {
    auto page = reader.ListJobs(filter, limit, after_id);
    if (!page.ok()) return reactor->Finish(ToGrpcStatus(page.status()));
    // A page of jobs with megabyte scripts would pass the 4 MiB a gRPC
    // client takes by default, and `gpusched status` would fail for
    // everyone: the page ends early instead, and the token goes on from there.
    size_t bytes = 0;
    for (v1::Job& job : page->jobs) {
      HideDetailsUnlessOwner(caller, job);
      const size_t size = job.ByteSizeLong();
      if (response->jobs_size() > 0 && bytes + size > kMaxPageBytes) {
        response->set_next_page_token(absl::StrCat(response->jobs(response->jobs_size() - 1).id()));
        return reactor->Finish(grpc::Status::OK);
      }
      bytes += size;
      v1::Job* out = response->add_jobs();
      *out = std::move(job);
      loop_.priorities().Fill(*out);
    }
    if (page->last_id != 0) response->set_next_page_token(absl::StrCat(page->last_id));
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::CancelJob(grpc::CallbackServerContext* ctx,
                                                      const v1::CancelJobRequest* request,
                                                      v1::CancelJobResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  const Caller caller = CallerOf(ctx);
  if (RefusedCaller(caller, reactor) || RefusedChange(store_, reactor)) return reactor;
  loop_.Post([this, request, response, reactor, caller](LoopContext& loop) {
    const std::string& reason = request->reason();
    absl::StatusOr<v1::Job> job = OnJobOrArray(
        caller, loop.core, request->job_id(), request->whole_array(), "cancel",
        [&](uint64_t id) { return loop.core.Cancel(id, reason, loop.fx); },
        [&](uint64_t id) { return loop.core.CancelArray(id, reason, loop.fx); });
    if (!job.ok() && !absl::IsNotFound(job.status())) return reactor->Finish(ToGrpcStatus(job.status()));
    if (job.ok()) {
      *response->mutable_job() = std::move(*job);
      loop.after_commit.push_back([reactor](const absl::Status& committed, const CommittedBatch&) {
        reactor->Finish(ToGrpcStatus(committed));
      });
      return;
    }
    // Not active: either it never existed or it has already ended.
    const uint64_t id = request->job_id();
    reads_.Post([caller, id, reactor, response](store::JobReader& reader) {
      auto stored = ReadJob(reader, id, /*with_events=*/false);
      if (!stored.ok()) return reactor->Finish(ToGrpcStatus(stored.status()));
      *response->mutable_job() = *stored;
      HideDetailsUnlessOwner(caller, *response->mutable_job());
      reactor->Finish(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                   absl::StrCat("job ", id, " has already ended (", StateName(stored->state()), ")")));
    });
  });
  return reactor;
}

grpc::ServerWriteReactor<v1::JobEvent>* SchedulerService::WatchJobs(grpc::CallbackServerContext* ctx,
                                                                    const v1::WatchJobsRequest* request) {
  // Events carry no command or environment: any user may watch any job.
  if (absl::Status s = RequireUser(CallerOf(ctx)); !s.ok()) return new RefusedWatch(s);
  return new WatchJobsReactor(hub_, *request);
}

grpc::ServerUnaryReactor* SchedulerService::ListNodes(grpc::CallbackServerContext* ctx,
                                                      const v1::ListNodesRequest* request,
                                                      v1::ListNodesResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (RefusedCaller(CallerOf(ctx), reactor)) return reactor;
  if (request->page_size() < 0) {
    reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "page_size: must be >= 0"));
    return reactor;
  }
  const size_t limit =
      request->page_size() == 0 ? kDefaultNodePageSize : std::min<size_t>(request->page_size(), kMaxNodePageSize);
  loop_.Post([request, response, reactor, limit](LoopContext& loop) {
    if (!request->node().empty()) {
      if (std::optional<v1::Node> node = loop.core.FindNode(request->node())) *response->add_nodes() = *std::move(node);
      return reactor->Finish(grpc::Status::OK);
    }
    // The token is the last name of the page before. One node more than the
    // page tells whether another page follows.
    std::vector<v1::Node> nodes = loop.core.NodesAfter(request->page_token(), limit + 1);
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
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::DrainNode(grpc::CallbackServerContext* ctx,
                                                      const v1::DrainNodeRequest* request, v1::Node* response) {
  const Caller caller = CallerOf(ctx);
  return ChangeInLoop<v1::Node>(loop_, store_, ctx, caller, response, [request, caller](LoopContext& loop) {
    if (absl::Status s = CheckAdmin(caller, "drain a node"); !s.ok()) return absl::StatusOr<v1::Node>(s);
    return loop.core.DrainNode(request->node(), request->reason(), loop.fx);
  });
}

grpc::ServerUnaryReactor* SchedulerService::ResumeNode(grpc::CallbackServerContext* ctx,
                                                       const v1::ResumeNodeRequest* request, v1::Node* response) {
  const Caller caller = CallerOf(ctx);
  return ChangeInLoop<v1::Node>(loop_, store_, ctx, caller, response, [request, caller](LoopContext& loop) {
    if (absl::Status s = CheckAdmin(caller, "resume a node"); !s.ok()) return absl::StatusOr<v1::Node>(s);
    return loop.core.ResumeNode(request->node(), loop.fx);
  });
}

grpc::ServerUnaryReactor* SchedulerService::ProbeNode(grpc::CallbackServerContext* ctx,
                                                      const v1::ProbeNodeRequest* request, v1::Node* response) {
  const Caller caller = CallerOf(ctx);
  return ChangeInLoop<v1::Node>(loop_, store_, ctx, caller, response, [request, caller](LoopContext& loop) {
    if (absl::Status s = CheckAdmin(caller, "probe a node"); !s.ok()) return absl::StatusOr<v1::Node>(s);
    return loop.core.ProbeNode(request->node(), loop.fx);
  });
}

grpc::ServerUnaryReactor* SchedulerService::InterruptNode(grpc::CallbackServerContext* ctx,
                                                          const v1::InterruptNodeRequest* request, v1::Node* response) {
  const Caller caller = CallerOf(ctx);
  return ChangeInLoop<v1::Node>(loop_, store_, ctx, caller, response, [request, caller](LoopContext& loop) {
    if (absl::Status s = CheckAdmin(caller, "interrupt a node"); !s.ok()) return absl::StatusOr<v1::Node>(s);
    return loop.core.InterruptNode(request->node(), absl::Seconds(request->notice_s()), request->reason(), loop.fx);
  });
}

grpc::ServerUnaryReactor* SchedulerService::ListPools(grpc::CallbackServerContext* ctx,
                                                      const v1::ListPoolsRequest* /*request*/,
                                                      v1::ListPoolsResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (RefusedCaller(CallerOf(ctx), reactor)) return reactor;
  loop_.Post([response, reactor](LoopContext& loop) {
    for (v1::PoolStatus& pool : loop.core.Pools()) *response->add_pools() = std::move(pool);
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::HoldJob(grpc::CallbackServerContext* ctx, const v1::HoldJobRequest* request,
                                                    v1::Job* response) {
  const Caller caller = CallerOf(ctx);
  return ChangeInLoop<v1::Job>(loop_, store_, ctx, caller, response, [request, caller](LoopContext& loop) {
    return OnJobOrArray(
        caller, loop.core, request->job_id(), request->whole_array(), "hold",
        [&](uint64_t id) { return loop.core.Hold(id, loop.fx); },
        [&](uint64_t id) { return loop.core.HoldArray(id, loop.fx); });
  });
}

grpc::ServerUnaryReactor* SchedulerService::ReleaseJob(grpc::CallbackServerContext* ctx,
                                                       const v1::ReleaseJobRequest* request, v1::Job* response) {
  const Caller caller = CallerOf(ctx);
  return ChangeInLoop<v1::Job>(loop_, store_, ctx, caller, response, [request, caller](LoopContext& loop) {
    return OnJobOrArray(
        caller, loop.core, request->job_id(), request->whole_array(), "release",
        [&](uint64_t id) { return loop.core.Release(id, loop.fx); },
        [&](uint64_t id) { return loop.core.ReleaseArray(id, loop.fx); });
  });
}

grpc::ServerBidiReactor<v1::AttachRequest, v1::AttachResponse>* SchedulerService::Attach(
    grpc::CallbackServerContext* ctx) {
  const Caller caller = CallerOf(ctx);
  if (absl::Status s = RequireUser(caller); !s.ok()) return new RefusedAttach(s);
  return new AttachReactor(loop_, sessions_, caller);
}

}  // namespace gpusched::server
