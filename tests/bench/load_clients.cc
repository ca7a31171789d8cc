#include "tests/bench/load_clients.h"

#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/job_states.h"
#include "gpusched/v1/scheduler.grpc.pb.h"

namespace gpusched::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxProblems = 20;

bool Transient(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED || code == grpc::StatusCode::ABORTED;
}

struct Client {
  int index = 0;
  std::mt19937_64 rng;
  uint64_t seq = 0;
  std::unordered_map<uint64_t, JobRecord> jobs;  // acknowledged, by id
  std::vector<uint64_t> all;                     // the same ids, for picking one
  std::vector<uint64_t> active;                  // not yet seen in a terminal state
  std::vector<uint64_t> to_cancel;               // marked to be cancelled, not yet asked
  uint64_t resubmit = 0;                         // an acknowledged job to submit again next,
  v1::SubmitJobRequest resubmit_request;         // with the very request that created it

  void Ended(uint64_t id) {
    if (auto it = std::find(active.begin(), active.end(), id); it != active.end()) {
      *it = active.back();
      active.pop_back();
    }
  }
  uint64_t Pick(const std::vector<uint64_t>& from) { return from[Below(from.size())]; }
  size_t Below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
  double Uniform() { return std::uniform_real_distribution<double>(0, 1)(rng); }
};

// One call of one client; its completion-queue tag, twice when a retry waits
// on `alarm` first.
struct Op {
  OpKind kind;
  Client* client = nullptr;
  uint64_t job_id = 0;   // the job a GetJob / CancelJob / own-page ListJobs / resubmit is about
  bool waiting = false;  // the tag is the retry alarm
  int attempt = 0;
  Clock::time_point start;
  std::unique_ptr<grpc::ClientContext> ctx;
  grpc::Status status;
  grpc::Alarm alarm;
  v1::SubmitJobRequest submit;
  v1::SubmitJobResponse submitted;
  v1::GetJobRequest get;
  v1::Job job;
  v1::ListJobsRequest list;
  v1::ListJobsResponse listed;
  v1::CancelJobRequest cancel;
  v1::CancelJobResponse cancelled;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::SubmitJobResponse>> submit_rpc;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::Job>> get_rpc;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::ListJobsResponse>> list_rpc;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::CancelJobResponse>> cancel_rpc;
};

class Driver {
 public:
  Driver(const std::vector<std::shared_ptr<grpc::Channel>>& channels, const ClientsSpec& spec) : spec_(spec) {
    if (channels.empty()) throw std::invalid_argument("no channels");
    for (const auto& channel : channels) stubs_.push_back(v1::Scheduler::NewStub(channel));
    clients_.resize(spec.clients);
    for (int i = 0; i < spec.clients; ++i) {
      clients_[i].index = i;
      clients_[i].rng.seed(spec.seed * 1000003 + i);
    }
  }

  ClientsResult Run() {
    t0_ = Clock::now();
    end_ = t0_ + Seconds(spec_.duration_s);
    give_up_ = end_ + Seconds(spec_.give_up_s);
    const int threads = std::max(1, std::min(spec_.threads, spec_.clients));
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) workers.emplace_back([this, t, threads] { Work(t, threads); });
    for (auto& w : workers) w.join();
    absl::MutexLock lock(&mu_);
    for (Client& c : clients_) {
      for (auto& [id, record] : c.jobs) out_.jobs.push_back(record);
    }
    std::sort(out_.jobs.begin(), out_.jobs.end(), [](const JobRecord& a, const JobRecord& b) { return a.id < b.id; });
    return std::move(out_);
  }

 private:
  static Clock::duration Seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  // The client's next call, or nullptr once the run is over.
  std::unique_ptr<Op> Next(Client& c) {
    if (Clock::now() >= end_) return nullptr;
    auto op = std::make_unique<Op>();
    op->client = &c;
    if (c.resubmit != 0) {
      op->kind = OpKind::kResubmit;
      op->job_id = std::exchange(c.resubmit, 0);
      op->submit = std::move(c.resubmit_request);
      return op;
    }
    const bool can_submit = static_cast<int>(c.active.size()) < spec_.active_per_client;
    const double w[4] = {can_submit ? spec_.submit_weight : 0, c.all.empty() ? 0 : spec_.get_weight, spec_.list_weight,
                         c.to_cancel.empty() ? 0 : spec_.cancel_weight};
    double x = c.Uniform() * (w[0] + w[1] + w[2] + w[3]);
    if ((x -= w[0]) < 0) {
      op->kind = OpKind::kSubmit;
      op->submit = SubmitRequest(c);
      op->submit.set_client_request_id(absl::StrCat(spec_.request_id_prefix, "-c", c.index, "-", c.seq++));
    } else if ((x -= w[1]) < 0) {
      // Mostly the jobs it waits for, sometimes one that has ended.
      op->kind = OpKind::kGetJob;
      op->job_id = !c.active.empty() && c.Uniform() < 0.8 ? c.Pick(c.active) : c.Pick(c.all);
      op->get.set_job_id(op->job_id);
    } else if ((x -= w[2]) < 0 || w[3] == 0) {
      // Half `gpusched status` (what has not ended), half a page that must
      // start with one of its own jobs.
      op->kind = OpKind::kListJobs;
      if (c.all.empty() || c.Uniform() < 0.5) {
        for (auto s : {v1::JOB_STATE_PENDING, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING, v1::JOB_STATE_PREEMPTED}) {
          op->list.add_states(s);
        }
        op->list.set_page_size(100);
      } else {
        op->job_id = c.Pick(c.all);
        op->list.set_page_token(std::to_string(op->job_id - 1));
        op->list.set_page_size(20);
      }
    } else {
      op->kind = OpKind::kCancelJob;
      const size_t i = c.Below(c.to_cancel.size());
      op->job_id = c.to_cancel[i];
      c.to_cancel[i] = c.to_cancel.back();
      c.to_cancel.pop_back();
      op->cancel.set_job_id(op->job_id);
      op->cancel.set_reason("load_bench");
      c.jobs[op->job_id].cancel_sent = true;
    }
    return op;
  }

  v1::SubmitJobRequest SubmitRequest(Client& c) const {
    // Mostly small jobs, some whole nodes: the mix that fragments a cluster.
    static constexpr int64_t kGpus[] = {1, 1, 1, 1, 2, 2, 2, 4, 4, 8};
    v1::SubmitJobRequest request;
    v1::JobSpec* spec = request.mutable_spec();
    spec->set_name("load");
    spec->set_user(spec_.user);
    spec->set_launch_mode(v1::LAUNCH_MODE_PER_NODE);
    spec->mutable_resources()->set_gpus(kGpus[c.Below(std::size(kGpus))]);
    if (c.Uniform() < 0.5) {
      spec->add_argv("/bin/true");
    } else {
      spec->add_argv("/bin/sleep");
      spec->add_argv(absl::StrCat(static_cast<int>(c.Uniform() * spec_.max_sleep_s * 1000) / 1000.0));
    }
    return request;
  }

  void Start(Op* op, grpc::CompletionQueue& cq) {
    v1::Scheduler::Stub& stub = *stubs_[static_cast<size_t>(op->client->index) % stubs_.size()];
    op->ctx = std::make_unique<grpc::ClientContext>();
    op->ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(spec_.deadline_ms));
    op->start = Clock::now();
    switch (op->kind) {
      case OpKind::kSubmit:
      case OpKind::kResubmit:
        op->submitted.Clear();
        op->submit_rpc = stub.AsyncSubmitJob(op->ctx.get(), op->submit, &cq);
        op->submit_rpc->Finish(&op->submitted, &op->status, op);
        break;
      case OpKind::kGetJob:
        op->get_rpc = stub.AsyncGetJob(op->ctx.get(), op->get, &cq);
        op->get_rpc->Finish(&op->job, &op->status, op);
        break;
      case OpKind::kListJobs:
        op->list_rpc = stub.AsyncListJobs(op->ctx.get(), op->list, &cq);
        op->list_rpc->Finish(&op->listed, &op->status, op);
        break;
      case OpKind::kCancelJob:
        op->cancelled.Clear();
        op->cancel_rpc = stub.AsyncCancelJob(op->ctx.get(), op->cancel, &cq);
        op->cancel_rpc->Finish(&op->cancelled, &op->status, op);
        break;
    }
  }

  void Work(int index, int threads) {
    grpc::CompletionQueue cq;
    int live = 0;  // clients with a call in flight or waiting to retry
    for (int i = index; i < spec_.clients; i += threads) {
      if (auto op = Next(clients_[i])) {
        Start(op.release(), cq);
        ++live;
      }
    }
    while (live > 0) {
      void* tag = nullptr;
      bool ok = false;
      if (!cq.Next(&tag, &ok)) break;
      std::unique_ptr<Op> op(static_cast<Op*>(tag));
      if (op->waiting) {
        op->waiting = false;
        Start(op.release(), cq);
        continue;
      }
      bool again = false;
      {
        // Client state belongs to this thread; the lock is for out_.
        absl::MutexLock lock(&mu_);
        out_.run_s = std::max(out_.run_s, std::chrono::duration<double>(Clock::now() - t0_).count());
        again = Handle(*op);
      }
      if (again) {
        // The same request again (same client_request_id), after a short backoff.
        op->waiting = true;
        ++op->attempt;
        const auto backoff = std::chrono::milliseconds(std::min(1000, 20 << std::min(op->attempt, 6)));
        Op* raw = op.release();
        raw->alarm.Set(&cq, std::chrono::system_clock::now() + backoff, raw);
        continue;
      }
      if (auto next = Next(*op->client)) {
        Start(next.release(), cq);
      } else {
        --live;
      }
    }
    cq.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq.Next(&tag, &ok)) delete static_cast<Op*>(tag);
  }

  // Records the answer; true when the call should be sent again.
  bool Handle(Op& op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Client& c = *op.client;
    OpStats& stats = out_.ops[static_cast<int>(op.kind)];
    const grpc::StatusCode code = op.status.error_code();
    const bool retried_kind =
        op.kind == OpKind::kSubmit || op.kind == OpKind::kResubmit || op.kind == OpKind::kCancelJob;
    auto job_text = [&](uint64_t id) { return absl::StrCat("job ", id, " (client ", c.index, ")"); };
    if (Transient(code)) {
      ++stats.transient;
      if (stats.first_error.empty()) stats.first_error = absl::StrCat("code ", code, ": ", op.status.error_message());
      if (!retried_kind) return false;
      if (Clock::now() < give_up_) return true;
      if (op.kind == OpKind::kCancelJob) {
        ++out_.unresolved_cancels;
      } else if (op.kind == OpKind::kSubmit) {
        out_.unresolved_request_ids.push_back(op.submit.client_request_id());
      }
      return false;
    }
    const bool answered = code == grpc::StatusCode::OK ||
                          (op.kind == OpKind::kCancelJob && code == grpc::StatusCode::FAILED_PRECONDITION);
    if (answered) {
      ++stats.answered;
      stats.latency_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - op.start).count());
    } else {
      ++stats.errors;
      if (stats.first_error.empty()) stats.first_error = absl::StrCat("code ", code, ": ", op.status.error_message());
    }
    if (code == grpc::StatusCode::NOT_FOUND && op.job_id != 0) {
      Problem(absl::StrCat(OpName(op.kind), ": acknowledged ", job_text(op.job_id), " not found"));
      return false;
    }
    switch (op.kind) {
      case OpKind::kSubmit: {
        if (!answered) {
          out_.rejected_request_ids.push_back(op.submit.client_request_id());
          return false;
        }
        const v1::Job& job = op.submitted.job();
        if (op.submitted.duplicate()) ++out_.duplicates_answered;
        // A retry may find the job its lost first attempt created; a first try may not.
        if ((op.submitted.duplicate() && op.attempt == 0) || job.id() == 0 ||
            job.client_request_id() != op.submit.client_request_id()) {
          Problem(absl::StrCat("submit ", op.submit.client_request_id(), " answered job ", job.id(), " request id \"",
                               job.client_request_id(), "\"", op.submitted.duplicate() ? " as a duplicate" : ""));
          return false;
        }
        auto [it, fresh] = c.jobs.try_emplace(job.id());
        if (!fresh) {
          Problem(absl::StrCat(job_text(job.id()), " acknowledged for request ids ", it->second.request_id, " and ",
                               op.submit.client_request_id()));
          return false;
        }
        JobRecord& r = it->second;
        r.id = job.id();
        r.request_id = op.submit.client_request_id();
        r.client = c.index;
        r.gpus = op.submit.spec().resources().gpus();
        r.last_seen = job.state();
        c.all.push_back(r.id);
        if (!IsTerminal(job.state())) c.active.push_back(r.id);
        if (c.Uniform() < spec_.cancel_fraction) c.to_cancel.push_back(r.id);
        if (c.Uniform() < spec_.resubmit_fraction) {
          c.resubmit = r.id;
          c.resubmit_request = op.submit;
        }
        return false;
      }
      case OpKind::kResubmit:
        if (!answered) {
          Problem(absl::StrCat("resubmit of ", job_text(op.job_id), ": ", op.status.error_message()));
        } else if (!op.submitted.duplicate() || op.submitted.job().id() != op.job_id) {
          Problem(absl::StrCat("resubmit of ", job_text(op.job_id), " with request id ", op.submit.client_request_id(),
                               " answered job ", op.submitted.job().id(),
                               op.submitted.duplicate() ? " (duplicate)" : " (new)"));
        } else {
          ++out_.duplicates_answered;
        }
        return false;
      case OpKind::kGetJob:
        if (answered) {
          if (op.job.id() != op.job_id || op.job.client_request_id() != c.jobs[op.job_id].request_id) {
            Problem(absl::StrCat("GetJob ", op.job_id, " answered job ", op.job.id(), " request id ",
                                 op.job.client_request_id()));
          }
          Seen(c, op.job_id, op.job.state());
        }
        return false;
      case OpKind::kListJobs:
        if (!answered || op.job_id == 0) return false;
        if (op.listed.jobs_size() == 0 || op.listed.jobs(0).id() != op.job_id) {
          Problem(absl::StrCat("ListJobs after ", op.job_id - 1, " does not start with acknowledged ",
                               job_text(op.job_id)));
        } else {
          Seen(c, op.job_id, op.listed.jobs(0).state());
        }
        return false;
      case OpKind::kCancelJob: {
        if (!answered) return false;
        if (code == grpc::StatusCode::FAILED_PRECONDITION) {
          // "Already ended". gRPC sends no reply body with an error status, so
          // the state it ended in is for a later GetJob to see.
          ++out_.cancels_after_end;
          return false;
        }
        const v1::Job& job = op.cancelled.job();
        if (job.id() != op.job_id) {
          Problem(absl::StrCat("CancelJob ", op.job_id, " answered job ", job.id()));
          return false;
        }
        c.jobs[op.job_id].cancel_acked = true;
        if (IsTerminal(job.state()) && job.state() != v1::JOB_STATE_CANCELLED) {
          Problem(absl::StrCat("CancelJob OK for ", job_text(op.job_id), " that is ", StateName(job.state())));
        }
        Seen(c, op.job_id, job.state());
        return false;
      }
    }
    return false;
  }

  // A state the daemon showed for an own job: never back from an ending.
  void Seen(Client& c, uint64_t id, v1::JobState state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    JobRecord& r = c.jobs[id];
    if (IsTerminal(r.last_seen) && state != r.last_seen) {
      Problem(absl::StrCat("job ", id, " was ", StateName(r.last_seen), ", later ", StateName(state)));
    }
    if (state == v1::JOB_STATE_CANCELLED && !r.cancel_sent) {
      Problem(absl::StrCat("job ", id, " is CANCELLED, but its client never cancelled it"));
    }
    r.last_seen = state;
    if (IsTerminal(state)) c.Ended(id);
  }

  void Problem(std::string what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (out_.problems.size() < kMaxProblems) out_.problems.push_back(std::move(what));
    ++out_.problem_count;
  }

  const ClientsSpec spec_;
  std::vector<std::unique_ptr<v1::Scheduler::Stub>> stubs_;
  std::vector<Client> clients_;
  Clock::time_point t0_, end_, give_up_;
  absl::Mutex mu_;
  ClientsResult out_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

const char* OpName(OpKind kind) {
  static constexpr const char* kNames[kOpKinds] = {"SubmitJob", "SubmitJob (same request id again)", "GetJob",
                                                   "ListJobs", "CancelJob"};
  return kNames[static_cast<int>(kind)];
}

ClientsResult RunClients(const std::vector<std::shared_ptr<grpc::Channel>>& channels, const ClientsSpec& spec) {
  return Driver(channels, spec).Run();
}

}  // namespace gpusched::bench
