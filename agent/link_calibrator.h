#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "agent/nccl/bandwidth_probe.h"
#include "common/clock.h"
#include "common/threads/mutex.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::agent {

// Runs CalibrateLinks on a thread of its own, one calibration at a time, and
// keeps the last result, which every registration carries (NodeInfo.probe):
// a result the daemon missed while disconnected reaches it that way.
class LinkCalibrator {
 public:
  using ResultFn = std::function<void(const v1::NodeProbe&)>;

  // `probe` null: this agent cannot measure; each calibration then reports
  // NodeProbe.unavailable with `why_unavailable`.
  // `clock` stamps each result.
  LinkCalibrator(std::shared_ptr<BandwidthProbe> probe, std::string why_unavailable, topology::NodeTopology topology,
                 ResultFn on_result, const Clock& clock = WallClock());
  ~LinkCalibrator();  // waits for a calibration under way
  LinkCalibrator(const LinkCalibrator&) = delete;
  LinkCalibrator& operator=(const LinkCalibrator&) = delete;

  // Starts a calibration; false when one is already under way (it answers)
  // or after Stop.
  bool Start();
  // A calibration under way ends at its next measurement, unreported.
  void Stop();
  struct State {
    bool running = false;
    std::optional<v1::NodeProbe> last;
  };
  State state() const;  // both at one instant

 private:
  void Run();

  const std::shared_ptr<BandwidthProbe> probe_;
  const std::string why_unavailable_;
  const topology::NodeTopology topology_;
  const ResultFn on_result_;
  const Clock& clock_;
  mutable Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> stop_{false};
  std::optional<v1::NodeProbe> last_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace gpusched::agent
