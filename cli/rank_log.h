#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::cli {

// Where one rank's output lives: <log_dir>/rank-<R>.log of the node that runs
// it, read through the filesystem as with Slurm output files on a shared FS.
struct RankLog {
  std::string node;
  std::string path;
};

// The log that holds global rank `rank`'s output. Ranks are numbered node by
// node in node-rank order, one per GPU (one for a node without GPUs); with a
// per-node launch a node's single process is logged under its first rank.
// Errors: the job holds no allocation, or has no such rank, or that node has
// not reported its log dir yet.
absl::StatusOr<RankLog> ExpectedRankLog(const v1::Job& job, int rank);

// ExpectedRankLog, confirmed on disk. If the file is not where the rank
// arithmetic says, every other node's log dir is tried before giving up with
// a NotFound that names the expected node and path.
absl::StatusOr<RankLog> FindRankLog(const v1::Job& job, int rank);

// A job's logs exist once it holds an allocation and is not waiting again.
bool HasStarted(const v1::Job& job);

// "job 42 has not started yet (PENDING: waiting for 16 GPUs)".
std::string NotStartedMessage(const v1::Job& job);

}  // namespace gpusched::cli
