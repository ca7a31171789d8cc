#pragma once

// The clients of a busy cluster, on gRPC's completion-queue API (a few threads
// drive them all, as in closed_loop.h). Each client, one call at a time and
// without think time: submits jobs (a unique client_request_id each, resent
// with the same id after a transient error), polls its own jobs with GetJob,
// lists, cancels some of them (pending, running or just ended), and sends a few acknowledged submits again to
// see the same job come back. It writes down every answer, so that the daemon's
// final state can be checked against what it told its clients (load_check.h).

#include <grpcpp/channel.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/v1/types.pb.h"

namespace gpusched::bench {

enum class OpKind { kSubmit, kResubmit, kGetJob, kListJobs, kCancelJob };
inline constexpr int kOpKinds = 5;
const char* OpName(OpKind kind);

struct ClientsSpec {
  int clients = 64;
  int threads = 2;
  double duration_s = 30;
  // A client submits only while fewer of its own jobs are unfinished: the
  // queue stays as deep as clients x this, whatever the submit rate.
  int active_per_client = 4;
  // Relative weights of the next call (submit only below active_per_client,
  // cancel only while one of its jobs is marked to be cancelled).
  double submit_weight = 3, get_weight = 10, list_weight = 2, cancel_weight = 1;
  double cancel_fraction = 0.15;    // acknowledged jobs marked to be cancelled, some time later
  double resubmit_fraction = 0.05;  // acknowledged submits sent again with the same request id
  double max_sleep_s = 0.5;         // half the jobs run /bin/true, half /bin/sleep up to this
  int deadline_ms = 10000;          // per attempt
  double give_up_s = 120;           // a submit or cancel unanswered this long after the end: unresolved
  std::string user;
  std::string request_id_prefix;  // unique per run
  uint64_t seed = 1;
};

// One acknowledged job, as its client knows it.
struct JobRecord {
  uint64_t id = 0;
  std::string request_id;
  int client = 0;
  int64_t gpus = 0;
  bool cancel_sent = false;   // may end CANCELLED
  bool cancel_acked = false;  // a CancelJob answered OK: must end CANCELLED
  v1::JobState last_seen = v1::JOB_STATE_UNSPECIFIED;
};

struct OpStats {
  uint64_t answered = 0;           // definitive answers (a CancelJob's "already ended" included)
  uint64_t errors = 0;             // other failures
  uint64_t transient = 0;          // UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED
  std::vector<double> latency_us;  // of the answered calls
  std::string first_error;
};

struct ClientsResult {
  std::vector<JobRecord> jobs;                      // every job acknowledged to some client
  std::vector<std::string> rejected_request_ids;    // definitive submit errors: no job may carry them
  std::vector<std::string> unresolved_request_ids;  // never answered within give_up_s
  uint64_t unresolved_cancels = 0;
  uint64_t cancels_after_end = 0;    // CancelJob answered "already ended"
  uint64_t duplicates_answered = 0;  // submits answered duplicate (resubmits and retries)
  std::array<OpStats, kOpKinds> ops;
  std::vector<std::string> problems;  // contradictions seen live (the first few)
  uint64_t problem_count = 0;
  double run_s = 0;  // from the first call until the last one ended
};

// Client i uses channels[i % channels.size()].
ClientsResult RunClients(const std::vector<std::shared_ptr<grpc::Channel>>& channels, const ClientsSpec& spec);

}  // namespace gpusched::bench
