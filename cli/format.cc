#include "cli/format.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/gpu_fraction.h"
#include "common/job_states.h"
#include "common/proto_time.h"

namespace gpusched::cli {

std::string FormatElapsed(absl::Duration d) {
  int64_t total = std::max<int64_t>(0, absl::ToInt64Seconds(d));
  int64_t days = total / 86400, h = total / 3600 % 24, m = total / 60 % 60, s = total % 60;
  if (days > 0) return absl::StrFormat("%d-%02d:%02d:%02d", days, h, m, s);
  if (h > 0) return absl::StrFormat("%d:%02d:%02d", h, m, s);
  return absl::StrFormat("%d:%02d", m, s);
}

absl::Duration JobElapsed(const v1::Job& job, absl::Time now) {
  const bool started = IsSet(job.start_time());
  const absl::Time from = FromProtoTime(started ? job.start_time() : job.submit_time());
  if (!IsSet(job.submit_time()) && !started) return absl::ZeroDuration();
  if (IsTerminal(job.state())) {
    if (!IsSet(job.end_time())) return absl::ZeroDuration();
    return FromProtoTime(job.end_time()) - from;
  }
  // A requeued job (PENDING again after PREEMPTED/NODE_FAIL) waits, whatever it ran before.
  if (job.state() == v1::JOB_STATE_PENDING) {
    return now - FromProtoTime(job.submit_time());
  }
  return now - from;
}

std::string FormatIndexList(std::vector<int32_t> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::vector<std::string> parts;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && int64_t{indices[j + 1]} == int64_t{indices[j]} + 1) ++j;
    if (j - i >= 2) {
      parts.push_back(absl::StrCat(indices[i], "-", indices[j]));
    } else {
      for (size_t k = i; k <= j; ++k) parts.push_back(absl::StrCat(indices[k]));
    }
    i = j + 1;
  }
  return absl::StrJoin(parts, ",");
}

std::string ArrayTaskLabel(const v1::Job& job) {
  if (!job.has_array()) return absl::StrCat(job.id());
  return absl::StrCat(job.array().array_id(), "_", job.array().index());
}

std::string FormatPlacement(const v1::Allocation& allocation) {
  std::vector<const v1::NodeAllocation*> nodes;
  for (const auto& node : allocation.nodes()) nodes.push_back(&node);
  std::stable_sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->node_rank() < b->node_rank(); });
  std::vector<std::string> parts;
  for (const v1::NodeAllocation* node : nodes) {
    if (node->gpu_indices().empty()) {
      parts.push_back(node->node());
    } else {
      std::vector<int32_t> gpus(node->gpu_indices().begin(), node->gpu_indices().end());
      parts.push_back(absl::StrCat(node->node(), "[", FormatIndexList(std::move(gpus)), "]"));
    }
  }
  return absl::StrJoin(parts, " ");
}

std::string GpusLabel(const v1::Resources& resources) {
  const int64_t gpus = RequestedGpus(resources);
  if (!resources.mig_profile().empty()) return absl::StrCat(gpus, "x", resources.mig_profile());
  if (resources.gpu_share_milli() == 0) return absl::StrCat(gpus);
  return absl::StrCat(gpus, "x", resources.gpu_share_milli() / 10.0, "%");
}

std::string FormatTimestamp(const google::protobuf::Timestamp& ts, absl::TimeZone zone) {
  if (!IsSet(ts)) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", FromProtoTime(ts), zone);
}

std::string ShellJoin(const google::protobuf::RepeatedPtrField<std::string>& argv) {
  std::vector<std::string> words;
  for (const std::string& arg : argv) {
    const bool plain =
        !arg.empty() &&
        arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
            std::string::npos;
    words.push_back(plain ? arg : absl::StrCat("'", absl::StrReplaceAll(arg, {{"'", "'\\''"}}), "'"));
  }
  return absl::StrJoin(words, " ");
}

std::string LaunchModeName(v1::LaunchMode mode) { return mode == v1::LAUNCH_MODE_PER_NODE ? "per-node" : "per-gpu"; }

}  // namespace gpusched::cli
