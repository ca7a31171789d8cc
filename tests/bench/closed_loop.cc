#include "tests/bench/closed_loop.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "gpusched/v1/scheduler.grpc.pb.h"

namespace gpusched::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kHealthCheckMethod[] = "/grpc.health.v1.Health/Check";

// One RPC in flight. Owned by its completion-queue tag until it completes.
struct Call {
  virtual ~Call() = default;
  // Empty when the reply is the one this call should get.
  virtual std::string Check() const { return ""; }
  virtual uint64_t JobId() const { return 0; }
  virtual uint64_t Items() const { return 0; }

  grpc::ClientContext ctx;
  grpc::Status status;
  Clock::time_point start;
  int client = 0;
};

struct HealthCall : Call {
  std::string Check() const override {
    // HealthCheckResponse{status: SERVING} is the two bytes 08 01.
    std::vector<grpc::Slice> slices;
    if (!response.Dump(&slices).ok()) return "unreadable health response";
    std::string bytes;
    for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    return bytes == std::string("\x08\x01", 2) ? "" : "health check did not answer SERVING";
  }
  grpc::ByteBuffer response;
  std::unique_ptr<grpc::ClientAsyncResponseReader<grpc::ByteBuffer>> rpc;
};

struct SubmitCall : Call {
  std::string Check() const override {
    if (response.duplicate()) return "submit answered duplicate for a fresh client_request_id";
    if (response.job().id() == 0) return "submit answered without a job id";
    if (response.job().state() != v1::JOB_STATE_PENDING) return "submitted job is not PENDING";
    return "";
  }
  uint64_t JobId() const override { return response.job().id(); }
  v1::SubmitJobResponse response;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::SubmitJobResponse>> rpc;
};

struct GetJobCall : Call {
  std::string Check() const override { return response.id() == want ? "" : "GetJob answered another job"; }
  uint64_t Items() const override { return static_cast<uint64_t>(response.events_size()); }
  uint64_t want = 0;
  v1::Job response;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::Job>> rpc;
};

struct ListJobsCall : Call {
  std::string Check() const override { return response.jobs_size() > 0 ? "" : "ListJobs answered an empty page"; }
  uint64_t Items() const override { return static_cast<uint64_t>(response.jobs_size()); }
  v1::ListJobsResponse response;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::ListJobsResponse>> rpc;
};

// Request ids stay unique across every run of one bench process.
std::atomic<uint64_t> g_request_seq{0};

class Driver {
 public:
  Driver(const std::vector<std::shared_ptr<grpc::Channel>>& channels, const LoadSpec& spec) : spec_(spec) {
    if (channels.empty()) throw std::invalid_argument("no channels");
    for (const auto& channel : channels) {
      stubs_.push_back(v1::Scheduler::NewStub(channel));
      generic_stubs_.push_back(std::make_unique<grpc::GenericStub>(channel));
    }
    grpc::Slice empty(std::string{});
    health_request_ = grpc::ByteBuffer(&empty, 1);  // HealthCheckRequest{} encodes to no bytes
    submit_request_.mutable_spec()->set_name("bench");
    submit_request_.mutable_spec()->add_argv("/bin/true");
    submit_request_.mutable_spec()->set_user("bench");
    submit_request_.mutable_spec()->mutable_resources()->set_gpus(1);
    submit_request_.mutable_spec()->set_hold(spec.hold);
    get_request_.set_job_id(spec.job_id);
    for (int state : spec.states) list_request_.add_states(static_cast<v1::JobState>(state));
    nonce_ = "bench-" + std::to_string(getpid()) + "-" +
             std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  }

  LoadResult Run() {
    t0_ = Clock::now();
    warm_end_ = t0_ + ToDuration(spec_.warmup_s);
    end_ = warm_end_ + ToDuration(spec_.measure_s);
    const int threads = std::max(1, std::min(spec_.threads, spec_.clients));
    std::vector<LoadResult> parts(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([this, t, threads, &parts] { Work(t, threads, parts[t]); });
    }
    for (auto& w : workers) w.join();
    return Merge(parts);
  }

 private:
  static Clock::duration ToDuration(double seconds) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  bool Counted() const { return spec_.measure_s <= 0; }

  // Starts the next call of `client`, or returns nullptr once the run is over.
  Call* Issue(int client, grpc::CompletionQueue& cq) {
    if (Counted()) {
      if (issued_.fetch_add(1) >= spec_.max_calls) return nullptr;
      if (spec_.time_cap_s > 0 && Clock::now() - t0_ >= ToDuration(spec_.time_cap_s)) return nullptr;
    } else if (Clock::now() >= end_) {
      return nullptr;
    }
    const size_t ch = static_cast<size_t>(client) % stubs_.size();
    auto prepare = [&](auto* call) {
      call->client = client;
      call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      call->start = Clock::now();
      return call;
    };
    switch (spec_.kind) {
      case CallKind::kHealthCheck: {
        auto* call = prepare(new HealthCall);
        call->rpc = generic_stubs_[ch]->PrepareUnaryCall(&call->ctx, kHealthCheckMethod, health_request_, &cq);
        call->rpc->StartCall();
        call->rpc->Finish(&call->response, &call->status, call);
        return call;
      }
      case CallKind::kSubmitJob: {
        auto* call = prepare(new SubmitCall);
        v1::SubmitJobRequest request = submit_request_;
        request.set_client_request_id(nonce_ + "-" + std::to_string(g_request_seq.fetch_add(1)));
        call->rpc = stubs_[ch]->PrepareAsyncSubmitJob(&call->ctx, request, &cq);
        call->rpc->StartCall();
        call->rpc->Finish(&call->response, &call->status, call);
        return call;
      }
      case CallKind::kGetJob: {
        auto* call = prepare(new GetJobCall);
        call->want = spec_.job_id;
        call->rpc = stubs_[ch]->PrepareAsyncGetJob(&call->ctx, get_request_, &cq);
        call->rpc->StartCall();
        call->rpc->Finish(&call->response, &call->status, call);
        return call;
      }
      case CallKind::kListJobs: {
        auto* call = prepare(new ListJobsCall);
        call->rpc = stubs_[ch]->PrepareAsyncListJobs(&call->ctx, list_request_, &cq);
        call->rpc->StartCall();
        call->rpc->Finish(&call->response, &call->status, call);
        return call;
      }
    }
    return nullptr;
  }

  void Work(int index, int threads, LoadResult& out) {
    grpc::CompletionQueue cq;
    int outstanding = 0;
    for (int client = index; client < spec_.clients; client += threads) {
      if (Issue(client, cq) != nullptr) ++outstanding;
    }
    Clock::time_point last = t0_;
    while (outstanding > 0) {
      void* tag = nullptr;
      bool ok = false;
      if (!cq.Next(&tag, &ok)) break;
      std::unique_ptr<Call> call(static_cast<Call*>(tag));
      --outstanding;
      const Clock::time_point now = Clock::now();
      last = now;
      ++out.total_calls;
      std::string error = call->status.ok() ? call->Check() : call->status.error_message();
      if (!call->status.ok()) error = "grpc code " + std::to_string(call->status.error_code()) + ": " + error;
      if (!error.empty()) {
        ++out.failed;
        if (out.first_error.empty()) out.first_error = error;
      } else {
        ++out.total_ok;
        if (const uint64_t id = call->JobId(); id != 0) {
          out.min_job_id = out.min_job_id == 0 ? id : std::min(out.min_job_id, id);
          out.max_job_id = std::max(out.max_job_id, id);
        }
        out.response_items = call->Items();
        if (spec_.record_completions) out.completion_s.push_back(std::chrono::duration<double>(now - t0_).count());
        if (now >= warm_end_ && (Counted() || now <= end_)) {
          ++out.ok;
          out.latency_us.push_back(std::chrono::duration<double, std::micro>(now - call->start).count());
        }
      }
      if (Issue(call->client, cq) != nullptr) ++outstanding;
    }
    out.wall_s = std::chrono::duration<double>(last - t0_).count();
    cq.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq.Next(&tag, &ok)) delete static_cast<Call*>(tag);
  }

  LoadResult Merge(std::vector<LoadResult>& parts) const {
    LoadResult r;
    for (LoadResult& p : parts) {
      r.ok += p.ok;
      r.failed += p.failed;
      r.total_ok += p.total_ok;
      r.total_calls += p.total_calls;
      r.wall_s = std::max(r.wall_s, p.wall_s);
      r.latency_us.insert(r.latency_us.end(), p.latency_us.begin(), p.latency_us.end());
      r.completion_s.insert(r.completion_s.end(), p.completion_s.begin(), p.completion_s.end());
      if (p.min_job_id != 0) r.min_job_id = r.min_job_id == 0 ? p.min_job_id : std::min(r.min_job_id, p.min_job_id);
      r.max_job_id = std::max(r.max_job_id, p.max_job_id);
      r.response_items = std::max(r.response_items, p.response_items);
      if (r.first_error.empty()) r.first_error = p.first_error;
    }
    std::sort(r.completion_s.begin(), r.completion_s.end());
    r.window_s = Counted() ? r.wall_s : spec_.measure_s;
    return r;
  }

  const LoadSpec spec_;
  std::vector<std::unique_ptr<v1::Scheduler::Stub>> stubs_;
  std::vector<std::unique_ptr<grpc::GenericStub>> generic_stubs_;
  grpc::ByteBuffer health_request_;
  v1::SubmitJobRequest submit_request_;
  v1::GetJobRequest get_request_;
  v1::ListJobsRequest list_request_;
  std::string nonce_;
  std::atomic<uint64_t> issued_{0};
  Clock::time_point t0_, warm_end_, end_;
};

}  // namespace

const char* CallName(CallKind kind) {
  switch (kind) {
    case CallKind::kHealthCheck: return "Health.Check";
    case CallKind::kSubmitJob: return "SubmitJob";
    case CallKind::kGetJob: return "GetJob";
    case CallKind::kListJobs: return "ListJobs";
  }
  return "?";
}

LoadResult RunClosedLoop(const std::vector<std::shared_ptr<grpc::Channel>>& channels, const LoadSpec& spec) {
  return Driver(channels, spec).Run();
}

std::vector<std::shared_ptr<grpc::Channel>> MakeChannels(const std::string& address, int count) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < count; ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("gpusched.bench.channel_index", i);
    args.SetMaxReceiveMessageSize(64 << 20);
    auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
      throw std::runtime_error("cannot connect to gpuschedd at " + address);
    }
    channels.push_back(std::move(channel));
  }
  return channels;
}

}  // namespace gpusched::bench
