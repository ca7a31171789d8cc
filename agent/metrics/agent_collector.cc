#include "agent/metrics/agent_collector.h"

namespace gpusched::agent {
namespace {

prometheus::MetricFamily Gauge(const char* name, const char* help, const std::string& node, double value) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = prometheus::MetricType::Gauge;
  prometheus::ClientMetric metric;
  metric.label = {{"node", node}};
  metric.gauge.value = value;
  family.metric.push_back(std::move(metric));
  return family;
}

}  // namespace

std::vector<prometheus::MetricFamily> AgentCollector::Collect() const {
  const Status s = status_();
  return {
      Gauge("gpusched_agent_running_jobs", "Jobs with a process running on this node", node_,
            static_cast<double>(s.running_jobs)),
      Gauge("gpusched_agent_running_ranks", "Job processes (ranks) running on this node", node_,
            static_cast<double>(s.running_ranks)),
      Gauge("gpusched_agent_connected", "1 while the agent is registered with gpuschedd", node_, s.connected ? 1 : 0),
  };
}

}  // namespace gpusched::agent
