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

void Apply(DaemonMetrics& m, const v1::Node& row, absl::Time now) {
  core::Effects fx;
  fx.nodes[row.info().name()] = row;
  m.Apply(fx, now);
}

double Pool(const DaemonMetrics& m, const char* name, std::map<std::string, std::string> labels = {}) {
  labels["pool"] = "burst";
  return Value(*m.registry(), name, labels);
}

TEST_CASE("pool metrics: a boot, a failed boot, a suspend") {
  DaemonMetrics m;
  m.RestoreNodes({Row("g1", v1::NODE_STATE_POWERED_DOWN, kT0), Row("g2", v1::NODE_STATE_POWERED_DOWN, kT0)});
  CHECK(Pool(m, "gpusched_pool_nodes", {{"state", "powered_down"}}) == 2);
  CHECK(Pool(m, "gpusched_pool_gpus", {{"state", "paid"}}) == 0);
  // Powered-down nodes are not down: the node-down alert stays quiet.
  CHECK(Value(*m.registry(), "gpusched_nodes", {{"state", "down"}}) == 0);
  CHECK(Value(*m.registry(), "gpusched_nodes", {{"state", "powered_down"}}) == 2);
  CHECK(Value(*m.registry(), "gpusched_gpus", {{"state", "down"}}) == 0);

  Apply(m, Row("g1", v1::NODE_STATE_POWERING_UP, kT0), kT0);
  Apply(m, Row("g2", v1::NODE_STATE_POWERING_UP, kT0), kT0);
  CHECK(Pool(m, "gpusched_pool_resumes_total") == 2);
  CHECK(Pool(m, "gpusched_pool_nodes", {{"state", "powering_up"}}) == 2);
  CHECK(Pool(m, "gpusched_pool_gpus", {{"state", "paid"}}) == 16);

  Apply(m, Row("g1", v1::NODE_STATE_UP, kT0), kT0 + absl::Seconds(100));
  Apply(m, Row("g2", v1::NODE_STATE_POWERED_DOWN, kT0 + absl::Seconds(600)), kT0 + absl::Seconds(600));
  CHECK(Pool(m, "gpusched_pool_resume_failures_total") == 1);
  CHECK(Bucket(*m.registry(), "gpusched_pool_boot_seconds", 60) == 0);
  CHECK(Bucket(*m.registry(), "gpusched_pool_boot_seconds", 120) == 1);
  CHECK(Pool(m, "gpusched_pool_gpus", {{"state", "paid"}}) == 8);

  core::Effects started;
  started.node_usage["g1"] = core::NodeUsage{8, 2, v1::NODE_STATE_UP, false, {}};
  m.Apply(started, kT0 + absl::Seconds(110));
  CHECK(Pool(m, "gpusched_pool_gpus", {{"state", "used"}}) == 6);

  Apply(m, Row("g1", v1::NODE_STATE_POWERING_DOWN, kT0 + absl::Seconds(900)), kT0 + absl::Seconds(900));
  Apply(m, Row("g1", v1::NODE_STATE_NOT_RESPONDING, kT0 + absl::Seconds(910)), kT0 + absl::Seconds(910));
  CHECK(Pool(m, "gpusched_pool_suspends_total") == 1);
  CHECK(Pool(m, "gpusched_pool_suspend_failures_total") == 1);
  CHECK(Pool(m, "gpusched_pool_nodes", {{"state", "not_responding"}}) == 1);
  CHECK(Pool(m, "gpusched_pool_nodes", {{"state", "powered_down"}}) == 1);
}

}  // namespace
}  // namespace gpusched::metrics
