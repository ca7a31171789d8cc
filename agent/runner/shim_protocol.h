#pragma once

#include <signal.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/runner/process_spawner.h"

namespace gpusched::agent {

// How the agent and a job's shim (gpusched-shim) talk. The shim is the
// parent of the job's ranks on one node, so that they outlive the agent: an
// agent that restarts finds the shim again (ProcessLedger) and learns how the
// ranks ended from the shim's exits file.
//
//  - The spec: the agent writes EncodeShimSpec() on the shim's stdin, then
//    closes it.
//  - The reply: one line on the shim's stdout once every rank runs,
//    "started PGID...", or "failed MESSAGE" when one could not start (then
//    none runs). A shim that cannot deliver "started" (its agent died)
//    kills the ranks it started, as a fence: no agent knows of them.
//  - Signals to the shim: SIGTERM asks the ranks to stop (it sends them
//    SIGTERM), kShimKillSignal kills them now, ShimFenceSignal() kills them
//    as a fence, kShimRenewSignal renews its lease. A shim whose lease runs out kills its ranks: the agent that
//    renewed it is gone or cut off, and the daemon will give the job up.
//  - The exits file (the shim's descriptor 3): first the shim itself
//    ("shim PID START"), then each rank's process group once all run
//    ("group RANK PGID START"), then a line per rank as it exits, "fenced"
//    if the lease ran out, and "end" when none is left. It is all a later
//    agent needs to adopt the job, or to know how it ended.
inline constexpr int kShimKillSignal = SIGUSR1;
// Kill now, as a fence: the shim writes "fenced" when a rank was still
// running, so that whoever reports the job knows it was fenced.
inline int ShimFenceSignal() { return SIGRTMIN; }
inline constexpr int kShimRenewSignal = SIGUSR2;
inline constexpr int kShimExitsFd = 3;

struct ShimSpec {
  uint64_t job_id = 0;
  // Fence when no renewal came for this long; zero: never.
  absl::Duration lease = absl::ZeroDuration();
  std::vector<ProcessSpec> ranks;
};

std::string EncodeShimSpec(const ShimSpec& spec);
// InvalidArgument saying what was wrong: a truncated spec, another version's.
absl::StatusOr<ShimSpec> DecodeShimSpec(absl::string_view bytes);

// The reply line, parsed: the ranks' process groups, or the shim's error.
absl::StatusOr<std::vector<pid_t>> ParseShimReply(absl::string_view reply);

struct RankExit {
  int rank = 0;
  int wait_status = 0;  // as waitpid gave it
  int lost_errno = 0;   // non-zero: waitpid failed, the status is gone
};

// What the exits file says so far.
struct ShimExits {
  pid_t shim_pid = 0;  // 0: no shim wrote here
  uint64_t shim_start = 0;
  struct Group {
    int rank = 0;
    pid_t pgid = 0;
    uint64_t start_time = 0;
  };
  std::vector<Group> groups;    // in rank order, once every rank runs
  std::vector<RankExit> exits;  // in the order the shim saw them
  bool fenced = false;
  bool ended = false;
  // Every rank's end is known: "end", or an exit line for each group (a
  // shim that died just before writing "end").
  bool complete() const { return ended || (!groups.empty() && exits.size() >= groups.size()); }
};

std::string FormatShimLine(pid_t pid, uint64_t start_time);
std::string FormatGroupLine(const ShimExits::Group& group);
std::string FormatRankExit(const RankExit& exit);
inline constexpr absl::string_view kShimFencedLine = "fenced\n";
inline constexpr absl::string_view kShimEndLine = "end\n";
// Lines it does not know, and a last line still being written, are skipped.
ShimExits ParseShimExits(absl::string_view text);

}  // namespace gpusched::agent
