#pragma once

#include <functional>
#include <string>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace gpusched::agent {

// What the agent is doing, read at each scrape:
//
//   gpusched_agent_running_jobs{node}   jobs with a process on this node
//   gpusched_agent_running_ranks{node}  their processes still running
//   gpusched_agent_connected{node}      1 while registered with gpuschedd
class AgentCollector final : public prometheus::Collectable {
 public:
  struct Status {
    int64_t running_jobs = 0;
    int64_t running_ranks = 0;
    bool connected = false;
  };
  // `status` is called from the endpoint's threads, once per scrape.
  AgentCollector(std::string node, std::function<Status()> status)
      : node_(std::move(node)), status_(std::move(status)) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::string node_;
  std::function<Status()> status_;
};

}  // namespace gpusched::agent
