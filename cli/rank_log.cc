#include "cli/rank_log.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/allocation_ranks.h"
#include "common/job_states.h"

namespace gpusched::cli {
namespace {

std::string LogPath(const std::string& dir, int rank) {
  return (std::filesystem::path(dir) / absl::StrCat("rank-", rank, ".log")).string();
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

bool HasStarted(const v1::Job& job) {
  return job.allocation().nodes_size() > 0 && job.state() != v1::JOB_STATE_PENDING;
}

std::string NotStartedMessage(const v1::Job& job) {
  std::string why = std::string(StateName(job.state()));
  if (!job.reason().empty()) absl::StrAppend(&why, ": ", job.reason());
  if (IsTerminal(job.state())) return absl::StrCat("job ", job.id(), " never started (", why, ")");
  return absl::StrCat("job ", job.id(), " has not started yet (", why, ")");
}

absl::StatusOr<RankLog> ExpectedRankLog(const v1::Job& job, int rank) {
  if (!HasStarted(job)) return absl::FailedPreconditionError(NotStartedMessage(job));
  std::vector<const v1::NodeAllocation*> nodes;
  for (const auto& node : job.allocation().nodes()) nodes.push_back(&node);
  std::stable_sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->node_rank() < b->node_rank(); });

  // The daemon numbers one worker per GPU or MIG instance (one per node
  // without either) in node-rank order, whatever the launch mode (RanksOn).
  // A per-node launch runs one process per node, ranked as the node's first
  // worker, whose log holds the output of every worker on that node.
  const bool per_node = job.spec().launch_mode() == v1::LAUNCH_MODE_PER_NODE;
  int first = 0;
  for (const v1::NodeAllocation* node : nodes) {
    const int workers = RanksOn(*node);
    if (rank < first + workers) {
      if (node->log_dir().empty()) {
        return absl::FailedPreconditionError(absl::StrCat("node ", node->node(),
                                                          " has not reported a log directory for job ", job.id(),
                                                          " yet; try again when it is RUNNING"));
      }
      return RankLog{node->node(), LogPath(node->log_dir(), per_node ? first : rank)};
    }
    first += workers;
  }
  return absl::NotFoundError(absl::StrCat("job ", job.id(), " has ranks 0-", first - 1, "; there is no rank ", rank));
}

absl::StatusOr<RankLog> FindRankLog(const v1::Job& job, int rank) {
  auto expected = ExpectedRankLog(job, rank);
  if (!expected.ok() || Exists(expected->path)) return expected;
  const std::string file_name = std::filesystem::path(expected->path).filename().string();
  for (const auto& node : job.allocation().nodes()) {
    if (node.log_dir().empty()) continue;
    std::string path = (std::filesystem::path(node.log_dir()) / file_name).string();
    if (Exists(path)) return RankLog{node.node(), path};
  }
  // A log that is there but not ours to read says so, rather than "missing".
  struct stat st {};
  if (::stat(expected->path.c_str(), &st) != 0 && errno == EACCES) {
    return absl::PermissionDeniedError(absl::StrCat("cannot read the log of rank ", rank, " of job ", job.id(), ": ",
                                                    expected->path,
                                                    ": Permission denied (rank logs are their job's "
                                                    "owner's files)"));
  }
  return absl::NotFoundError(
      absl::StrCat("no log for rank ", rank, " of job ", job.id(), ": ", expected->path, " (on node ", expected->node,
                   ") does not exist here; logs are read from the filesystem, so the log dir must be shared "
                   "with this machine"));
}

}  // namespace gpusched::cli
