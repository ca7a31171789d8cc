#include "daemon/core/queue/queue_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/net/hostlist.h"
#include "common/time_limit.h"

namespace gpusched::core {
namespace {

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

}  // namespace

absl::string_view PreemptModeName(PreemptMode mode) {
  switch (mode) {
    case PreemptMode::kOff: return "off";
    case PreemptMode::kRequeue: return "requeue";
    case PreemptMode::kCancel: return "cancel";
  }
  return "?";
}

QueuePolicy QueuePolicy::Default() {
  QueuePolicy policy;
  policy.queues.push_back(QueueSpec::Named("default"));
  return policy;
}

absl::Status QueuePolicy::Compile() {
  if (queues.empty()) queues.push_back(QueueSpec::Named("default"));
  if (queues.size() > kMaxQueues) {
    return Invalid("queue", absl::StrCat(queues.size(), " queues, at most ", kMaxQueues, " are supported"));
  }
  for (size_t i = 0; i < queues.size(); ++i) {
    QueueSpec& q = queues[i];
    const std::string where = absl::StrCat("queue \"", q.name, "\"");
    if (q.name.empty()) return Invalid(absl::StrCat("queue #", i + 1), "name must not be empty");
    if (IndexOf(q.name) != static_cast<int>(i)) return Invalid(where, "defined twice");
    if (q.tier < 0) return Invalid(where, "tier must be >= 0");
    if (q.max_gpus < 0) return Invalid(where, "max_gpus must be >= 0");
    if (q.max_gpus_per_user < 0) return Invalid(where, "max_gpus_per_user must be >= 0");
    if (q.default_time_limit_s < 0 || q.max_time_limit_s < 0) return Invalid(where, "time limits must be >= 0");
    if (q.demote_after_s < 0) return Invalid(where, "demote_after must be >= 0");
    if (q.demote_after_s > 0 && q.preempt_mode != PreemptMode::kRequeue) {
      return Invalid(where, absl::StrCat("demote_after needs preemption = \"requeue\" (its demoted jobs are requeued ",
                                         "for fresher ones), not \"", PreemptModeName(q.preempt_mode), "\""));
    }
    if (q.max_time_limit_s > 0 && q.default_time_limit_s > q.max_time_limit_s) {
      return Invalid(where, absl::StrCat("default_time_limit ", FormatTimeLimit(q.default_time_limit_s),
                                         " is above max_time_limit ", FormatTimeLimit(q.max_time_limit_s)));
    }
    q.node_names.clear();
    if (!q.nodes.empty()) {
      auto names = ExpandHostlist(q.nodes);
      if (!names.ok()) return Invalid(absl::StrCat(where, " nodes"), std::string(names.status().message()));
      q.node_names.insert(names->begin(), names->end());
    }
  }
  if (max_requeues < 0) return Invalid("max_requeues", "must be >= 0");
  return absl::OkStatus();
}

const QueueSpec* QueuePolicy::Find(absl::string_view name) const {
  const int i = IndexOf(name);
  return i < 0 ? nullptr : &queues[i];
}

int QueuePolicy::IndexOf(absl::string_view name) const {
  for (size_t i = 0; i < queues.size(); ++i) {
    if (queues[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int64_t QueuePolicy::MaxTier() const {
  int64_t top = 0;
  for (const QueueSpec& q : queues) top = std::max(top, q.tier);
  return top;
}

std::string QueuePolicy::Names() const {
  return absl::StrJoin(queues, ", ", [](std::string* out, const QueueSpec& q) { out->append(q.name); });
}

uint64_t QueuePolicy::NodeMask(const v1::NodeInfo& info) const {
  uint64_t mask = 0;
  for (size_t i = 0; i < queues.size(); ++i) {
    const QueueSpec& q = queues[i];
    if (!q.nodes.empty() && !q.node_names.contains(info.name())) continue;
    bool labels_match = true;
    for (const auto& [key, value] : q.node_labels) {
      auto it = info.labels().find(key);
      labels_match = labels_match && it != info.labels().end() && it->second == value;
    }
    if (labels_match) mask |= uint64_t{1} << i;
  }
  return mask;
}

absl::Status QueuePolicy::Apply(v1::JobSpec& spec) const {
  if (spec.queue().empty()) spec.set_queue(queues.front().name);
  const QueueSpec* q = Find(spec.queue());
  if (q == nullptr) {
    return Invalid("spec.queue", absl::StrCat("unknown queue \"", spec.queue(), "\" (known: ", Names(), ")"));
  }
  if (q->preflight) spec.set_preflight(true);
  if (spec.time_limit_s() == 0) {
    spec.set_time_limit_s(q->default_time_limit_s > 0 ? q->default_time_limit_s : q->max_time_limit_s);
  }
  if (q->max_time_limit_s > 0 && spec.time_limit_s() > q->max_time_limit_s) {
    return Invalid("spec.time_limit_s",
                   absl::StrCat(FormatTimeLimit(spec.time_limit_s()), " is above queue \"", q->name,
                                "\"'s max_time_limit of ", FormatTimeLimit(q->max_time_limit_s)));
  }
  return absl::OkStatus();
}

bool QueuePolicy::RequeuesOnNodeFail(const v1::JobSpec& spec) const {
  if (spec.has_requeue()) return spec.requeue();
  const QueueSpec* q = Find(spec.queue());
  return q != nullptr && q->requeue_on_node_fail;
}

}  // namespace gpusched::core
