#pragma once

// A closed-loop load generator on gRPC's completion-queue API: `clients`
// outstanding calls, each replaced by a new one the moment it completes, driven
// by a few client threads (one completion queue each) rather than one OS
// thread per client, so that 64 clients do not fight the daemon for 2 cores.

#include <grpcpp/channel.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpusched::bench {

enum class CallKind {
  kHealthCheck,  // /grpc.health.v1.Health/Check through a GenericStub: the bare unary call
  kSubmitJob,    // a durable 1-GPU /bin/true job with a unique client_request_id
  kGetJob,       // GetJob(job_id), events included
  kListJobs,     // ListJobs first page, default page size, filtered by `states`
};

const char* CallName(CallKind kind);

struct LoadSpec {
  CallKind kind = CallKind::kHealthCheck;
  int clients = 1;
  int threads = 1;
  // Timed mode: warm up, then count completions in the window.
  double warmup_s = 0;
  double measure_s = 0;
  // Counted mode (measure_s == 0): exactly max_calls calls, all measured.
  uint64_t max_calls = 0;
  double time_cap_s = 0;    // counted mode: also stop issuing after this long (0 = no cap)
  uint64_t job_id = 0;      // kGetJob
  std::vector<int> states;  // kListJobs (JobState numbers; empty = all)
  bool record_completions = false;
  bool hold = false;  // kSubmitJob: submitted held, so that connected agents leave them pending
};

struct LoadResult {
  uint64_t ok = 0;           // completed OK inside the window
  uint64_t failed = 0;       // failed anywhere (warm-up included)
  uint64_t total_ok = 0;     // OK including warm-up (= jobs created by submits)
  uint64_t total_calls = 0;  // completed, warm-up included
  double window_s = 0;
  double wall_s = 0;                        // whole run, warm-up and drain included
  std::vector<double> latency_us;           // calls completed OK inside the window
  std::vector<double> completion_s;         // since start, every OK call (record_completions)
  uint64_t min_job_id = 0, max_job_id = 0;  // kSubmitJob
  uint64_t response_items = 0;              // jobs in a ListJobs page, events of a GetJob job
  std::string first_error;

  double CallsPerSecond() const { return window_s > 0 ? ok / window_s : 0; }
};

// Channels are shared round-robin by the clients: client i uses channels[i % n].
LoadResult RunClosedLoop(const std::vector<std::shared_ptr<grpc::Channel>>& channels, const LoadSpec& spec);

// `count` channels to `address`, each on its own TCP connection: a local
// subchannel pool and a distinct channel argument keep gRPC from sharing one.
std::vector<std::shared_ptr<grpc::Channel>> MakeChannels(const std::string& address, int count);

}  // namespace gpusched::bench
