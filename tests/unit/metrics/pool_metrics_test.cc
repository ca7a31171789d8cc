// Elastic pools' metrics follow their nodes' rows: states, resumes and
// their failures, suspends, boot times, GPUs paid for and used.
#include <catch2/catch.hpp>

#include "common/proto_time.h"
#include "daemon/metrics/daemon_metrics.h"
#include "tests/unit/metrics/metrics_test_util.h"

namespace gpusched::metrics {
namespace {

using testing::Bucket;
using testing::Value;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

v1::Node Row(const std::string& name, v1::NodeState state, absl::Time since, int free = 8) {
  v1::Node node;
  node.mutable_info()->set_name(name);
  for (int i = 0; i < 8; ++i) node.mutable_info()->add_gpus()->set_index(i);
  node.set_state(state);
  node.set_gpus_free(free);
  node.set_pool("burst");
  if (state != v1::NODE_STATE_UP) *node.mutable_power_since() = ToProtoTime(since);
  return node;
}

// Writes node rows as the core does: each state change also noted as a
// power transition, with the time spent in the state it leaves.
class Rows {
 public:
  explicit Rows(DaemonMetrics& m) : m_(m) {}
  void Restore(const std::vector<v1::Node>& rows, absl::Time now) {
    m_.RestoreNodes(rows);
    for (const v1::Node& row : rows) last_[row.info().name()] = {row.state(), now};
  }
  void Apply(const v1::Node& row, absl::Time now) {
    core::Effects fx;
    Note(row.info().name(), row.state(), now, fx);
    fx.nodes[row.info().name()] = row;
    m_.Apply(fx);
  }
  // A state the batch passes through without writing a row for it.
  void Note(const std::string& node, v1::NodeState to, absl::Time now, core::Effects& fx) {
    auto& [from, since] = last_[node];
    if (from != to) fx.power_transitions.push_back({node, "burst", from, to, "", now - since});
    from = to;
    since = now;
  }

 private:
  DaemonMetrics& m_;
  std::map<std::string, std::pair<v1::NodeState, absl::Time>> last_;
};

double Pool(const DaemonMetrics& m, const char* name, std::map<std::string, std::string> labels = {}) {
  labels["pool"] = "burst";
  return Value(*m.registry(), name, labels);
}

TEST_CASE("pool metrics: a boot, a failed boot, a suspend") {
  DaemonMetrics m;
  Rows rows(m);
  rows.Restore({Row("g1", v1::NODE_STATE_POWERED_DOWN, kT0), Row("g2", v1::NODE_STATE_POWERED_DOWN, kT0)}, kT0);
  CHECK(Pool(m, "gpusched_pool_nodes", {{"state", "powered_down"}}) == 2);
  CHECK(Pool(m, "gpusched_pool_gpus", {{"state", "paid"}}) == 0);
  // Powered-down nodes are not down: the node-down alert stays quiet.
  CHECK(Value(*m.registry(), "gpusched_nodes", {{"state", "down"}}) == 0);
  CHECK(Value(*m.registry(), "gpusched_nodes", {{"state", "powered_down"}}) == 2);
  CHECK(Value(*m.registry(), "gpusched_gpus", {{"state", "down"}}) == 0);

  rows.Apply(Row("g1", v1::NODE_STATE_POWERING_UP, kT0), kT0);
  rows.Apply(Row("g2", v1::NODE_STATE_POWERING_UP, kT0), kT0);
  CHECK(Pool(m, "gpusched_pool_resumes_total") == 2);
  CHECK(Pool(m, "gpusched_pool_nodes", {{"state", "powering_up"}}) == 2);
  CHECK(Pool(m, "gpusched_pool_gpus", {{"state", "paid"}}) == 16);

  rows.Apply(Row("g1", v1::NODE_STATE_UP, kT0), kT0 + absl::Seconds(100));
  rows.Apply(Row("g2", v1::NODE_STATE_POWERED_DOWN, kT0 + absl::Seconds(600)), kT0 + absl::Seconds(600));
  CHECK(Pool(m, "gpusched_pool_resume_failures_total") == 1);
  CHECK(Bucket(*m.registry(), "gpusched_pool_boot_seconds", 60) == 0);
  CHECK(Bucket(*m.registry(), "gpusched_pool_boot_seconds", 120) == 1);
  CHECK(Pool(m, "gpusched_pool_gpus", {{"state", "paid"}}) == 8);

  core::Effects started;
  started.node_usage["g1"] = core::NodeUsage{8, 2, v1::NODE_STATE_UP, false, {}};
  m.Apply(started);
  CHECK(Pool(m, "gpusched_pool_gpus", {{"state", "used"}}) == 6);

  rows.Apply(Row("g1", v1::NODE_STATE_POWERING_DOWN, kT0 + absl::Seconds(900)), kT0 + absl::Seconds(900));
  rows.Apply(Row("g1", v1::NODE_STATE_NOT_RESPONDING, kT0 + absl::Seconds(910)), kT0 + absl::Seconds(910));
  CHECK(Pool(m, "gpusched_pool_suspends_total") == 1);
  CHECK(Pool(m, "gpusched_pool_suspend_failures_total") == 1);
  CHECK(Pool(m, "gpusched_pool_nodes", {{"state", "not_responding"}}) == 1);
  CHECK(Pool(m, "gpusched_pool_nodes", {{"state", "powered_down"}}) == 1);
}

TEST_CASE("pool metrics: a boot that fails and is retried within one batch still counts") {
  DaemonMetrics m;
  Rows rows(m);
  rows.Restore({Row("g1", v1::NODE_STATE_POWERED_DOWN, kT0)}, kT0);
  rows.Apply(Row("g1", v1::NODE_STATE_POWERING_UP, kT0), kT0);
  // The resume program failed and the pass resumed the node again at once:
  // the batch's row still says POWERING_UP.
  core::Effects fx;
  rows.Note("g1", v1::NODE_STATE_POWERED_DOWN, kT0 + absl::Seconds(30), fx);
  rows.Note("g1", v1::NODE_STATE_POWERING_UP, kT0 + absl::Seconds(30), fx);
  fx.nodes["g1"] = Row("g1", v1::NODE_STATE_POWERING_UP, kT0 + absl::Seconds(30));
  m.Apply(fx);
  CHECK(Pool(m, "gpusched_pool_resumes_total") == 2);
  CHECK(Pool(m, "gpusched_pool_resume_failures_total") == 1);
  CHECK(Pool(m, "gpusched_pool_nodes", {{"state", "powering_up"}}) == 1);
}

TEST_CASE("pool metrics: spot interruptions count once per notice") {
  DaemonMetrics m;
  Rows rows(m);
  v1::Node restored = Row("g2", v1::NODE_STATE_UP, kT0);
  *restored.mutable_reclaim_at() = ToProtoTime(kT0 + absl::Seconds(30));  // noticed before a restart
  rows.Restore({Row("g1", v1::NODE_STATE_UP, kT0), restored}, kT0);
  CHECK(Pool(m, "gpusched_pool_interruptions_total") == 0);
  v1::Node noticed = Row("g1", v1::NODE_STATE_UP, kT0);
  *noticed.mutable_reclaim_at() = ToProtoTime(kT0 + absl::Seconds(120));
  rows.Apply(noticed, kT0);
  *noticed.mutable_reclaim_at() = ToProtoTime(kT0 + absl::Seconds(60));  // a second notice, sooner
  rows.Apply(noticed, kT0 + absl::Seconds(1));
  CHECK(Pool(m, "gpusched_pool_interruptions_total") == 1);
  rows.Apply(Row("g1", v1::NODE_STATE_POWERING_DOWN, kT0 + absl::Seconds(60)), kT0 + absl::Seconds(60));
  rows.Apply(noticed, kT0 + absl::Seconds(600));  // its slot, booted again, interrupted again
  CHECK(Pool(m, "gpusched_pool_interruptions_total") == 2);
}

}  // namespace
}  // namespace gpusched::metrics
