#include "daemon/config/queue_settings.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/net/hostlist.h"
#include "common/time_limit.h"
#include "daemon/config/setting_values.h"

namespace gpusched::daemon {
namespace {

using config::TomlTableReader;
using config::TomlValue;

constexpr int64_t kMaxWeight = 1'000'000'000;
constexpr int64_t kMaxGpus = 100'000'000;

std::optional<core::PreemptMode> Preemption(TomlTableReader& reader) {
  std::optional<std::string> mode = reader.OneOf("preemption", {"requeue", "cancel", "off"});
  if (!mode) return std::nullopt;
  if (*mode == "cancel") return core::PreemptMode::kCancel;
  if (*mode == "off") return core::PreemptMode::kOff;
  return core::PreemptMode::kRequeue;
}

core::QueueSpec ReadQueue(const TomlValue& table, const std::string& source, TomlTableReader& top) {
  TomlTableReader r(table, source, "[[queue]]");
  r.AllowOnly({"name", "tier", "nodes", "node_labels", "max_gpus", "max_gpus_per_user", "default_time_limit",
               "max_time_limit", "preemption", "requeue_on_node_fail", "preflight", "spot", "demote_after",
               "demote_after_per_gpu"});
  core::QueueSpec q;
  q.name = r.RequiredString("name");
  q.tier = r.Int("tier", 0, 1'000'000).value_or(0);
  q.nodes = r.String("nodes").value_or("");
  if (!q.nodes.empty()) {
    auto names = ExpandHostlist(q.nodes);
    if (!names.ok()) r.Error(r.LineOf("nodes"), absl::StrCat("nodes: ", names.status().message()));
  }
  if (auto labels = r.StringTable("node_labels")) q.node_labels.insert(labels->begin(), labels->end());
  q.max_gpus = r.Int("max_gpus", 0, kMaxGpus).value_or(0);
  q.max_gpus_per_user = r.Int("max_gpus_per_user", 0, kMaxGpus).value_or(0);
  q.default_time_limit_s = ReadDuration(r, "default_time_limit").value_or(0);
  q.max_time_limit_s = ReadDuration(r, "max_time_limit").value_or(0);
  if (q.max_time_limit_s > 0 && q.default_time_limit_s > q.max_time_limit_s) {
    r.Error(r.LineOf("default_time_limit"),
            absl::StrCat("default_time_limit ", FormatTimeLimit(q.default_time_limit_s), " is above max_time_limit ",
                         FormatTimeLimit(q.max_time_limit_s)));
  }
  q.preempt_mode = Preemption(r).value_or(core::PreemptMode::kRequeue);
  q.requeue_on_node_fail = r.Bool("requeue_on_node_fail").value_or(true);
  q.preflight = r.Bool("preflight").value_or(false);
  q.spot = r.Bool("spot").value_or(true);
  q.demote_after_s = ReadDuration(r, "demote_after").value_or(0);
  q.demote_after_per_gpu = r.Bool("demote_after_per_gpu").value_or(true);
  top.Absorb(r);
  return q;
}

void ReadPriority(const TomlValue& table, const std::string& source, core::QueuePolicy& policy, TomlTableReader& top) {
  TomlTableReader r(table, source, "[priority]");
  r.AllowOnly({"tier_weight", "fair_share_weight", "age_weight", "size_weight", "short_work_weight", "age_max",
               "fair_share_half_life", "max_requeues"});
  core::PriorityWeights& w = policy.weights;
  if (auto v = r.Int("tier_weight", 0, kMaxWeight)) w.tier = static_cast<double>(*v);
  if (auto v = r.Int("fair_share_weight", 0, kMaxWeight)) w.fair_share = static_cast<double>(*v);
  if (auto v = r.Int("age_weight", 0, kMaxWeight)) w.age = static_cast<double>(*v);
  if (auto v = r.Int("size_weight", 0, kMaxWeight)) w.size = static_cast<double>(*v);
  if (auto v = r.Int("short_work_weight", 0, kMaxWeight)) w.short_work = static_cast<double>(*v);
  if (auto v = ReadDuration(r, "age_max")) w.age_max = absl::Seconds(*v);
  if (auto v = ReadDuration(r, "fair_share_half_life")) w.fair_share_half_life = absl::Seconds(*v);
  if (auto v = r.Int("max_requeues", 0, 1000)) policy.max_requeues = *v;
  top.Absorb(r);
}

}  // namespace

std::optional<core::QueuePolicy> ReadQueueSettings(const TomlValue& root, TomlTableReader& top) {
  const TomlValue* queues = root.Find("queue");
  const TomlValue* priority = root.Find("priority");
  if (queues == nullptr && priority == nullptr) return std::nullopt;
  const std::string& source = top.source();
  core::QueuePolicy policy;
  if (queues != nullptr) {
    if (!queues->is_array_of_tables()) {
      top.Error(top.LineOf("queue"), "queue must be [[queue]] tables, one per queue");
    } else {
      std::set<std::string> names;
      for (const TomlValue& table : queues->items) {
        core::QueueSpec q = ReadQueue(table, source, top);
        if (!q.name.empty() && !names.insert(q.name).second) {
          top.Error(table.line, absl::StrCat("[[queue]] \"", q.name, "\" is defined twice"));
        }
        policy.queues.push_back(std::move(q));
      }
      if (policy.queues.size() > core::kMaxQueues) {
        top.Error(queues->items[core::kMaxQueues].line,
                  absl::StrCat("at most ", core::kMaxQueues, " [[queue]] tables are supported"));
      }
    }
  }
  if (priority != nullptr) {
    if (priority->type != config::TomlType::kTable || priority->is_array_of_tables()) {
      top.Error(top.LineOf("priority"), "priority must be a [priority] table");
    } else {
      ReadPriority(*priority, source, policy, top);
    }
  }
  if (top.ok()) {
    if (absl::Status s = policy.Compile(); !s.ok()) top.Error(top.LineOf("queue"), s.message());
  }
  return policy;
}

std::string DescribeQueuePolicy(const core::QueuePolicy& policy) {
  return absl::StrCat(
      policy.queues.size(), policy.queues.size() == 1 ? " queue (" : " queues (",
      absl::StrJoin(policy.queues, ", ",
                    [](std::string* out, const core::QueueSpec& q) { absl::StrAppend(out, q.name, " tier ", q.tier); }),
      ")");
}

}  // namespace gpusched::daemon
