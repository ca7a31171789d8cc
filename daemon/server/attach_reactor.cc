#include "daemon/server/attach_reactor.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/io/logging/logging.h"
#include "common/job_states.h"
#include "common/threads/mutex.h"
#include "daemon/server/grpc_status.h"

namespace gpusched::server {
namespace {

// The output a SessionOutput or an AttachResponse carries, as counted
// against AttachReactor::kMaxQueuedOutputBytes.
template <typename Message>
size_t OutputBytes(const Message& message) {
  return message.stdout().size() + message.stderr().size();
}

}  // namespace

AttachReactor::AttachReactor(SchedulerLoop& loop, SessionRelay& relay, Caller caller)
    : loop_(loop), relay_(relay), caller_(std::move(caller)) {
  StartRead(&in_);
}

void AttachReactor::OnReadDone(bool ok) {
  if (!ok) {
    ClientGone();
    return;
  }
  ReleasableMutexLock lock(&mu_);
  if (!begun_) {
    if (!in_.has_start()) {
      FinishLocked(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the first AttachRequest must be its start"));
      return;
    }
    begun_ = true;
    ++refs_;  // until the start's check has run
    const v1::AttachStart start = in_.start();
    lock.Release();
    Begin(start);
    // Read on, under the lock again.
    MutexLock relock(&mu_);
    if (!finishing_) StartRead(&in_);
    return;
  } else if (in_.has_start()) {
    FinishLocked(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "a session has one start"));
    return;
  } else if (in_.has_done()) {
    client_done_ = in_.done();  // its stream ends next: an orderly end, not a lost client
  } else if (session_id_ == 0) {
    early_.push_back(in_);
  } else {
    Forward(in_);
  }
  if (!finishing_) StartRead(&in_);
}

void AttachReactor::Begin(const v1::AttachStart& start) {
  loop_.Post([this, start](LoopContext& ctx) {
    struct Done {
      AttachReactor* self;
      ~Done() { self->Release(); }
    } done{this};
    auto refuse = [this](grpc::StatusCode code, const std::string& why) {
      MutexLock lock(&mu_);
      FinishLocked(grpc::Status(code, why));
    };
    const uint64_t id = start.job_id();
    const v1::Job* job = ctx.core.FindActive(id);
    if (job == nullptr) return refuse(grpc::StatusCode::NOT_FOUND, absl::StrCat("job ", id, " is not active"));
    if (!caller_.MayActOnJobOf(job->spec().user())) {
      return refuse(grpc::StatusCode::PERMISSION_DENIED,
                    absl::StrCat("job ", id, " belongs to ", job->spec().user(), ", not ", caller_.user,
                                 ": only its owner or an admin may attach to it"));
    }
    if (job->state() != v1::JOB_STATE_RUNNING || job->allocation().nodes().empty()) {
      return refuse(grpc::StatusCode::FAILED_PRECONDITION,
                    absl::StrCat("job ", id, " is ", StateName(job->state()), "; a session needs it RUNNING"));
    }
    if (start.ends_job() && !job->spec().interactive()) {
      return refuse(grpc::StatusCode::INVALID_ARGUMENT,
                    absl::StrCat("job ", id, " is not interactive: a session may not end it (ends_job)"));
    }
    std::string node = job->allocation().nodes(0).node();
    if (!start.node().empty()) {
      std::vector<std::string> nodes;
      for (const v1::NodeAllocation& part : job->allocation().nodes()) nodes.push_back(part.node());
      if (std::find(nodes.begin(), nodes.end(), start.node()) == nodes.end()) {
        return refuse(grpc::StatusCode::INVALID_ARGUMENT,
                      absl::StrCat("job ", id, " has no part on ", start.node(),
                                   " (its nodes: ", absl::StrJoin(nodes, ", "), ")"));
      }
      node = start.node();
    }
    auto agent = ctx.agents.find(node);
    if (agent == ctx.agents.end() || !agent->second.channel->open()) {
      return refuse(grpc::StatusCode::UNAVAILABLE, absl::StrCat("the agent of ", node, " is not connected"));
    }
    // The client went away before its session began: an ends_job session's
    // job would otherwise hold its GPUs until its time limit.
    auto gone = [&] {
      if (start.ends_job() && job->spec().interactive()) {
        (void)ctx.core.Cancel(id, "its interactive session's client went away", ctx.fx);
      }
    };
    {
      MutexLock lock(&mu_);
      if (finishing_) return gone();
    }
    // Outside mu_: the relay calls Deliver with its own lock held, which takes mu_.
    const uint64_t session_id = relay_.Add(this, node);
    ReleasableMutexLock lock(&mu_);
    if (finishing_) {  // gone between the two looks: OnDone saw no session to remove
      lock.Release();
      relay_.Remove(session_id);
      return gone();
    }
    channel_ = agent->second.channel;
    job_id_ = id;
    ends_job_ = start.ends_job();
    session_id_ = session_id;
    v1::DaemonMessage message;
    v1::SessionInput& input = *message.mutable_session_input();
    input.set_session_id(session_id_);
    input.set_job_id(id);
    *input.mutable_start() = start;
    channel_->Send(message);
    GetLogger("daemon")->info("job {}: session {} for {} on {}{}", id, session_id_, caller_.user, node,
                              start.argv().empty() ? " (holding the allocation)" : "");
    while (!early_.empty()) {
      Forward(early_.front());
      early_.pop_front();
    }
  });
}

void AttachReactor::Forward(const v1::AttachRequest& request) {
  if (exited_) return;
  v1::DaemonMessage message;
  v1::SessionInput& input = *message.mutable_session_input();
  input.set_session_id(session_id_);
  input.set_job_id(job_id_);
  switch (request.kind_case()) {
    case v1::AttachRequest::kStdin: input.set_stdin(request.stdin()); break;
    case v1::AttachRequest::kStdinClosed: input.set_stdin_closed(true); break;
    case v1::AttachRequest::kResize: *input.mutable_resize() = request.resize(); break;
    case v1::AttachRequest::kSignal: input.set_signal(request.signal()); break;
    default: return;
  }
  channel_->Send(message);
}

void AttachReactor::Deliver(const v1::SessionOutput& output) {
  MutexLock lock(&mu_);
  if (exited_ || finishing_) return;
  v1::AttachResponse response;
  const size_t bytes = OutputBytes(output);
  if (bytes > 0 && queued_output_bytes_ + bytes > kMaxQueuedOutputBytes) {
    dropped_output_bytes_ += bytes;
    return;
  }
  if (dropped_output_bytes_ > 0 && (queued_output_bytes_ <= kMaxQueuedOutputBytes / 2 || output.has_exit())) {
    // Said once the client has caught up, where the output is missing.
    v1::AttachResponse note;
    note.set_stderr(
        absl::StrCat("\n[gpuschedd: ", dropped_output_bytes_,
                     " bytes of this session's output were dropped: this client did not read them in time]\n"));
    dropped_output_bytes_ = 0;
    QueueLocked(std::move(note));
  }
  switch (output.kind_case()) {
    case v1::SessionOutput::kStdout: response.set_stdout(output.stdout()); break;
    case v1::SessionOutput::kStderr: response.set_stderr(output.stderr()); break;
    case v1::SessionOutput::kExit:
      *response.mutable_exit() = output.exit();
      exited_ = true;
      if (ends_job_) {
        CancelJobOnce(absl::StrCat("its interactive session ended (exit code ", output.exit().exit_code(), ")",
                                   output.exit().message().empty() ? "" : ": ", output.exit().message()));
      }
      break;
    default: return;
  }
  QueueLocked(std::move(response));
}

void AttachReactor::ClientGone() {
  MutexLock lock(&mu_);
  if (session_id_ != 0 && !exited_) {
    v1::DaemonMessage message;
    message.mutable_session_input()->set_session_id(session_id_);
    message.mutable_session_input()->set_job_id(job_id_);
    message.mutable_session_input()->set_hangup(true);
    channel_->Send(message);
    exited_ = true;
    if (ends_job_) {
      CancelJobOnce(client_done_
                        ? absl::StrCat("its interactive session ended (exit code ", client_done_->exit_code(), ")")
                        : std::string("its interactive session's client went away"));
    }
  }
  // Its exit, if one is still on the way, has no one to go to.
  FinishLocked(grpc::Status::OK);
}

void AttachReactor::CancelJobOnce(const std::string& reason) {
  if (job_cancelled_) return;
  job_cancelled_ = true;
  loop_.Post([id = job_id_, reason](LoopContext& ctx) {
    if (ctx.core.FindActive(id) == nullptr) return;
    auto cancelled = ctx.core.Cancel(id, reason, ctx.fx);
    if (!cancelled.ok()) {
      GetLogger("daemon")->warn("job {}: cannot end it after its session: {}", id,
                                std::string(cancelled.status().message()));
    }
  });
}

void AttachReactor::QueueLocked(v1::AttachResponse response) {
  queued_output_bytes_ += OutputBytes(response);
  out_.push_back(std::move(response));
  if (!writing_) {
    writing_ = true;
    StartWrite(&out_.front());
  }
}

void AttachReactor::OnWriteDone(bool ok) {
  MutexLock lock(&mu_);
  writing_ = false;
  if (!ok) {
    out_.clear();
    queued_output_bytes_ = 0;
    FinishLocked(grpc::Status::OK);
  } else {
    queued_output_bytes_ -= OutputBytes(out_.front());
    out_.pop_front();
  }
  if (!out_.empty()) {
    writing_ = true;
    StartWrite(&out_.front());
    return;
  }
  // The exit was the last thing to say.
  if (exited_) FinishLocked(grpc::Status::OK);
  if (finishing_ && !finish_called_) {
    finish_called_ = true;
    Finish(final_status_);
  }
}

void AttachReactor::FinishLocked(const grpc::Status& status) {
  if (finishing_) return;
  finishing_ = true;
  final_status_ = status;
  if (writing_) return;  // OnWriteDone finishes once the queue is out
  finish_called_ = true;
  Finish(status);
}

void AttachReactor::Release() {
  bool last = false;
  {
    MutexLock lock(&mu_);
    last = --refs_ == 0;
  }
  if (last) delete this;
}

void AttachReactor::OnDone() {
  uint64_t id = 0;
  {
    MutexLock lock(&mu_);
    id = session_id_;
  }
  // Before the last reference goes: the relay may be delivering right now.
  if (id != 0) relay_.Remove(id);
  Release();
}

}  // namespace gpusched::server
