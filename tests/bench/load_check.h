#pragma once

// The end of a load run: what the daemon holds, checked against what it told
// its clients. Every acknowledged job is there exactly once, under the request
// id and size it was acknowledged for; no job is there that nobody was told
// about; every job has ended, CANCELLED where a cancel was acknowledged and
// only where one was asked for.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpusched/v1/scheduler.grpc.pb.h"
#include "tests/bench/load_clients.h"

namespace gpusched::bench {

// Every page of ListJobs (states empty = all). Pages are kept small enough that
// a run's final listing follows page tokens too.
absl::StatusOr<std::vector<v1::Job>> ListAllJobs(v1::Scheduler::Stub& stub, const std::vector<v1::JobState>& states,
                                                 int page_size = 500);

struct CheckOutcome {
  uint64_t listed = 0;                       // jobs in the store
  uint64_t acknowledged = 0;                 // jobs the clients were told about
  uint64_t in_doubt = 0;                     // jobs of submits that never got an answer (not counted as problems)
  std::map<std::string, uint64_t> by_state;  // final state -> jobs
  std::map<std::string, uint64_t> problems_by_check;  // check -> count; empty = PASS
  std::vector<std::string> examples;                  // the first few, in words
  std::vector<std::string> unexpected_ends;           // FAILED / TIMEOUT / NODE_FAIL without a cancel (first few)
  uint64_t unexpected_end_count = 0;

  bool passed() const { return problems_by_check.empty(); }
};

// `bench_cancelled`: jobs the bench itself cancelled after the run (may end CANCELLED).
CheckOutcome CheckJobs(v1::Scheduler::Stub& stub, const ClientsResult& clients,
                       const std::set<uint64_t>& bench_cancelled);

}  // namespace gpusched::bench
